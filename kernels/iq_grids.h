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

// The IQ4_NL levels (iq_grids.h) as four little-endian words of int8.
#define RF_IQ4NL_W0 0xBFAD9881u // -127 -104 -83 -65
#define RF_IQ4NL_W1 0xF6EADDCFu //  -49  -35 -22 -10
#define RF_IQ4NL_W2 0x26190D01u //    1   13  25  38
#define RF_IQ4NL_W3 0x71594535u //   53   69  89 113

// MXFP4's doubled E2M1 levels (0, 1, 2, 3, 4, 6, 8, 12 and their negatives), packed the same way.
#define RF_MXFP4_W0 0x03020100u //  0   1   2   3
#define RF_MXFP4_W1 0x0C080604u //  4   6   8  12
#define RF_MXFP4_W2 0xFDFEFF00u // -0  -1  -2  -3
#define RF_MXFP4_W3 0xF4F8FAFCu // -4  -6  -8 -12

// The levels of the 8 nibbles of q as packed int8, from a 16-level table in the words w0..w3
// (level n in byte n % 4 of word n / 4): lo = the low nibbles of q's 4 bytes (element i in byte
// i), hi = the high nibbles.
RF_DEV void nibble_levels8(u32 q, u32 w0, u32 w1, u32 w2, u32 w3, u32 &lo, u32 &hi) {
#if RF_NVIDIA
    // prmt picks byte k of (a, b) by selector nibble k (3 bits): levels 0..7 from (w0, w1), 8..15
    // from (w2, w3), then per byte the one the nibble's bit 3 names. The selector nibbles of the
    // low half of q are elements 0, 16, 1, 17, of the high half 2, 18, 3, 19: two more byte
    // permutes sort them into the low and the high nibbles' levels.
    const u32 qm = q & 0x77777777u, sel = 0x32103210u | ((q & 0x88888888u) >> 1);
    const u32 t0 = __byte_perm(__byte_perm(w0, w1, qm), __byte_perm(w2, w3, qm), sel);
    const u32 qh = qm >> 16, selh = sel >> 16;
    const u32 t1 = __byte_perm(__byte_perm(w0, w1, qh), __byte_perm(w2, w3, qh), selh);
    lo = __byte_perm(t0, t1, 0x6420u);
    hi = __byte_perm(t0, t1, 0x7531u);
#else
    // v_perm_b32: selector bytes 0..7 pick from {s0, s1}, s1 the low word; bit 3 of each nibble
    // then picks between the two halves of the table.
    const u32 ql = q & 0x07070707u, qh = (q >> 4) & 0x07070707u;
    lo = __builtin_amdgcn_perm(__builtin_amdgcn_perm(w3, w2, ql), __builtin_amdgcn_perm(w1, w0, ql),
                               0x03020100u | ((q & 0x08080808u) >> 1));
    hi = __builtin_amdgcn_perm(__builtin_amdgcn_perm(w3, w2, qh), __builtin_amdgcn_perm(w1, w0, qh),
                               0x03020100u | ((q & 0x80808080u) >> 5));
#endif
}
RF_DEV void iq4nl_levels8(u32 q, u32 &lo, u32 &hi) { nibble_levels8(q, RF_IQ4NL_W0, RF_IQ4NL_W1, RF_IQ4NL_W2, RF_IQ4NL_W3, lo, hi); }
RF_DEV void mxfp4_levels8(u32 q, u32 &lo, u32 &hi) { nibble_levels8(q, RF_MXFP4_W0, RF_MXFP4_W1, RF_MXFP4_W2, RF_MXFP4_W3, lo, hi); }
