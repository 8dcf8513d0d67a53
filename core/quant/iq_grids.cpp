// The i-quant grids, built at compile time from ggml's compact index lists (the kgrid_* tables
// of ggml-quants.c): entry k of a grid is index k with each 2-bit (IQ2/IQ1) or 3-bit (IQ3)
// field mapped to the format's level. The expanded values equal ggml-common.h's iq*_grid
// tables; tests/quant/test_iq_grids.cpp checks entries copied from there.
#include "rocmforge/iq_grids.h"
#include "rocmforge/iq_grid_index.h"

#include <cstddef>
#include <iterator>

namespace rf::iq {
namespace {

// ---- the index lists (rocmforge/iq_grid_index.h, shared with the GPU kernels) ----
using rf_iq_index::kIqIndex2bit256, rf_iq_index::kIqIndex2bit512, rf_iq_index::kIqIndex2bit1024;
using rf_iq_index::kIqIndex1bit2048, rf_iq_index::kIqIndex3bit256, rf_iq_index::kIqIndex3bit512;
using Index = unsigned short;

template <size_t N>
constexpr bool ascending(const Index (&v)[N]) {
    for (size_t i = 1; i < N; ++i)
        if (v[i] <= v[i - 1]) return false;
    return true;
}
// Every 2-bit field of an 8-element index is a level 0..2 (the grids have three levels).
template <size_t N>
constexpr bool three_levels(const Index (&v)[N]) {
    for (Index x : v)
        for (int i = 0; i < 8; ++i)
            if (((x >> (2 * i)) & 3) == 3) return false;
    return true;
}
template <size_t N>
constexpr bool twelve_bits(const Index (&v)[N]) {
    for (Index x : v)
        if (x >= 4096) return false;
    return true;
}

static_assert(std::size(kIqIndex2bit256) == 256 && std::size(kIqIndex2bit512) == 512);
static_assert(std::size(kIqIndex2bit1024) == 1024 && std::size(kIqIndex1bit2048) == 2048);
static_assert(std::size(kIqIndex3bit256) == 256 && std::size(kIqIndex3bit512) == 512);
static_assert(ascending(kIqIndex2bit256) && ascending(kIqIndex2bit512) && ascending(kIqIndex2bit1024) &&
              ascending(kIqIndex1bit2048) && ascending(kIqIndex3bit256) && ascending(kIqIndex3bit512));
static_assert(three_levels(kIqIndex2bit256) && three_levels(kIqIndex2bit512) && three_levels(kIqIndex2bit1024) &&
              three_levels(kIqIndex1bit2048));
static_assert(twelve_bits(kIqIndex3bit256) && twelve_bits(kIqIndex3bit512));

template <size_t N>
constexpr std::array<uint64_t, N> expand8(const Index (&idx)[N], const uint8_t (&level)[3]) {
    std::array<uint64_t, N> g{};
    for (size_t k = 0; k < N; ++k)
        for (int i = 0; i < 8; ++i) g[k] |= uint64_t(level[(idx[k] >> (2 * i)) & 3]) << (8 * i);
    return g;
}
template <size_t N>
constexpr std::array<uint32_t, N> expand4(const Index (&idx)[N], const uint8_t (&level)[8]) {
    std::array<uint32_t, N> g{};
    for (size_t k = 0; k < N; ++k)
        for (int i = 0; i < 4; ++i) g[k] |= uint32_t(level[(idx[k] >> (3 * i)) & 7]) << (8 * i);
    return g;
}

constexpr uint8_t kLevelsIq2[3] = {8, 25, 43};
constexpr uint8_t kLevelsIq1[3] = {0xFF, 0x00, 0x01}; // -1, 0, 1 as bytes
constexpr uint8_t kLevelsIq3xxs[8] = {4, 12, 20, 28, 36, 44, 52, 62};
constexpr uint8_t kLevelsIq3s[8] = {1, 3, 5, 7, 9, 11, 13, 15};

constexpr std::array<uint8_t, 128> make_signs() {
    std::array<uint8_t, 128> s{};
    for (int i = 0; i < 128; ++i) {
        int odd = 0;
        for (int b = 0; b < 7; ++b) odd ^= (i >> b) & 1;
        s[i] = uint8_t(i | (odd << 7));
    }
    return s;
}

constexpr std::array<uint64_t, 128> make_sign_masks(const std::array<uint8_t, 128> &signs) {
    std::array<uint64_t, 128> m{};
    for (int i = 0; i < 128; ++i)
        for (int b = 0; b < 8; ++b)
            if (signs[i] >> b & 1) m[i] |= uint64_t(0xFF) << (8 * b);
    return m;
}

} // namespace

const std::array<uint64_t, 256> kIq2xxsGrid = expand8(kIqIndex2bit256, kLevelsIq2);
const std::array<uint64_t, 512> kIq2xsGrid = expand8(kIqIndex2bit512, kLevelsIq2);
const std::array<uint64_t, 1024> kIq2sGrid = expand8(kIqIndex2bit1024, kLevelsIq2);
const std::array<uint32_t, 256> kIq3xxsGrid = expand4(kIqIndex3bit256, kLevelsIq3xxs);
const std::array<uint32_t, 512> kIq3sGrid = expand4(kIqIndex3bit512, kLevelsIq3s);
const std::array<uint64_t, 2048> kIq1sGrid = expand8(kIqIndex1bit2048, kLevelsIq1);
const std::array<uint8_t, 128> kSignsIq2xs = make_signs();
const std::array<uint64_t, 128> kSignMasksIq2xs = make_sign_masks(make_signs());

} // namespace rf::iq
