// Preamble of the AVX-512 VNNI kernel files (kernels_avx512*.cpp): the target attribute, the
// shared x86 helpers compiled for it, and helpers that need AVX-512 VNNI itself.
#pragma once
// GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on _mm512_undefined_*() internally.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cstring>

#include "fp16.h"
#include "kernels.h"
#include "rocmforge/abi.h"

#define RF_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define RF_AVX512_INLINE inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define RF_TARGET_INLINE RF_AVX512_INLINE

#include "kernels_x86_common.h"
#include "kernels_x86_target.h"

namespace rfcpu {
namespace {

// Sub-block scales as vpdpwssd wants them: each 32-bit lane's scale in its low 16 bits, 0 above
// (sc32: one signed or unsigned scale per lane, |scale| < 2^15).
RF_AVX512_INLINE __m512i scales_for_dpwssd(__m512i sc32) { return _mm512_and_si512(sc32, _mm512_set1_epi32(0xFFFF)); }

// acc + p * scale per 32-bit lane, for p from one vpdpbusd over a K-quant sub-block: 4 products
// of a weight byte <= 63 with a q8_K activation in [-127, 127], so |p| <= 32004 fits the low 16
// bits and the high 16 bits (its sign) meet the zero high half of sc16. One vpdpwssd (1 uop)
// where vpmulld + vpaddd cost 3 uops and 10 cycles of latency on Intel cores.
RF_AVX512_INLINE __m512i add_scaled_lanes(__m512i acc, __m512i p, __m512i sc16) { return _mm512_dpwssd_epi32(acc, p, sc16); }

} // namespace
} // namespace rfcpu
