// Mixture of experts (abi.h): MATMUL_ID and the routing ops MOE_WEIGHTS, MOE_SUM (TOPK: select_rows.hip).
//
// MATMUL_ID  dst[:, s, m] = W[:, :, ids[s, m]]^T x[:, s or 0, m], W [K, N, E] of any weight type.
// Grid (ceil(N / 4), E): a warp per (weight row n, expert e). The warp scans the ids (S*M
// integers, 32 per step with a ballot) for the columns routed to its expert, so blocks of experts
// no token chose read no weight byte: decode reads only the chosen experts. The columns are
// taken in tiles:
//  - rf_mm_id_<type> (every type): tiles of up to RF_MMI_MT columns; each lane decodes its
//    32-element chunks of the row once per tile (quant_decode.h decode32) and dots them with
//    the tile's f32 activation rows (quantized and dequantized like the CPU backend's, in plugin
//    scratch, for the quantized types). A prefill thus reads each expert row once per tile of
//    its tokens: tokens are grouped by expert.
//  - rf_mvq_id_<type> (Q4_K, Q5_K, Q6_K (NVIDIA only), Q4_0, Q8_0, MXFP4; few columns): each column is
//    dotted with the dp4a row functions of mvq_blocks.h against q8_1 activation columns, as the
//    decode matmuls.
// An id outside 0..E-1 is never matched; the blocks of expert 0 write zeros to its outputs.
#pragma once
#include "compat.h"
#include "quant_decode.h"
#include "mvq_blocks.h"

#define RF_MMI_WARPS 4
#define RF_MMI_MT 8

RF_DEV unsigned warp_ballot(bool p) {
#if RF_NVIDIA
    return __ballot_sync(0xffffffffu, p);
#else
    return (unsigned)__ballot(p);
#endif
}

RF_DEV int shfl_i(int v, int src) {
#if RF_NVIDIA
    return __shfl_sync(0xffffffffu, v, src, RF_WARP);
#else
    return __shfl(v, src, RF_WARP);
#endif
}

struct MmIdGeom {
    i64 S, M, S1, E;
    RF_DEV int act_row(int col) const { // column col = s + S*m -> activation row m*S1 + s'
        const int s = col % (int)S, m = col / (int)S;
        return m * (int)S1 + (S1 == 1 ? 0 : s);
    }
};

RF_DEV MmIdGeom mmid_geom(const rf_kargs &a) {
    MmIdGeom g;
    g.S = a.src[2].ne[0]; g.M = a.src[2].ne[1]; g.S1 = a.src[1].ne[1]; g.E = a.src[0].ne[2];
    return g;
}

RF_DEV float *mmid_out(const rf_kargs &a, const MmIdGeom &g, int col, i64 n) {
    const int s = col % (int)g.S, m = col / (int)g.S;
    return (float *)((u8 *)a.dst.data + s * a.dst.nb[1] + m * a.dst.nb[2]) + n;
}

// Calls tile(col, nc) for the columns routed to expert e, up to RF_MMI_MT at a time: column j
// of the tile is shfl_i(col, j) (lane j holds it; a register list, no local memory). One call
// site, so the tile body is inlined once. Expert 0's warps also zero the outputs of bad ids.
template <class Tile> RF_DEV void for_expert_columns(const rf_kargs &a, const MmIdGeom &g, int e, i64 n, Tile tile) {
    const int lane = threadIdx.x % RF_WARP;
    const int *ids = (const int *)a.src[2].data;
    const int total = (int)(g.S * g.M);
    int col = 0, nc = 0, base = 0;
    unsigned mask = 0;
    for (;;) {
        while (nc < RF_MMI_MT) {
            if (!mask) {
                if (base >= total) break;
                const int i = base + lane;
                const int id = i < total ? ids[i] : -2;
                if (e == 0 && i < total && (id < 0 || id >= (int)g.E)) *mmid_out(a, g, i, n) = 0.f;
                mask = warp_ballot(id == e);
                base += RF_WARP;
                continue;
            }
            const int b = __ffs(mask) - 1;
            mask &= mask - 1;
            if (lane == nc) col = base - RF_WARP + b;
            ++nc;
        }
        if (nc == 0) break;
        tile(col, nc);
        nc = 0;
    }
}

template <int T> RF_DEV void mm_id_impl(const rf_kargs &a) {
    const rf_ktensor &w = a.src[0], &x = a.src[1];
    const MmIdGeom g = mmid_geom(a);
    const i64 K = w.ne[0], N = w.ne[1];
    const int lane = threadIdx.x % RF_WARP, e = blockIdx.y;
    const i64 n = (i64)blockIdx.x * RF_MMI_WARPS + threadIdx.x / RF_WARP;
    if (n >= N) return;
    const u8 *row = (const u8 *)w.data + e * w.nb[2] + n * w.nb[1];
    const u8 *xbase = (const u8 *)x.data;
    for_expert_columns(a, g, e, n, [&](int col, int nc) {
        // Lane j < nc: the byte offset of column j's activation row (the host keeps x under 4 GiB);
        // the column loops take it by shuffle, so no lane holds RF_MMI_MT pointers.
        const int r = g.act_row(col);
        const unsigned xoff = (unsigned)((r % (int)x.ne[1]) * x.nb[1] + (r / (int)x.ne[1]) * x.nb[2]);
        float acc[RF_MMI_MT];
#pragma unroll
        for (int j = 0; j < RF_MMI_MT; ++j) acc[j] = 0.f;
        if (qtraits<T>::scalar) {
            for (i64 k0 = 0; k0 < K; k0 += RF_WARP) {
                const i64 k = k0 + lane;
                const float v = k < K ? load_scalar<T>(row, k) : 0.f;
#pragma unroll
                for (int j = 0; j < RF_MMI_MT; ++j) {
                    const unsigned o = (unsigned)shfl_i((int)xoff, j); // every lane shuffles
                    if (j < nc && k < K) {
                        float xk = ((const float *)(xbase + o))[k];
                        if (T == T_F16) xk = h2f(f2h(xk)); // F16 weights dot f16 activations (ggml's vec_dot_type)
                        acc[j] += v * xk;
                    }
                }
            }
        } else {
            float v[32];
            for (i64 c0 = 0; c0 < K / 32; c0 += RF_WARP) {
                const i64 c = c0 + lane;
                const bool in = c < K / 32;
                if (in) decode32<T>(row, c, v);
#pragma unroll
                for (int j = 0; j < RF_MMI_MT; ++j) {
                    const unsigned o = (unsigned)shfl_i((int)xoff, j);
                    if (j < nc && in) {
                        const float4 *xv4 = (const float4 *)((const float *)(xbase + o) + c * 32);
                        float s = 0.f;
#pragma unroll
                        for (int q = 0; q < 8; ++q) {
                            const float4 xv = xv4[q];
                            s += v[4 * q] * xv.x + v[4 * q + 1] * xv.y + v[4 * q + 2] * xv.z + v[4 * q + 3] * xv.w;
                        }
                        acc[j] += s;
                    }
                }
            }
        }
#pragma unroll
        for (int j = 0; j < RF_MMI_MT; ++j) {
            const int cj = shfl_i(col, j); // every lane shuffles
            if (j < nc) {
                const float s = warp_sum(acc[j]);
                if (lane == 0) *mmid_out(a, g, cj, n) = s;
            }
        }
    });
}

#define RF_MM_ID(NAME, T) RF_KERNEL __launch_bounds__(128) void rf_mm_id_##NAME(rf_kargs a) { rf_kernel_start(); mm_id_impl<T>(a); }
RF_FOR_EACH_WTYPE(RF_MM_ID)

// dp4a form: scratch = the q8_1 activation rows (aux[0] = bytes per row). Each column is dotted
// as soon as the ballot finds it (one call site of the row function: its unrolled loop is
// register-hungry, and a tile loop around it spilled on gfx1100).
template <class B> RF_DEV void mvq_id_impl(const rf_kargs &a) {
    const rf_ktensor &w = a.src[0];
    const MmIdGeom g = mmid_geom(a);
    const i64 K = w.ne[0], N = w.ne[1];
    const int lane = threadIdx.x % RF_WARP, e = blockIdx.y;
    const i64 n = (i64)blockIdx.x * RF_MMI_WARPS + threadIdx.x / RF_WARP;
    if (n >= N) return;
    const u8 *row = (const u8 *)w.data + e * w.nb[2] + n * w.nb[1];
    const int *ids = (const int *)a.src[2].data;
    const int total = (int)(g.S * g.M);
    for (int base = 0; base < total; base += RF_WARP) {
        const int i = base + lane;
        const int id = i < total ? ids[i] : -2;
        if (e == 0 && i < total && (id < 0 || id >= (int)g.E)) *mmid_out(a, g, i, n) = 0.f;
        unsigned mask = warp_ballot(id == e);
        while (mask) {
            const int col = base + __ffs(mask) - 1;
            mask &= mask - 1;
            const float s = mvq_dot_row<B>(row, (const i8 *)a.scratch + (i64)g.act_row(col) * a.aux[0], K);
            if (lane == 0) *mmid_out(a, g, col, n) = s;
        }
    }
}
// The same dot for one routed column per grid row y (decode, S*M <= E): the block reads its
// expert from the ids, so no block is launched for an expert no token chose and none scans the
// ids. Same row function and activations as mvq_id_impl: the same bits.
template <class B> RF_DEV void mvq_idc_impl(const rf_kargs &a) {
    const rf_ktensor &w = a.src[0];
    const MmIdGeom g = mmid_geom(a);
    const i64 K = w.ne[0], N = w.ne[1];
    const int col = (int)blockIdx.y;
    const i64 n = (i64)blockIdx.x * RF_MMI_WARPS + threadIdx.x / RF_WARP;
    if (n >= N) return;
    const int e = ((const int *)a.src[2].data)[col];
    float s = 0.f;
    if (e >= 0 && e < (int)g.E) {
        const u8 *row = (const u8 *)w.data + (i64)e * w.nb[2] + n * w.nb[1];
        s = mvq_dot_row<B>(row, (const i8 *)a.scratch + (i64)g.act_row(col) * a.aux[0], K);
    }
    if (threadIdx.x % RF_WARP == 0) *mmid_out(a, g, col, n) = s;
}
// rf_mvq_idc_<type>_r<R>: the same with R rows a warp (grid (ceil(N / (4 R)), columns)), for
// short rows (the experts' down projections, K = 768): one row's few blocks leave a warp's load
// step partly idle, and the warp's fixed costs (the id, pointers, reduction, store) outweigh its
// row. The rows' sums are independent in mvq_dot_cols, each as mvq_idc_impl's: the same floats.
template <class B, int R> RF_DEV void mvq_idcr_impl(const rf_kargs &a) {
    const rf_ktensor &w = a.src[0];
    const MmIdGeom g = mmid_geom(a);
    const i64 K = w.ne[0], N = w.ne[1];
    const int col = (int)blockIdx.y;
    const i64 n0 = R * ((i64)blockIdx.x * RF_MMI_WARPS + threadIdx.x / RF_WARP);
    if (n0 >= N) return;
    const int e = ((const int *)a.src[2].data)[col], rows = (int)min((i64)R, N - n0);
    float acc[R][1];
    if (e >= 0 && e < (int)g.E)
        mvq_dot_cols<B, 1, R>((const u8 *)w.data + (i64)e * w.nb[2] + n0 * w.nb[1], w.nb[1], rows,
                              (const i8 *)a.scratch + (i64)g.act_row(col) * a.aux[0], 0, K, acc);
    else
#pragma unroll
        for (int r = 0; r < R; ++r) acc[r][0] = 0.f;
    if (threadIdx.x % RF_WARP == 0)
#pragma unroll
        for (int r = 0; r < R; ++r)
            if (r < rows) mmid_out(a, g, col, n0)[r] = acc[r][0];
}
// The warp's row of its column's expert into L2 before rf_kernel_start (mv.no_weight_prefetch 0),
// overlapping the kernel before as the dense decode kernels do. The ids are read before the wait:
// their TOPK is at least two launches back in a MoE block (each kernel lets the next launch only
// after its own wait), so they are final; elsewhere a stale id only pulls another expert's row
// (checked against E: the prefetch is a hint, the dot product reads the ids after the wait).
// R rows a warp: its R rows.
template <int R = 1> RF_DEV void prefetch_mvq_idc(const rf_kargs &a) {
#if RF_NVIDIA // prefetch_l2 is NVIDIA's alone
    const rf_ktensor &w = a.src[0];
    const i64 n = R * ((i64)blockIdx.x * RF_MMI_WARPS + threadIdx.x / RF_WARP);
    if (a.mv.no_weight_prefetch || n >= w.ne[1]) return;
    const int e = ((const int *)a.src[2].data)[blockIdx.y];
    if (e >= 0 && e < (int)w.ne[2])
        prefetch_l2((const u8 *)w.data + (i64)e * w.nb[2] + n * w.nb[1], min((i64)R, w.ne[1] - n) * w.nb[1]);
#else
    (void)a;
#endif
}
#define RF_MVQ_ID(t, B) \
    RF_KERNEL __launch_bounds__(128) void rf_mvq_id_##t(rf_kargs a) { rf_kernel_start(); mvq_id_impl<B>(a); } \
    RF_KERNEL __launch_bounds__(128) void rf_mvq_idc_##t(rf_kargs a) { prefetch_mvq_idc(a); rf_kernel_start(); mvq_idc_impl<B>(a); }
RF_MVQ_ID(q4_k, MvqK4<T_Q4_K>)
RF_MVQ_ID(q5_k, MvqK4<T_Q5_K>)
#if RF_NVIDIA // gfx1100 (LLVM 15, 128 VGPRs) spills it: AMD runs Q6_K experts on rf_mm_id_q6_k
RF_MVQ_ID(q6_k, MvqQ6K)
#endif
RF_MVQ_ID(q4_0, MvqQ4_0)
RF_MVQ_ID(q8_0, MvqQ8_0)
RF_MVQ_ID(mxfp4, MvqMxfp4) // gpt-oss's experts
#if RF_NVIDIA // the AMD packs keep one row a warp (not built for their register budget)
#define RF_MVQ_IDCR(t, B, R) \
    RF_KERNEL __launch_bounds__(128) void rf_mvq_idc_##t##_r##R(rf_kargs a) { prefetch_mvq_idc<R>(a); rf_kernel_start(); mvq_idcr_impl<B, R>(a); }
// Four rows a warp (moe.cpp's kShortRowWarpRows; two were slower, docs/PERFORMANCE.md).
RF_MVQ_IDCR(q4_k, MvqK4<T_Q4_K>, 4)
RF_MVQ_IDCR(q5_k, MvqK4<T_Q5_K>, 4)
RF_MVQ_IDCR(q6_k, MvqQ6K, 4)
RF_MVQ_IDCR(q4_0, MvqQ4_0, 4)
RF_MVQ_IDCR(q8_0, MvqQ8_0, 4)
RF_MVQ_IDCR(mxfp4, MvqMxfp4, 4)
#endif

// MOE_WEIGHTS: a warp per row (grid M, 32 threads). moe_weights.over_chosen = 1: softmax over the k chosen
// logits; 0: the chosen entries of the softmax over all E; 2: the softmax of the k chosen logits
// from them alone (gpt-oss). Bad ids give zeros. Rounded as the CPU backend (llama.cpp's ops):
// p = softmax over all E (or the k: mode 2) with the sum in double and the f32 reciprocal,
// w_j = p[id_j]; mode 1 divides by max(f32 of the double sum of the w_j, 2^-14).
RF_DEV void moe_weights_warp_row(const rf_ktensor &l, const rf_ktensor &ids, const rf_ktensor &d, int mode, i64 row) {
    const int E = (int)l.ne[0], k = (int)d.ne[0], lane = threadIdx.x % RF_WARP;
    const float *v = (const float *)((const u8 *)l.data + row * l.nb[1]);
    const int *id = (const int *)((const u8 *)ids.data + row * ids.nb[1]);
    float *out = (float *)((u8 *)d.data + row * d.nb[1]);
    bool bad = false;
    for (int j = lane; j < k; j += RF_WARP) bad |= id[j] < 0 || id[j] >= E;
    if (warp_ballot(bad)) {
        for (int j = lane; j < k; j += RF_WARP) out[j] = 0.f;
        return;
    }
    const bool of_chosen = mode == 2;
    const int n = of_chosen ? k : E; // what the softmax runs over
    float mx = -__int_as_float(0x7f800000);
    for (int j = lane; j < n; j += RF_WARP) mx = fmaxf(mx, v[of_chosen ? id[j] : j]);
    mx = warp_max(mx);
    double sum = 0.0;
    for (int j = lane; j < n; j += RF_WARP) sum += (double)expf(v[of_chosen ? id[j] : j] - mx);
    sum = warp_sum(sum);
    const float inv = (float)(1.0 / sum);
    double chosen = 0.0;
    for (int j = lane; j < k; j += RF_WARP) {
        const float p = __fmul_rn(expf(v[id[j]] - mx), inv);
        out[j] = p;
        chosen += (double)p;
    }
    if (mode != 1) return;
    chosen = warp_sum(chosen);
    const float norm = fmaxf((float)chosen, 6.103515625e-5f);
    for (int j = lane; j < k; j += RF_WARP) out[j] = out[j] / norm; // each lane rereads its own
}
RF_KERNEL __launch_bounds__(32) void rf_moe_weights_f32(rf_kargs a) {
    rf_kernel_start();
    moe_weights_warp_row(a.src[0], a.src[1], a.dst, a.moe_weights.over_chosen, blockIdx.x);
}

// MOE_SUM: dst[n, m] = sum over s in order of w[s, m] * y[n, s, m], each product rounded before
// its add (the CPU's and ggml's mul then add: no fused multiply-add). Grid (ceil(N/256), M).
RF_KERNEL __launch_bounds__(256) void rf_moe_sum_f32(rf_kargs a) {
    rf_kernel_start();
    const rf_ktensor &y = a.src[0], &w = a.src[1], &d = a.dst;
    const i64 n = (i64)blockIdx.x * 256 + threadIdx.x, m = blockIdx.y;
    if (n >= d.ne[0]) return;
    const float *wm = (const float *)((const u8 *)w.data + m * w.nb[1]);
    const u8 *ym = (const u8 *)y.data + m * y.nb[2];
    float acc = __fmul_rn(wm[0], ((const float *)ym)[n]);
    for (i64 s = 1; s < y.ne[1]; ++s) acc = __fadd_rn(acc, __fmul_rn(wm[s], ((const float *)(ym + s * y.nb[1]))[n]));
    ((float *)((u8 *)d.data + m * d.nb[1]))[n] = acc;
}
