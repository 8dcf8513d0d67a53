// MATMUL of F32 weights by many columns (the MoE routers in prefill: [K, E] by [K, tokens]) in
// f32 throughout, so the routing logits keep the CPU backend's precision (the f16 tiles would
// round the weights; rf_mm_generic re-reads every activation column for each weight row).
// rf_mm_f32_tiles: 64 weight rows x 64 columns a block of 256 threads, K in steps of 32 staged
// in shared memory k-major; thread t accumulates 4 rows x 4 columns with plain FMAs in K order.
// Host (ops.cpp): f32 weights and activations, K % 4 == 0, 16-byte aligned rows; W broadcasts
// over X's higher dims as matmul_generic.hip.
#include "compat.h"

#define RF_MMF_BN 64
#define RF_MMF_BM 64
#define RF_MMF_BK 32
#define RF_MMF_LD (RF_MMF_BN + 4) // padded (floats): the transposing stores spread over the banks

RF_KERNEL __launch_bounds__(256) void rf_mm_f32_tiles(rf_kargs a) {
    rf_kernel_start();
    __shared__ __align__(16) float Ws[RF_MMF_BK][RF_MMF_LD];
    __shared__ __align__(16) float Xs[RF_MMF_BK][RF_MMF_LD];
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 K = w.ne[0], N = w.ne[1], M = x.ne[1];
    const i64 n0 = (i64)blockIdx.x * RF_MMF_BN, m0 = (i64)blockIdx.y * RF_MMF_BM;
    const int z = blockIdx.z;
    const i64 i2 = z % x.ne[2], i3 = z / x.ne[2];
    const u8 *wb = (const u8 *)w.data + (i2 / (x.ne[2] / w.ne[2])) * w.nb[2] + (i3 / (x.ne[3] / w.ne[3])) * w.nb[3];
    const u8 *xb = (const u8 *)x.data + i2 * x.nb[2] + i3 * x.nb[3];
    u8 *db = (u8 *)d.data + i2 * d.nb[2] + i3 * d.nb[3];
    const int tid = threadIdx.x, tn = (tid % 16) * 4, tm = (tid / 16) * 4;
    // Loads: thread t brings float4 t % 8 of tile rows t / 8 and t / 8 + 32 of both operands.
    const int lr = tid / 8, lk = (tid % 8) * 4;
    float acc[4][4] = {};
    for (i64 k0 = 0; k0 < K; k0 += RF_MMF_BK) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = lr + 32 * h;
            const i64 n = n0 + r, m = m0 + r, k = k0 + lk;
            float4 wv = {0.f, 0.f, 0.f, 0.f}, xv = {0.f, 0.f, 0.f, 0.f};
            if (n < N && k < K) wv = *(const float4 *)(wb + n * w.nb[1] + 4 * k);
            if (m < M && k < K) xv = *(const float4 *)(xb + m * x.nb[1] + 4 * k);
            Ws[lk][r] = wv.x, Ws[lk + 1][r] = wv.y, Ws[lk + 2][r] = wv.z, Ws[lk + 3][r] = wv.w;
            Xs[lk][r] = xv.x, Xs[lk + 1][r] = xv.y, Xs[lk + 2][r] = xv.z, Xs[lk + 3][r] = xv.w;
        }
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < RF_MMF_BK; ++k) {
            const float4 wv = *(const float4 *)&Ws[k][tn], xv = *(const float4 *)&Xs[k][tm];
            const float wr[4] = {wv.x, wv.y, wv.z, wv.w}, xr[4] = {xv.x, xv.y, xv.z, xv.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(wr[i], xr[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const i64 m = m0 + tm + j;
        if (m >= M) break;
        float *y = (float *)(db + m * d.nb[1]);
#pragma unroll
        for (int i = 0; i < 4; ++i)
            if (n0 + tn + i < N) y[n0 + tn + i] = acc[i][j];
    }
}
