// A small fork-join over indices for per-sequence host work between decode steps (sampling): the
// sequences' samplers are independent objects, and drawing 16 of them one after another kept the
// GPU idle for ~1-3 ms a step (a draw costs 0.05-0.2 ms of host time; the server, generate and
// bench-inference all draw this way).
#pragma once
#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace rf {

// Calls f(i) for i in [0, n), on up to max_threads threads (the caller's included), in contiguous
// chunks; returns when all are done. The first exception thrown by f is rethrown here.
template <class F> void parallel_for(size_t n, size_t max_threads, F &&f) {
    const size_t threads = std::max<size_t>(1, std::min(n, max_threads));
    if (threads <= 1) {
        for (size_t i = 0; i < n; ++i) f(i);
        return;
    }
    std::vector<std::exception_ptr> errors(threads);
    auto run = [&](size_t t) {
        try {
            for (size_t i = n * t / threads; i < n * (t + 1) / threads; ++i) f(i);
        } catch (...) {
            errors[t] = std::current_exception();
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(run, t);
    run(0);
    for (std::thread &th : pool) th.join();
    for (const std::exception_ptr &e : errors)
        if (e) std::rethrow_exception(e);
}

// Threads for a step's draws over n sequences: one below 4 of them (starting threads costs ~50
// us), else up to 8, at most the machine's hardware threads.
inline size_t draw_threads(size_t n) {
    if (n < 4) return 1;
    return std::max<size_t>(1, std::min<size_t>(8, std::thread::hardware_concurrency()));
}

} // namespace rf
