// Persistent worker pool: run() executes one job on all n threads (the caller is thread 0) and
// returns when all are done; barrier() synchronizes them inside a job. Idle workers spin briefly,
// then sleep on a futex (std::atomic::wait), so the pool costs nothing between graphs.
#pragma once
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace rfcpu {

class ThreadPool {
public:
    using Job = void (*)(void *arg, int ith, int nth);

    explicit ThreadPool(int n_threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool &) = delete;
    ThreadPool &operator=(const ThreadPool &) = delete;

    int size() const { return n_; }
    void run(Job job, void *arg);
    void barrier();

private:
    void worker_main(int ith);

    int n_;
    std::vector<std::thread> workers_;
    Job job_ = nullptr;
    void *arg_ = nullptr;
    alignas(64) std::atomic<uint32_t> generation_{0};
    alignas(64) std::atomic<int> finished_{0};
    alignas(64) std::atomic<int> arrived_{0};
    alignas(64) std::atomic<uint32_t> barrier_phase_{0};
    std::atomic<bool> stop_{false};
};

} // namespace rfcpu
