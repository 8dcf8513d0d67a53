#include "parallel_rows.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace rf::model_writer {

int resolve_thread_count(int requested) {
    if (requested > 0) return requested;
    const unsigned hw = std::thread::hardware_concurrency();
    return hw > 0 ? int(hw) : 1;
}

void parallel_for_rows(int64_t n_rows, int n_threads,
                       const std::function<void(int, int64_t, int64_t)> &fn) {
    if (n_rows <= 0) return;
    n_threads = int(std::max<int64_t>(1, std::min<int64_t>(n_threads, n_rows)));
    // Enough chunks per worker to balance, few enough that the counter is not contended.
    const int64_t chunk = std::max<int64_t>(1, n_rows / (int64_t(n_threads) * 16));
    if (n_threads == 1) {
        fn(0, 0, n_rows);
        return;
    }
    std::atomic<int64_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr first_error;
    std::mutex error_mutex;
    auto work = [&](int worker) {
        try {
            while (!failed.load(std::memory_order_relaxed)) {
                const int64_t begin = next.fetch_add(chunk);
                if (begin >= n_rows) break;
                fn(worker, begin, std::min(n_rows, begin + chunk));
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!first_error) first_error = std::current_exception();
            failed = true;
        }
    };
    std::vector<std::thread> threads;
    threads.reserve(size_t(n_threads - 1));
    for (int w = 1; w < n_threads; ++w) threads.emplace_back(work, w);
    work(0);
    for (std::thread &t : threads) t.join();
    if (first_error) std::rethrow_exception(first_error);
}

} // namespace rf::model_writer
