// MATMUL: dst[N,M] = src0[K,N]^T * src1[K,M], src0 any weight type.
//
// Phase 0 quantizes every src1 column once into the kernel's activation format (q8_K / q8_32).
// Phase 1 is cut into parts of consecutive weight rows (row_block_parts, ops_matmul_common.h)
// that the pool hands out dynamically; within a part, a weight row is unpacked once per tile of
// kMaxCols columns. Types without an integer kernel take the generic path: dequantize the row
// (rf::dequantize_row) and use f32 dots.
#include <algorithm>

#include "ops.h"
#include "ops_matmul_common.h"
#include "rocmforge/types.h"

namespace rfcpu {
namespace {

bool check_matmul(const rf_node &n, std::string *why) {
    const rf_tensor *d = n.dst, *w = n.src[0], *x = n.src[1];
    if (!d || !w || !x) { *why = "dst/src0/src1 missing"; return false; }
    if (!dequantizable(w->type) || w->type == RF_TYPE_Q8_K) { *why = "weight type not supported: " + shape_str(*w); return false; }
    if (x->type != RF_TYPE_F32 || d->type != RF_TYPE_F32) { *why = "src1 and dst must be f32"; return false; }
    if (!rows_contiguous(*w) || !rows_contiguous(*x) || !rows_contiguous(*d)) { *why = "rows must be contiguous"; return false; }
    if (w->ne[0] != x->ne[0] || d->ne[0] != w->ne[1] || d->ne[1] != x->ne[1] || d->ne[2] != x->ne[2] ||
        d->ne[3] != x->ne[3] || x->ne[2] % w->ne[2] || x->ne[3] % w->ne[3]) {
        *why = "shapes do not match: src0 " + shape_str(*w) + ", src1 " + shape_str(*x) + ", dst " + shape_str(*d);
        return false;
    }
    return true;
}

struct Geometry {
    int64_t K, N, M, ne12, ne13, r2, r3;
    explicit Geometry(const rf_node &n)
        : K(n.src[0]->ne[0]), N(n.src[0]->ne[1]), M(n.src[1]->ne[1]), ne12(n.src[1]->ne[2]),
          ne13(n.src[1]->ne[3]), r2(n.src[1]->ne[2] / n.src[0]->ne[2]), r3(n.src[1]->ne[3] / n.src[0]->ne[3]) {}
};

NodeWork plan_matmul(const KernelSet &ks, const rf_node &n, int nth) {
    const Geometry g(n);
    const MatmulKernel &kern = ks.matmul[n.src[0]->type];
    NodeWork w;
    w.n_phases = 2;
    plan_act_rows(kern, *n.src[1], nth, &w);
    if (!kern.dot) w.per_thread_bytes = size_t(g.K) * sizeof(float);
    w.parts[1] = row_block_parts(*n.src[0], g.ne12 * g.ne13, nth);
    return w;
}

// Rows [n0, n1) of slice (i12, i13) against every activation column.
void dot_rows(const OpContext &ctx, const rf_node &n, const MatmulKernel &kern, int64_t slice, int64_t n0, int64_t n1) {
    const Geometry g(n);
    const rf_tensor &w = *n.src[0], &x = *n.src[1], &d = *n.dst;
    const int64_t i12 = slice % g.ne12, i13 = slice / g.ne12;
    const bool quantized_act = kern.act != ActFormat::F32;
    const size_t arow = act_row_size(kern.act, g.K);
    const size_t out_stride = size_t(d.nb[1] / sizeof(float));
    const uint8_t *wbase = static_cast<const uint8_t *>(w.data) + (i12 / g.r2) * w.nb[2] + (i13 / g.r3) * w.nb[3];
    const uint8_t *abase = quantized_act ? ctx.shared + size_t(slice * g.M) * arow
                                         : reinterpret_cast<const uint8_t *>(row_f32(x, 0, i12, i13));
    const size_t astride = quantized_act ? arow : size_t(x.nb[1]);
    float *obase = row_f32(d, 0, i12, i13);
    for (int64_t m0 = 0; m0 < g.M; m0 += kMaxCols) {
        const int nc = int(std::min<int64_t>(kMaxCols, g.M - m0));
        for (int64_t r = n0; r < n1; ++r)
            kern.dot(g.K, wbase + r * w.nb[1], abase + size_t(m0) * astride, astride, nc,
                     obase + size_t(m0) * out_stride + r, out_stride);
    }
}

void generic_rows(const OpContext &ctx, const rf_node &n, int64_t slice, int64_t n0, int64_t n1, int tid) {
    const Geometry g(n);
    const rf_tensor &w = *n.src[0], &x = *n.src[1], &d = *n.dst;
    const int64_t i12 = slice % g.ne12, i13 = slice / g.ne12;
    float *buf = reinterpret_cast<float *>(ctx.thread_scratch(tid));
    const uint8_t *wbase = static_cast<const uint8_t *>(w.data) + (i12 / g.r2) * w.nb[2] + (i13 / g.r3) * w.nb[3];
    for (int64_t r = n0; r < n1; ++r) {
        rf::dequantize_row(w.type, wbase + r * w.nb[1], buf, g.K);
        for (int64_t m = 0; m < g.M; ++m) row_f32(d, m, i12, i13)[r] = ctx.ks.dot_f32(buf, row_f32(x, m, i12, i13), g.K);
    }
}

void run_matmul(const OpContext &ctx, const rf_node &n, int phase, int64_t part, int64_t n_parts, int tid) {
    const MatmulKernel &kern = ctx.ks.matmul[n.src[0]->type];
    if (phase == 0) {
        quantize_act_rows(ctx, kern, *n.src[1], part, n_parts);
        return;
    }
    // Phase 1: part -> (slice, block of rows); one part covers everything when single-threaded.
    const Geometry g(n);
    const RowBlocks rb(g.N, g.ne12 * g.ne13, part, n_parts);
    for (int64_t c = rb.c0; c < rb.c1; ++c) {
        const int64_t slice = rb.group(c), n0 = rb.row0(c), n1 = rb.row1(c);
        if (kern.dot) dot_rows(ctx, n, kern, slice, n0, n1);
        else generic_rows(ctx, n, slice, n0, n1, tid);
    }
}

} // namespace

const OpImpl kOpMatmul = {check_matmul, plan_matmul, run_matmul};

} // namespace rfcpu
