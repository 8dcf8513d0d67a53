// Inline half <-> float (and MXFP4 scale) conversions for the scalar paths (bit tricks, no F16C needed; same
// rounding as rf::fp32_to_fp16: round to nearest even).
#pragma once
#include <cstdint>
#include <cstring>

namespace rfcpu {

inline float bits_to_f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t f32_to_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

inline float half_to_float(uint16_t h) {
    const uint32_t w = uint32_t(h) << 16;
    const uint32_t sign = w & 0x80000000u;
    const uint32_t two_w = w + w;
    const float normalized = bits_to_f32((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
    const float denormalized = bits_to_f32((two_w >> 17) | (126u << 23)) - 0.5f;
    const uint32_t r = sign | (two_w < (1u << 27) ? f32_to_bits(denormalized) : f32_to_bits(normalized));
    return bits_to_f32(r);
}

inline uint16_t float_to_half(float f) {
    float base = ((f < 0 ? -f : f) * 0x1.0p+112f) * 0x1.0p-110f;
    const uint32_t w = f32_to_bits(f);
    const uint32_t shl1_w = w + w;
    const uint32_t sign = w & 0x80000000u;
    uint32_t bias = shl1_w & 0xFF000000u;
    if (bias < 0x71000000u) bias = 0x71000000u;
    base = bits_to_f32((bias >> 1) + 0x07800000u) + base;
    const uint32_t bits = f32_to_bits(base);
    const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
    const uint32_t mantissa_bits = bits & 0x00000FFFu;
    const uint32_t nonsign = exp_bits + mantissa_bits;
    return uint16_t((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

// MXFP4 block scale: 2^(e-127) halved (the element table holds doubled E2M1 values), as ggml.
inline float e8m0_to_float_half(uint8_t e) {
    return bits_to_f32(e < 2 ? 0x00200000u << e : uint32_t(e - 1) << 23);
}

// Doubled E2M1 values of the 4-bit MXFP4 codes (bit 3 = sign), as ggml's kvalues_mxfp4.
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

} // namespace rfcpu
