// ADD + RMS_NORM + MUL (norm weight) in one launch per row, optionally also the q8_1 form of the
// result for the M = 1 matmuls that read it (decode: each of these ops alone is a tiny launch).
// Every intermediate is still written (the sum, the normalised row, the product) with the same
// arithmetic and reduction order as rf_add_f32 / rf_rms_norm_f32 / rf_mul_f32 /
// rf_quantize_q8_1, except that 1024 threads share a row (one block per row is latency-bound,
// so it takes as many threads as it can): the sum of squares is added in another order.
// src0 = x (the add's first operand), src1 = the add's second operand (data null: no add),
// src2 = norm weight [K], src3 = add result, src4 = rms_norm result, dst = product;
// fparams[0] = eps; aux[0] = q8_1 column stride (0: no quantization; row 0 only) into scratch.
#include "compat.h"

RF_DEV const float *fused_row(const rf_ktensor &t, i64 r) {
    const i64 i1 = r % t.ne[1], i2 = (r / t.ne[1]) % t.ne[2], i3 = r / (t.ne[1] * t.ne[2]);
    return (const float *)((const u8 *)t.data + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3]);
}

RF_DEV float fused_block_sum(float v, float *sh) { // as rownorm.hip's block_sum
    v = warp_sum(v);
    const int w = threadIdx.x / RF_WARP, l = threadIdx.x % RF_WARP;
    __syncthreads();
    if (l == 0) sh[w] = v;
    __syncthreads();
    v = l < (int)(blockDim.x / RF_WARP) ? sh[l] : 0.f;
    return warp_sum(v);
}

RF_KERNEL __launch_bounds__(1024) void rf_add_rms_norm_mul(rf_kargs a) {
    __shared__ float sh[RF_WARP];
    const i64 r = blockIdx.x, K = a.src[0].ne[0];
    const bool add = a.src[1].data != 0;
    const float *x = fused_row(a.src[0], r);
    const float *xb = add ? fused_row(a.src[1], r) : x;
    float *sum_out = add ? (float *)fused_row(a.src[3], r) : (float *)0;
    float *norm_out = (float *)fused_row(a.src[4], r);
    float *y = (float *)fused_row(a.dst, r);
    const float *w = (const float *)a.src[2].data;
    float s = 0.f;
    for (i64 i = threadIdx.x; i < K; i += blockDim.x) {
        float v = x[i];
        if (add) { v = x[i] + xb[i]; sum_out[i] = v; } // same thread reads then writes: in-place safe
        s += v * v;
    }
    s = fused_block_sum(s, sh);
    const float inv = rsqrtf(s / (float)K + a.fparams[0]);
    for (i64 i = threadIdx.x; i < K; i += blockDim.x) {
        const float v = add ? sum_out[i] : x[i];
        const float n = v * inv;
        norm_out[i] = n;
        y[i] = n * w[i];
    }
    if (a.aux[0] == 0 || r != 0) return;
    __syncthreads(); // y written by the whole block
    const int lane = threadIdx.x % RF_WARP;
    for (i64 blk = threadIdx.x / RF_WARP; blk < K / 32; blk += blockDim.x / RF_WARP) {
        const float v = y[blk * 32 + lane];
        const float amax = warp_max(fabsf(v));
        const float sum = warp_sum(v);
        const float d = amax / 127.f;
        const int q = amax == 0.f ? 0 : (int)rintf(v / d);
        ((i8 *)a.scratch)[blk * 32 + lane] = (i8)q;
        if (lane == 0) { float *ds = (float *)((u8 *)a.scratch + K) + 2 * blk; ds[0] = d; ds[1] = sum; }
    }
}
