// Unpackers of the 32-element weight formats (Q4_1, Q5_0, Q5_1, MXFP4) to 32 unsigned bytes,
// shared by kernels_avx2_extra.cpp and kernels_avx512_extra.cpp. Include after
// kernels_x86_target.h (same RF_TARGET_INLINE rule); the including file defines fifth_bits
// (declared below) with its target's fastest instructions.
#pragma once
#include "kernels_x86_target.h"

namespace rfcpu {
namespace {

// ---- 32-element formats: block -> 32 unsigned bytes u ----
// dot(block, activation) = d * da * sum(u * qa) + m * s_a, see Unpacked32 in kernels_scalar.cpp.

struct Block32 {
    __m256i u;
    float d, m;
};

RF_TARGET_INLINE __m256i nibbles(const uint8_t *qs) {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i *>(qs));
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), _mm256_set1_epi8(0x0F));
}

// Bit i of the 32-bit field at qh -> 0x10 in byte i (the fifth bit of Q5_0/Q5_1 elements).
RF_TARGET_INLINE __m256i fifth_bits(const uint8_t *qh);

struct UnpackQ4_1 {
    using B = rf::block_q4_1;
    RF_TARGET_INLINE static Block32 get(const B &x) { return {nibbles(x.qs), h2f(x.d), h2f(x.m)}; }
};
struct UnpackQ5_0 {
    using B = rf::block_q5_0;
    RF_TARGET_INLINE static Block32 get(const B &x) {
        const float d = h2f(x.d);
        return {_mm256_or_si256(nibbles(x.qs), fifth_bits(x.qh)), d, -16.f * d};
    }
};
struct UnpackQ5_1 {
    using B = rf::block_q5_1;
    RF_TARGET_INLINE static Block32 get(const B &x) {
        return {_mm256_or_si256(nibbles(x.qs), fifth_bits(x.qh)), h2f(x.d), h2f(x.m)};
    }
};
struct UnpackMxfp4 {
    using B = rf::block_mxfp4;
    RF_TARGET_INLINE static Block32 get(const B &x) {
        // Table + 12: the codes become unsigned bytes 0..24, the offset moves to m.
        const __m256i lut = _mm256_setr_epi8(12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0,
                                             12, 13, 14, 15, 16, 18, 20, 24, 12, 11, 10, 9, 8, 6, 4, 0);
        const float d = e8m0_to_float_half(x.e);
        return {_mm256_shuffle_epi8(lut, nibbles(x.qs)), d, -12.f * d};
    }
};

} // namespace
} // namespace rfcpu
