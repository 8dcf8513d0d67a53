#include "simd.h"

#include <cpuid.h>

#include <cstring>

namespace rfcpu {

namespace {
// CPUID leaf 1, ECX bit 29: clang before 16 rejects __builtin_cpu_supports("f16c").
bool cpu_has_f16c() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
}
} // namespace

SimdLevel detect_simd_level() {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni") &&
        __builtin_cpu_supports("fma") && cpu_has_f16c())
        return SimdLevel::Avx512Vnni;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c())
        return SimdLevel::Avx2;
    return SimdLevel::Scalar;
}

const char *simd_level_name(SimdLevel level) {
    switch (level) {
    case SimdLevel::Avx512Vnni: return "avx512vnni";
    case SimdLevel::Avx2: return "avx2";
    default: return "scalar";
    }
}

bool parse_simd_level(const char *text, SimdLevel *out) {
    if (!std::strcmp(text, "auto")) { *out = detect_simd_level(); return true; }
    if (!std::strcmp(text, "scalar")) { *out = SimdLevel::Scalar; return true; }
    if (!std::strcmp(text, "avx2")) { *out = SimdLevel::Avx2; return true; }
    if (!std::strcmp(text, "avx512vnni") || !std::strcmp(text, "avx512")) {
        *out = SimdLevel::Avx512Vnni;
        return true;
    }
    return false;
}

} // namespace rfcpu
