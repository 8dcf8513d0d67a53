#include "thread_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RF_CPU_RELAX() _mm_pause()
#else
#define RF_CPU_RELAX() ((void)0)
#endif

namespace rfcpu {

namespace {
constexpr int kSpinIterations = 1 << 14;  // ~50-100 us of pause before yielding/sleeping
}

ThreadPool::ThreadPool(int n_threads) : n_(n_threads < 1 ? 1 : n_threads) {
    for (int i = 1; i < n_; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    generation_.notify_all();
    for (auto &t : workers_) t.join();
}

void ThreadPool::run(Job job, void *arg) {
    if (n_ == 1) {
        job(arg, 0, 1);
        return;
    }
    job_ = job;
    arg_ = arg;
    finished_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    job(arg, 0, n_);
    int spins = 0;
    while (finished_.load(std::memory_order_acquire) != n_ - 1) {
        if (++spins < kSpinIterations) RF_CPU_RELAX();
        else std::this_thread::yield();
    }
}

void ThreadPool::barrier() {
    if (n_ == 1) return;
    const uint32_t phase = barrier_phase_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
        arrived_.store(0, std::memory_order_relaxed);
        barrier_phase_.fetch_add(1, std::memory_order_release);
        return;
    }
    int spins = 0;
    while (barrier_phase_.load(std::memory_order_acquire) == phase) {
        if (++spins < kSpinIterations) RF_CPU_RELAX();
        else std::this_thread::yield();
    }
}

void ThreadPool::worker_main(int ith) {
    uint32_t seen = 0;
    for (;;) {
        int spins = 0;
        uint32_t gen;
        while ((gen = generation_.load(std::memory_order_acquire)) == seen) {
            if (++spins < kSpinIterations) RF_CPU_RELAX();
            else generation_.wait(seen, std::memory_order_acquire);
        }
        seen = gen;
        if (stop_.load(std::memory_order_acquire)) return;
        job_(arg_, ith, n_);
        finished_.fetch_add(1, std::memory_order_acq_rel);
    }
}

} // namespace rfcpu
