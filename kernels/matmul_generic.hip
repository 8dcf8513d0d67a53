// MATMUL, any weight type, small M (decode / short batches):
//   dst[n, m] = sum_k W[k, n] * X[k, m],  W [K, N, B2, B3] any type, X [K, M, C2, C3] f32.
// One warp per weight row n and up to RF_MMG_MT activation columns; lanes take consecutive
// 32-element chunks of the row (so a warp reads a contiguous span of quantized blocks),
// decode them to registers and accumulate; a warp reduction finishes each dot product.
#include "compat.h"
#include "quant_decode.h"

#define RF_MMG_WARPS 4
#define RF_MMG_MT 8

// Byte offsets of batch z's W and X/dst matrices (W broadcasts over X's higher dims).
RF_DEV void batch_offsets(const rf_kargs &a, int z, i64 &ow, i64 &ox, i64 &od) {
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 i2 = z % x.ne[2], i3 = z / x.ne[2];
    const i64 w2 = i2 / (x.ne[2] / w.ne[2]), w3 = i3 / (x.ne[3] / w.ne[3]);
    ow = w2 * w.nb[2] + w3 * w.nb[3];
    ox = i2 * x.nb[2] + i3 * x.nb[3];
    od = i2 * d.nb[2] + i3 * d.nb[3];
}

template <int T> RF_DEV void mm_generic_impl(const rf_kargs &a) {
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 K = w.ne[0], N = w.ne[1], M = x.ne[1];
    const int lane = threadIdx.x % RF_WARP;
    const i64 n = (i64)blockIdx.x * RF_MMG_WARPS + threadIdx.x / RF_WARP;
    const i64 m0 = (i64)blockIdx.y * RF_MMG_MT;
    if (n >= N) return;
    i64 ow, ox, od; batch_offsets(a, blockIdx.z, ow, ox, od);
    const u8 *row = (const u8 *)w.data + ow + n * w.nb[1];
    const u8 *xb = (const u8 *)x.data + ox;
    const int mt = (int)(M - m0 < RF_MMG_MT ? M - m0 : RF_MMG_MT);
    float acc[RF_MMG_MT];
#pragma unroll
    for (int j = 0; j < RF_MMG_MT; ++j) acc[j] = 0.f;
    if (qtraits<T>::scalar) {
        for (i64 k = lane; k < K; k += RF_WARP) {
            const float v = load_scalar<T>(row, k);
#pragma unroll
            for (int j = 0; j < RF_MMG_MT; ++j)
                if (j < mt) acc[j] += v * ((const float *)(xb + (m0 + j) * x.nb[1]))[k];
        }
    } else {
        float v[32];
        for (i64 c = lane; c < K / 32; c += RF_WARP) {
            decode32<T>(row, c, v);
#pragma unroll
            for (int j = 0; j < RF_MMG_MT; ++j) {
                if (j < mt) {
                    const float4 *xr = (const float4 *)((const float *)(xb + (m0 + j) * x.nb[1]) + c * 32);
                    float s = 0.f;
#pragma unroll
                    for (int q = 0; q < 8; ++q) {
                        const float4 xv = xr[q];
                        s += v[4 * q] * xv.x + v[4 * q + 1] * xv.y + v[4 * q + 2] * xv.z + v[4 * q + 3] * xv.w;
                    }
                    acc[j] += s;
                }
            }
        }
    }
#pragma unroll
    for (int j = 0; j < RF_MMG_MT; ++j) {
        if (j < mt) {
            const float s = warp_sum(acc[j]);
            if (lane == 0) ((float *)((u8 *)d.data + od + (m0 + j) * d.nb[1]))[n] = s;
        }
    }
}

#define RF_MM_GENERIC(NAME, T) RF_KERNEL __launch_bounds__(128) void rf_mm_generic_##NAME(rf_kargs a) { rf_kernel_start(); mm_generic_impl<T>(a); }
RF_FOR_EACH_WTYPE(RF_MM_GENERIC)
