// MATMUL of F32 weights by many columns (the MoE routers in prefill: [K, E] by [K, tokens]) in
// f32 throughout, so the routing logits keep the CPU backend's precision (the f16 tiles would
// round the weights).
// rf_mm_f32_tiles: a warp takes 4 weight rows x 8 columns, its lanes consecutive float4s of K
// (coalesced rows, as rf_mm_generic), a warp sum per output at the end: each activation column
// is read once per 4 weight rows instead of once per row (rf_mm_generic), and the grid keeps a
// warp per 32 outputs, so an 8- or 32-expert router still fills the GPU, which 64 x 64 tiles
// (8 blocks for 32 experts x 512 tokens) did not. 4 warps a block over consecutive row groups.
// Grid (ceil(N / 16), ceil(M / 8), batch). Host (ops.cpp): f32 weights and activations,
// K % 4 == 0, 16-byte aligned rows; W broadcasts over X's higher dims as matmul_generic.hip.
#include "compat.h"

#define RF_MMF_ROWS 4 // weight rows a warp
#define RF_MMF_COLS 8 // columns a warp
#define RF_MMF_WARPS 4

RF_KERNEL __launch_bounds__(32 * RF_MMF_WARPS) void rf_mm_f32_tiles(rf_kargs a) {
    rf_kernel_start();
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 K = w.ne[0], N = w.ne[1], M = x.ne[1];
    const int lane = threadIdx.x % RF_WARP;
    const i64 n0 = ((i64)blockIdx.x * RF_MMF_WARPS + threadIdx.x / RF_WARP) * RF_MMF_ROWS, m0 = (i64)blockIdx.y * RF_MMF_COLS;
    if (n0 >= N) return;
    const int z = blockIdx.z;
    const i64 i2 = z % x.ne[2], i3 = z / x.ne[2];
    const u8 *wb = (const u8 *)w.data + (i2 / (x.ne[2] / w.ne[2])) * w.nb[2] + (i3 / (x.ne[3] / w.ne[3])) * w.nb[3];
    const u8 *xb = (const u8 *)x.data + i2 * x.nb[2] + i3 * x.nb[3];
    u8 *db = (u8 *)d.data + i2 * d.nb[2] + i3 * d.nb[3];
    // Rows and columns past N or M repeat the last one (loads stay in bounds; never stored).
    const float4 *wr[RF_MMF_ROWS], *xr[RF_MMF_COLS];
#pragma unroll
    for (int i = 0; i < RF_MMF_ROWS; ++i) wr[i] = (const float4 *)(wb + (n0 + i < N ? n0 + i : N - 1) * w.nb[1]);
#pragma unroll
    for (int j = 0; j < RF_MMF_COLS; ++j) xr[j] = (const float4 *)(xb + (m0 + j < M ? m0 + j : M - 1) * x.nb[1]);
    float acc[RF_MMF_ROWS][RF_MMF_COLS] = {};
    for (i64 k = lane; k < K / 4; k += RF_WARP) {
        float4 wv[RF_MMF_ROWS];
#pragma unroll
        for (int i = 0; i < RF_MMF_ROWS; ++i) wv[i] = wr[i][k];
#pragma unroll
        for (int j = 0; j < RF_MMF_COLS; ++j) {
            const float4 xv = xr[j][k];
#pragma unroll
            for (int i = 0; i < RF_MMF_ROWS; ++i)
                acc[i][j] += wv[i].x * xv.x + wv[i].y * xv.y + wv[i].z * xv.z + wv[i].w * xv.w;
        }
    }
#pragma unroll
    for (int i = 0; i < RF_MMF_ROWS; ++i)
#pragma unroll
        for (int j = 0; j < RF_MMF_COLS; ++j) {
            const float s = warp_sum(acc[i][j]);
            if (lane == 0 && n0 + i < N && m0 + j < M) ((float *)(db + (m0 + j) * d.nb[1]))[n0 + i] = s;
        }
}
