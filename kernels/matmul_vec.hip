// MATMUL for decode: M = 1, and a few columns (several sequences decoding together).
// Memory-bound: one warp per weight row (or R rows), each lane reads a contiguous piece of a
// block with the widest loads its alignment allows.
//  - F16 (M = 1): dotted against the f32 activations.
//  - Q4_K, Q5_K, Q6_K, Q4_0, Q5_0, Q8_0, IQ4_XS and the grid i-quants with TQ2_0 (mvq_iq.h) (rf_mvq_*,
//    rf_mvqn_*; NVIDIA: Q5_0, IQ4_XS and the grid formats): the activations are first quantized to
//    q8_1-like blocks (rf_quantize_q8_1: 32 int8 + scale + scaled sum) in plugin scratch, then each
//    lane dots packed weight quants with them 4 at a time (dp4a / sdot4), with the per-format
//    pieces of mvq_blocks.h. Reading int8 instead of f32 activations cuts the L1 traffic per
//    weight byte ~8x, which bounded the f32 kernels. With several columns each weight block is
//    read once for all of them (rf_mvqn_*), instead of once per column. Q4_1, Q5_1, IQ4_NL and
//    MXFP4 have the one-column kernel only (rf_mvq_q4_1, rf_mvq_q5_1, rf_mvq_iq4_nl, rf_mvq_mxfp4).
#include "compat.h"
#include "quant_decode.h"
#include "mvq_blocks.h"
#include "mvq_iq.h"

#define RF_MV_WARPS 4

// The gated feed-forward product of the fused kernels below (their RF_KP_MV_GATED form): SwiGLU
// as rf_swiglu_f32 computes it, or in the GELU kernels (..._g, Gemma) GeGLU as rf_geglu_f32 does.
// A template argument, not a run-time form: the SwiGLU kernels keep their registers.
template <bool GELU> RF_DEV float gated_product(float gate, float up) {
    if constexpr (GELU) return gelu_tanh(gate) * up;
    else return (gate / (1.f + __expf(-gate))) * up;
}

struct MvRow { const u8 *w; const float *x; float *y; i64 K; };

RF_DEV bool mv_setup(const rf_kargs &a, MvRow &r) {
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 n = (i64)blockIdx.x * RF_MV_WARPS + threadIdx.x / RF_WARP;
    if (n >= w.ne[1]) return false;
    int i2 = 0, i3 = 0, w2 = 0, w3 = 0;
    batch_coords(blockIdx.z, x, w, i2, i3, w2, w3);
    r.w = (const u8 *)w.data + w2 * w.nb[2] + w3 * w.nb[3] + n * w.nb[1];
    r.x = (const float *)((const u8 *)x.data + i2 * x.nb[2] + i3 * x.nb[3]);
    r.y = (float *)((u8 *)d.data + i2 * d.nb[2] + i3 * d.nb[3]) + n;
    r.K = w.ne[0];
    return true;
}

RF_DEV float dot16_nib(uint4 q, int shift, const float *x) { // 16 nibbles (bytes >> shift) . x[0..15]
    const u32 v[4] = {q.x, q.y, q.z, q.w};
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const float4 xv = *(const float4 *)(x + 4 * i);
        const u32 b = (v[i] >> shift) & 0x0F0F0F0Fu;
        s += (float)(b & 0xF) * xv.x + (float)((b >> 8) & 0xF) * xv.y + (float)((b >> 16) & 0xF) * xv.z + (float)(b >> 24) * xv.w;
    }
    return s;
}

RF_DEV float sum16(const float *x) {
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < 4; ++i) { const float4 v = *(const float4 *)(x + 4 * i); s += (v.x + v.y) + (v.z + v.w); }
    return s;
}

// F16: 8 halves per 16-byte load (host guarantees K % 8 == 0 and 16-byte aligned rows); the
// warp's dot product of row w with the f32 vector x (every lane gets it). Also the F16 rows of the
// fused decode launches (mvq_row), so fused and unfused give the same floats.
// One group of 8: the products added in the order the compiler gave the written-out sum (the
// second product, the first fused onto it, then the others in order), written out here so that
// every kernel dotting F16 rows, one row a warp or two, gets the same bits.
RF_DEV float f16_group(uint4 q, float4 x0, float4 x1) {
    float s = fmul(h2f((u16)(q.x >> 16)), x0.y);
    s = ffma(h2f((u16)q.x), x0.x, s);
    s = ffma(h2f((u16)q.y), x0.z, s);
    s = ffma(h2f((u16)(q.y >> 16)), x0.w, s);
    s = ffma(h2f((u16)q.z), x1.x, s);
    s = ffma(h2f((u16)(q.z >> 16)), x1.y, s);
    s = ffma(h2f((u16)q.w), x1.z, s);
    return ffma(h2f((u16)(q.w >> 16)), x1.w, s);
}
// R rows (at w[r]) dotted with x, each piece of x loaded once for all of them; every lane gets
// the sums. R = 2: F16 gate and up side by side (rf_mvq_multi), two groups of each in flight.
template <int R> RF_DEV void mv_f16_dot_rows(const u8 *const (&w)[R], const float *x, i64 K, float (&acc)[R]) {
    const int lane = threadIdx.x % RF_WARP;
    const i64 n8 = K / 8;
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = 0.f;
#pragma unroll(R == 1 ? 4 : 2)
    for (i64 i = lane; i < n8; i += RF_WARP) {
        uint4 q[R];
#pragma unroll
        for (int r = 0; r < R; ++r) q[r] = *(const uint4 *)(w[r] + 16 * i);
        const float4 x0 = *(const float4 *)(x + 8 * i), x1 = *(const float4 *)(x + 8 * i + 4);
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r] = fadd(acc[r], f16_group(q[r], x0, x1));
    }
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = warp_sum(acc[r]);
}
RF_DEV float mv_f16_dot(const u8 *w, const float *x, i64 K) {
    const u8 *const rows[1] = {w};
    float acc[1];
    mv_f16_dot_rows<1>(rows, x, K, acc);
    return acc[0];
}
RF_KERNEL __launch_bounds__(128) void rf_mv_f16(rf_kargs a) {
    rf_kernel_start();
    MvRow r;
    if (!mv_setup(a, r)) return;
    const float acc = mv_f16_dot(r.w, r.x, r.K);
    if (threadIdx.x % RF_WARP == 0) *r.y = acc;
}

// rf_mv_f32's weight row into L2 before rf_kernel_start (mv.no_weight_prefetch 0), the block's
// threads a 128-byte line each, as the quantized decode kernels do: a router's reads overlap the
// kernel before (the norm).
RF_DEV void prefetch_mv_f32_row(const rf_kargs &a) {
#if RF_NVIDIA // prefetch_line_l2 is NVIDIA's alone
    const rf_ktensor &w = a.src[0], &x = a.src[1];
    if (a.mv.no_weight_prefetch) return;
    int i2 = 0, i3 = 0, w2 = 0, w3 = 0;
    batch_coords(blockIdx.z, x, w, i2, i3, w2, w3);
    const u8 *row = (const u8 *)w.data + w2 * w.nb[2] + w3 * w.nb[3] + (i64)blockIdx.x * w.nb[1];
    for (i64 o = (i64)threadIdx.x * 128; o < w.ne[0] * 4; o += (i64)blockDim.x * 128) prefetch_line_l2(row + o);
#else
    (void)a;
#endif
}
// F32 weights, one activation row (the routers of mixture-of-experts models: 8..128 rows): a
// block per row, its warps over interleaved float4 pieces of K, summed in shared memory; a warp
// per row left most of the GPU idle on so few rows. Grid (N, 1, batch), RF_MV_WARPS warps.
// Parameters: mv.no_weight_prefetch.
RF_KERNEL __launch_bounds__(RF_MV_WARPS * RF_WARP) void rf_mv_f32(rf_kargs a) {
    prefetch_mv_f32_row(a);
    rf_kernel_start();
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 n = blockIdx.x, K = w.ne[0];
    int i2 = 0, i3 = 0, w2 = 0, w3 = 0;
    batch_coords(blockIdx.z, x, w, i2, i3, w2, w3);
    const float4 *wr = (const float4 *)((const u8 *)w.data + w2 * w.nb[2] + w3 * w.nb[3] + n * w.nb[1]);
    const float4 *xr = (const float4 *)((const u8 *)x.data + i2 * x.nb[2] + i3 * x.nb[3]);
    float s = 0.f;
    for (i64 i = threadIdx.x; i < K / 4; i += blockDim.x) {
        const float4 wv = wr[i], xv = xr[i];
        s = ffma(wv.x, xv.x, s);
        s = ffma(wv.y, xv.y, s);
        s = ffma(wv.z, xv.z, s);
        s = ffma(wv.w, xv.w, s);
    }
    s = warp_sum(s);
    __shared__ float part[RF_MV_WARPS];
    if (threadIdx.x % RF_WARP == 0) part[threadIdx.x / RF_WARP] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int i = 0; i < (int)(blockDim.x / RF_WARP); ++i) t += part[i];
        ((float *)((u8 *)d.data + i2 * d.nb[2] + i3 * d.nb[3]))[n] = t;
    }
}

// ---- q8_1 activations (written by quantize_act.hip or the fused norm) ----------------------
// Column z (batch index) of the scratch: K int8 quants, then K/32 pairs (scale d, d * sum of the
// 32 quants); aux[0] = column stride in bytes.

// The row functions of mvq_blocks.h: one kernel per weight type, a warp per row. (Two or four
// warps per row, each taking part of the row's blocks, ran slower for 4096-row matrices and
// were dropped.)
template <class B> RF_DEV void mvq_one(const rf_kargs &a) {
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 n = (i64)blockIdx.x * RF_MV_WARPS + threadIdx.x / RF_WARP;
    if (n >= w.ne[1]) return;
    int i2 = 0, i3 = 0, w2 = 0, w3 = 0;
    batch_coords(blockIdx.z, x, w, i2, i3, w2, w3);
    const float acc = mvq_dot_row<B>((const u8 *)w.data + w2 * w.nb[2] + w3 * w.nb[3] + n * w.nb[1],
                                     (const i8 *)a.scratch + (i64)blockIdx.z * a.aux[0], w.ne[0]);
    if (threadIdx.x % RF_WARP == 0) ((float *)((u8 *)d.data + i2 * d.nb[2] + i3 * d.nb[3]))[n] = acc;
}
// The warp's weight row (batch slice of blockIdx.z) into L2 before the kernel starts.
// mv.no_weight_prefetch = 1 (all three kernel families): no prefetch (the backend option prefetch).
RF_DEV void prefetch_mvq_one(const rf_kargs &a) {
    const rf_ktensor &w = a.src[0], &x = a.src[1];
    const i64 n = (i64)blockIdx.x * RF_MV_WARPS + threadIdx.x / RF_WARP;
    if (a.mv.no_weight_prefetch || n >= w.ne[1]) return;
    int i2 = 0, i3 = 0, w2 = 0, w3 = 0;
    batch_coords(blockIdx.z, x, w, i2, i3, w2, w3);
    prefetch_l2((const u8 *)w.data + w2 * w.nb[2] + w3 * w.nb[3] + n * w.nb[1], w.nb[1]);
}
#define RF_MVQ_ONE(t, B) \
    RF_KERNEL __launch_bounds__(128) void rf_mvq_##t(rf_kargs a) { \
        prefetch_grid<B>(); prefetch_mvq_one(a); rf_kernel_start(); mvq_one<B>(a); }
RF_MVQ_ONE(q4_k, MvqK4<T_Q4_K>)
RF_MVQ_ONE(q5_k, MvqK4<T_Q5_K>)
RF_MVQ_ONE(q6_k, MvqQ6K)
RF_MVQ_ONE(q4_0, MvqQ4_0)
RF_MVQ_ONE(q8_0, MvqQ8_0)
RF_MVQ_ONE(q4_1, MvqLegacy<T_Q4_1>)
RF_MVQ_ONE(q5_0, MvqLegacy<T_Q5_0>)
RF_MVQ_ONE(q5_1, MvqLegacy<T_Q5_1>)
RF_MVQ_ONE(iq4_xs, MvqIq4Xs)
RF_MVQ_ONE(iq4_nl, MvqIq4Nl)
RF_MVQ_ONE(mxfp4, MvqMxfp4)
RF_MVQ_ONE(iq2_xxs, MvqIq2Xxs)
RF_MVQ_ONE(iq2_xs, MvqIq2Xs)
RF_MVQ_ONE(iq2_s, MvqIq2S)
RF_MVQ_ONE(iq3_xxs, MvqIq3Xxs)
RF_MVQ_ONE(iq3_s, MvqIq3S)
RF_MVQ_ONE(iq1_s, MvqIq1S)
RF_MVQ_ONE(iq1_m, MvqIq1M)
RF_MVQ_ONE(tq2_0, MvqTq2_0)

// xq: the q8_1 vector, or for F16 weights the f32 vector itself (a launch is all F16 or none).
RF_DEV float mvq_row(int type, const u8 *w, const i8 *xq, i64 K) {
    switch (type) {
    case T_F16: return mv_f16_dot(w, (const float *)xq, K);
    case T_Q4_K: return mvq_dot_row<MvqK4<T_Q4_K>>(w, xq, K);
    case T_Q5_K: return mvq_dot_row<MvqK4<T_Q5_K>>(w, xq, K);
    case T_Q6_K: return mvq_dot_row<MvqQ6K>(w, xq, K);
    case T_Q4_0: return mvq_dot_row<MvqQ4_0>(w, xq, K);
#if RF_NVIDIA // the AMD packs run Q5_0 and IQ4_XS on their plain kernels: here Q5_0 cost rf_mvq_multi scratch on RDNA
    case T_Q5_0: return mvq_dot_row<MvqLegacy<T_Q5_0>>(w, xq, K);
    case T_IQ4_XS: return mvq_dot_row<MvqIq4Xs>(w, xq, K);
    // the grid formats from the global tables (no staged copy in these any-type kernels), one
    // block in flight (MvqAnyRow)
    case T_IQ2_XXS: return mvq_dot_row<MvqAnyRow<MvqIq2XxsT<false>>>(w, xq, K);
    case T_IQ3_XXS: return mvq_dot_row<MvqAnyRow<MvqIq3XxsT<false>>>(w, xq, K);
    case T_IQ3_S: return mvq_dot_row<MvqAnyRow<MvqIq3ST<false>>>(w, xq, K);
    case T_IQ2_XS: return mvq_dot_row<MvqAnyRow<MvqIq2XsT<false>>>(w, xq, K);
    case T_IQ2_S: return mvq_dot_row<MvqAnyRow<MvqIq2S>>(w, xq, K);
    case T_IQ1_S: return mvq_dot_row<MvqAnyRow<MvqIq1S>>(w, xq, K);
    case T_IQ1_M: return mvq_dot_row<MvqAnyRow<MvqIq1M>>(w, xq, K);
    case T_TQ2_0: return mvq_dot_row<MvqAnyRow<MvqTq2_0>>(w, xq, K);
#endif
    default: return mvq_dot_row<MvqQ8_0>(w, xq, K);
    }
}

// Up to three M = 1 matmuls over the same q8_1 vector (decode: K, V, Q or gate, up) in one
// launch; each row is computed exactly as by its single-matmul kernel. Weight s = src[s] (s < 3),
// output s: dst, src[3], src[4]; segment s covers blocks [start(s), start(s+1)) with start(0) = 0,
// start(1) = aux[1], start(2) = aux[2], start(n) = gridDim.x (aux[3] = n segments). Weight rows are
// contiguous (nb[1] = row bytes), outputs contiguous f32, batch 1, scratch = the q8_1 vector (F16
// weights: the f32 vector).
// Parameters: a.mv (rf_kp_mv). mv.form = RF_KP_MV_GATED (SwiGLU form): two segments of equal N in
// blocks [0, aux[1]); each warp computes row n of both, writes both, and dst2 (src[4]) [n] =
// silu(gate) * up as rf_swiglu_f32 does.
// mv.form = RF_KP_MV_ROPE (matmul + ROPE NORMAL, one token): one segment, N % 4 == 0; the block's
// rows 4b..4b+3 hold two rotation pairs; src[3] = rotated output (dense, same element order),
// src[1] = positions, src[2] = factors (may be null), mv.n_rot, mv.head_dim = head size D,
// mv.freq_base, mv.freq_scale (rf_rope_f32's rope_rotate).
// Segment s and row n of this warp in the K/V/Q (or gate/up) form; n >= rows: no row.
struct MultiRow { const u8 *w; i64 stride, rows, n; int type, s; };
RF_DEV MultiRow multi_row(const rf_kargs &a) {
    const int nseg = (int)a.aux[3];
    int s = 0;
    i64 blk = blockIdx.x;
    if (a.mv.form != RF_KP_MV_GATED) {
        if (nseg > 2 && blk >= a.aux[2]) { s = 2; blk -= a.aux[2]; }
        else if (nseg > 1 && blk >= a.aux[1]) { s = 1; blk -= a.aux[1]; }
    }
    // Fields picked with constant indices: a.src[s] with a run-time s copies the whole argument
    // block to scratch memory on AMD (592 bytes per thread on gfx1030/gfx1100).
    const rf_ktensor &w0 = a.src[0], &w1 = a.src[1], &w2 = a.src[2];
    MultiRow r;
    r.s = s;
    r.rows = s == 0 ? w0.ne[1] : s == 1 ? w1.ne[1] : w2.ne[1];
    r.stride = s == 0 ? w0.nb[1] : s == 1 ? w1.nb[1] : w2.nb[1];
    r.type = s == 0 ? w0.type : s == 1 ? w1.type : w2.type;
    r.w = (const u8 *)(s == 0 ? w0.data : s == 1 ? w1.data : w2.data);
    r.n = blk * RF_MV_WARPS + threadIdx.x / RF_WARP;
    return r;
}
// mv.no_weight_prefetch = 1: none; else mv.prefetch_head_blocks = k > 0: only the first k blocks'
// rows (the head of the weights, pm_prefetch_head: the SwiGLU form of F16 gate / up after the norm).
RF_DEV void prefetch_mvq_multi(const rf_kargs &a) {
    if (a.mv.no_weight_prefetch || (a.mv.prefetch_head_blocks && (int)blockIdx.x >= a.mv.prefetch_head_blocks)) return;
    if (a.mv.form == RF_KP_MV_ROPE) {
        const rf_ktensor &w = a.src[0];
        const i64 n = (i64)blockIdx.x * RF_MV_WARPS + threadIdx.x / RF_WARP;
        if (n < w.ne[1]) prefetch_l2((const u8 *)w.data + n * w.nb[1], w.nb[1]);
        return;
    }
    const MultiRow r = multi_row(a);
    if (r.n >= r.rows) return;
    prefetch_l2(r.w + r.n * r.stride, r.stride);
    if (a.mv.form == RF_KP_MV_GATED) prefetch_l2((const u8 *)a.src[1].data + r.n * a.src[1].nb[1], a.src[1].nb[1]);
}
// The cos/sin of a rotation pair fetched before rf_kernel_start (compat.h): the graph's (cos,
// sin) rows, positions (graph inputs) and frequency factors (weights) are never written by a
// kernel, so under programmatic dependent launch the load, or the double-precision trigonometry
// where the graph gives positions only (the fused rope's main cost), overlaps the previous
// kernel, as rope.hip's prefetch_rope_table does.
struct RopeCS { float c, s; bool rotates; };
// positions / factors: where the kernel's arguments keep them (src[1], src[2] in the rope form of
// rf_mvq_multi and rf_mvqn_*f; src[3], src[4] in rf_mvq_proj); the positions' slot may hold the
// angles' rows instead (rope_cs_token). P: the family's parameters (a.mv, a.mv_proj, a.mvn_proj),
// whose n_rot, head_dim, freq_base and freq_scale sit at the same slots.
template <class P>
RF_DEV RopeCS rope_cs_of(const P &kp, const rf_ktensor &positions, const rf_ktensor &factors, i64 row, int pos_index,
                         bool active) {
    const int D = kp.head_dim, n_rot = kp.n_rot;
    const i64 j = row % D; // even: the pair (j, j + 1) of head row / D
    RopeCS r{1.f, 0.f, j / 2 < n_rot / 2};
    if (r.rotates && active)
        rope_cs_token(positions, (const float *)factors.data, j / 2, pos_index, n_rot, kp.freq_base, kp.freq_scale, r.c, r.s);
    return r;
}
RF_DEV RopeCS rope_cs_at(const rf_kargs &a, i64 row, int pos_index, bool active) {
    return rope_cs_of(a.mv, a.src[1], a.src[2], row, pos_index, active);
}
// rf_mvq_multi in rope form: lane 0 of the block's even warps (the pair's first row).
RF_DEV RopeCS prefetch_rope_multi(const rf_kargs &a) {
    if (a.mv.form != RF_KP_MV_ROPE) return RopeCS{1.f, 0.f, false};
    const int wi = threadIdx.x / RF_WARP;
    return rope_cs_at(a, (i64)blockIdx.x * RF_MV_WARPS + wi, 0, threadIdx.x % RF_WARP == 0 && !(wi & 1));
}
RF_KERNEL __launch_bounds__(128) void rf_mvq_multi(rf_kargs a) {
    prefetch_mvq_multi(a);
    const RopeCS rot = prefetch_rope_multi(a);
    rf_kernel_start();
    __shared__ float sh_rows[RF_MV_WARPS];
    const bool swiglu = a.mv.form == RF_KP_MV_GATED;
    if (a.mv.form == RF_KP_MV_ROPE) {
        const rf_ktensor &w = a.src[0];
        const int wi = threadIdx.x / RF_WARP;
        const i64 n = (i64)blockIdx.x * RF_MV_WARPS + wi, K = w.ne[0];
        const i8 *xq = (const i8 *)a.scratch;
        const bool rotates = threadIdx.x % RF_WARP == 0 && !(wi & 1) && rot.rotates;
        const float c = rot.c, sn = rot.s;
        const float v = mvq_row(w.type, (const u8 *)w.data + n * w.nb[1], xq, K);
        if (threadIdx.x % RF_WARP == 0) { ((float *)a.dst.data)[n] = v; sh_rows[wi] = v; }
        __syncthreads();
        if (threadIdx.x % RF_WARP != 0 || (wi & 1)) return;
        float y0 = sh_rows[wi], y1 = sh_rows[wi + 1];
        if (rotates) rope_apply(sh_rows[wi], sh_rows[wi + 1], c, sn, y0, y1);
        float *yr = (float *)a.src[3].data;
        yr[n] = y0;
        yr[n + 1] = y1;
        return;
    }
    const MultiRow mr = multi_row(a);
    const i64 n = mr.n, s = mr.s;
    if (n >= mr.rows) return;
    const i64 K = a.src[0].ne[0];
    const i8 *xq = (const i8 *)a.scratch;
    const rf_ktensor &wu = a.src[1];
    float v, u = 0.f;
    if (swiglu && mr.type == T_F16 && wu.type == T_F16) { // gate and up rows side by side (each dotted as rf_mv_f16 does)
        const u8 *const rows[2] = {mr.w + n * mr.stride, (const u8 *)wu.data + n * wu.nb[1]};
        float acc[2];
        mv_f16_dot_rows<2>(rows, (const float *)xq, K, acc);
        v = acc[0];
        u = acc[1];
    } else {
        v = mvq_row(mr.type, mr.w + n * mr.stride, xq, K);
    }
    const bool lane0 = threadIdx.x % RF_WARP == 0;
    if (!swiglu) {
        float *y = (float *)(s == 0 ? a.dst.data : s == 1 ? a.src[3].data : a.src[4].data);
        if (lane0) y[n] = v;
        return;
    }
    if (mr.type != T_F16 || wu.type != T_F16) u = mvq_row(wu.type, (const u8 *)wu.data + n * wu.nb[1], xq, K);
    if (lane0) {
        ((float *)a.dst.data)[n] = v;
        ((float *)a.src[3].data)[n] = u;
        ((float *)a.src[4].data)[n] = gated_product<false>(v, u);
    }
}

// rf_mvq_proj: a token's attention projections in one launch: up to three M = 1 matmuls over
// the same q8_1 vector (decode: K, V, Q), each optionally followed by its ROPE NORMAL, every row
// and rotation computed exactly as rf_mvq_multi's forms do (mvq_row, rope_cos_sin, rope_apply):
// one launch instead of three, so two fewer kernel boundaries per layer, and a grid that covers
// all three matrices. (For 2..4 columns: rf_mvqn_proj_<type>_<NC> below.) Arguments (parameters:
// a.mv_proj, rf_kp_mv_proj):
//   src[s], s < mv_proj.n_segments: weight of segment s (rows % 4 == 0, same K);
//   src[3] = positions (one int32), src[4] = frequency factors (data may be null);
//   outputs as raw pointers (rf_kargs has no ktensor left for them), f32, dense:
//   dst.ne[s] = segment s's matmul product (0: not written, a later output reuses its bytes),
//   dst.nb[s] = its rotated product (0: no rope on segment s);
//   mv_proj.n_rot, mv_proj.head_dim = head size D, mv_proj.freq_base, mv_proj.freq_scale;
//   scratch = the q8_1 vector (F16 weights: the f32 vector). Grid: the segments' rows / 4 blocks.
// KV appends (the SET_ROWS of K and V into their pools, fused too): pool A gets segment
// pool_segment[0] - 1's final output (rotated, else product) as row slots_A[0] (pool_segment[0] =
// 0: no pool A): pool at aux[0], slots at aux[2], row stride dst.ne[3] bytes, type pool_type[0]
// (f16 or f32, stored as rf_set_rows2 does); pool B likewise with pool_segment[1], aux[1], aux[3],
// dst.nb[3], pool_type[1].
// Element n of segment s's final output into the pools that append it (see above).
RF_DEV void proj_append(const rf_kargs &a, int s, i64 n, float v) {
    if (a.mv_proj.pool_segment[0] == s + 1)
        store_pool_elem((u8 *)a.aux[0] + (i64)((const int *)a.aux[2])[0] * a.dst.ne[3], a.mv_proj.pool_type[0], n, v);
    if (a.mv_proj.pool_segment[1] == s + 1)
        store_pool_elem((u8 *)a.aux[1] + (i64)((const int *)a.aux[3])[0] * a.dst.nb[3], a.mv_proj.pool_type[1], n, v);
}
// The block's segment s and this warp's (first) row n in it, with the segment's weight and
// outputs; R rows a warp. P: a.mv_proj or a.mvn_proj (n_segments at the same slot).
struct ProjRow { const u8 *w; i64 n, stride, rows; int s, type; float *prod, *rot; };
template <int R, class P> RF_DEV ProjRow proj_row(const rf_kargs &a, const P &kp) {
    const rf_ktensor &w0 = a.src[0], &w1 = a.src[1], &w2 = a.src[2];
    const int nseg = kp.n_segments;
    const i64 b0 = w0.ne[1] / (RF_MV_WARPS * R), b1 = nseg > 1 ? w1.ne[1] / (RF_MV_WARPS * R) : 0;
    i64 blk = blockIdx.x;
    int s = 0;
    if (blk >= b0 + b1) { s = 2; blk -= b0 + b1; }
    else if (blk >= b0) { s = 1; blk -= b0; }
    // Constant indices only (a run-time a.src[s] goes through scratch memory on AMD).
    ProjRow r;
    r.s = s;
    r.n = (blk * RF_MV_WARPS + threadIdx.x / RF_WARP) * R;
    r.w = (const u8 *)(s == 0 ? w0.data : s == 1 ? w1.data : w2.data);
    r.stride = s == 0 ? w0.nb[1] : s == 1 ? w1.nb[1] : w2.nb[1];
    r.rows = s == 0 ? w0.ne[1] : s == 1 ? w1.ne[1] : w2.ne[1];
    r.type = s == 0 ? w0.type : s == 1 ? w1.type : w2.type;
    r.prod = (float *)(s == 0 ? a.dst.ne[0] : s == 1 ? a.dst.ne[1] : a.dst.ne[2]);
    r.rot = (float *)(s == 0 ? a.dst.nb[0] : s == 1 ? a.dst.nb[1] : a.dst.nb[2]);
    return r;
}
// The block's row and, for a rotated segment, the pair's cos/sin, before rf_kernel_start (as
// prefetch_rope_multi: positions and factors are never written by a kernel).
struct ProjStart { ProjRow r; RopeCS rot; };
// mv_proj.prefetch_head_blocks = k > 0: the first k blocks also pull their weight rows into L2 (the
// head of the launch's weights, fetched while the norm before it runs: pm_prefetch_head in
// plugins/packs).
template <int R = 1> RF_DEV ProjStart prefetch_proj(const rf_kargs &a) {
    ProjStart p{proj_row<R>(a, a.mv_proj), RopeCS{1.f, 0.f, false}};
    if ((int)blockIdx.x < a.mv_proj.prefetch_head_blocks && p.r.n < p.r.rows) prefetch_l2(p.r.w + p.r.n * p.r.stride, R * p.r.stride);
    const int wi = threadIdx.x / RF_WARP;
    if (p.r.rot) p.rot = rope_cs_of(a.mv_proj, a.src[3], a.src[4], p.r.n, 0, threadIdx.x % RF_WARP == 0 && (R == 2 || !(wi & 1)));
    return p;
}
// A row's dot product in rf_mvq_proj: any weight type (a switch, whose registers are those of
// the widest type), or one type fixed at compile time (rf_mvq_proj_<type>, where every segment
// has it: the registers of that type only, so more warps per multiprocessor).
struct AnyRow {
    RF_DEV static float dot(int type, const u8 *w, const i8 *xq, i64 K) { return mvq_row(type, w, xq, K); }
};
template <class B> struct RowOf {
    RF_DEV static float dot(int, const u8 *w, const i8 *xq, i64 K) { return mvq_dot_row<B>(w, xq, K); }
};
// A Q4_K_M / Q5_K_M layer whose V (or K) is Q6_K: two types, not five.
template <class B> struct RowOrQ6K {
    RF_DEV static float dot(int type, const u8 *w, const i8 *xq, i64 K) {
        return type == T_Q6_K ? mvq_dot_row<MvqQ6K>(w, xq, K) : mvq_dot_row<B>(w, xq, K);
    }
};
// The typed projection kernels stage their format's grid (prefetch_grid, mvq_iq.h).
template <class B> RF_DEV void stage_grid(const RowOf<B> *) { stage_grid((const B *)nullptr); }
template <class Row> RF_DEV void mvq_proj(const rf_kargs &a, const ProjStart &ps) {
    const ProjRow &pr = ps.r;
    const RopeCS &rot = ps.rot;
    const int wi = threadIdx.x / RF_WARP;
    const bool pair_lane = threadIdx.x % RF_WARP == 0 && !(wi & 1); // first row of a rotation pair
    __shared__ float sh_rows[RF_MV_WARPS];
    const float v = Row::dot(pr.type, pr.w + pr.n * pr.stride, (const i8 *)a.scratch, a.src[0].ne[0]);
    if (threadIdx.x % RF_WARP == 0) {
        if (pr.prod) pr.prod[pr.n] = v;
        sh_rows[wi] = v;
        if (!pr.rot) proj_append(a, pr.s, pr.n, v);
    }
    if (!pr.rot) return; // the whole block: one segment per block
    __syncthreads();
    if (!pair_lane) return;
    float y0 = sh_rows[wi], y1 = sh_rows[wi + 1];
    if (rot.rotates) rope_apply(sh_rows[wi], sh_rows[wi + 1], rot.c, rot.s, y0, y1);
    pr.rot[pr.n] = y0;
    pr.rot[pr.n + 1] = y1;
    proj_append(a, pr.s, pr.n, y0);
    proj_append(a, pr.s, pr.n + 1, y1);
}
RF_KERNEL __launch_bounds__(128) void rf_mvq_proj(rf_kargs a) {
    const ProjStart ps = prefetch_proj(a);
    rf_kernel_start();
    mvq_proj<AnyRow>(a, ps);
}
#define RF_MVQ_PROJ(t, Row) \
    RF_KERNEL __launch_bounds__(128) void rf_mvq_proj_##t(rf_kargs a) { \
        prefetch_grid<Row>(); const ProjStart ps = prefetch_proj(a); rf_kernel_start(); mvq_proj<Row>(a, ps); }
RF_MVQ_PROJ(q4_k, RowOf<MvqK4<T_Q4_K>>)
RF_MVQ_PROJ(q5_k, RowOf<MvqK4<T_Q5_K>>)
RF_MVQ_PROJ(q6_k, RowOf<MvqQ6K>)
RF_MVQ_PROJ(q4_0, RowOf<MvqQ4_0>)
RF_MVQ_PROJ(q8_0, RowOf<MvqQ8_0>)
RF_MVQ_PROJ(q5_0, RowOf<MvqLegacy<T_Q5_0>>)
RF_MVQ_PROJ(iq4_xs, RowOf<MvqIq4Xs>)
RF_MVQ_PROJ(iq2_xxs, RowOf<MvqIq2Xxs>)
RF_MVQ_PROJ(iq2_xs, RowOf<MvqIq2Xs>)
RF_MVQ_PROJ(iq2_s, RowOf<MvqIq2S>)
RF_MVQ_PROJ(iq3_xxs, RowOf<MvqIq3Xxs>)
RF_MVQ_PROJ(iq3_s, RowOf<MvqIq3S>)
RF_MVQ_PROJ(iq1_s, RowOf<MvqIq1S>)
RF_MVQ_PROJ(iq1_m, RowOf<MvqIq1M>)
RF_MVQ_PROJ(tq2_0, RowOf<MvqTq2_0>)
RF_MVQ_PROJ(q4_k_q6_k, RowOrQ6K<MvqK4<T_Q4_K>>)
RF_MVQ_PROJ(q5_k_q6_k, RowOrQ6K<MvqK4<T_Q5_K>>)

// Two rows a warp (rf_mvq_proj2_<type>, NVIDIA packs; every segment's rows a multiple of 8, grid
// the rows / 8): each weight piece of the q8_1 vector is read once for two rows, and a rotation's
// pair is one warp's, so no shared memory or barrier between the dot and the rope. The rows' dots
// as mvq_dot_row's (mvq_dot_cols with R = 2: the same sums in the same order): the same floats.
// Faster than a row a warp for the joined K / V / Q of a 7B layer. Not for Q6_K alone (96
// registers: slower).
#if RF_NVIDIA
// A warp's two weight rows dotted with NC q8_1 columns (xs bytes apart) in the typed projection
// launches (rf_mvq_proj2_*: NC = 1; rf_mvqn_proj_*: 2..4): one block format, or a K-quant beside
// Q6_K (a Q4_K_M / Q5_K_M layer), whose form is MvqQ6K for one column, MvqQ6KCols for several (as
// rf_mvqn_q6_k_<NC>f's).
// SHARE: mvq_dot_lane's SHARE (the wide-row kernels, rf_mvq_proj2w_*).
template <class B, int NC, bool SHARE = false> struct ColsOf {
    RF_DEV static void dot(int, const u8 *w, i64 stride, const i8 *xq, i64 xs, i64 K, float (&acc)[2][NC]) {
        mvq_dot_cols<B, NC, 2, SHARE>(w, stride, 2, xq, xs, K, acc);
    }
};
template <class B, int NC, bool SHARE = false> struct ColsOrQ6K {
    RF_DEV static void dot(int type, const u8 *w, i64 stride, const i8 *xq, i64 xs, i64 K, float (&acc)[2][NC]) {
        if (type != T_Q6_K) mvq_dot_cols<B, NC, 2, SHARE>(w, stride, 2, xq, xs, K, acc);
        else if constexpr (NC == 1) mvq_dot_cols<MvqQ6K, NC, 2, SHARE>(w, stride, 2, xq, xs, K, acc);
        else mvq_dot_cols<MvqQ6KCols, NC, 2, SHARE>(w, stride, 2, xq, xs, K, acc);
    }
};
template <class Rows> RF_DEV void mvq_proj2(const rf_kargs &a, const ProjStart &ps) {
    const ProjRow &pr = ps.r;
    float acc[2][1];
    Rows::dot(pr.type, pr.w + pr.n * pr.stride, pr.stride, (const i8 *)a.scratch, 0, a.src[0].ne[0], acc);
    if (threadIdx.x % RF_WARP != 0) return;
    float y0 = acc[0][0], y1 = acc[1][0];
    if (pr.prod) {
        pr.prod[pr.n] = y0;
        pr.prod[pr.n + 1] = y1;
    }
    if (pr.rot) {
        if (ps.rot.rotates) rope_apply(acc[0][0], acc[1][0], ps.rot.c, ps.rot.s, y0, y1);
        pr.rot[pr.n] = y0;
        pr.rot[pr.n + 1] = y1;
    }
    proj_append(a, pr.s, pr.n, y0);
    proj_append(a, pr.s, pr.n + 1, y1);
}
// rf_mvq_proj2w_<type>: the same for rows of K >= 4096 (the packs pick it by K, pm_proj_kernel),
// a column's pieces loaded once for the warp's two rows (SHARE). Q4_K and IQ4_XS: Q5_K was
// slower that way, Q4_0 did not move.
#define RF_MVQ_PROJ2(t, Cols, B) \
    RF_KERNEL __launch_bounds__(128) void rf_mvq_proj2_##t(rf_kargs a) { \
        prefetch_grid<B>(); const ProjStart ps = prefetch_proj<2>(a); rf_kernel_start(); mvq_proj2<Cols<B, 1>>(a, ps); }
#define RF_MVQ_PROJ2W(t, Cols, B) \
    RF_KERNEL __launch_bounds__(128) void rf_mvq_proj2w_##t(rf_kargs a) { \
        prefetch_grid<B>(); const ProjStart ps = prefetch_proj<2>(a); rf_kernel_start(); mvq_proj2<Cols<B, 1, true>>(a, ps); }
RF_MVQ_PROJ2(q4_k, ColsOf, MvqK4<T_Q4_K>)
RF_MVQ_PROJ2(q5_k, ColsOf, MvqK4<T_Q5_K>)
RF_MVQ_PROJ2(q4_0, ColsOf, MvqQ4_0)
RF_MVQ_PROJ2(q8_0, ColsOf, MvqQ8_0)
RF_MVQ_PROJ2(q5_0, ColsOf, MvqLegacy<T_Q5_0>)
RF_MVQ_PROJ2(iq4_xs, ColsOf, MvqIq4Xs)
RF_MVQ_PROJ2(iq2_xxs, ColsOf, MvqIq2Xxs)
RF_MVQ_PROJ2(iq2_xs, ColsOf, MvqIq2Xs)
RF_MVQ_PROJ2(iq2_s, ColsOf, MvqIq2S)
RF_MVQ_PROJ2(iq3_xxs, ColsOf, MvqIq3Xxs)
RF_MVQ_PROJ2(iq3_s, ColsOf, MvqIq3S)
RF_MVQ_PROJ2(iq1_s, ColsOf, MvqIq1S)
RF_MVQ_PROJ2(iq1_m, ColsOf, MvqIq1M)
RF_MVQ_PROJ2(tq2_0, ColsOf, MvqTq2_0)
RF_MVQ_PROJ2(q4_k_q6_k, ColsOrQ6K, MvqK4<T_Q4_K>)
RF_MVQ_PROJ2(q5_k_q6_k, ColsOrQ6K, MvqK4<T_Q5_K>)
RF_MVQ_PROJ2W(q4_k, ColsOf, MvqK4<T_Q4_K>)
RF_MVQ_PROJ2W(iq4_xs, ColsOf, MvqIq4Xs)
RF_MVQ_PROJ2W(iq2_xxs, ColsOf, MvqIq2Xxs)
RF_MVQ_PROJ2W(iq2_xs, ColsOf, MvqIq2Xs)
RF_MVQ_PROJ2W(iq2_s, ColsOf, MvqIq2S)
RF_MVQ_PROJ2W(iq3_xxs, ColsOf, MvqIq3Xxs)
RF_MVQ_PROJ2W(iq3_s, ColsOf, MvqIq3S)
RF_MVQ_PROJ2W(iq1_s, ColsOf, MvqIq1S)
RF_MVQ_PROJ2W(iq1_m, ColsOf, MvqIq1M)
RF_MVQ_PROJ2W(tq2_0, ColsOf, MvqTq2_0)
RF_MVQ_PROJ2W(q4_k_q6_k, ColsOrQ6K, MvqK4<T_Q4_K>)
#endif

// ---- several activation columns (batched decode, short batches) ------------------------------
// NVIDIA packs only: LLVM 15 (Debian's hipcc) spills these on RDNA from 3-4 columns on (gfx1100
// is capped at 128 VGPRs), so the AMD packs keep rf_mm_generic_* for M > 1.
#if RF_NVIDIA
// rf_mvqn_<type>_<NC>x<R>: NC q8_1 columns starting at column aux[1] of the scratch (column
// stride aux[0]) + blockIdx.y * NC; each warp takes R consecutive weight rows, so every weight
// block is read once for NC columns and every activation piece once for R rows. Batch 1,
// contiguous f32 output columns (dst.nb[1] apart). Grid (ceil(N / (4 R)), column chunks).
// The warp's R weight rows into L2 (only the column chunk 0 blocks: the others read the same rows).
RF_DEV void prefetch_mvq_cols(const rf_kargs &a, int R) {
    const rf_ktensor &w = a.src[0];
    const i64 n0 = ((i64)blockIdx.x * RF_MV_WARPS + threadIdx.x / RF_WARP) * R;
    if (a.mv.no_weight_prefetch || blockIdx.y != 0 || n0 >= w.ne[1]) return;
    prefetch_l2((const u8 *)w.data + n0 * w.nb[1], (w.ne[1] - n0 < R ? w.ne[1] - n0 : R) * w.nb[1]);
}
template <class B, int NC, int R> RF_DEV void mvq_cols(const rf_kargs &a) {
    const rf_ktensor &w = a.src[0], &d = a.dst;
    const i64 N = w.ne[1], K = w.ne[0];
    const i64 n0 = ((i64)blockIdx.x * RF_MV_WARPS + threadIdx.x / RF_WARP) * R;
    if (n0 >= N) return;
    const int rows = N - n0 < R ? (int)(N - n0) : R;
    const i64 m0 = a.aux[1] + (i64)blockIdx.y * NC;
    const i8 *xq = (const i8 *)a.scratch + m0 * a.aux[0];
    float acc[R][NC];
    mvq_dot_cols<B, NC, R>((const u8 *)w.data + n0 * w.nb[1], w.nb[1], rows, xq, a.aux[0], K, acc);
    const int lane = threadIdx.x % RF_WARP;
    if (!split_writer<NC>(lane)) return;
    float *out = (float *)((u8 *)d.data + (m0 + split_col<NC>(lane)) * d.nb[1]) + n0;
#pragma unroll
    for (int r = 0; r < R; ++r)
        if (r < rows) out[r] = acc[r][0];
}

// Q6_K with two rows and up to four columns: at least four blocks per multiprocessor (at most
// 128 registers). These kernels sit at that line, and the compiler's choice moves with small
// changes of the block code (2 columns went from 128 to 130 registers, 3 blocks per
// multiprocessor, with the integer scale sums, and two-sequence decode slowed). Not
// for the other kernels: a minimum-blocks bound also lets the compiler spend up to its limit
// (Q4_K 2x2 92 -> 128 registers, the one-row kernels up to 250).
#define RF_MVQN_BOUNDED(t, B, NC, R, BOUNDS) \
    RF_KERNEL BOUNDS void rf_mvqn_##t##_##NC##x##R(rf_kargs a) { \
        prefetch_grid<B>(); prefetch_mvq_cols(a, R); rf_kernel_start(); mvq_cols<B, NC, R>(a); }
#define RF_MVQN(t, B, NC, R) RF_MVQN_BOUNDED(t, B, NC, R, __launch_bounds__(128))
#define RF_MVQN4(t, B, NC, R) RF_MVQN_BOUNDED(t, B, NC, R, __launch_bounds__(128, 4))
#define RF_MVQN_COLS(t, B, R) \
    RF_MVQN(t, B, 1, R) RF_MVQN(t, B, 2, R) RF_MVQN(t, B, 3, R) RF_MVQN(t, B, 4, R) \
    RF_MVQN(t, B, 5, R) RF_MVQN(t, B, 6, R) RF_MVQN(t, B, 7, R) RF_MVQN(t, B, 8, R)
#define RF_MVQN_TYPE(t, B) RF_MVQN_COLS(t, B, 1) RF_MVQN_COLS(t, B, 2)
RF_MVQN_TYPE(q4_k, MvqK4<T_Q4_K>)
RF_MVQN_TYPE(q5_k, MvqK4<T_Q5_K>)
// Q6_K: MvqQ6K for one column, MvqQ6KCols for several (mvq_blocks.h).
RF_MVQN(q6_k, MvqQ6K, 1, 1) RF_MVQN(q6_k, MvqQ6KCols, 2, 1) RF_MVQN(q6_k, MvqQ6KCols, 3, 1) RF_MVQN(q6_k, MvqQ6KCols, 4, 1)
RF_MVQN(q6_k, MvqQ6KCols, 5, 1) RF_MVQN(q6_k, MvqQ6KCols, 6, 1) RF_MVQN(q6_k, MvqQ6KCols, 7, 1) RF_MVQN(q6_k, MvqQ6KCols, 8, 1)
RF_MVQN(q6_k, MvqQ6K, 1, 2) RF_MVQN4(q6_k, MvqQ6KCols, 2, 2) RF_MVQN4(q6_k, MvqQ6KCols, 3, 2) RF_MVQN4(q6_k, MvqQ6KCols, 4, 2)
RF_MVQN(q6_k, MvqQ6KCols, 5, 2) RF_MVQN(q6_k, MvqQ6KCols, 6, 2) RF_MVQN(q6_k, MvqQ6KCols, 7, 2) RF_MVQN(q6_k, MvqQ6KCols, 8, 2)
RF_MVQN_TYPE(q4_0, MvqQ4_0)
RF_MVQN_TYPE(q8_0, MvqQ8_0)
RF_MVQN_TYPE(q5_0, MvqLegacy<T_Q5_0>)
RF_MVQN_TYPE(iq4_xs, MvqIq4Xs)
RF_MVQN_TYPE(iq2_xxs, MvqIq2Xxs)
RF_MVQN_TYPE(iq2_xs, MvqIq2Xs)
RF_MVQN_TYPE(iq2_s, MvqIq2S)
RF_MVQN_TYPE(iq3_xxs, MvqIq3Xxs)
RF_MVQN_TYPE(iq3_s, MvqIq3S)
RF_MVQN_TYPE(iq1_s, MvqIq1S)
RF_MVQN_TYPE(iq1_m, MvqIq1M)
RF_MVQN_TYPE(tq2_0, MvqTq2_0)

// rf_mvqn_<type>_<NC>f: rf_mvq_multi's decode fusions for NC columns (several sequences decoding
// together). Each warp dots two weight rows with the NC columns (mvq_dot_cols<B, NC, 2>: per row
// and column the arithmetic of rf_mvqn_*, so the floats of the unfused matmul), then
// (parameters a.mv, rf_kp_mv):
//  mv.form = RF_KP_MV_GATED (SwiGLU): row n of gate (src0) and of up (src1) -> dst and src[3]
//    (the two matmul outputs), src[4] = silu(gate) * up as rf_swiglu_f32 computes it (the ..._1fg
//    kernels: gelu(gate) * up as rf_geglu_f32 does, Gemma's GeGLU);
//  mv.form = RF_KP_MV_ROPE (matmul + ROPE NORMAL): rows 2k, 2k + 1 (one rotation pair of head
//    2k / D) -> dst, rotated -> src[3]; column m's position is src[1][m] (token m of the rope),
//    src[2] = frequency factors (may be null), mv.n_rot, mv.head_dim = D, mv.freq_base,
//    mv.freq_scale (rf_rope_f32's rope_cos_sin and rope_apply: the same bits);
//  mv.form = RF_KP_MV_PLAIN (the plain matmul, two rows per warp: rf_mvqn_<type>_<NC>x2's bits) -> dst.
//  In the rope and plain forms, mv.append = 1 also appends each column's final rows (rotated in
//  the rope form) to an f16/f32 cache pool as SET_ROWS would (a K or V append): column m into row
//  ((const int *)aux[2])[m] of the pool src[4] (its data, nb[1] and type).
// Outputs are f32 with columns nb[1] apart (dense rows; the rotated product dense, columns N apart). Grid (ceil(N / 4) for SwiGLU, else
// ceil(N / 8), column chunks of NC); scratch, aux[0], aux[1] as rf_mvqn_*.
template <class B, int NC, bool SHARE = false, bool GELU = false> RF_DEV void mvq_cols_fused(const rf_kargs &a, const RopeCS &rot) {
    const rf_ktensor &w = a.src[0];
    const i64 N = w.ne[1], K = w.ne[0];
    const bool swiglu = a.mv.form == RF_KP_MV_GATED;
    const int lane = threadIdx.x % RF_WARP;
    const i64 wn = (i64)blockIdx.x * RF_MV_WARPS + threadIdx.x / RF_WARP;
    const i64 n0 = swiglu ? wn : 2 * wn;
    if (n0 >= N) return;
    const i64 m0 = a.aux[1] + (i64)blockIdx.y * NC;
    const u8 *r0 = (const u8 *)w.data + n0 * w.nb[1];
    const u8 *r1 = swiglu ? (const u8 *)a.src[1].data + n0 * a.src[1].nb[1] : r0 + w.nb[1];
    float acc[2][NC];
    mvq_dot_cols<B, NC, 2, SHARE>(r0, (i64)(r1 - r0), 2, (const i8 *)a.scratch + m0 * a.aux[0], a.aux[0], K, acc);
    if (!split_writer<NC>(lane)) return;
    const i64 m = m0 + split_col<NC>(lane); // this lane's column
    const rf_ktensor &d = a.dst, &o3 = a.src[3], &o4 = a.src[4];
    const float x0 = acc[0][0], x1 = acc[1][0];
    float *dc = (float *)((u8 *)d.data + m * d.nb[1]);
    // Rope form: src[3] is the rope's dense [D, H, M] output, column m N floats on.
    float *c3 = swiglu ? (float *)((u8 *)o3.data + m * o3.nb[1]) : (float *)o3.data + m * N;
    if (swiglu) {
        dc[n0] = x0;
        c3[n0] = x1;
        ((float *)((u8 *)o4.data + m * o4.nb[1]))[n0] = gated_product<GELU>(x0, x1);
        return;
    }
    float y0 = x0, y1 = x1;
    const bool rope = a.mv.form == RF_KP_MV_ROPE;
    if (rope && rot.rotates) rope_apply(x0, x1, rot.c, rot.s, y0, y1); // rot: this lane's column
    dc[n0] = x0;
    dc[n0 + 1] = x1;
    if (rope) {
        c3[n0] = y0;
        c3[n0 + 1] = y1;
    }
    if (a.mv.append) { // the K (rotated) or V append
        u8 *prow = (u8 *)o4.data + (i64)((const int *)a.aux[2])[m] * o4.nb[1];
        store_pool_elem(prow, o4.type, n0, y0);
        store_pool_elem(prow, o4.type, n0 + 1, y1);
    }
}
// The warp's two weight rows into L2 (column chunk 0 blocks only, as prefetch_mvq_cols);
// mv.prefetch_head_blocks = k > 0: only the first k blocks' (the head of the weights, pm_prefetch_head).
RF_DEV void prefetch_mvq_cols_fused(const rf_kargs &a) {
    const rf_ktensor &w = a.src[0];
    const bool swiglu = a.mv.form == RF_KP_MV_GATED;
    const i64 wn = (i64)blockIdx.x * RF_MV_WARPS + threadIdx.x / RF_WARP, n0 = swiglu ? wn : 2 * wn;
    if (a.mv.no_weight_prefetch || blockIdx.y != 0 || n0 >= w.ne[1] ||
        (a.mv.prefetch_head_blocks && (int)blockIdx.x >= a.mv.prefetch_head_blocks))
        return;
    const u8 *r0 = (const u8 *)w.data + n0 * w.nb[1];
    prefetch_l2(r0, swiglu ? w.nb[1] : 2 * w.nb[1]);
    if (swiglu) prefetch_l2((const u8 *)a.src[1].data + n0 * a.src[1].nb[1], a.src[1].nb[1]);
}
// Rope form: the rotation of the warp's pair for the column this lane stores (split_col),
// before rf_kernel_start.
template <int NC> RF_DEV RopeCS prefetch_rope_cols(const rf_kargs &a) {
    if (a.mv.form != RF_KP_MV_ROPE) return RopeCS{1.f, 0.f, false};
    const int lane = threadIdx.x % RF_WARP;
    const bool writer = split_writer<NC>(lane);
    const i64 n0 = 2 * ((i64)blockIdx.x * RF_MV_WARPS + threadIdx.x / RF_WARP);
    const i64 m = a.aux[1] + (i64)blockIdx.y * NC + (writer ? split_col<NC>(lane) : 0);
    return rope_cs_at(a, n0, (int)m, writer && n0 < a.src[0].ne[1]);
}
#define RF_MVQNF(t, B, NC) \
    RF_KERNEL __launch_bounds__(128) void rf_mvqn_##t##_##NC##f(rf_kargs a) { \
        prefetch_grid<B>(); prefetch_mvq_cols_fused(a); const RopeCS rot = prefetch_rope_cols<NC>(a); rf_kernel_start(); mvq_cols_fused<B, NC>(a, rot); }
#define RF_MVQNF_TYPE(t, B) \
    RF_MVQNF(t, B, 1) RF_MVQNF(t, B, 2) RF_MVQNF(t, B, 3) RF_MVQNF(t, B, 4) \
    RF_MVQNF(t, B, 5) RF_MVQNF(t, B, 6) RF_MVQNF(t, B, 7) RF_MVQNF(t, B, 8)
RF_MVQNF_TYPE(q4_k, MvqK4<T_Q4_K>)
RF_MVQNF_TYPE(q5_k, MvqK4<T_Q5_K>)
// rf_mvqn_<type>_1fw: the one-column form for rows of K >= 4096 (picked by K, pm_cols_kernel), a
// column's pieces loaded once for the warp's two rows (SHARE), as rf_mvq_proj2w_*.
#define RF_MVQNF_W(t, B) \
    RF_KERNEL __launch_bounds__(128) void rf_mvqn_##t##_1fw(rf_kargs a) { \
        prefetch_grid<B>(); prefetch_mvq_cols_fused(a); const RopeCS rot = prefetch_rope_cols<1>(a); rf_kernel_start(); \
        mvq_cols_fused<B, 1, true>(a, rot); }
RF_MVQNF_W(q4_k, MvqK4<T_Q4_K>)
RF_MVQNF_W(iq4_xs, MvqIq4Xs)
RF_MVQNF_W(iq2_xxs, MvqIq2Xxs)
RF_MVQNF_W(iq2_xs, MvqIq2Xs)
RF_MVQNF_W(iq2_s, MvqIq2S)
RF_MVQNF_W(iq3_xxs, MvqIq3Xxs)
RF_MVQNF_W(iq3_s, MvqIq3S)
RF_MVQNF_W(iq1_s, MvqIq1S)
RF_MVQNF_W(iq1_m, MvqIq1M)
RF_MVQNF_W(tq2_0, MvqTq2_0)
RF_MVQNF(q6_k, MvqQ6K, 1) RF_MVQNF(q6_k, MvqQ6KCols, 2) RF_MVQNF(q6_k, MvqQ6KCols, 3) RF_MVQNF(q6_k, MvqQ6KCols, 4)
RF_MVQNF(q6_k, MvqQ6KCols, 5) RF_MVQNF(q6_k, MvqQ6KCols, 6) RF_MVQNF(q6_k, MvqQ6KCols, 7) RF_MVQNF(q6_k, MvqQ6KCols, 8)
RF_MVQNF_TYPE(q4_0, MvqQ4_0)
RF_MVQNF_TYPE(q8_0, MvqQ8_0)
RF_MVQNF_TYPE(q5_0, MvqLegacy<T_Q5_0>)
RF_MVQNF_TYPE(iq4_xs, MvqIq4Xs)
RF_MVQNF_TYPE(iq2_xxs, MvqIq2Xxs)
RF_MVQNF_TYPE(iq2_xs, MvqIq2Xs)
RF_MVQNF_TYPE(iq2_s, MvqIq2S)
RF_MVQNF_TYPE(iq3_xxs, MvqIq3Xxs)
RF_MVQNF_TYPE(iq3_s, MvqIq3S)
RF_MVQNF_TYPE(iq1_s, MvqIq1S)
RF_MVQNF_TYPE(iq1_m, MvqIq1M)
RF_MVQNF_TYPE(tq2_0, MvqTq2_0)
// rf_mvqn_<type>_1fg, rf_mvqn_q4_k_1fwg: the one-column gate / up kernels with GeGLU's product
// (Gemma); one column only (wider batches keep GEGLU unfused).
#define RF_MVQNF_G(t, B, SHARE, SUFFIX) \
    RF_KERNEL __launch_bounds__(128) void rf_mvqn_##t##_1##SUFFIX(rf_kargs a) { \
        prefetch_grid<B>(); prefetch_mvq_cols_fused(a); const RopeCS rot = prefetch_rope_cols<1>(a); rf_kernel_start(); \
        mvq_cols_fused<B, 1, SHARE, true>(a, rot); }
RF_MVQNF_G(q4_k, MvqK4<T_Q4_K>, false, fg) RF_MVQNF_G(q4_k, MvqK4<T_Q4_K>, true, fwg) RF_MVQNF_G(q5_k, MvqK4<T_Q5_K>, false, fg)
RF_MVQNF_G(q6_k, MvqQ6K, false, fg) RF_MVQNF_G(q4_0, MvqQ4_0, false, fg) RF_MVQNF_G(q8_0, MvqQ8_0, false, fg)
RF_MVQNF_G(q5_0, MvqLegacy<T_Q5_0>, false, fg) RF_MVQNF_G(iq4_xs, MvqIq4Xs, false, fg)
RF_MVQNF_G(iq4_xs, MvqIq4Xs, true, fwg)
RF_MVQNF_G(iq2_xxs, MvqIq2Xxs, false, fg) RF_MVQNF_G(iq2_xxs, MvqIq2Xxs, true, fwg)
RF_MVQNF_G(iq2_xs, MvqIq2Xs, false, fg) RF_MVQNF_G(iq2_xs, MvqIq2Xs, true, fwg)
RF_MVQNF_G(iq2_s, MvqIq2S, false, fg) RF_MVQNF_G(iq2_s, MvqIq2S, true, fwg)
RF_MVQNF_G(iq3_xxs, MvqIq3Xxs, false, fg) RF_MVQNF_G(iq3_xxs, MvqIq3Xxs, true, fwg)
RF_MVQNF_G(iq3_s, MvqIq3S, false, fg) RF_MVQNF_G(iq3_s, MvqIq3S, true, fwg)
RF_MVQNF_G(iq1_s, MvqIq1S, false, fg) RF_MVQNF_G(iq1_s, MvqIq1S, true, fwg)
RF_MVQNF_G(iq1_m, MvqIq1M, false, fg) RF_MVQNF_G(iq1_m, MvqIq1M, true, fwg)
RF_MVQNF_G(tq2_0, MvqTq2_0, false, fg) RF_MVQNF_G(tq2_0, MvqTq2_0, true, fwg)

// rf_mvqn_proj_<type>_<NC>: rf_mvq_proj2 for NC = 2..4 columns (sequences decoding together): a
// layer's K / V / Q projections, their rotations and the K and V appends in one launch, where
// cols_run (plugins/packs/proj_runs.c) makes one rf_mvqn_<type>_<NC>f launch a matrix, each too
// small to keep the memory system busy (7B, 2 columns: 4096 rows are 2,048 warps). Each warp dots
// two rows of one segment with the NC columns (mvq_dot_cols<B, NC, 2>, as rf_mvqn_*f: the same
// floats) and each writer lane stores its column's pair. Arguments as rf_mvq_proj's (parameters
// a.mvn_proj, rf_kp_mvn_proj), except:
//   scratch = the first q8_1 column, aux[0] = the column stride (q8_1 types only);
//   outputs dense [N_s, M]: column m of segment s N_s floats on; src[3] = the M positions;
//   pool A at aux[1], its slots (M int32) at aux[3], its row stride dst.nb[3];
//   pool B at aux[2], its slots at dst.ne[3], its row stride mvn_proj.pool_b_row_bytes.
// Grid: the segments' rows / 8 blocks (every segment's rows a multiple of 8), one column chunk.
// The rows' dots: ColsOf / ColsOrQ6K (above, with rf_mvq_proj2).
// Rows n, n + 1 of segment s's final output for column m into the pools that append it.
RF_DEV void projn_append(const rf_kargs &a, int s, i64 m, i64 n, float y0, float y1) {
    if (a.mvn_proj.pool_segment[0] == s + 1) {
        u8 *row = (u8 *)a.aux[1] + (i64)((const int *)a.aux[3])[m] * a.dst.nb[3];
        store_pool_elem(row, a.mvn_proj.pool_type[0], n, y0);
        store_pool_elem(row, a.mvn_proj.pool_type[0], n + 1, y1);
    }
    if (a.mvn_proj.pool_segment[1] == s + 1) {
        u8 *row = (u8 *)a.aux[2] + (i64)((const int *)a.dst.ne[3])[m] * a.mvn_proj.pool_b_row_bytes;
        store_pool_elem(row, a.mvn_proj.pool_type[1], n, y0);
        store_pool_elem(row, a.mvn_proj.pool_type[1], n + 1, y1);
    }
}
// The block's rows and, for a rotated segment, the writer lane's column's cos/sin, before
// rf_kernel_start (as prefetch_rope_cols).
template <int NC> RF_DEV ProjStart prefetch_projn(const rf_kargs &a) {
    ProjStart p{proj_row<2>(a, a.mvn_proj), RopeCS{1.f, 0.f, false}};
    const int lane = threadIdx.x % RF_WARP;
    const bool writer = split_writer<NC>(lane);
    if (p.r.rot) p.rot = rope_cs_of(a.mvn_proj, a.src[3], a.src[4], p.r.n, writer ? split_col<NC>(lane) : 0, writer);
    return p;
}
template <class Cols, int NC> RF_DEV void mvqn_proj(const rf_kargs &a, const ProjStart &ps) {
    const ProjRow &pr = ps.r;
    float acc[2][NC];
    Cols::dot(pr.type, pr.w + pr.n * pr.stride, pr.stride, (const i8 *)a.scratch, a.aux[0], a.src[0].ne[0], acc);
    const int lane = threadIdx.x % RF_WARP;
    if (!split_writer<NC>(lane)) return;
    const i64 m = split_col<NC>(lane), at = m * pr.rows + pr.n;
    float y0 = acc[0][0], y1 = acc[1][0];
    if (pr.prod) {
        pr.prod[at] = y0;
        pr.prod[at + 1] = y1;
    }
    if (pr.rot) {
        if (ps.rot.rotates) rope_apply(acc[0][0], acc[1][0], ps.rot.c, ps.rot.s, y0, y1);
        pr.rot[at] = y0;
        pr.rot[at + 1] = y1;
    }
    projn_append(a, pr.s, m, pr.n, y0, y1);
}
#define RF_MVQN_PROJ(t, Cols, B, NC, BOUNDS) \
    RF_KERNEL BOUNDS void rf_mvqn_proj_##t##_##NC(rf_kargs a) { \
        prefetch_grid<B>(); const ProjStart ps = prefetch_projn<NC>(a); rf_kernel_start(); mvqn_proj<Cols<B, NC>, NC>(a, ps); }
#define RF_MVQN_PROJ_COLS(t, Cols, B, BOUNDS) \
    RF_MVQN_PROJ(t, Cols, B, 2, BOUNDS) RF_MVQN_PROJ(t, Cols, B, 3, BOUNDS) RF_MVQN_PROJ(t, Cols, B, 4, BOUNDS)
RF_MVQN_PROJ_COLS(q4_k, ColsOf, MvqK4<T_Q4_K>, __launch_bounds__(128))
RF_MVQN_PROJ_COLS(q5_k, ColsOf, MvqK4<T_Q5_K>, __launch_bounds__(128))
RF_MVQN_PROJ_COLS(q4_0, ColsOf, MvqQ4_0, __launch_bounds__(128))
RF_MVQN_PROJ_COLS(q8_0, ColsOf, MvqQ8_0, __launch_bounds__(128))
RF_MVQN_PROJ_COLS(q5_0, ColsOf, MvqLegacy<T_Q5_0>, __launch_bounds__(128))
RF_MVQN_PROJ_COLS(iq4_xs, ColsOf, MvqIq4Xs, __launch_bounds__(128))
RF_MVQN_PROJ_COLS(iq2_xxs, ColsOf, MvqIq2Xxs, __launch_bounds__(128))
RF_MVQN_PROJ_COLS(iq2_xs, ColsOf, MvqIq2Xs, __launch_bounds__(128))
RF_MVQN_PROJ_COLS(iq2_s, ColsOf, MvqIq2S, __launch_bounds__(128))
RF_MVQN_PROJ_COLS(iq3_xxs, ColsOf, MvqIq3Xxs, __launch_bounds__(128))
RF_MVQN_PROJ_COLS(iq3_s, ColsOf, MvqIq3S, __launch_bounds__(128))
RF_MVQN_PROJ_COLS(iq1_s, ColsOf, MvqIq1S, __launch_bounds__(128))
RF_MVQN_PROJ_COLS(iq1_m, ColsOf, MvqIq1M, __launch_bounds__(128))
RF_MVQN_PROJ_COLS(tq2_0, ColsOf, MvqTq2_0, __launch_bounds__(128))
// With Q6_K: at most 128 registers (four blocks a multiprocessor, as rf_mvqn_q6_k_<NC>x2), where
// ptxas's own choice, 96, spilled.
RF_MVQN_PROJ_COLS(q6_k, ColsOf, MvqQ6KCols, __launch_bounds__(128, 4))
RF_MVQN_PROJ_COLS(q4_k_q6_k, ColsOrQ6K, MvqK4<T_Q4_K>, __launch_bounds__(128, 4))
RF_MVQN_PROJ_COLS(q5_k_q6_k, ColsOrQ6K, MvqK4<T_Q5_K>, __launch_bounds__(128, 4))
#endif // RF_NVIDIA
