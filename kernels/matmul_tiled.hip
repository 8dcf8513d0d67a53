// MATMUL for larger M (prefill): 64x64 output tiles, K in steps of 32. Each step decodes a
// 64x32 tile of the weights (any type, straight from its quantized blocks) and a 32x64 tile
// of activations to f16 in shared memory; NVIDIA multiplies with tensor cores
// (mma.sync m16n8k16, f32 accumulate), AMD with a plain FMA loop over the same tiles.
// Same batch broadcasting as matmul_generic.hip.
#include "compat.h"
#include "quant_decode.h"

#define RF_MMT_BN 64
#define RF_MMT_BM 64
#define RF_MMT_BK 32
#define RF_MMT_LD (RF_MMT_BK + 8) // padded row (halves): conflict-free fragment loads

RF_DEV void mma_16816(float *c, u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
#if RF_NVIDIA
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
#endif
}

template <int T> RF_DEV void mm_tiled_impl(const rf_kargs &a) {
    __shared__ __align__(16) u16 Ws[RF_MMT_BN][RF_MMT_LD];
    __shared__ __align__(16) u16 Xs[RF_MMT_BM][RF_MMT_LD];
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 K = w.ne[0], N = w.ne[1], M = x.ne[1];
    const i64 n0 = (i64)blockIdx.x * RF_MMT_BN, m0 = (i64)blockIdx.y * RF_MMT_BM;
    const int z = blockIdx.z;
    const i64 i2 = z % x.ne[2], i3 = z / x.ne[2];
    const i64 ow = (i2 / (x.ne[2] / w.ne[2])) * w.nb[2] + (i3 / (x.ne[3] / w.ne[3])) * w.nb[3];
    const u8 *wb = (const u8 *)w.data + ow;
    const u8 *xb = (const u8 *)x.data + i2 * x.nb[2] + i3 * x.nb[3];
    u8 *db = (u8 *)d.data + i2 * d.nb[2] + i3 * d.nb[3];

    const int tid = threadIdx.x, lane = tid % RF_WARP, wid = tid / RF_WARP;
    const int g = lane >> 2, t4 = lane & 3;
    const int wn = (wid & 1) * 32, wm = (wid >> 1) * 32; // this warp's 32x32 sub-tile
    float acc[2][4][4];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

    for (i64 k0 = 0; k0 < K; k0 += RF_MMT_BK) {
        if (tid < RF_MMT_BN) { // weights: one 32-element chunk of one row per thread
            float v[32];
            const i64 n = n0 + tid;
            if (n < N) decode32_any<T>(wb + n * w.nb[1], k0 / 32, K, v);
            else for (int j = 0; j < 32; ++j) v[j] = 0.f;
            u32 *dst = (u32 *)&Ws[tid][0];
#pragma unroll
            for (int j = 0; j < 16; ++j) dst[j] = pack_h2(v[2 * j], v[2 * j + 1]);
        } else { // activations: rows m (2 per thread-pair of 16 k each)
            const int tt = tid - RF_MMT_BN; // 0..63
            for (int rr = 0; rr < 2; ++rr) {
                const int ml = tt + 64 * rr;          // 0..127: 64 rows x 2 halves
                const int mrow = ml >> 1, kh = (ml & 1) * 16;
                const i64 m = m0 + mrow;
                const float *xr = (const float *)(xb + m * x.nb[1]) + k0 + kh;
                u32 *dst = (u32 *)&Xs[mrow][kh];
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    const i64 k = k0 + kh + 2 * j;
                    const float lo = (m < M && k < K) ? xr[2 * j] : 0.f;
                    const float hi = (m < M && k + 1 < K) ? xr[2 * j + 1] : 0.f;
                    dst[j] = pack_h2(lo, hi);
                }
            }
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < RF_MMT_BK; kk += 16) {
#if RF_NVIDIA
            u32 af[2][4], bf[4][2];
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const int r = wn + 16 * i + g;
                af[i][0] = *(const u32 *)&Ws[r][kk + 2 * t4];
                af[i][1] = *(const u32 *)&Ws[r + 8][kk + 2 * t4];
                af[i][2] = *(const u32 *)&Ws[r][kk + 2 * t4 + 8];
                af[i][3] = *(const u32 *)&Ws[r + 8][kk + 2 * t4 + 8];
            }
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int c = wm + 8 * j + g;
                bf[j][0] = *(const u32 *)&Xs[c][kk + 2 * t4];
                bf[j][1] = *(const u32 *)&Xs[c][kk + 2 * t4 + 8];
            }
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    mma_16816(acc[i][j], af[i][0], af[i][1], af[i][2], af[i][3], bf[j][0], bf[j][1]);
#else
            // Same fragment ownership as the mma path, as an outer product per k (few live
            // registers: 4 weights + 8 activations + the 32 accumulators).
            for (int k = kk; k < kk + 16; ++k) {
                float wv[4], xv[8];
#pragma unroll
                for (int q = 0; q < 4; ++q) wv[q] = h2f(Ws[wn + 16 * (q >> 1) + g + 8 * (q & 1)][k]);
#pragma unroll
                for (int q = 0; q < 8; ++q) xv[q] = h2f(Xs[wm + 8 * (q >> 1) + 2 * t4 + (q & 1)][k]);
#pragma unroll
                for (int i = 0; i < 2; ++i)
#pragma unroll
                    for (int j = 0; j < 4; ++j)
#pragma unroll
                        for (int r = 0; r < 4; ++r) acc[i][j][r] += wv[2 * i + (r >> 1)] * xv[2 * j + (r & 1)];
            }
#endif
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const i64 n = n0 + wn + 16 * i + g + 8 * (r >> 1), m = m0 + wm + 8 * j + 2 * t4 + (r & 1);
                if (n < N && m < M) ((float *)(db + m * d.nb[1]))[n] = acc[i][j][r];
            }
}

// AMD: let the compiler trade occupancy for registers (4 waves/SIMD is plenty for this tile)
// instead of spilling the accumulators to scratch (tools/amd_resource_report.py checks it).
#if RF_AMD
#define RF_MMT_ATTR __attribute__((amdgpu_waves_per_eu(1, 4), amdgpu_num_vgpr(192)))
#else
#define RF_MMT_ATTR
#endif
#define RF_MM_TILED(NAME, T) RF_KERNEL __launch_bounds__(128) RF_MMT_ATTR void rf_mm_tiled_##NAME(rf_kargs a) { rf_kernel_start(); mm_tiled_impl<T>(a); }
RF_FOR_EACH_WTYPE(RF_MM_TILED)
