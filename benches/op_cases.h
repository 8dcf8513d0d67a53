// The op benchmark cases: matmul (dense and quantized weights, decode and prefill shapes of
// TinyLlama and Llama-2-7B), dequantization (GET_ROWS of a whole matrix to f32) and causal GQA
// attention over a paged cache (prefill and decode at several context lengths).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "op_timer.h"
#include "rocmforge/runtime.h"

namespace rfbench {

struct OpCase {
    rf::bench::Result proto; // name + params (backend added when run)
    // Builds tensors on the backend, checks supports_op, times the node. Returns false when the
    // backend does not support the node (nothing is timed).
    std::function<bool(rf::Backend &, const TimerOptions &, rf::bench::Result &)> run;
};

std::vector<OpCase> all_cases();

} // namespace rfbench
