// Row reductions: RMS_NORM, SOFTMAX (with scale), ARGMAX. One block of 256 threads per row;
// partial results combine through warp shuffles and a small shared array.
#include "compat.h"

#define RF_ROW_THREADS 256

RF_DEV float block_sum(float v, float *sh) {
    v = warp_sum(v);
    const int w = threadIdx.x / RF_WARP, l = threadIdx.x % RF_WARP;
    __syncthreads(); // sh may still be read by a previous reduction
    if (l == 0) sh[w] = v;
    __syncthreads();
    v = l < (int)(blockDim.x / RF_WARP) ? sh[l] : 0.f;
    return warp_sum(v);
}

RF_DEV float block_max(float v, float *sh) {
    v = warp_max(v);
    const int w = threadIdx.x / RF_WARP, l = threadIdx.x % RF_WARP;
    __syncthreads();
    if (l == 0) sh[w] = v;
    __syncthreads();
    v = l < (int)(blockDim.x / RF_WARP) ? sh[l] : -__int_as_float(0x7f800000);
    return warp_max(v);
}

// Row r of a [K, d1, d2, d3] f32 tensor.
RF_DEV const float *row_of(const rf_ktensor &t, i64 r) { return (const float *)row_ptr(t, r); }

RF_KERNEL __launch_bounds__(256) void rf_rms_norm_f32(rf_kargs a) {
    rf_kernel_start();
    __shared__ double sh[RF_WARP];
    const i64 r = blockIdx.x, K = a.src[0].ne[0];
    const float *x = row_of(a.src[0], r);
    float *y = (float *)row_of(a.dst, r);
    double s = 0.0;
    for (i64 i = threadIdx.x; i < K; i += blockDim.x) s += (double)x[i] * x[i];
    const float inv = rms_scale(block_sum_d(s, sh), K, a.rms_norm.eps);
    for (i64 i = threadIdx.x; i < K; i += blockDim.x) y[i] = x[i] * inv;
}

// RMS_NORM of short rows (K <= RF_RMS_ROWS_MAX_K: attention heads' Q/K norms in prefill, 16k
// rows of 128 for 32 heads x 512 tokens): a warp a row, RF_ROW_THREADS / 32 rows a block, so no
// block sits mostly idle on a row a fraction of its size. The same double sum and scale as
// rf_rms_norm_f32 (its order does not change the float).
#define RF_RMS_ROWS_MAX_K 1024
RF_KERNEL __launch_bounds__(RF_ROW_THREADS) void rf_rms_norm_rows_f32(rf_kargs a) {
    rf_kernel_start();
    const i64 rows = a.src[0].ne[1] * a.src[0].ne[2] * a.src[0].ne[3];
    const i64 r = (i64)blockIdx.x * (RF_ROW_THREADS / RF_WARP) + threadIdx.x / RF_WARP, K = a.src[0].ne[0];
    if (r >= rows) return; // a whole warp: no barrier follows
    const int lane = threadIdx.x % RF_WARP;
    const float *x = row_of(a.src[0], r);
    float *y = (float *)row_of(a.dst, r);
    double s = 0.0;
    for (i64 i = lane; i < K; i += RF_WARP) s += (double)x[i] * x[i];
    const float inv = rms_scale(warp_sum(s), K, a.rms_norm.eps);
    for (i64 i = lane; i < K; i += RF_WARP) y[i] = x[i] * inv;
}

// LAYER_NORM (abi.h; BERT): (x - mean) / sqrt(var + eps) per row, as the CPU backend (ggml_norm):
// the sum and the squares summed in double, the mean and the scale rounded to f32 once. In
// place too (each thread rereads only its own elements).
RF_KERNEL __launch_bounds__(256) void rf_layer_norm_f32(rf_kargs a) {
    rf_kernel_start();
    __shared__ double sh[RF_WARP];
    const i64 r = blockIdx.x, K = a.src[0].ne[0];
    const float *x = row_of(a.src[0], r);
    float *y = (float *)row_of(a.dst, r);
    double s = 0.0;
    for (i64 i = threadIdx.x; i < K; i += blockDim.x) s += (double)x[i];
    const float mean = (float)(block_sum_d(s, sh) / (double)K);
    double ss = 0.0;
    for (i64 i = threadIdx.x; i < K; i += blockDim.x) {
        const float c = x[i] - mean;
        ss += (double)(c * c);
    }
    const float scale = 1.0f / sqrtf((float)(block_sum_d(ss, sh) / (double)K) + a.fparams[0]);
    for (i64 i = threadIdx.x; i < K; i += blockDim.x) y[i] = (x[i] - mean) * scale;
}

RF_KERNEL __launch_bounds__(256) void rf_softmax_f32(rf_kargs a) {
    rf_kernel_start();
    __shared__ float sh[RF_WARP];
    const i64 r = blockIdx.x, K = a.src[0].ne[0];
    const float *x = row_of(a.src[0], r);
    float *y = (float *)row_of(a.dst, r);
    const float scale = a.softmax.scale;
    float mx = -__int_as_float(0x7f800000);
    for (i64 i = threadIdx.x; i < K; i += blockDim.x) mx = fmaxf(mx, x[i] * scale);
    mx = block_max(mx, sh);
    float s = 0.f;
    for (i64 i = threadIdx.x; i < K; i += blockDim.x) { const float e = __expf(x[i] * scale - mx); y[i] = e; s += e; }
    s = block_sum(s, sh);
    const float inv = 1.f / s;
    for (i64 i = threadIdx.x; i < K; i += blockDim.x) y[i] *= inv;
}

RF_KERNEL __launch_bounds__(256) void rf_argmax_f32(rf_kargs a) {
    rf_kernel_start();
    __shared__ float shv[RF_ROW_THREADS];
    __shared__ int shi[RF_ROW_THREADS];
    const i64 r = blockIdx.x, K = a.src[0].ne[0];
    const float *x = row_of(a.src[0], r);
    float best = -__int_as_float(0x7f800000);
    int bi = -1;
    for (i64 i = threadIdx.x; i < K; i += blockDim.x)
        if (x[i] > best || bi < 0) { best = x[i]; bi = (int)i; } // strided: keeps the first max
    shv[threadIdx.x] = best; shi[threadIdx.x] = bi;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) {
            const float v = shv[threadIdx.x + s]; const int j = shi[threadIdx.x + s];
            if (j >= 0 && (shi[threadIdx.x] < 0 || v > shv[threadIdx.x] || (v == shv[threadIdx.x] && j < shi[threadIdx.x]))) {
                shv[threadIdx.x] = v; shi[threadIdx.x] = j;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) ((int *)a.dst.data)[r] = shi[0];
}
