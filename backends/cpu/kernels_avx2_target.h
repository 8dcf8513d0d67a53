// Preamble of the AVX2 kernel files (kernels_avx2*.cpp): the target attribute and the shared
// x86 helpers compiled for it.
#pragma once
#include <immintrin.h>

#include <cstring>

#include "fp16.h"
#include "kernels.h"
#include "rocmforge/abi.h"

#define RF_AVX2 __attribute__((target("avx2,fma,f16c")))
#define RF_AVX2_INLINE inline __attribute__((always_inline, target("avx2,fma,f16c")))
#define RF_TARGET_INLINE RF_AVX2_INLINE

#include "kernels_x86_common.h"
#include "kernels_x86_target.h"
