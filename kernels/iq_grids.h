// The i-quant grids on the device, expanded at compile time from the index lists the CPU code
// expands too (core/include/rocmforge/iq_grid_index.h), so both backends decode with the same
// table values. Global memory (L1-cached), not __constant__: a warp's lanes read different
// entries, which the constant cache would serialise.
#pragma once
#include "compat.h"
#include "../core/include/rocmforge/iq_grid_index.h"

template <int N> struct IqGrid8 { unsigned long long v[N]; }; // 8 bytes per entry (IQ2, IQ1)
template <int N> struct IqGrid4 { u32 v[N]; };                // 4 bytes per entry (IQ3)

// Entry k: the 2-bit fields of index k mapped through the format's three levels.
template <int N> constexpr IqGrid8<N> iq_expand8(const unsigned short (&idx)[N], u8 l0, u8 l1, u8 l2) {
    IqGrid8<N> g{};
    const u8 level[4] = {l0, l1, l2, 0};
    for (int k = 0; k < N; ++k)
        for (int i = 0; i < 8; ++i) g.v[k] |= (unsigned long long)level[(idx[k] >> (2 * i)) & 3] << (8 * i);
    return g;
}
// Entry k: the 3-bit fields of index k mapped through the format's eight levels.
template <int N> constexpr IqGrid4<N> iq_expand4(const unsigned short (&idx)[N], const u8 (&level)[8]) {
    IqGrid4<N> g{};
    for (int k = 0; k < N; ++k)
        for (int i = 0; i < 4; ++i) g.v[k] |= (u32)level[(idx[k] >> (3 * i)) & 7] << (8 * i);
    return g;
}

constexpr u8 kIq3xxsLevels[8] = {4, 12, 20, 28, 36, 44, 52, 62};
constexpr u8 kIq3sLevels[8] = {1, 3, 5, 7, 9, 11, 13, 15};

__device__ const IqGrid8<256> kIq2xxsGridD = iq_expand8(rf_iq_index::kIqIndex2bit256, 8, 25, 43);
__device__ const IqGrid8<512> kIq2xsGridD = iq_expand8(rf_iq_index::kIqIndex2bit512, 8, 25, 43);
__device__ const IqGrid8<1024> kIq2sGridD = iq_expand8(rf_iq_index::kIqIndex2bit1024, 8, 25, 43);
__device__ const IqGrid8<2048> kIq1sGridD = iq_expand8(rf_iq_index::kIqIndex1bit2048, 0xFF, 0x00, 0x01); // -1, 0, 1
__device__ const IqGrid4<256> kIq3xxsGridD = iq_expand4(rf_iq_index::kIqIndex3bit256, kIq3xxsLevels);
__device__ const IqGrid4<512> kIq3sGridD = iq_expand4(rf_iq_index::kIqIndex3bit512, kIq3sLevels);

// 7 stored sign bits -> 8: bit 7 makes the number of negative elements even (ggml's ksigns_iq2xs).
RF_DEV u32 iq_signs8(u32 s7) { return s7 | ((u32)(__popc(s7) & 1) << 7); }

// The 16 non-linear levels of IQ4_NL / IQ4_XS (values as rocmforge/iq_grids.h).
__device__ const signed char kIq4nlValuesD[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                  1,    13,   25,  38,  53,  69,  89,  113};
RF_DEV int iq4nl_value(u32 q) { return kIq4nlValuesD[q & 15]; }
