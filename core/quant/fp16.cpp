// Public scalar half/bfloat16 conversions, bit-exact with ggml (ggml-impl.h).
#include "quant_internal.h"
#include "rocmforge/types.h"

namespace rf {

float fp16_to_fp32(uint16_t h) { return quant::half_to_float(h); }

uint16_t fp32_to_fp16(float f) { return quant::float_to_half(f); }

float bf16_to_fp32(uint16_t h) { return quant::f32_from_bits(static_cast<uint32_t>(h) << 16); }

// ggml_compute_fp32_to_bf16: NaN keeps its top bits and is forced quiet; everything else rounds
// to nearest even (overflow rounds to inf).
uint16_t fp32_to_bf16(float f) {
    const uint32_t u = quant::f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 64);
    return static_cast<uint16_t>((u + (0x7fffu + ((u >> 16) & 1))) >> 16);
}

} // namespace rf
