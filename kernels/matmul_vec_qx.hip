// One-row (M = 1) quantized matmuls whose block quantizes its own f32 activations: the output
// projection after the attention and FFN down after SwiGLU read an f32 vector that no kernel
// before them quantized, which took an rf_quantize_q8_1 launch of its own (two a layer). Here
// every block quantizes the vector into shared memory with
// rf_quantize_q8_1's arithmetic (quantize_q8_1() of quantize_act.hip, one warp per 256 elements),
// then each warp dots its weight row with it as rf_mvq_<type> does (mvq_dot_row, reading the
// q8_1 column from shared memory): the same int8 activations, the same sums, the same bits as the
// two launches. NVIDIA packs only (the host picks these where rf_mvq_<type> would need a
// quantization first). Q4_0, Q5_0 and Q8_0 only: the K-quant forms (blocks of 256) made 7B Q4_K_M
// decode slower than the separate launch and were dropped.
//
// rf_mvq_<type>_qx: src[0] = weights [K, N] (batch 1), src[1] = the f32 vector (K % 32 == 0),
// dst = f32 [N]; aux[1] = the q8_1 block (32, the weight type's); mv.no_weight_prefetch = 1: no L2
// prefetch of the weight rows. 1024 threads (32 warps, a weight row each), dynamic shared memory
// q8_column_bytes(K) = K + K / 4. The vector is read once per block from L2: 32 rows a block keep
// that traffic at N / 32 reads of it.
#include "compat.h"

#if RF_NVIDIA
#define RF_MVQX_WARPS 32

// The warp's row into L2 before rf_kernel_start (weights are never written), as prefetch_mvq_one.
RF_DEV void prefetch_mvq_qx(const rf_kargs &a) {
    const rf_ktensor &w = a.src[0];
    const i64 n = (i64)blockIdx.x * RF_MVQX_WARPS + threadIdx.x / RF_WARP;
    if (a.mv.no_weight_prefetch || n >= w.ne[1]) return;
    prefetch_l2((const u8 *)w.data + n * w.nb[1], w.nb[1]);
}

template <class B> RF_DEV void mvq_qx(const rf_kargs &a) {
    extern __shared__ __align__(16) u8 mvqx_col[]; // K int8 quants, then (d, d * sum) per 32
    const rf_ktensor &w = a.src[0], &x = a.src[1];
    const i64 K = w.ne[0], N = w.ne[1];
    const int lane = threadIdx.x % RF_WARP, wi = threadIdx.x / RF_WARP;
    // Warp wi quantizes the 256-element groups wi, wi + 32, ..: lane l elements 8l..8l+7 of each,
    // as rf_quantize_q8_1's warps do.
    for (i64 g0 = (i64)wi * 256; g0 < K; g0 += RF_MVQX_WARPS * 256) {
        QuantLane q;
        q.K = K;
        q.e0 = g0 + 8 * lane;
        q.warp_in = true;
        q.in = q.e0 < K;
        q.x = (const float *)x.data + q.e0;
        q.u = (const float *)0;
        q.d = (float *)0;
        q.col = mvqx_col;
        q.want_col = true;
        q.block = (int)a.aux[1];
        quantize_q8_1<false>(q);
    }
    __syncthreads();
    const i64 n = (i64)blockIdx.x * RF_MVQX_WARPS + wi;
    if (n >= N) return;
    const float acc = mvq_dot_row<B>((const u8 *)w.data + n * w.nb[1], (const i8 *)mvqx_col, K);
    if (lane == 0) ((float *)a.dst.data)[n] = acc;
}

#define RF_MVQ_QX(t, B) \
    RF_KERNEL __launch_bounds__(RF_MVQX_WARPS * RF_WARP) void rf_mvq_##t##_qx(rf_kargs a) { prefetch_mvq_qx(a); rf_kernel_start(); mvq_qx<B>(a); }
RF_MVQ_QX(q4_0, MvqQ4_0)
RF_MVQ_QX(q8_0, MvqQ8_0)
RF_MVQ_QX(q5_0, MvqLegacy<T_Q5_0>)
#endif // RF_NVIDIA
