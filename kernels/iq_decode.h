// Decoders of the i-quants and ternary formats for decode32 (quant_decode.h, which includes this
// after its type enum): 32 elements of a block, with the float operations of the CPU backend's
// dequantization (core/quant/quant_iq.cpp, ggml's order), so both give the same values.
// Layouts as core/include/rocmforge/blocks.h. Every index a block can hold is inside its grid.
#pragma once
#include "compat.h"
#include "iq_grids.h"

RF_DEV u32 iq_u32(const u8 *p) { return (u32)ld_u16(p) | ((u32)ld_u16(p + 2) << 16); } // 2-byte aligned p
RF_DEV float iq_sign(u32 signs, int j) { return (signs >> j) & 1 ? -1.f : 1.f; }
RF_DEV u32 byte_of(unsigned long long v, int j) { return (u32)(v >> (8 * j)) & 0xFF; }

// IQ4_NL (18 bytes: d, 16 bytes of nibbles; low = elements 0..15, high = 16..31).
RF_DEV void iq4_nl_decode32(const u8 *b, float *y) {
    const float d = h2f(ld_u16(b));
    for (int j = 0; j < 16; ++j) {
        y[j] = d * (float)iq4nl_value(b[2 + j] & 0xF);
        y[j + 16] = d * (float)iq4nl_value(b[2 + j] >> 4);
    }
}

// TQ1_0 trit n (0 = most significant) of byte q: q is a fixed-point fraction of 3^5 (or 3^4);
// times 3^n moves trit n to the top, * 3 >> 8 reads it.
RF_DEV int tq1_trit(u32 q, int n) {
    const u32 pow3 = n == 0 ? 1 : n == 1 ? 3 : n == 2 ? 9 : n == 3 ? 27 : 81;
    return (int)((((q * pow3) & 0xFF) * 3) >> 8);
}

// Elements [32s, 32s + 32) of the 256-element block at b.
template <int T> RF_DEV void iq_decode32(const u8 *b, int s, float *y) {
    if (T == T_IQ2_XXS) { // d, per 32: u32 of four 8-bit grid indices, u32 of 4x7 sign bits + scale
        const float d = h2f(ld_u16(b));
        const u32 idx = iq_u32(b + 2 + 8 * s), meta = iq_u32(b + 6 + 8 * s);
        const float db = d * (0.5f + (float)(meta >> 28)) * 0.25f;
        for (int l = 0; l < 4; ++l) {
            const unsigned long long g = kIq2xxsGridD.v[(idx >> (8 * l)) & 255];
            const u32 signs = iq_signs8((meta >> (7 * l)) & 127);
            for (int j = 0; j < 8; ++j) y[8 * l + j] = db * (float)byte_of(g, j) * iq_sign(signs, j);
        }
    } else if (T == T_IQ2_XS || T == T_IQ2_S) {
        const float d = h2f(ld_u16(b));
        const u32 sc = b[T == T_IQ2_XS ? 66 + s : 74 + s];
        const float db0 = d * (0.5f + (float)(sc & 0xF)) * 0.25f, db1 = d * (0.5f + (float)(sc >> 4)) * 0.25f;
        for (int l = 0; l < 4; ++l) {
            unsigned long long g;
            u32 signs;
            if (T == T_IQ2_XS) { // u16: 9-bit grid index, 7 sign bits
                const u32 q = ld_u16(b + 2 + 2 * (4 * s + l));
                g = kIq2xsGridD.v[q & 511];
                signs = iq_signs8(q >> 9);
            } else { // index low byte, bits 8-9 in qh; 8 explicit sign bits
                const u32 qh = b[66 + s];
                g = kIq2sGridD.v[b[2 + 4 * s + l] | ((qh << (8 - 2 * l)) & 0x300)];
                signs = b[34 + 4 * s + l];
            }
            const float db = l < 2 ? db0 : db1;
            for (int j = 0; j < 8; ++j) y[8 * l + j] = db * (float)byte_of(g, j) * iq_sign(signs, j);
        }
    } else if (T == T_IQ3_XXS || T == T_IQ3_S) {
        const float d = h2f(ld_u16(b));
        float db;
        u32 meta = 0, qh = 0;
        if (T == T_IQ3_XXS) { // per 32: 8 grid indices, then (after all of them) 4x7 sign bits + scale
            meta = iq_u32(b + 66 + 4 * s);
            db = d * (0.5f + (float)(meta >> 28)) * 0.5f;
        } else { // 9-bit indices (bit 8 in qh), 8 explicit sign bits, a 4-bit scale per 32
            const u32 sc = b[106 + s / 2];
            db = d * (float)(1 + 2 * (s & 1 ? sc >> 4 : sc & 0xF));
            qh = b[66 + s];
        }
        // the 8 grid indices and (IQ3_S) the 4 sign bytes of this 32 as words: fewer registers
        // than byte loads in the tile kernels (gfx1100 spilled with bytes)
        const u32 q0 = iq_u32(b + 2 + 8 * s), q1 = iq_u32(b + 6 + 8 * s);
        const u32 sw = T == T_IQ3_S ? iq_u32(b + 74 + 4 * s) : 0;
        for (int l = 0; l < 4; ++l) {
            const u32 qw = l < 2 ? q0 : q1, i1 = (qw >> (16 * (l & 1))) & 0xFF, i2 = (qw >> (16 * (l & 1) + 8)) & 0xFF;
            u32 g1, g2, signs;
            if (T == T_IQ3_XXS) {
                signs = iq_signs8((meta >> (7 * l)) & 127);
                g1 = kIq3xxsGridD.v[i1];
                g2 = kIq3xxsGridD.v[i2];
            } else {
                signs = (sw >> (8 * l)) & 0xFF;
                g1 = kIq3sGridD.v[i1 | ((qh << (8 - 2 * l)) & 256)];
                g2 = kIq3sGridD.v[i2 | ((qh << (7 - 2 * l)) & 256)];
            }
            for (int j = 0; j < 4; ++j) {
                y[8 * l + j] = db * (float)((g1 >> (8 * j)) & 0xFF) * iq_sign(signs, j);
                y[8 * l + j + 4] = db * (float)((g2 >> (8 * j)) & 0xFF) * iq_sign(signs, j + 4);
            }
        }
    } else if (T == T_IQ1_S) { // d, 8-bit index low bits; per 32 a u16: 4x3 index bits, scale, delta sign
        const float d = h2f(ld_u16(b));
        const u32 qh = ld_u16(b + 34 + 2 * s);
        const float dl = d * (float)(2 * ((qh >> 12) & 7) + 1);
        const float delta = qh & 0x8000 ? -0.125f : 0.125f;
        for (int l = 0; l < 4; ++l) {
            const unsigned long long g = kIq1sGridD.v[b[2 + 4 * s + l] | (((qh >> (3 * l)) & 7) << 8)];
            for (int j = 0; j < 8; ++j) y[8 * l + j] = dl * ((float)(signed char)byte_of(g, j) + delta);
        }
    } else if (T == T_IQ1_M) { // no d field: the f16 scale is the top nibbles of the 4 scale words
        u32 sc[4];
        for (int i = 0; i < 4; ++i) sc[i] = ld_u16(b + 48 + 2 * i);
        const float d = h2f((u16)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000)));
        const u32 w = sc[s / 2] >> (6 * (s & 1));
        const float dl1 = d * (float)(2 * (w & 7) + 1), dl2 = d * (float)(2 * ((w >> 3) & 7) + 1);
        const u32 h0 = b[32 + 2 * s], h1 = b[33 + 2 * s];
        for (int l = 0; l < 4; ++l) {
            const u32 h = l < 2 ? h0 : h1, hs = l & 1 ? 4 : 0; // index bits 8-10: low or high nibble of h
            const u32 idx = b[4 * s + l] | (((h >> hs) & 7) << 8);
            const float delta = (h >> hs) & 8 ? -0.125f : 0.125f;
            const unsigned long long g = kIq1sGridD.v[idx];
            const float dl = l < 2 ? dl1 : dl2;
            for (int j = 0; j < 8; ++j) y[8 * l + j] = dl * ((float)(signed char)byte_of(g, j) + delta);
        }
    } else if (T == T_IQ4_XS) { // d, 6-bit scales (low 4 bits in scales_l, high 2 in scales_h), nibbles
        const float d = h2f(ld_u16(b));
        const u32 ls = ((b[4 + s / 2] >> (4 * (s & 1))) & 0xF) | (((ld_u16(b + 2) >> (2 * s)) & 3) << 4);
        const float dl = d * (float)((int)ls - 32);
        const u8 *qs = b + 8 + 16 * s;
        for (int j = 0; j < 16; ++j) {
            y[j] = dl * (float)iq4nl_value(qs[j] & 0xF);
            y[j + 16] = dl * (float)iq4nl_value(qs[j] >> 4);
        }
    } else if (T == T_TQ1_0) { // 48 bytes of 5 trits, 4 bytes of 4 trits, d
        const float d = h2f(ld_u16(b + 52));
        for (int m = 0; m < 32; ++m) {
            int t;
            if (s < 5) t = tq1_trit(b[m], s);                              // elements 32n + m of bytes 0..31
            else if (s < 7 || m < 16) t = tq1_trit(b[32 + (m & 15)], 2 * (s - 5) + (m >> 4)); // 160 + 16n + m
            else t = tq1_trit(b[48 + ((m - 16) & 3)], (m - 16) >> 2);      // 240 + 4n + j of qh
            y[m] = (float)(t - 1) * d;
        }
    } else if (T == T_TQ2_0) { // 2 bits per element (q - 1), d
        const float d = h2f(ld_u16(b + 64));
        const u8 *q = b + 32 * (s >> 2);
        const int sh = 2 * (s & 3);
        for (int m = 0; m < 32; ++m) y[m] = (float)((int)((q[m] >> sh) & 3) - 1) * d;
    }
}
