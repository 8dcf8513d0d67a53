#include "ops_matmul_common.h"

#include <algorithm>

namespace rfcpu {

void plan_act_rows(const MatmulKernel &kern, const rf_tensor &x, int nth, NodeWork *w) {
    if (!kern.dot || kern.act == ActFormat::F32) return; // nothing to prepare: parts[0] stays 1
    const int64_t K = x.ne[0], rows = nrows(x);
    w->shared_bytes = act_row_size(kern.act, K) * size_t(rows);
    w->parts[0] = parts_for(rows, K * 4, nth);
}

namespace {

// x rounded to f16 and back (round to nearest even, as ggml's fp32 -> fp16 row conversion).
void round_f16_row(const KernelSet &ks, const float *x, void *vy, int64_t k) {
    auto *y = static_cast<float *>(vy);
    uint16_t h[256];
    for (int64_t i = 0; i < k; i += 256) {
        const int64_t n = std::min<int64_t>(256, k - i);
        ks.f32_to_f16(x + i, h, n);
        ks.f16_to_f32(h, y + i, n);
    }
}

} // namespace

void quantize_act_rows(const OpContext &ctx, const MatmulKernel &kern, const rf_tensor &x, int64_t part, int64_t n_parts) {
    if (!kern.dot || kern.act == ActFormat::F32) return; // nothing planned
    const int64_t K = x.ne[0];
    const size_t arow = act_row_size(kern.act, K);
    const QuantizeFn quant = kern.act == ActFormat::Q8_K ? ctx.ks.quantize_q8_K : ctx.ks.quantize_q8_32;
    int64_t r0, r1;
    split_range(nrows(x), part, n_parts, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        int64_t i1, i2, i3;
        unravel_row(x, r, &i1, &i2, &i3);
        if (kern.act == ActFormat::F16) round_f16_row(ctx.ks, row_f32(x, i1, i2, i3), ctx.shared + size_t(r) * arow, K);
        else quant(row_f32(x, i1, i2, i3), ctx.shared + size_t(r) * arow, K);
    }
}

namespace {

// Weight rows per phase-1 part. Decode streams every weight once from DRAM, and each part is a
// new stream: its first kPrefetchBytes are not prefetched and the prefetches past its end fetch
// rows another thread may take. Parts of about kPartBytes keep that small (16-row parts of
// 2048-wide q4_K rows, 18 KiB, streamed clearly slower than 64-row parts in TinyLlama-shaped
// decode), while at least kMinPartsPerThread parts per
// thread remain for dynamic balancing (a descheduled thread's parts are taken by the others).
constexpr int64_t kPartBytes = int64_t(64) << 10;
constexpr int64_t kMinRowsPerPart = 16;
constexpr int64_t kMinPartsPerThread = 8;

int64_t rows_per_part(const rf_tensor &w, int nth) {
    const int64_t N = w.ne[1], row_bytes = std::max<int64_t>(1, int64_t(w.nb[1]));
    int64_t rows = std::max(kMinRowsPerPart, kPartBytes / row_bytes);
    while (rows > kMinRowsPerPart && (N + rows - 1) / rows < kMinPartsPerThread * nth)
        rows = std::max(kMinRowsPerPart, rows / 2);
    return rows;
}

} // namespace

int64_t row_block_parts(const rf_tensor &w, int64_t groups, int nth) {
    const int64_t rows = rows_per_part(w, nth);
    return nth <= 1 ? 1 : (w.ne[1] + rows - 1) / rows * groups;
}

} // namespace rfcpu
