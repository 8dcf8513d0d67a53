// A small fork-join over indices for per-sequence host work between decode steps (sampling): the
// sequences' samplers are independent objects, and drawing 16 of them one after another kept the
// GPU idle for the sum of the draws every step (the server, generate and bench-inference all draw
// this way). The helpers are a process-wide pool started on first use
// and kept: starting and joining up to 7 threads for every step was host time the device waited
// through as well.
#pragma once
#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace rf {

namespace detail {
// Runs chunk(ctx, t) for t in [0, chunks): t = 0 on the calling thread, the others on the shared
// pool's helpers; returns when all are done. False (nothing run) when the pool is serving another
// caller (a nested or concurrent call) or `chunks` exceeds what it keeps. chunk must not throw.
bool pool_run(size_t chunks, void (*chunk)(void *ctx, size_t t), void *ctx);
} // namespace detail

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
    using Run = decltype(run);
    if (!detail::pool_run(threads, [](void *ctx, size_t t) { (*static_cast<Run *>(ctx))(t); }, &run)) {
        std::vector<std::thread> pool; // the pool is busy: threads of this call's own
        pool.reserve(threads - 1);
        for (size_t t = 1; t < threads; ++t) pool.emplace_back(run, t);
        run(0);
        for (std::thread &th : pool) th.join();
    }
    for (const std::exception_ptr &e : errors)
        if (e) std::rethrow_exception(e);
}

// Threads for a step's draws over n sequences: one below 4 of them (a fork-join costs more than
// a few draws), else up to 8, at most the machine's hardware threads.
inline size_t draw_threads(size_t n) {
    if (n < 4) return 1;
    return std::max<size_t>(1, std::min<size_t>(8, std::thread::hardware_concurrency()));
}

} // namespace rf
