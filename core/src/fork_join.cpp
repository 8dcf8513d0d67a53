// The shared helper threads of rf::parallel_for (rocmforge/parallel_for.h): started on first use,
// one round of chunks at a time, stopped and joined at exit.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "rocmforge/parallel_for.h"

namespace rf::detail {
namespace {

class ForkJoinPool {
public:
    static constexpr size_t kMaxHelpers = 31;

    ~ForkJoinPool() {
        {
            std::lock_guard<std::mutex> lk(m_);
            stop_ = true;
        }
        work_.notify_all();
        for (std::thread &t : helpers_) t.join();
    }

    bool run(size_t chunks, void (*chunk)(void *, size_t), void *ctx) {
        if (chunks == 0) return true;
        if (chunks - 1 > kMaxHelpers) return false;
        std::unique_lock<std::mutex> caller(busy_, std::try_to_lock);
        if (!caller) return false; // another call is using the helpers (nested or concurrent)
        {
            std::lock_guard<std::mutex> lk(m_);
            while (helpers_.size() < chunks - 1) {
                const size_t h = helpers_.size();
                helpers_.emplace_back([this, h] { helper(h); });
            }
            chunk_ = chunk;
            ctx_ = ctx;
            chunks_ = chunks;
            left_ = chunks - 1;
            ++round_;
        }
        work_.notify_all();
        chunk(ctx, 0);
        std::unique_lock<std::mutex> lk(m_);
        done_.wait(lk, [&] { return left_ == 0; });
        return true;
    }

private:
    // Helper h takes chunk h + 1 of every round that has one.
    void helper(size_t h) {
        uint64_t seen = 0;
        std::unique_lock<std::mutex> lk(m_);
        for (;;) {
            work_.wait(lk, [&] { return stop_ || round_ != seen; });
            if (stop_) return;
            seen = round_;
            if (h + 1 >= chunks_) continue;
            void (*chunk)(void *, size_t) = chunk_;
            void *ctx = ctx_;
            lk.unlock();
            chunk(ctx, h + 1);
            lk.lock();
            if (--left_ == 0) done_.notify_one();
        }
    }

    std::mutex busy_; // held by the caller of the round in progress
    std::mutex m_;    // everything below
    std::condition_variable work_, done_;
    std::vector<std::thread> helpers_;
    uint64_t round_ = 0;
    size_t chunks_ = 0, left_ = 0;
    void (*chunk_)(void *, size_t) = nullptr;
    void *ctx_ = nullptr;
    bool stop_ = false;
};

} // namespace

bool pool_run(size_t chunks, void (*chunk)(void *, size_t), void *ctx) {
    static ForkJoinPool pool;
    return pool.run(chunks, chunk, ctx);
}

} // namespace rf::detail
