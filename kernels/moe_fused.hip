// The decode forms of a mixture of experts' FFN as the packs' MoE fusions launch them
// (plugins/packs/moe_ffn.c): where the backend would run each MATMUL_ID on rf_mvq_idc_<type> (one
// routed column per grid row y, q8_1 activation columns), these join it with the op after it.
// Each product uses the row function and activations of rf_mvq_idc_<type>: the floats of the
// unfused ops. Both write every output of the nodes they replace.
//
// rf_mvq_idcg_<type>: MATMUL_ID(gate) MATMUL_ID(up) SWIGLU. Grid (ceil(N / 4), S*M), a warp per
// weight row n of the column's expert: src[0] gate weights, src[1] up weights [K, N, E], src[2]
// ids [S, M]; dst gate [N, S, M], src[3] up, src[4] silu(gate) * up; scratch the q8_1 columns of
// x [K, S1, M] (aux[0] bytes apart, aux[1] = S1: 1 when the S experts of a token share its row).
//
// rf_mvq_idcs_<type>: MATMUL_ID(down) MOE_SUM. Grid (ceil(N / R), M), blocks of R * S warps (R =
// blockDim.x / 32 / S rows): warp (r, s) dots row n = R * blockIdx.x + r of the expert of slot s
// with q8_1 column s + S * m (scratch, aux[0] bytes apart); src[0] down weights, src[1] the
// weights [S, M], src[2] ids; src[3] the MATMUL_ID's output [N, S, M], dst the sum [N, M] in slot
// order, each product rounded before its add (rf_moe_sum_f32's arithmetic).
#pragma once
// all_kernels.hip includes it after matmul_vec.hip (gated_product) and matmul_id.hip.
#include "matmul_id.hip"

#define RF_MOE_SUM_MAX_SLOTS 16 // rf_mvq_idcs_*: at most 16 warps a block

RF_DEV int routed_expert(const rf_kargs &a, int col) {
    const int e = ((const int *)a.src[2].data)[col];
    return e >= 0 && e < (int)a.src[0].ne[2] ? e : -1;
}

RF_DEV float *out_at(const rf_ktensor &t, i64 n, int s, int m) {
    return (float *)((u8 *)t.data + s * t.nb[1] + m * t.nb[2]) + n;
}

// Gate and up rows of the warp's expert into L2 before rf_kernel_start (the ids are final: see
// prefetch_mvq_idc).
RF_DEV void prefetch_mvq_idcg(const rf_kargs &a) {
#if RF_NVIDIA
    const i64 n = (i64)blockIdx.x * RF_MMI_WARPS + threadIdx.x / RF_WARP;
    if (a.mv.no_weight_prefetch || n >= a.src[0].ne[1]) return;
    const int e = routed_expert(a, (int)blockIdx.y);
    if (e < 0) return;
    prefetch_l2((const u8 *)a.src[0].data + (i64)e * a.src[0].nb[2] + n * a.src[0].nb[1], a.src[0].nb[1]);
    prefetch_l2((const u8 *)a.src[1].data + (i64)e * a.src[1].nb[2] + n * a.src[1].nb[1], a.src[1].nb[1]);
#else
    (void)a;
#endif
}

template <class B> RF_DEV void mvq_idcg_impl(const rf_kargs &a) {
    const rf_ktensor &wg = a.src[0], &wu = a.src[1];
    const i64 K = wg.ne[0], N = wg.ne[1];
    const int col = (int)blockIdx.y, S = (int)a.src[2].ne[0], s = col % S, m = col / S;
    const i64 n = (i64)blockIdx.x * RF_MMI_WARPS + threadIdx.x / RF_WARP;
    if (n >= N) return;
    const int e = routed_expert(a, col);
    float acc[2][1] = {{0.f}, {0.f}};
    if (e >= 0) {
        const u8 *rg = (const u8 *)wg.data + (i64)e * wg.nb[2] + n * wg.nb[1];
        const u8 *ru = (const u8 *)wu.data + (i64)e * wu.nb[2] + n * wu.nb[1];
        const i64 xr = (i64)m * a.aux[1] + (a.aux[1] == 1 ? 0 : s);
        mvq_dot_cols<B, 1, 2>(rg, (i64)(ru - rg), 2, (const i8 *)a.scratch + xr * a.aux[0], 0, K, acc);
    }
    if (threadIdx.x % RF_WARP) return;
    *out_at(a.dst, n, s, m) = acc[0][0];
    *out_at(a.src[3], n, s, m) = acc[1][0];
    *out_at(a.src[4], n, s, m) = gated_product<false>(acc[0][0], acc[1][0]);
}

RF_DEV void prefetch_mvq_idcs(const rf_kargs &a) {
#if RF_NVIDIA
    const int S = (int)a.src[2].ne[0], w = threadIdx.x / RF_WARP, R = blockDim.x / RF_WARP / S;
    const i64 n = (i64)blockIdx.x * R + w / S;
    if (a.mv.no_weight_prefetch || n >= a.src[0].ne[1]) return;
    const int e = routed_expert(a, w % S + S * (int)blockIdx.y);
    if (e >= 0) prefetch_l2((const u8 *)a.src[0].data + (i64)e * a.src[0].nb[2] + n * a.src[0].nb[1], a.src[0].nb[1]);
#else
    (void)a;
#endif
}

template <class B> RF_DEV void mvq_idcs_impl(const rf_kargs &a) {
    __shared__ float part[RF_MOE_SUM_MAX_SLOTS];
    const rf_ktensor &w = a.src[0];
    const i64 K = w.ne[0], N = w.ne[1];
    const int S = (int)a.src[2].ne[0], warp = threadIdx.x / RF_WARP, R = blockDim.x / RF_WARP / S;
    const int s = warp % S, m = (int)blockIdx.y, col = s + S * m;
    const i64 n = (i64)blockIdx.x * R + warp / S;
    const bool row_in = n < N;
    float v = 0.f;
    if (row_in) {
        const int e = routed_expert(a, col);
        if (e >= 0) v = mvq_dot_row<B>((const u8 *)w.data + (i64)e * w.nb[2] + n * w.nb[1], (const i8 *)a.scratch + (i64)col * a.aux[0], K);
        if (threadIdx.x % RF_WARP == 0) {
            *out_at(a.src[3], n, s, m) = v;
            part[warp] = v;
        }
    }
    __syncthreads();
    if (!row_in || s != 0 || threadIdx.x % RF_WARP != 0) return;
    const float *wm = (const float *)((const u8 *)a.src[1].data + m * a.src[1].nb[1]);
    float sum = __fmul_rn(wm[0], part[warp]);
    for (int j = 1; j < S; ++j) sum = __fadd_rn(sum, __fmul_rn(wm[j], part[warp + j]));
    ((float *)((u8 *)a.dst.data + m * a.dst.nb[1]))[n] = sum;
}

#define RF_MVQ_IDC_FUSED(t, B) \
    RF_KERNEL __launch_bounds__(128) void rf_mvq_idcg_##t(rf_kargs a) { prefetch_mvq_idcg(a); rf_kernel_start(); mvq_idcg_impl<B>(a); } \
    RF_KERNEL __launch_bounds__(512) void rf_mvq_idcs_##t(rf_kargs a) { prefetch_mvq_idcs(a); rf_kernel_start(); mvq_idcs_impl<B>(a); }
RF_MVQ_IDC_FUSED(q4_k, MvqK4<T_Q4_K>)
RF_MVQ_IDC_FUSED(q5_k, MvqK4<T_Q5_K>)
#if RF_NVIDIA // as rf_mvq_idc_q6_k: AMD runs Q6_K experts on rf_mm_id_q6_k
RF_MVQ_IDC_FUSED(q6_k, MvqQ6K)
#endif
RF_MVQ_IDC_FUSED(q4_0, MvqQ4_0)
RF_MVQ_IDC_FUSED(q8_0, MvqQ8_0)
