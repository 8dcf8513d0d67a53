// Activation quantization exactly as the CPU backend does it before an integer matmul
// (backends/cpu/kernels_scalar.cpp, after ggml): blocks of 32 (legacy formats, q8_32) or 256
// (K-quants, q8_K) elements share d = amax / 127, q = rint(x * (127 / amax)) (round to nearest
// even, same float operations). The GPU then sees the same int8 activations as the CPU, so the
// two backends agree to float rounding instead of differing by the quantization noise.
//  - rf_quantize_q8_1: q8_1 blocks for the dp4a decode kernels (matmul_vec.hip): K int8 quants,
//    then per 32 elements (d, d * sum of the quants), d repeated over the 8 sub-blocks of a 256
//    block. aux[0] = column stride in bytes, aux[1] = block size (32 or 256).
//  - rf_quantize_f32_q8: the dequantized values q * d as f32 rows (dense [K, rows]) for the
//    tile kernels, or rounded to f16 for the tensor-core ones, which multiply f16 operands.
//    aux[1] = block size, aux[2] = 1: f16.
#include "compat.h"


// Max over the 8 warps of a 256-thread block (every thread must call it).
RF_DEV float max_of_8_warps(float warp_amax, float *sh) {
    const int w = threadIdx.x / RF_WARP;
    if (threadIdx.x % RF_WARP == 0) sh[w] = warp_amax;
    __syncthreads();
    float m = sh[0];
#pragma unroll
    for (int i = 1; i < 8; ++i) m = fmaxf(m, sh[i]);
    return m;
}

// One element per thread, 256 threads = 8 blocks of 32 or one of 256; returns the block amax.
RF_DEV float act_block_amax(float v, int block, float *sh) {
    const float amax = warp_max(fabsf(v));
    return block == 256 ? max_of_8_warps(amax, sh) : amax;
}

// Grid (ceil(K/256), 1, rows), 256 threads: row z of x (ne1*ne2*ne3 rows) -> column z.
RF_KERNEL __launch_bounds__(256) void rf_quantize_q8_1(rf_kargs a) {
    rf_kernel_start();
    __shared__ float sh[8];
    const rf_ktensor &x = a.src[0];
    const i64 K = x.ne[0];
    const i64 blk = (i64)blockIdx.x * 8 + threadIdx.x / RF_WARP;
    const int lane = threadIdx.x % RF_WARP;
    const bool in = blk * 32 < K;
    const int z = blockIdx.z;
    const float v = in ? ((const float *)row_ptr(x, z))[blk * 32 + lane] : 0.f;
    const float amax = act_block_amax(v, (int)a.aux[1], sh);
    if (!in) return;
    const int q = act_quant(v, amax);
    const float qsum = warp_sum((float)q); // |sum| <= 32 * 127: exact in float
    u8 *col = (u8 *)a.scratch + (i64)z * a.aux[0];
    ((i8 *)col)[blk * 32 + lane] = (i8)q;
    if (lane == 0) {
        const float d = act_scale(amax);
        float *ds = (float *)(col + K) + 2 * blk;
        ds[0] = d;
        ds[1] = d * qsum;
    }
}

// Grid (ceil(K/256), min(rows, 65535)), 256 threads; rows = ne1*ne2*ne3 of src0, walked with
// the grid's y stride. dst: scratch, row r at r * K elements: f32, or f16 when aux[2] = 1.
RF_KERNEL __launch_bounds__(256) void rf_quantize_f32_q8(rf_kargs a) {
    rf_kernel_start();
    __shared__ float sh[8];
    const rf_ktensor &x = a.src[0];
    const i64 K = x.ne[0], rows = x.ne[1] * x.ne[2] * x.ne[3];
    const i64 e = (i64)blockIdx.x * 256 + threadIdx.x;
    const int block = (int)a.aux[1];
    for (i64 r = blockIdx.y; r < rows; r += gridDim.y) {
        const float *xr = (const float *)row_ptr(x, r);
        const float v = e < K ? xr[e] : 0.f;
        const float amax = act_block_amax(v, block, sh);
        if (e < K) {
            const float q = (float)act_quant(v, amax) * act_scale(amax);
            if (a.aux[2]) ((u16 *)a.scratch)[r * K + e] = f2h(q); // the tensor-core kernels' own rounding
            else ((float *)a.scratch)[r * K + e] = q;
        }
        if (block == 256) __syncthreads(); // sh is reused by the next row
    }
}
