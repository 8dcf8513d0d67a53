// Lookup tables of the i-quant formats, part of the formats themselves (values as ggml's
// ggml-common.h). A grid entry packs the magnitudes of 8 (IQ2/IQ1) or 4 (IQ3) consecutive
// elements, element 0 in the lowest byte. Defined in core/quant/iq_grids.cpp; every index a
// block can encode is in range (the index widths of the formats equal the table sizes).
#pragma once
#include <array>
#include <cstdint>

namespace rf::iq {

// Unsigned magnitudes {8, 25, 43} per byte.
extern const std::array<uint64_t, 256> kIq2xxsGrid;
extern const std::array<uint64_t, 512> kIq2xsGrid;
extern const std::array<uint64_t, 1024> kIq2sGrid;
// Unsigned magnitudes {4, 12, 20, 28, 36, 44, 52, 62} per byte.
extern const std::array<uint32_t, 256> kIq3xxsGrid;
// Unsigned magnitudes {1, 3, .., 15} per byte.
extern const std::array<uint32_t, 512> kIq3sGrid;
// Signed bytes {-1, 0, 1}.
extern const std::array<uint64_t, 2048> kIq1sGrid;

// 7 stored sign bits -> 8 sign bits: bit 7 makes the number of negative elements even.
extern const std::array<uint8_t, 128> kSignsIq2xs;
// kSignsIq2xs[i] as 8 bytes, 0xFF where the element is negative (for SIMD sign flips).
extern const std::array<uint64_t, 128> kSignMasksIq2xs;

// The 16 non-linear levels of IQ4_NL / IQ4_XS.
inline constexpr int8_t kValuesIq4nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// IQ1_S / IQ1_M: every element is shifted by +-kIq1Delta (sign per group) before scaling.
inline constexpr float kIq1Delta = 0.125f;

} // namespace rf::iq
