// Small helpers shared by the AVX2 and AVX-512 kernel files that need target instructions.
// Functions built for a target (AVX2, AVX-512) can only inline helpers built for the same or a
// smaller target, so each kernel file defines RF_TARGET_INLINE to its own target attribute
// before including this header; the helpers land in that file's anonymous namespace, compiled
// for that target. The run-time CPU dispatch (kernels_for) still only calls a file's kernels
// on CPUs that have its instructions.
#pragma once
#ifndef RF_TARGET_INLINE
#error "define RF_TARGET_INLINE (inline + the file's target attribute) before including kernels_x86_target.h"
#endif
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "fp16.h"
#include "rocmforge/blocks.h"

namespace rfcpu {
namespace {

RF_TARGET_INLINE float h2f(uint16_t h) { return _cvtsh_ss(h); }

RF_TARGET_INLINE float hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

} // namespace
} // namespace rfcpu
