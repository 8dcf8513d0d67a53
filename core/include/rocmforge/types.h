// Element types: block geometry, names, and the reference (bit-exact with ggml) conversions.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "rocmforge/abi.h"

namespace rf {

struct TypeTraits {
    const char *name;     // ggml spelling: "f32", "q4_K", "mxfp4", "mxfp6_e2m3"
    int64_t block_size;   // elements per block (1 for scalar types)
    size_t type_size;     // bytes per block
    bool quantized;
};

// nullptr for ids that are not a known type.
const TypeTraits *type_traits(int type);
bool type_is_known(int type);
const char *type_name(int type); // "unknown(<id>)" style static storage for unknown ids is not
                                 // needed: returns "?" for unknown
// Case-insensitive; accepts "Q4_K", "q4_k", "F16", "bf16", "MXFP6_E2M3". -1 if unknown.
int type_from_name(std::string_view name);
// Bytes of a row of n elements; n must be a multiple of the block size.
size_t row_size(int type, int64_t n);

// Reference conversions, one row of n elements (n a multiple of the block size).
// dequantize_row: every type in enum rf_type except Q8_1/I* /F64 (throws rf::Error otherwise).
void dequantize_row(int type, const void *src, float *dst, int64_t n);
// quantize_row: same scale search as ggml's quantize_row_*_ref (so errors compare).
void quantize_row(int type, const float *src, void *dst, int64_t n);
// True if quantize_row supports the type (false for IQ2_XXS, IQ2_XS and IQ1_S, which ggml only
// quantizes with an importance matrix: see quantize_row_weighted).
bool can_quantize(int type);

// One row as ggml_quantize_chunk quantizes it with an importance-matrix row: `importance`
// holds n non-negative weights, one per column (ggml's quant_weights), or is null (then as
// quantize_row). The i-quants (IQ1_S .. IQ4_XS), the k-quants Q2_K .. Q6_K and Q4_0, Q4_1,
// Q5_0, Q5_1 search with the weights (ggml's quantize_row_*_impl), so the bytes equal ggml's
// for the same input and weights; Q8_0, Q8_K, TQ*, MXFP* and the float types ignore them, as
// ggml does (importance_aware() says which use them).
// Throws rf::Error for a null `importance` when importance_required(type).
void quantize_row_weighted(int type, const float *src, void *dst, int64_t n, const float *importance);
// True if quantize_row_weighted uses the weights for this type.
bool importance_aware(int type);
// IQ2_XXS, IQ2_XS and IQ1_S: ggml's quantizers assert on a missing importance matrix.
bool importance_required(int type);

// Scalar half/bfloat16 conversions (round to nearest even, as ggml).
float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);
float bf16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float f);

} // namespace rf
