// What MATMUL and MATMUL_ID share: the phase-0 quantization of the activation rows into the
// kernel's format, and the phase-1 split of the weight rows into parts.
#pragma once
#include <algorithm>
#include <cstdint>

#include "ops.h"

namespace rfcpu {

// Phase 0 of the plan: where the kernel takes quantized activations, room in the shared buffer
// for every row of x (row r at r * act_row_size) and the parts that quantize them.
void plan_act_rows(const MatmulKernel &kern, const rf_tensor &x, int nth, NodeWork *w);

// Phase 0: part `part` of `n_parts` of quantizing every row of x (in unravel_row order) into
// ctx.shared, laid out as plan_act_rows planned (nothing where the kernel takes f32).
void quantize_act_rows(const OpContext &ctx, const MatmulKernel &kern, const rf_tensor &x, int64_t part, int64_t n_parts);

// Phase 1 covers `groups` groups (MATMUL: slices, MATMUL_ID: chosen experts) of the N rows of w
// ([K, N, ...]), each cut into blocks of rows. The plan's part count for nth threads: blocks of
// about rows_per_part rows (ops_matmul_common.cpp), one part when single-threaded.
int64_t row_block_parts(const rf_tensor &w, int64_t groups, int nth);

// Part `part` of `n_parts`: its chunks c in [c0, c1), chunk c being rows [row0(c), row1(c)) of
// group(c). Each group has n_parts / groups blocks (fewer, larger ones where the pool capped the
// part count); rows per block follow from that, covering all N rows.
struct RowBlocks {
    RowBlocks(int64_t n_rows, int64_t groups, int64_t part, int64_t n_parts)
        : N(n_rows), blocks(std::max<int64_t>(1, n_parts / groups)), rows((N + blocks - 1) / blocks) {
        split_range(blocks * groups, part, n_parts, &c0, &c1);
    }
    int64_t group(int64_t c) const { return c / blocks; }
    int64_t row0(int64_t c) const { return (c % blocks) * rows; }
    int64_t row1(int64_t c) const { return std::min(N, row0(c) + rows); }

    int64_t N, blocks, rows, c0 = 0, c1 = 0;
};

} // namespace rfcpu
