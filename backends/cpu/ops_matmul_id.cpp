// MATMUL_ID (abi.h): dst[:, s, m] = W[:, :, ids[s, m]]^T * x[:, s or 0, m], W [K, N, E] of any
// MATMUL weight type.
//
// Phase 0 quantizes every activation row once into the kernel's format (as MATMUL does), except
// that F16 experts dot f16-rounded activations: ggml's vec_dot_type for MUL_MAT_ID, so a column
// equals MATMUL of the expert's slice on the rounded row bit for bit.
// Phase 1 is cut into parts of (chosen expert, block of weight rows): the a-th part group takes
// the a-th expert that some column chose (at most min(E, S*M) of them: a decode step of 128
// experts with 8 per token has 8 groups, not 128). A part collects the columns
// (s, m) routed to its expert by scanning the ids (S*M integers, negligible next to the rows),
// so tokens are grouped by expert: each weight row of an expert is unpacked once per tile of up
// to kMaxCols of its columns, and the rows of experts no token chose are never read. The tile's
// activation rows are gathered into the thread's scratch (the dot kernels take equally spaced
// columns), the outputs scattered back to their (s, m) rows.
#include <algorithm>
#include <cstring>

#include "ops.h"
#include "ops_matmul_common.h"
#include "rocmforge/types.h"

namespace rfcpu {
namespace {

struct Geometry {
    int64_t K, N, E, S, S1, M;
    explicit Geometry(const rf_node &n)
        : K(n.src[0]->ne[0]), N(n.src[0]->ne[1]), E(n.src[0]->ne[2]), S(n.src[2]->ne[0]), S1(n.src[1]->ne[1]),
          M(n.src[1]->ne[2]) {}
    int64_t max_chosen() const { return std::min(E, S * M); } // experts the columns can choose
    int64_t act_row(int64_t s, int64_t m) const { return m * S1 + (S1 == 1 ? 0 : s); }
};

bool check_matmul_id(const rf_node &n, std::string *why) {
    const rf_tensor *d = n.dst, *w = n.src[0], *x = n.src[1], *ids = n.src[2];
    if (!d || !w || !x || !ids) { *why = "dst/src0/src1/src2 missing"; return false; }
    if (!dequantizable(w->type) || w->type == RF_TYPE_Q8_K) { *why = "weight type not supported: " + shape_str(*w); return false; }
    if (x->type != RF_TYPE_F32 || d->type != RF_TYPE_F32) { *why = "src1 and dst must be f32"; return false; }
    if (ids->type != RF_TYPE_I32 || !is_contiguous(*ids)) { *why = "src2 (expert ids) must be contiguous i32"; return false; }
    if (!rows_contiguous(*w) || !rows_contiguous(*x) || !rows_contiguous(*d)) { *why = "rows must be contiguous"; return false; }
    const int64_t S = ids->ne[0], M = ids->ne[1];
    if (w->ne[3] != 1 || x->ne[3] != 1 || d->ne[3] != 1 || ids->ne[2] != 1 || ids->ne[3] != 1 || x->ne[0] != w->ne[0] ||
        (x->ne[1] != S && x->ne[1] != 1) || x->ne[2] != M || d->ne[0] != w->ne[1] || d->ne[1] != S || d->ne[2] != M) {
        *why = "shapes do not match: expects src0 [K,N,E], src1 [K,S|1,M], src2 [S,M], dst [N,S,M], got src0 " + shape_str(*w) +
               ", src1 " + shape_str(*x) + ", src2 " + shape_str(*ids) + ", dst " + shape_str(*d);
        return false;
    }
    return true;
}

size_t gathered_row_bytes(const MatmulKernel &kern, int64_t K) {
    return kern.act == ActFormat::F32 ? size_t(K) * sizeof(float) : act_row_size(kern.act, K);
}

// Per-thread scratch: the gathered tile of activation rows, its outputs and the column list (or
// a dequantized row) come first (expert_rows), then a flag per expert and the chosen experts' list.
size_t tile_region_bytes(const MatmulKernel &kern, const Geometry &g) {
    return kMaxCols * gathered_row_bytes(kern, g.K) + kMaxCols * sizeof(float) +
           std::max(size_t(g.S * g.M) * sizeof(int64_t), size_t(g.K) * sizeof(float)) + 64;
}

// The dot kernel of the expert weights and the activation format it reads.
MatmulKernel id_kernel(const KernelSet &ks, int type) {
    MatmulKernel k = ks.matmul[type];
    if (type == RF_TYPE_F16 && k.dot) k.act = ActFormat::F16;
    return k;
}

NodeWork plan_matmul_id(const KernelSet &ks, const rf_node &n, int nth) {
    const Geometry g(n);
    const MatmulKernel kern = id_kernel(ks, n.src[0]->type);
    NodeWork w;
    w.n_phases = 2;
    plan_act_rows(kern, *n.src[1], nth, &w);
    w.per_thread_bytes = tile_region_bytes(kern, g) + size_t(g.E) + size_t(g.max_chosen()) * sizeof(int32_t) + 64;
    w.parts[1] = row_block_parts(*n.src[0], g.max_chosen(), nth);
    return w;
}

// The columns (s, m) routed to expert e, as s + S*m, into cols; returns their number.
int64_t columns_of(const rf_node &n, const Geometry &g, int64_t e, int64_t *cols) {
    const auto *ids = static_cast<const int32_t *>(n.src[2]->data);
    int64_t c = 0;
    for (int64_t i = 0; i < g.S * g.M; ++i)
        if (ids[i] == e) cols[c++] = i;
    return c;
}

// Reports the first id out of range (the compute fails with it).
void columns_of_bad(const OpContext &ctx, const rf_node &n, const Geometry &g) {
    const auto *ids = static_cast<const int32_t *>(n.src[2]->data);
    for (int64_t i = 0; i < g.S * g.M; ++i)
        if (ids[i] < 0 || ids[i] >= g.E) {
            ctx.errors.fail("MATMUL_ID: expert id " + std::to_string(ids[i]) + " of slot " + std::to_string(i % g.S) + ", token " +
                            std::to_string(i / g.S) + " outside [0, " + std::to_string(g.E) + ")");
            return;
        }
}

// Rows [n0, n1) of expert e against its columns.
void expert_rows(const OpContext &ctx, const rf_node &n, const Geometry &g, const MatmulKernel &kern, int64_t e, int64_t n0,
                 int64_t n1, int tid) {
    const rf_tensor &w = *n.src[0], &x = *n.src[1], &d = *n.dst;
    uint8_t *scratch = ctx.thread_scratch(tid);
    const size_t grow = gathered_row_bytes(kern, g.K);
    uint8_t *tile = scratch;
    float *tile_out = reinterpret_cast<float *>(tile + kMaxCols * grow);
    auto *cols = reinterpret_cast<int64_t *>((reinterpret_cast<uintptr_t>(tile_out + kMaxCols) + 7) & ~uintptr_t(7));
    const int64_t n_cols = columns_of(n, g, e, cols);
    if (n_cols == 0) return;
    const uint8_t *wbase = static_cast<const uint8_t *>(w.data) + e * w.nb[2];
    if (!kern.dot) { // generic path: dequantize each row once, f32 dots with every column
        float *buf = reinterpret_cast<float *>(tile); // kMaxCols * grow >= K floats
        for (int64_t r = n0; r < n1; ++r) {
            rf::dequantize_row(w.type, wbase + r * w.nb[1], buf, g.K);
            for (int64_t c = 0; c < n_cols; ++c) {
                const int64_t s = cols[c] % g.S, m = cols[c] / g.S;
                row_f32(d, s, m)[r] = ctx.ks.dot_f32(buf, row_f32(x, g.S1 == 1 ? 0 : s, m), g.K);
            }
        }
        return;
    }
    const bool quantized_act = kern.act != ActFormat::F32;
    for (int64_t c0 = 0; c0 < n_cols; c0 += kMaxCols) {
        const int nc = int(std::min<int64_t>(kMaxCols, n_cols - c0));
        for (int c = 0; c < nc; ++c) {
            const int64_t s = cols[c0 + c] % g.S, m = cols[c0 + c] / g.S;
            const void *src = quantized_act ? static_cast<const void *>(ctx.shared + size_t(g.act_row(s, m)) * grow)
                                            : static_cast<const void *>(row_f32(x, g.S1 == 1 ? 0 : s, m));
            std::memcpy(tile + size_t(c) * grow, src, grow);
        }
        for (int64_t r = n0; r < n1; ++r) {
            kern.dot(g.K, wbase + r * w.nb[1], tile, grow, nc, tile_out, 1);
            for (int c = 0; c < nc; ++c) row_f32(d, cols[c0 + c] % g.S, cols[c0 + c] / g.S)[r] = tile_out[c];
        }
    }
}

void run_matmul_id(const OpContext &ctx, const rf_node &n, int phase, int64_t part, int64_t n_parts, int tid) {
    const MatmulKernel kern = id_kernel(ctx.ks, n.src[0]->type);
    if (phase == 0) {
        quantize_act_rows(ctx, kern, *n.src[1], part, n_parts);
        return;
    }
    // Part -> (a-th chosen expert, block of rows), as run_matmul splits (slice, block of rows).
    const Geometry g(n);
    const RowBlocks rb(g.N, g.max_chosen(), part, n_parts);
    if (rb.c0 >= rb.c1) return;
    // The chosen experts in ascending order (the ids scanned once per part; ids out of range are
    // reported by the parts of expert 0's group: columns_of).
    uint8_t *flags = ctx.thread_scratch(tid) + tile_region_bytes(kern, g);
    auto *chosen = reinterpret_cast<int32_t *>((reinterpret_cast<uintptr_t>(flags + g.E) + 3) & ~uintptr_t(3));
    std::memset(flags, 0, size_t(g.E));
    const auto *ids = static_cast<const int32_t *>(n.src[2]->data);
    bool bad = false;
    for (int64_t i = 0; i < g.S * g.M; ++i) {
        if (ids[i] >= 0 && ids[i] < g.E) flags[ids[i]] = 1;
        else bad = true;
    }
    int64_t n_chosen = 0;
    for (int64_t e = 0; e < g.E; ++e)
        if (flags[e]) chosen[n_chosen++] = (int32_t)e;
    if (bad && rb.c0 == 0) columns_of_bad(ctx, n, g);
    for (int64_t c = rb.c0; c < rb.c1; ++c) {
        const int64_t a = rb.group(c), n0 = rb.row0(c), n1 = rb.row1(c);
        if (a < n_chosen && n0 < n1) expert_rows(ctx, n, g, kern, chosen[a], n0, n1, tid);
    }
}

} // namespace

const OpImpl kOpMatmulId = {check_matmul_id, plan_matmul_id, run_matmul_id};

} // namespace rfcpu
