/* See q8_dot.h. Each type has a lane piece written after its struct in kernels/mvq_blocks.h
 * (the load and dot of one lane for one weight block, merged), and run_lanes plays the warp
 * (RF_WARP = 32 on every built arch) as mvq_dot_lane and warp_sum do: lane l takes blocks
 * l / LANES, l / LANES + 32 / LANES, ... in order, accumulating in one float, and the 32 lane sums
 * are added by the xor butterfly (offsets 16, 8, 4, 2, 1). The integer sums are exact, the half
 * scales are exact in float, and every float step is a product, a sum or an fmaf as the kernel
 * writes it (fmul / ffma: no a * b + c is left for the compiler to contract), so with a correctly
 * rounded fmaf the result is meant to match the single-row kernel's bits; only the F16 dot is
 * summed in a plainly written order (the GPU compiler contracts that kernel's expression as it
 * likes). The weight blocks are ggml's (GGUF) layouts, read byte by byte (little endian, no
 * alignment needed). */
#include "q8_dot.h"

#include <math.h>
#include <string.h>

#include "iq_grids_host.h"
#include "rocmforge/abi.h"

#define PM_WARP 32

/* IEEE half bits to float: exact for every half (subnormals normalized, inf and NaN kept). */
static float h2f(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu, bits;
    float f;
    if (e == 0x1Fu) {
        bits = sign | 0x7F800000u | (m << 13);
    } else if (e) {
        bits = sign | ((e + 112u) << 23) | (m << 13);
    } else if (!m) {
        bits = sign;
    } else { /* subnormal m * 2^-24: shift the leading 1 up to bit 10 */
        e = 113u;
        while (!(m & 0x400u)) {
            m <<= 1;
            --e;
        }
        bits = sign | (e << 23) | ((m & 0x3FFu) << 13);
    }
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint16_t rd16(const unsigned char *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static int i8(const unsigned char *p) { return (int)(signed char)*p; }

/* Pair i of a q8_1 column of K elements: d (k = 0) or d * sum (k = 1). */
static float pair(const unsigned char *col, int64_t K, int64_t i, int k) {
    float f;
    memcpy(&f, col + K + 8 * i + 4 * k, sizeof f);
    return f;
}

/* ggml's get_scale_min_k4: 6-bit scale and min of sub-block j (0..7) from the 12 scale bytes. */
static void scale_min_k4(int j, const unsigned char *q, int *sc, int *mn) {
    if (j < 4) {
        *sc = q[j] & 63;
        *mn = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *mn = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

/* One lane's part of block b, added to acc (the kernel's load + dot). */
typedef float (*lane_piece)(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc);

/* MvqK4 (LANES 8): lane j = 2p + h takes quant bytes [16j, 16j + 16) of the block: low nibbles
 * are elements 64p + 16h + [0,16) of sub-block 2p, high nibbles 64p + 32 + 16h + [0,16) of
 * sub-block 2p + 1 (Q5_K: bits 2p, 2p + 1 of qh bytes 16h + [0,16) as the fifth bit). The min
 * term of sub-block 2p + h goes with this lane, through the q8_1 pair's d * sum. */
static float piece_k4(int q5, const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    const int j = lane & 7, p = j >> 1, h = j & 1;
    const unsigned char *blk = row + b * (q5 ? 176 : 144);
    const unsigned char *qs = blk + (q5 ? 48 : 16) + 16 * j, *qh = blk + 16 + 16 * h;
    const float d = h2f(rd16(blk)), dmin = h2f(rd16(blk + 2));
    const int64_t e0 = b * 256 + 64 * p + 16 * h, s0i = b * 8 + 2 * p; /* first element, pair of sub-block 2p */
    int sc0, m0, sc1, m1, i, s0 = 0, s1 = 0;
    float dm;
    scale_min_k4(2 * p, blk + 4, &sc0, &m0);
    scale_min_k4(2 * p + 1, blk + 4, &sc1, &m1);
    dm = dmin * (float)(h ? m1 : m0);
    for (i = 0; i < 16; ++i) {
        int lo = qs[i] & 0xF, hi = qs[i] >> 4;
        if (q5) {
            lo |= ((qh[i] >> (2 * p)) & 1) << 4;
            hi |= ((qh[i] >> (2 * p + 1)) & 1) << 4;
        }
        s0 += lo * i8(col + e0 + i);
        s1 += hi * i8(col + e0 + 32 + i);
    }
    /* Columns in blocks of 256: sub-blocks 2p, 2p + 1 share d, the scaled sums add as integers. */
    acc = fmaf(d * pair(col, K, s0i + h, 0), (float)(s0 * sc0 + s1 * sc1), acc);
    return fmaf(-dm, pair(col, K, s0i + h, 1), acc);
}
static float piece_q4_k(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    return piece_k4(0, row, col, K, b, lane, acc);
}
static float piece_q5_k(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    return piece_k4(1, row, col, K, b, lane, acc);
}

/* MvqQ6K (LANES 8; blocks of 128 ql, 64 qh, 16 int8 scales, d): lane j takes half n = j / 4,
 * positions l = l0 + [0,8) with l0 = 8 (j % 4), of all four quarters q: element 128n + 32q + l
 * with quant (ql[64n + 32(q % 2) + l] nibble q / 2 | qh[32n + l] bits 2q, 2q + 1 as bits 4, 5)
 * - 32 and scale 8n + l0 / 16 + 2q; one integer sum of 8 products per quarter. */
static float piece_q6_k(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    const int j = lane & 7, n = j >> 2, l0 = 8 * (j & 3);
    const unsigned char *blk = row + b * 210;
    const float d = h2f(rd16(blk + 208));
    int q, s = 0;
    for (q = 0; q < 4; ++q) {
        const unsigned char *ql = blk + 64 * n + 32 * (q & 1) + l0, *qh = blk + 128 + 32 * n + l0;
        const unsigned char *x = col + b * 256 + 128 * n + 32 * q + l0;
        int i, sq = 0;
        for (i = 0; i < 8; ++i) {
            const int v = (((ql[i] >> (4 * (q >> 1))) & 0xF) | (((qh[i] >> (2 * q)) & 3) << 4)) - 32;
            sq += v * i8(x + i);
        }
        s += sq * i8(blk + 192 + 8 * n + l0 / 16 + 2 * q);
    }
    /* One d per 256 block of the column: the four scaled quarter sums add as integers. */
    return fmaf(d * pair(col, K, b * 8, 0), (float)s, acc);
}

/* MvqQ4_0 (LANES 1): the whole block, nibbles unsigned (low = elements 0..15, high = 16..31);
 * the -8 offset through the pair's d * sum: acc += d (s dx - 8 dx sum). */
static float piece_q4_0(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    const unsigned char *blk = row + b * 18, *x = col + b * 32;
    const float d = h2f(rd16(blk));
    int i, s = 0;
    (void)lane;
    for (i = 0; i < 16; ++i) s += (blk[2 + i] & 0xF) * i8(x + i) + (blk[2 + i] >> 4) * i8(x + 16 + i);
    return fmaf(d, fmaf((float)s, pair(col, K, b, 0), -8.f * pair(col, K, b, 1)), acc);
}

/* MvqLegacy<T_Q5_0> (LANES 1): the whole block (d, 32 fifth bits, 16 quant bytes), quants unsigned
 * (element j < 16: low nibble of byte j, j >= 16: high nibble of byte j - 16, bit j of the fifth
 * bits as bit 4); the -16 offset through the pair's d * sum: acc += d (s dx - 16 dx sum). */
static float piece_q5_0(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    const unsigned char *blk = row + b * 22, *x = col + b * 32;
    const float d = h2f(rd16(blk));
    const uint32_t qh = (uint32_t)blk[2] | (uint32_t)blk[3] << 8 | (uint32_t)blk[4] << 16 | (uint32_t)blk[5] << 24;
    int i, s = 0;
    (void)lane;
    for (i = 0; i < 16; ++i) {
        const int lo = (blk[6 + i] & 0xF) | (int)((qh >> i) & 1) << 4, hi = (blk[6 + i] >> 4) | (int)((qh >> (16 + i)) & 1) << 4;
        s += lo * i8(x + i) + hi * i8(x + 16 + i);
    }
    return fmaf(d, fmaf((float)s, pair(col, K, b, 0), -16.f * pair(col, K, b, 1)), acc);
}

/* MvqIq4Xs (LANES 8; blocks of d, scales_h, 4 scales_l bytes, 128 quant bytes): lane j takes
 * sub-block j, nibbles of bytes 16j.. as the IQ4_NL levels (low = elements 32j + 0..15, high =
 * 32j + 16..31), its 6-bit scale - 32 multiplying the integer sum: acc += (d dx) (s ls). */
static float piece_iq4_xs(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    static const signed char levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    const int j = lane & 7;
    const unsigned char *blk = row + b * 136, *q = blk + 8 + 16 * j, *x = col + b * 256 + 32 * j;
    const int ls = (((blk[4 + j / 2] >> (4 * (j & 1))) & 0xF) | (((rd16(blk + 2) >> (2 * j)) & 3) << 4)) - 32;
    int i, s = 0;
    for (i = 0; i < 16; ++i) s += levels[q[i] & 0xF] * i8(x + i) + levels[q[i] >> 4] * i8(x + 16 + i);
    return fmaf(h2f(rd16(blk)) * pair(col, K, b * 8 + j, 0), (float)(s * ls), acc);
}

/* Seven stored sign bits -> 8 (bit 7: an even number of negative elements), as iq_signs8. */
static int iq_signs8(uint32_t s7) {
    int p = 0, i;
    for (i = 0; i < 7; ++i) p ^= (s7 >> i) & 1;
    return (int)(s7 | ((uint32_t)p << 7));
}
static uint32_t rd32(const unsigned char *p) { return (uint32_t)rd16(p) | ((uint32_t)rd16(p + 2) << 16); }
/* Element i (0..7) of grid entry g, negated where bit i of signs is set. */
static int grid_elem(uint64_t g, int signs, int i) {
    const int v = (int)((g >> (8 * i)) & 0xFF);
    return (signs >> i) & 1 ? -v : v;
}

/* The grid i-quants (LANES 8, kernels/mvq_iq.h MvqGridSub): lane j takes sub-block j, its 32
 * signed grid values dotted with the column's 32 quants at 256 b + 32 j, times the sub-block's
 * integer scale: acc += (d' dx) (s ls), d' the block's d times the format's constant factor.
 * IQ2_XXS: 8 bytes at 2 + 8j: four grid indices, a word of 4 x 7 sign bits and the scale (top
 * nibble); ls = 2 scale + 1, d' = d / 8. */
static float piece_iq2_xxs(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    const int j = lane & 7;
    const unsigned char *blk = row + b * 66, *x = col + b * 256 + 32 * j;
    const uint32_t meta = rd32(blk + 6 + 8 * j);
    int l, i, s = 0;
    for (l = 0; l < 4; ++l) {
        const uint64_t g = pm_iq_grid(RF_TYPE_IQ2_XXS, blk[2 + 8 * j + l]);
        const int signs = iq_signs8((meta >> (7 * l)) & 127);
        for (i = 0; i < 8; ++i) s += grid_elem(g, signs, i) * i8(x + 8 * l + i);
    }
    return fmaf((h2f(rd16(blk)) * 0.125f) * pair(col, K, b * 8 + j, 0), (float)(s * (2 * (int)(meta >> 28) + 1)), acc);
}

/* IQ3_XXS: 8 grid indices at 2 + 8j, then the word of 4 x 7 sign bits and the scale at 66 + 4j;
 * ls = 2 scale + 1, d' = d / 4. */
static float piece_iq3_xxs(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    const int j = lane & 7;
    const unsigned char *blk = row + b * 98, *x = col + b * 256 + 32 * j;
    const uint32_t meta = rd32(blk + 66 + 4 * j);
    int k, i, s = 0;
    for (k = 0; k < 8; ++k) {
        const uint64_t g = pm_iq_grid(RF_TYPE_IQ3_XXS, blk[2 + 8 * j + k]);
        const int signs = iq_signs8((meta >> (7 * (k / 2))) & 127) >> (4 * (k & 1));
        for (i = 0; i < 4; ++i) s += grid_elem(g, signs, i) * i8(x + 4 * k + i);
    }
    return fmaf((h2f(rd16(blk)) * 0.25f) * pair(col, K, b * 8 + j, 0), (float)(s * (2 * (int)(meta >> 28) + 1)), acc);
}

/* IQ3_S: index low bytes at 2 + 8j, their ninth bits in byte 66 + j, sign bytes at 74 + 4j, the
 * scale nibble in byte 106 + j / 2; ls = 2 scale + 1, d' = d. */
static float piece_iq3_s(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    const int j = lane & 7;
    const unsigned char *blk = row + b * 110, *x = col + b * 256 + 32 * j;
    const uint32_t signs = rd32(blk + 74 + 4 * j);
    int k, i, s = 0;
    for (k = 0; k < 8; ++k) {
        const uint64_t g = pm_iq_grid(RF_TYPE_IQ3_S, blk[2 + 8 * j + k] | (((blk[66 + j] >> k) & 1) << 8));
        for (i = 0; i < 4; ++i) s += grid_elem(g, (int)(signs >> (4 * k)), i) * i8(x + 4 * k + i);
    }
    return fmaf(h2f(rd16(blk)) * pair(col, K, b * 8 + j, 0), (float)(s * (2 * ((blk[106 + j / 2] >> (4 * (j & 1))) & 0xF) + 1)), acc);
}

/* IQ2_XS: four u16 at 2 + 8j (9-bit grid index, 7 sign bits), the scale nibbles of elements 0..15
 * and 16..31 in byte 66 + j; IQ2_S: index low bytes at 2 + 4j, sign bytes at 34 + 4j, index bits
 * 8-9 in byte 66 + j, the scale nibbles in byte 74 + j. Per half ls = 2 scale + 1, d' = d / 8. */
static float piece_iq2_xs_s(int s_type, const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    const int j = lane & 7, xs = s_type == RF_TYPE_IQ2_XS;
    const unsigned char *blk = row + b * (xs ? 74 : 82), *x = col + b * 256 + 32 * j;
    const int sc = blk[(xs ? 66 : 74) + j];
    int l, i, s[2] = {0, 0};
    for (l = 0; l < 4; ++l) {
        const int v = rd16(blk + 2 + 8 * j + 2 * l);
        const uint64_t g = xs ? pm_iq_grid(s_type, v & 511) : pm_iq_grid(s_type, blk[2 + 4 * j + l] | (((blk[66 + j] >> (2 * l)) & 3) << 8));
        const int signs = xs ? iq_signs8((uint32_t)v >> 9) : blk[34 + 4 * j + l];
        for (i = 0; i < 8; ++i) s[l / 2] += grid_elem(g, signs, i) * i8(x + 8 * l + i);
    }
    return fmaf((h2f(rd16(blk)) * 0.125f) * pair(col, K, b * 8 + j, 0), (float)(s[0] * (2 * (sc & 0xF) + 1) + s[1] * (2 * (sc >> 4) + 1)), acc);
}
static float piece_iq2_xs(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    return piece_iq2_xs_s(RF_TYPE_IQ2_XS, row, col, K, b, lane, acc);
}
static float piece_iq2_s(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    return piece_iq2_xs_s(RF_TYPE_IQ2_S, row, col, K, b, lane, acc);
}

/* IQ1_S / IQ1_M: the lane's values are 8 g +- 1 (g the grid's -1, 0, 1, the sign the delta's),
 * ls = 2 scale + 1, d' = d / 8. IQ1_S: index low bytes at 2 + 4j, a u16 at 34 + 2j (3 high bits per
 * index, scale, delta sign). IQ1_M: index low bytes at 4j, a nibble per 8 elements at 32 + 2j
 * (3 high index bits, delta sign), 3-bit scales per 16 elements and the f16 d in the u16s at 48. */
static float piece_iq1(int type, const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    const int j = lane & 7, m = type == RF_TYPE_IQ1_M;
    const unsigned char *blk = row + b * (m ? 56 : 50), *x = col + b * 256 + 32 * j;
    float d;
    int l, i, s = 0;
    if (m) {
        const int w0 = rd16(blk + 48), w1 = rd16(blk + 50), w2 = rd16(blk + 52), w3 = rd16(blk + 54);
        const int sw = rd16(blk + 48 + 2 * (j / 2)) >> (6 * (j & 1));
        d = h2f((uint16_t)((w0 >> 12) | ((w1 >> 8) & 0xF0) | ((w2 >> 4) & 0xF00) | (w3 & 0xF000)));
        for (l = 0; l < 4; ++l) {
            const int nib = (blk[32 + 2 * j + l / 2] >> (4 * (l & 1))) & 0xF, ls = 2 * ((sw >> (l < 2 ? 0 : 3)) & 7) + 1;
            const uint64_t g = pm_iq_grid(type, blk[4 * j + l] | ((nib & 7) << 8));
            for (i = 0; i < 8; ++i) s += ls * (8 * (int)(signed char)(g >> (8 * i)) + (nib & 8 ? -1 : 1)) * i8(x + 8 * l + i);
        }
    } else {
        const int qh = rd16(blk + 34 + 2 * j), ls = 2 * ((qh >> 12) & 7) + 1;
        d = h2f(rd16(blk));
        for (l = 0; l < 4; ++l) {
            const uint64_t g = pm_iq_grid(type, blk[2 + 4 * j + l] | (((qh >> (3 * l)) & 7) << 8));
            for (i = 0; i < 8; ++i) s += ls * (8 * (int)(signed char)(g >> (8 * i)) + (qh & 0x8000 ? -1 : 1)) * i8(x + 8 * l + i);
        }
    }
    return fmaf((d * 0.125f) * pair(col, K, b * 8 + j, 0), (float)s, acc);
}
static float piece_iq1_s(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    return piece_iq1(RF_TYPE_IQ1_S, row, col, K, b, lane, acc);
}
static float piece_iq1_m(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    return piece_iq1(RF_TYPE_IQ1_M, row, col, K, b, lane, acc);
}

/* MvqTq2_0 (LANES 8): lane j takes elements 32 j .. of the block, 2-bit codes q of bytes 32 (j / 4)
 * .. at bits 2 (j % 4); the value q - 1, the -1 through the sub-block's d * sum: d (s dx - dx sum). */
static float piece_tq2_0(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    const int j = lane & 7;
    const unsigned char *blk = row + b * 66, *x = col + b * 256 + 32 * j;
    int i, s = 0;
    for (i = 0; i < 32; ++i) s += ((blk[32 * (j / 4) + i] >> (2 * (j & 3))) & 3) * i8(x + i);
    return fmaf(h2f(rd16(blk + 64)), fmaf((float)s, pair(col, K, b * 8 + j, 0), -pair(col, K, b * 8 + j, 1)), acc);
}

/* MvqQ8_0 (LANES 2): lane h takes quants [16h, 16h + 16) of the block: acc += (d s) dx. */
static float piece_q8_0(const unsigned char *row, const unsigned char *col, int64_t K, int64_t b, int lane, float acc) {
    const int h = lane & 1;
    const unsigned char *blk = row + b * 34, *x = col + b * 32 + 16 * h;
    const float d = h2f(rd16(blk));
    int i, s = 0;
    for (i = 0; i < 16; ++i) s += i8(blk + 2 + 16 * h + i) * i8(x + i);
    return fmaf(d * (float)s, pair(col, K, b, 0), acc);
}

/* warp_sum: v[l] += v[l ^ o] for o = 16, 8, 4, 2, 1 on every lane at once; lane 0's sum. */
static float warp_sum(float v[PM_WARP]) {
    float t[PM_WARP];
    int o, l;
    for (o = PM_WARP / 2; o > 0; o >>= 1) {
        for (l = 0; l < PM_WARP; ++l) t[l] = v[l] + v[l ^ o];
        memcpy(v, t, sizeof t);
    }
    return v[0];
}

/* mvq_dot_row: lanes sharing a block take its pieces, the warp steps PM_WARP / lanes blocks. */
static float run_lanes(lane_piece f, int lanes, int elems, const unsigned char *row, const unsigned char *col, int64_t K) {
    const int64_t nb = K / elems;
    float acc[PM_WARP];
    int lane;
    for (lane = 0; lane < PM_WARP; ++lane) {
        int64_t b;
        acc[lane] = 0.f;
        for (b = lane / lanes; b < nb; b += PM_WARP / lanes) acc[lane] = f(row, col, K, b, lane, acc[lane]);
    }
    return warp_sum(acc);
}

int pm_q8_dot_type(int type) {
    return type == RF_TYPE_Q4_K || type == RF_TYPE_Q5_K || type == RF_TYPE_Q6_K || type == RF_TYPE_Q4_0 || type == RF_TYPE_Q5_0 ||
           type == RF_TYPE_Q8_0 || type == RF_TYPE_IQ4_XS || type == RF_TYPE_IQ2_XXS ||
           type == RF_TYPE_IQ3_XXS || type == RF_TYPE_IQ3_S || type == RF_TYPE_IQ2_XS || type == RF_TYPE_IQ2_S ||
           type == RF_TYPE_IQ1_S || type == RF_TYPE_IQ1_M || type == RF_TYPE_TQ2_0;
}

int pm_act_block(int type) {
    if (type == RF_TYPE_Q4_K || type == RF_TYPE_Q5_K || type == RF_TYPE_Q6_K || type == RF_TYPE_IQ4_XS || type == RF_TYPE_IQ2_XXS ||
        type == RF_TYPE_IQ3_XXS || type == RF_TYPE_IQ3_S || type == RF_TYPE_IQ2_XS || type == RF_TYPE_IQ2_S ||
        type == RF_TYPE_IQ1_S || type == RF_TYPE_IQ1_M || type == RF_TYPE_TQ2_0)
        return 256;
    if (type == RF_TYPE_Q4_0 || type == RF_TYPE_Q5_0 || type == RF_TYPE_Q8_0) return 32;
    return 0;
}

float pm_dot_q8_1(int type, const unsigned char *row, const unsigned char *col, int64_t K) {
    const int blk = pm_act_block(type);
    if (!blk || K <= 0 || K % blk) return NAN;
    switch (type) {
    case RF_TYPE_Q4_K: return run_lanes(piece_q4_k, 8, 256, row, col, K);
    case RF_TYPE_Q5_K: return run_lanes(piece_q5_k, 8, 256, row, col, K);
    case RF_TYPE_Q6_K: return run_lanes(piece_q6_k, 8, 256, row, col, K);
    case RF_TYPE_Q4_0: return run_lanes(piece_q4_0, 1, 32, row, col, K);
    case RF_TYPE_Q5_0: return run_lanes(piece_q5_0, 1, 32, row, col, K);
    case RF_TYPE_IQ4_XS: return run_lanes(piece_iq4_xs, 8, 256, row, col, K);
    case RF_TYPE_IQ2_XXS: return run_lanes(piece_iq2_xxs, 8, 256, row, col, K);
    case RF_TYPE_IQ3_XXS: return run_lanes(piece_iq3_xxs, 8, 256, row, col, K);
    case RF_TYPE_IQ3_S: return run_lanes(piece_iq3_s, 8, 256, row, col, K);
    case RF_TYPE_IQ2_XS: return run_lanes(piece_iq2_xs, 8, 256, row, col, K);
    case RF_TYPE_IQ2_S: return run_lanes(piece_iq2_s, 8, 256, row, col, K);
    case RF_TYPE_IQ1_S: return run_lanes(piece_iq1_s, 8, 256, row, col, K);
    case RF_TYPE_IQ1_M: return run_lanes(piece_iq1_m, 8, 256, row, col, K);
    case RF_TYPE_TQ2_0: return run_lanes(piece_tq2_0, 8, 256, row, col, K);
    default: return run_lanes(piece_q8_0, 2, 32, row, col, K);
    }
}

/* mv_f16_dot: lane l takes the groups of 8 elements l, l + 32, ...; a group's 8 products summed
 * left to right, then added to the lane's sum. A tail of K % 8 elements is one more group. */
float pm_dot_f16(const uint16_t *row, const float *x, int64_t K) {
    const int64_t ng = (K + 7) / 8;
    float acc[PM_WARP];
    int lane;
    for (lane = 0; lane < PM_WARP; ++lane) {
        int64_t g;
        acc[lane] = 0.f;
        for (g = lane; g < ng; g += PM_WARP) {
            const int64_t e = 8 * g, n = K - e < 8 ? K - e : 8;
            float s = h2f(row[e]) * x[e];
            int64_t i;
            for (i = 1; i < n; ++i) s += h2f(row[e + i]) * x[e + i];
            acc[lane] += s;
        }
    }
    return warp_sum(acc);
}
