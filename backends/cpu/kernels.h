// Inner kernels of the CPU backend, one table per SIMD level (scalar / AVX2 / AVX-512 VNNI).
//
// Quantized matmuls follow ggml: each src1 row (activation column) is quantized once per
// matmul to an 8-bit format (q8_K for K-quants, q8_32 for the 32-element formats) and the
// weight row is dotted against it with integer arithmetic. Kernels compute one weight row
// against up to kMaxCols activation columns, so a weight block is unpacked once per tile.
#pragma once
#include <cstddef>
#include <cstdint>

#include "rocmforge/blocks.h"
#include "simd.h"

namespace rfcpu {

constexpr int kMaxCols = 8; // activation columns per dot tile

// 32-element activation block for the legacy formats: scale and d*sum(qs) (like q8_1, but f32
// so the offset terms of q4_0/q4_1/q5_x cost one multiply).
struct block_q8_32 {
    float d;
    float s; // d * sum(qs)
    int8_t qs[32];
};
static_assert(sizeof(block_q8_32) == 40);

// Activation encodings a matmul kernel can ask for. F16: f32 rows holding the values rounded to
// f16 (ggml's vec_dot_type of F16 weights; MATMUL_ID takes it for F16 experts).
enum class ActFormat { F32, F16, Q8_K, Q8_32 };

// Bytes of one activation row of k elements in the given format.
size_t act_row_size(ActFormat fmt, int64_t k);

// out[c * out_stride] = dot(weight row w, activation column c), c < ncols (1..kMaxCols).
// Column c starts at act + c * act_stride bytes.
using DotFn = void (*)(int64_t k, const void *w, const void *act, size_t act_stride, int ncols,
                       float *out, size_t out_stride);
using QuantizeFn = void (*)(const float *x, void *y, int64_t k);

struct MatmulKernel {
    ActFormat act = ActFormat::F32;
    DotFn dot = nullptr; // nullptr: generic path (dequantize the row, f32 dots)
};

struct KernelSet {
    SimdLevel level = SimdLevel::Scalar;
    QuantizeFn quantize_q8_K = nullptr;  // k multiple of 256
    QuantizeFn quantize_q8_32 = nullptr; // k multiple of 32
    float (*dot_f32)(const float *a, const float *b, int64_t n) = nullptr;
    void (*axpy_f32)(float *y, const float *x, float a, int64_t n) = nullptr; // y += a*x
    void (*f16_to_f32)(const uint16_t *x, float *y, int64_t n) = nullptr;
    void (*f32_to_f16)(const float *x, uint16_t *y, int64_t n) = nullptr;
    MatmulKernel matmul[256]; // indexed by rf_type (all ids < 256)
};

// Fills the table for `level` (falls back to lower levels for kernels a level lacks).
void init_kernels_scalar(KernelSet *ks);
void init_kernels_avx2(KernelSet *ks);   // call after init_kernels_scalar
void init_kernels_avx512(KernelSet *ks); // call after init_kernels_avx2
// Q4_1, Q5_0, Q5_1, MXFP4, Q2_K, Q3_K (kernels_avx2_extra.cpp / kernels_avx512_extra.cpp).
void init_kernels_avx2_extra(KernelSet *ks);
// The i-quants and ternary formats (kernels_scalar_iq.cpp / kernels_avx2_iq.cpp), called by
// init_kernels_scalar / init_kernels_avx2.
void init_kernels_scalar_iq(KernelSet *ks);
void init_kernels_avx2_iq(KernelSet *ks);
void init_kernels_avx512_extra(KernelSet *ks);
const KernelSet &kernels_for(SimdLevel level);

} // namespace rfcpu
