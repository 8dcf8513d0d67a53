// What MATMUL and MATMUL_ID share: the phase-0 quantization of the activation rows into the
// kernel's format, and how many weight rows one phase-1 part takes.
#pragma once
#include <cstdint>

#include "ops.h"

namespace rfcpu {

// Phase 0 of the plan: where the kernel takes quantized activations, room in the shared buffer
// for every row of x (row r at r * act_row_size) and the parts that quantize them.
void plan_act_rows(const MatmulKernel &kern, const rf_tensor &x, int nth, NodeWork *w);

// Phase 0: part `part` of `n_parts` of quantizing every row of x (in unravel_row order) into
// ctx.shared, laid out as plan_act_rows planned.
void quantize_act_rows(const OpContext &ctx, const MatmulKernel &kern, const rf_tensor &x, int64_t part, int64_t n_parts);

// Weight rows of w ([K, N, ...]) per phase-1 part for nth threads.
int64_t rows_per_part(const rf_tensor &w, int nth);

} // namespace rfcpu
