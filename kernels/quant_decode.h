// Decoders for every weight type: decode32<T>(row, c, out) writes elements [32c, 32c+32) of a
// row (block layouts as core/include/rocmforge/blocks.h, i.e. ggml's). Every block type holds
// 32 or 256 elements, so a 32-element chunk never straddles two blocks.
#pragma once
#include "compat.h"
#include "iq_grids.h"

enum {
    T_F32 = 0, T_F16 = 1, T_Q4_0 = 2, T_Q4_1 = 3, T_Q5_0 = 6, T_Q5_1 = 7, T_Q8_0 = 8,
    T_Q2_K = 10, T_Q3_K = 11, T_Q4_K = 12, T_Q5_K = 13, T_Q6_K = 14, T_IQ2_XXS = 16, T_IQ2_XS = 17,
    T_IQ3_XXS = 18, T_IQ1_S = 19, T_IQ4_NL = 20, T_IQ3_S = 21, T_IQ2_S = 22, T_IQ4_XS = 23, T_IQ1_M = 29,
    T_BF16 = 30, T_TQ1_0 = 34, T_TQ2_0 = 35, T_MXFP4 = 39, T_MXFP6_E2M3 = 200, T_MXFP6_E3M2 = 201
};

template <int T> struct qtraits;                       // block elements, block bytes
template <> struct qtraits<T_F32>  { enum { bs = 1, bytes = 4, scalar = 1 }; };
template <> struct qtraits<T_F16>  { enum { bs = 1, bytes = 2, scalar = 1 }; };
template <> struct qtraits<T_BF16> { enum { bs = 1, bytes = 2, scalar = 1 }; };
template <> struct qtraits<T_Q4_0> { enum { bs = 32, bytes = 18, scalar = 0 }; };
template <> struct qtraits<T_Q4_1> { enum { bs = 32, bytes = 20, scalar = 0 }; };
template <> struct qtraits<T_Q5_0> { enum { bs = 32, bytes = 22, scalar = 0 }; };
template <> struct qtraits<T_Q5_1> { enum { bs = 32, bytes = 24, scalar = 0 }; };
template <> struct qtraits<T_Q8_0> { enum { bs = 32, bytes = 34, scalar = 0 }; };
template <> struct qtraits<T_Q2_K> { enum { bs = 256, bytes = 84, scalar = 0 }; };
template <> struct qtraits<T_Q3_K> { enum { bs = 256, bytes = 110, scalar = 0 }; };
template <> struct qtraits<T_Q4_K> { enum { bs = 256, bytes = 144, scalar = 0 }; };
template <> struct qtraits<T_Q5_K> { enum { bs = 256, bytes = 176, scalar = 0 }; };
template <> struct qtraits<T_Q6_K> { enum { bs = 256, bytes = 210, scalar = 0 }; };
template <> struct qtraits<T_IQ2_XXS> { enum { bs = 256, bytes = 66, scalar = 0 }; };
template <> struct qtraits<T_IQ2_XS> { enum { bs = 256, bytes = 74, scalar = 0 }; };
template <> struct qtraits<T_IQ2_S> { enum { bs = 256, bytes = 82, scalar = 0 }; };
template <> struct qtraits<T_IQ3_XXS> { enum { bs = 256, bytes = 98, scalar = 0 }; };
template <> struct qtraits<T_IQ3_S> { enum { bs = 256, bytes = 110, scalar = 0 }; };
template <> struct qtraits<T_IQ1_S> { enum { bs = 256, bytes = 50, scalar = 0 }; };
template <> struct qtraits<T_IQ1_M> { enum { bs = 256, bytes = 56, scalar = 0 }; };
template <> struct qtraits<T_IQ4_NL> { enum { bs = 32, bytes = 18, scalar = 0 }; };
template <> struct qtraits<T_IQ4_XS> { enum { bs = 256, bytes = 136, scalar = 0 }; };
template <> struct qtraits<T_TQ1_0> { enum { bs = 256, bytes = 54, scalar = 0 }; };
template <> struct qtraits<T_TQ2_0> { enum { bs = 256, bytes = 66, scalar = 0 }; };
template <> struct qtraits<T_MXFP4> { enum { bs = 32, bytes = 17, scalar = 0 }; };
template <> struct qtraits<T_MXFP6_E2M3> { enum { bs = 32, bytes = 25, scalar = 0 }; };
template <> struct qtraits<T_MXFP6_E3M2> { enum { bs = 32, bytes = 25, scalar = 0 }; };

// Element e of an f16 or f32 cache pool row, as rf_set_rows writes it (the K/V appends of
// rf_set_rows2, the joined projections' rope and matmul epilogue: the same bits).
RF_DEV void store_pool_elem(u8 *row, int type, i64 e, float v) {
    if (type == T_F16) ((u16 *)row)[e] = f2h(v);
    else ((float *)row)[e] = v;
}

// Scalar element i of a row of a scalar type.
template <int T> RF_DEV float load_scalar(const u8 *row, i64 i) {
    if (T == T_F32) return ((const float *)row)[i];
    if (T == T_F16) return h2f(((const u16 *)row)[i]);
    return bf2f(((const u16 *)row)[i]);
}

// E8M0 shared exponent as ggml's GGML_E8M0_TO_FP32_HALF: 2^(e-128) (MXFP4 values are stored
// doubled), and the plain OCP scale 2^(e-127) used by MXFP6.
RF_DEV float e8m0_half(u8 e) { return __uint_as_float(e < 2 ? (0x00200000u << e) : ((u32)(e - 1) << 23)); }
RF_DEV float e8m0(u8 e) { return e == 0 ? __uint_as_float(0x00400000u) : __uint_as_float((u32)e << 23); }

RF_DEV float fp6_e2m3(u32 c) {
    const u32 e = (c >> 3) & 3, m = c & 7;
    const float v = e == 0 ? (float)m * 0.125f : (float)(8 + m) * 0.125f * (float)(1 << (e - 1));
    return (c & 0x20) ? -v : v;
}
RF_DEV float fp6_e3m2(u32 c) {
    const u32 e = (c >> 2) & 7, m = c & 3;
    const float v = e == 0 ? (float)m * 0.0625f : (float)(4 + m) * 0.25f * __uint_as_float((e + 124) << 23);
    return (c & 0x20) ? -v : v;
}

// Q4_K/Q5_K 6-bit scale and min of sub-block j (ggml get_scale_min_k4).
RF_DEV void scale_min_k4(int j, const u8 *q, int &d, int &m) {
    if (j < 4) { d = q[j] & 63; m = q[j + 4] & 63; }
    else { d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4); m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4); }
}

// Q3_K signed 6-bit scale of sub-block i (0..15), unpacked from the 12 scale bytes.
RF_DEV int q3k_scale(const u8 *s, int i) {
    const int g = i >> 2, b = i & 3;
    const int lo = (s[(g & 1) * 4 + b] >> (4 * (g >> 1))) & 0xF;
    const int hi = (s[8 + b] >> (2 * g)) & 3;
    return (lo | (hi << 4)) - 32;
}

#include "iq_decode.h"

template <int T> RF_DEV void decode32(const u8 *row, i64 c, float *y) {
    if (T == T_Q4_0 || T == T_Q4_1 || T == T_Q5_0 || T == T_Q5_1 || T == T_Q8_0) {
        const u8 *b = row + c * qtraits<T>::bytes;
        const float d = h2f(ld_u16(b));
        if (T == T_Q8_0) {
            for (int j = 0; j < 32; ++j) y[j] = d * (float)(i8)b[2 + j];
        } else if (T == T_Q4_0) {
            for (int j = 0; j < 16; ++j) { y[j] = d * (float)((b[2 + j] & 0xF) - 8); y[j + 16] = d * (float)((b[2 + j] >> 4) - 8); }
        } else if (T == T_Q4_1) {
            const float m = h2f(ld_u16(b + 2));
            for (int j = 0; j < 16; ++j) { y[j] = d * (float)(b[4 + j] & 0xF) + m; y[j + 16] = d * (float)(b[4 + j] >> 4) + m; }
        } else {
            const int off = T == T_Q5_0 ? 2 : 4;
            const float m = T == T_Q5_1 ? h2f(ld_u16(b + 2)) : 0.f;
            const u32 qh = (u32)b[off] | ((u32)b[off + 1] << 8) | ((u32)b[off + 2] << 16) | ((u32)b[off + 3] << 24);
            const u8 *qs = b + off + 4;
            const int sub = T == T_Q5_0 ? 16 : 0;
            for (int j = 0; j < 16; ++j) {
                const int x0 = ((qs[j] & 0xF) | (((qh >> j) << 4) & 0x10)) - sub;
                const int x1 = ((qs[j] >> 4) | ((qh >> (j + 12)) & 0x10)) - sub;
                y[j] = d * (float)x0 + m; y[j + 16] = d * (float)x1 + m;
            }
        }
    } else if (T == T_MXFP4) {
        const u8 *b = row + c * 17;
        const float d = e8m0_half(b[0]);
        const signed char kv[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
        for (int j = 0; j < 16; ++j) { y[j] = d * (float)kv[b[1 + j] & 0xF]; y[j + 16] = d * (float)kv[b[1 + j] >> 4]; }
    } else if (T == T_MXFP6_E2M3 || T == T_MXFP6_E3M2) {
        const u8 *b = row + c * 25;
        const float d = e8m0(b[0]);
        for (int g = 0; g < 8; ++g) { // 4 codes per 3 bytes, little-endian bit stream
            const u32 w = (u32)b[1 + 3 * g] | ((u32)b[2 + 3 * g] << 8) | ((u32)b[3 + 3 * g] << 16);
            for (int t = 0; t < 4; ++t) {
                const u32 code = (w >> (6 * t)) & 63;
                y[4 * g + t] = d * (T == T_MXFP6_E2M3 ? fp6_e2m3(code) : fp6_e3m2(code));
            }
        }
    } else if (T == T_Q2_K) {
        const u8 *b = row + (c >> 3) * 84; const int s = (int)(c & 7);
        const float d = h2f(ld_u16(b + 80)), dmin = h2f(ld_u16(b + 82));
        const int n = s >> 2, j = s & 3; const u8 *q = b + 16 + 32 * n; const int shift = 2 * j;
        const u8 sc0 = b[8 * n + 2 * j], sc1 = b[8 * n + 2 * j + 1];
        for (int l = 0; l < 16; ++l) {
            y[l] = d * (float)(sc0 & 0xF) * (float)((q[l] >> shift) & 3) - dmin * (float)(sc0 >> 4);
            y[l + 16] = d * (float)(sc1 & 0xF) * (float)((q[l + 16] >> shift) & 3) - dmin * (float)(sc1 >> 4);
        }
    } else if (T == T_Q3_K) {
        const u8 *b = row + (c >> 3) * 110; const int s = (int)(c & 7);
        const u8 *hm = b, *q = b + 32 + 32 * (s >> 2), *sc = b + 96;
        const float d = h2f(ld_u16(b + 108));
        const int shift = 2 * (s & 3); const u8 m = (u8)(1u << s);
        const float d0 = d * (float)q3k_scale(sc, 2 * s), d1 = d * (float)q3k_scale(sc, 2 * s + 1);
        for (int l = 0; l < 16; ++l) {
            y[l] = d0 * (float)((int)((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
            y[l + 16] = d1 * (float)((int)((q[l + 16] >> shift) & 3) - ((hm[l + 16] & m) ? 0 : 4));
        }
    } else if (T == T_Q4_K || T == T_Q5_K) {
        const int bytes = qtraits<T>::bytes;
        const u8 *b = row + (c >> 3) * bytes; const int s = (int)(c & 7);
        const float d = h2f(ld_u16(b)), dmin = h2f(ld_u16(b + 2));
        int sc, mn; scale_min_k4(s, b + 4, sc, mn);
        const float dl = d * (float)sc, ml = dmin * (float)mn;
        const u8 *ql = b + (T == T_Q4_K ? 16 : 48) + 32 * (s >> 1);
        const int nib = 4 * (s & 1);
        for (int l = 0; l < 32; ++l) {
            int v = (ql[l] >> nib) & 0xF;
            if (T == T_Q5_K) v += (b[16 + l] >> s) & 1 ? 16 : 0;
            y[l] = dl * (float)v - ml;
        }
    } else if (T == T_Q6_K) {
        const u8 *b = row + (c >> 3) * 210; const int s = (int)(c & 7);
        const int n = s >> 2, k = s & 3;
        const u8 *ql = b + 64 * n + (k & 1) * 32, *qh = b + 128 + 32 * n;
        const i8 *sc = (const i8 *)(b + 192) + 8 * n + 2 * k;
        const float d = h2f(ld_u16(b + 208));
        const int nib = 4 * (k >> 1), hs = 2 * k;
        for (int l = 0; l < 32; ++l) {
            const int q = (((ql[l] >> nib) & 0xF) | (((qh[l] >> hs) & 3) << 4)) - 32;
            y[l] = d * (float)sc[l >> 4] * (float)q;
        }
    } else if (T == T_IQ4_NL) {
        iq4_nl_decode32(row + c * 18, y);
    } else if (qtraits<T>::bs == 256 && T >= T_IQ2_XXS) { // the 256-element i-quants and ternary formats
        iq_decode32<T>(row + (c >> 3) * qtraits<T>::bytes, (int)(c & 7), y);
    }
}

// Element-count aware access for a row of any type: value of chunk element, scalar or block.
template <int T> RF_DEV void decode32_any(const u8 *row, i64 c, i64 K, float *y) {
    if (qtraits<T>::scalar) {
        for (int j = 0; j < 32; ++j) { const i64 i = c * 32 + j; y[j] = i < K ? load_scalar<T>(row, i) : 0.f; }
    } else {
        decode32<T>(row, c, y);
    }
}

// X-macro over every weight type: name suffix and enum value (kernel names use the suffix).
#define RF_FOR_EACH_WTYPE(X) \
    X(f32, T_F32) X(f16, T_F16) X(bf16, T_BF16) X(q4_0, T_Q4_0) X(q4_1, T_Q4_1) X(q5_0, T_Q5_0) \
    X(q5_1, T_Q5_1) X(q8_0, T_Q8_0) X(q2_k, T_Q2_K) X(q3_k, T_Q3_K) X(q4_k, T_Q4_K) X(q5_k, T_Q5_K) \
    X(q6_k, T_Q6_K) X(mxfp4, T_MXFP4) X(mxfp6_e2m3, T_MXFP6_E2M3) X(mxfp6_e3m2, T_MXFP6_E3M2) \
    X(iq2_xxs, T_IQ2_XXS) X(iq2_xs, T_IQ2_XS) X(iq2_s, T_IQ2_S) X(iq3_xxs, T_IQ3_XXS) X(iq3_s, T_IQ3_S) \
    X(iq1_s, T_IQ1_S) X(iq1_m, T_IQ1_M) X(iq4_nl, T_IQ4_NL) X(iq4_xs, T_IQ4_XS) X(tq1_0, T_TQ1_0) X(tq2_0, T_TQ2_0)
