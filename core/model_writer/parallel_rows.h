// Splits the rows of a tensor over std::threads. Rows are handed out in small chunks from a
// shared counter (the cost per row is uneven for K-quant searches); the first exception thrown
// by any worker is rethrown on the calling thread once all workers have stopped.
#pragma once
#include <cstdint>
#include <functional>

namespace rf::model_writer {

// Worker count for a `-t N` option: N if positive, else the hardware's thread count (>= 1).
int resolve_thread_count(int requested);

// Calls fn(worker, row_begin, row_end) until [0, n_rows) is covered; `worker` is in
// [0, n_threads) so callers can keep per-worker scratch buffers. Runs inline for one thread.
void parallel_for_rows(int64_t n_rows, int n_threads,
                       const std::function<void(int worker, int64_t begin, int64_t end)> &fn);

} // namespace rf::model_writer
