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
//    aux[1] = block size (0: no quantization, the f32 values rounded to f16 for rf_mm_h16_*),
//    aux[2] = 1: f16.
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

// 8 floats at xr (zeros where `in` is false): two 16-byte loads when aligned.
RF_DEV void load8(const float *xr, bool in, float (&v)[8]) {
    if (in && ((unsigned long long)xr & 15) == 0) {
        const float4 p = ((const float4 *)xr)[0], q = ((const float4 *)xr)[1];
        v[0] = p.x; v[1] = p.y; v[2] = p.z; v[3] = p.w; v[4] = q.x; v[5] = q.y; v[6] = q.z; v[7] = q.w;
    } else {
#pragma unroll
        for (int i = 0; i < 8; ++i) v[i] = in ? xr[i] : 0.f;
    }
}

// Grid (ceil(K/2048), 1, rows), 256 threads: row z of x (ne1*ne2*ne3 rows) -> column z. Each
// warp quantizes 256 consecutive elements, 8 per lane (lane l: 8l..8l+7, two 16-byte loads
// where the row is 16-byte aligned): a 32-element block spans 4 lanes, a 256 block the warp, so
// the block maxima and sums are shuffles, with no barrier (K is a multiple of 32).
// SWIGLU: x = swiglu(src[0], src[1]) of the gate and up rows, written to dst as rf_swiglu_f32
// would (rf_swiglu_q8_1: the down projection's q8_1 columns in the SWIGLU's launch; all three
// f32 with 16-byte aligned rows, dst on neither input or exactly on one); aux[0] = 0: only the
// product (the packs' swiglu_q8 fusion when no matmul reads the columns next).
// This lane's addresses and the arguments it needs, found before rf_kernel_start() (they do not
// depend on the previous kernel; after the wait their constant loads and address products
// lengthen a launch that is all latency, as in the fused norm).
struct QuantLane {
    const float *x, *u; // this lane's 8 elements of the row (and of up, SWIGLU)
    float *d;           // where the SWIGLU writes them
    u8 *col;            // the row's q8_1 column
    bool want_col;      // SWIGLU: aux[0] != 0
    i64 K, e0;
    int block;
    bool warp_in, in;   // the warp / this lane's elements within the row
};
template <bool SWIGLU> RF_DEV QuantLane prefetch_quant_lane(const rf_kargs &a) {
    const rf_ktensor &x = a.src[0];
    const int lane = threadIdx.x % RF_WARP, z = blockIdx.z;
    QuantLane q;
    q.K = x.ne[0];
    q.e0 = ((i64)blockIdx.x * 8 + threadIdx.x / RF_WARP) * 256 + 8 * lane; // this lane's first element
    q.warp_in = q.e0 - 8 * lane < q.K;
    q.in = q.e0 < q.K;
    const RowAt at = row_at(x, z); // the SWIGLU's gate, up and output have the same shape
    q.x = row_of(x, at) + q.e0;
    q.u = SWIGLU ? row_of(a.src[1], at) + q.e0 : (const float *)0;
    q.d = SWIGLU ? row_of(a.dst, at) + q.e0 : (float *)0;
    q.col = (u8 *)a.scratch + (i64)z * a.aux[0];
    q.want_col = a.aux[0] != 0;
    q.block = (int)a.aux[1];
    return q;
}
template <bool SWIGLU> RF_DEV void quantize_q8_1(const QuantLane &p) {
    const int lane = threadIdx.x % RF_WARP;
    if (!p.warp_in) return; // the whole warp is past the row
    const bool in = p.in;
    const i64 K = p.K, e0 = p.e0;
    float v[8];
    load8(p.x, in, v);
    if (SWIGLU) {
        float u[8];
        load8(p.u, in, u);
#pragma unroll
        for (int i = 0; i < 8; ++i) v[i] = swiglu_f(v[i], u[i]);
        if (in) {
            float4 *d = (float4 *)p.d;
            d[0] = float4{v[0], v[1], v[2], v[3]};
            d[1] = float4{v[4], v[5], v[6], v[7]};
        }
        if (!p.want_col) return; // no column wanted (a pack's claim the backend lent no scratch)
    }
    float amax = 0.f;
#pragma unroll
    for (int i = 0; i < 8; ++i) amax = fmaxf(amax, fabsf(v[i]));
    amax = fmaxf(amax, shfl_xor_f(amax, 1));
    amax = fmaxf(amax, shfl_xor_f(amax, 2)); // the 32-element block's
    if (p.block == 256)
        for (int o = 4; o < RF_WARP; o <<= 1) amax = fmaxf(amax, shfl_xor_f(amax, o));
    int q[8], qs = 0;
    const float f = act_factor(amax);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        q[i] = act_quant_f(v[i], amax, f);
        qs += q[i];
    }
    qs += shfl_xor_i(qs, 1);
    qs += shfl_xor_i(qs, 2); // |sum| <= 32 * 127
    if (!in) return;
    u8 *col = p.col;
    u32 w0 = 0, w1 = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        w0 |= (u32)(u8)(i8)q[i] << (8 * i);
        w1 |= (u32)(u8)(i8)q[4 + i] << (8 * i);
    }
    *(uint2 *)(col + e0) = uint2{w0, w1};
    if ((lane & 3) == 0) {
        const float d = act_scale(amax);
        *(float2 *)((float *)(col + K) + 2 * (e0 / 32)) = float2{d, d * (float)qs};
    }
}
RF_KERNEL __launch_bounds__(256) void rf_quantize_q8_1(rf_kargs a) {
    const QuantLane p = prefetch_quant_lane<false>(a);
    rf_kernel_start();
    quantize_q8_1<false>(p);
}
RF_KERNEL __launch_bounds__(256) void rf_swiglu_q8_1(rf_kargs a) {
    const QuantLane p = prefetch_quant_lane<true>(a);
    rf_kernel_start();
    quantize_q8_1<true>(p);
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
        const float amax = block ? act_block_amax(v, block, sh) : 0.f;
        if (e < K) {
            const float q = block ? (float)act_quant(v, amax) * act_scale(amax) : v; // block 0: no quantization
            if (a.aux[2]) ((u16 *)a.scratch)[r * K + e] = f2h(q); // the tensor-core kernels' own rounding
            else ((float *)a.scratch)[r * K + e] = q;
        }
        if (block == 256) __syncthreads(); // sh is reused by the next row
    }
}
