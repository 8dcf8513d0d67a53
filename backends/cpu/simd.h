// SIMD level of the CPU backend, picked once at init from the running CPU (or forced by config).
#pragma once

namespace rfcpu {

enum class SimdLevel { Scalar = 0, Avx2 = 1, Avx512Vnni = 2 };

// Best level this CPU supports (AVX2 needs FMA+F16C; AVX-512 needs F/BW/VL/VNNI).
SimdLevel detect_simd_level();
// "scalar", "avx2", "avx512vnni"; nullptr-free.
const char *simd_level_name(SimdLevel level);
// Parses "scalar" / "avx2" / "avx512vnni" / "auto" (auto -> detected). Returns false if unknown.
bool parse_simd_level(const char *text, SimdLevel *out);

} // namespace rfcpu
