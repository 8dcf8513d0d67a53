// One K step of the integer tensor-core matmuls (decode: matmul_mmq.hip, prefill:
// matmul_mmq_prefill.hip): a warp's rows unpacked from the staged bytes and multiplied with the
// staged q8_1 columns, per weight format (the math of mvq_blocks.h). NVIDIA only.
#pragma once
#include "compat.h"
#include "quant_decode.h"
#include "mvq_blocks.h"
#include "mmq_ops.h"

#if RF_NVIDIA

// Q6_K's quants minus 32, times four, as signed bytes: each byte's 4 low bits (lo4, already at bits
// 2..5: a nibble shifted left 2) and 2 high bits (hi2, already at bits 6..7) make 4v (v = 0..63);
// flipping bit 7 makes it 4v - 128 = 4 (v - 32) as a signed byte. The mma sums come out four times
// as large, exactly, and are shifted back once a step: the same integers as subtracting 32 from the
// packed 6-bit values (sub32_6bit, a sign extension: four instructions a word more), so the same
// floats, in fewer instructions: faster batched decode. (The dp4a column kernels gained nothing
// from it, one column lost: mvq_blocks.h keeps its forms.)
RF_DEV u32 q6_times4_minus128(u32 lo4, u32 hi2) { return ((lo4 & 0x3C3C3C3Cu) | (hi2 & 0xC0C0C0C0u)) ^ 0x80808080u; }

// ---- one K step of a warp's WR x 16 rows ----------------------------------------------------------
// sw: the stage's weight rows (row i at i * WS, its bytes from offset mis[i]), sx: quants
// [column][STEP + 32], sd: per column XDG * 4 floats of (d, sum). Row tile i of the warp holds
// stage rows rr[2i] (its row g) and rr[2i + 1] (row g + 8), misaligned by mis[2i], mis[2i + 1];
// column tile nt its columns 8 nt .. 8 nt + 7 of the stage (col: the warp's first); ntv = valid
// column tiles; nsub = valid sub-blocks (legacy last step). acc[i][nt]: the mma C layout (rows
// g, g + 8 x columns 2t, 2t + 1). Each B fragment is loaded once for the WR row tiles.
template <int T, int WR, int NT> struct MmqStep {
    typedef MmqFmt<T> F;
    enum { XF = F::XDG * 4, XS = F::STEP + 32, R = 2 * WR };

    RF_DEV static void k4(const u8 *sw, const u8 *sx, const float *sd, const int (&rr)[R], int col, int g, int t, int ntv,
                          float (&acc)[WR][NT][4]) {
        const int QS = T == T_Q4_K ? 16 : 48;
        const u8 *w[R];
        u32 sc[R][2], mn[R][2];
        float dd[R], dm[R];
        uint2 qs[R], qh[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            w[r] = sw + rr[r] * F::WS;
            const uint4 hd = *(const uint4 *)w[r];
            if (T == T_Q5_K) qh[r] = *(const uint2 *)(w[r] + 16 + 8 * t);
            // Six-bit scales and mins of the 8 sub-blocks, one per byte: [0] subs 0..3, [1] subs 4..7.
            const u32 y = hd.y, z = hd.z, v = hd.w;
            sc[r][0] = y & 0x3F3F3F3Fu;
            mn[r][0] = z & 0x3F3F3F3Fu;
            sc[r][1] = (v & 0x0F0F0F0Fu) | ((y >> 2) & 0x30303030u);
            mn[r][1] = ((v >> 4) & 0x0F0F0F0Fu) | ((z >> 2) & 0x30303030u);
            dd[r] = h2f((u16)hd.x);
            dm[r] = h2f((u16)(hd.x >> 16));
        }
        int ai[WR][NT][4] = {};
#pragma unroll
        for (int s = 0; s < 8; ++s) {
            const int j = s >> 1, sh = 4 * (s & 1);
            if (!(s & 1))
#pragma unroll
                for (int r = 0; r < R; ++r) qs[r] = *(const uint2 *)(w[r] + QS + 32 * j + 8 * t);
            u32 a[WR][4];
            int sl[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                u32 lo = (qs[r].x >> sh) & 0x0F0F0F0Fu, hi = (qs[r].y >> sh) & 0x0F0F0F0Fu;
                if (T == T_Q5_K) {
                    lo |= ((qh[r].x >> s) & 0x01010101u) << 4;
                    hi |= ((qh[r].y >> s) & 0x01010101u) << 4;
                }
                a[r >> 1][r & 1] = lo;     // row g / g+8, elements 8t..8t+3 (k slots 4t..4t+3)
                a[r >> 1][2 + (r & 1)] = hi; // elements 8t+4..8t+7 (k slots 16+4t..)
                sl[r] = (int)((sc[r][s >> 2] >> (8 * (s & 3))) & 0xFF);
            }
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) {
                if (nt >= ntv) break;
                const uint2 b = *(const uint2 *)(sx + (col + 8 * nt + g) * XS + 32 * s + 8 * t);
#pragma unroll
                for (int i = 0; i < WR; ++i) {
                    int c[4];
                    mmq_mma_s8(c, a[i], b.x, b.y);
                    ai[i][nt][0] += sl[2 * i] * c[0];
                    ai[i][nt][1] += sl[2 * i] * c[1];
                    ai[i][nt][2] += sl[2 * i + 1] * c[2];
                    ai[i][nt][3] += sl[2 * i + 1] * c[3];
                }
            }
        }
        // Min term: (16 rows x 8 sub-blocks of m) * (8 sub-blocks x 8 columns of d_x * sum).
        u32 am[WR][4];
#pragma unroll
        for (int i = 0; i < WR; ++i) {
            am[i][0] = __float_as_uint((float)((mn[2 * i][0] >> (8 * t)) & 0xFF));     // row g, sub t
            am[i][1] = __float_as_uint((float)((mn[2 * i + 1][0] >> (8 * t)) & 0xFF)); // row g+8, sub t
            am[i][2] = __float_as_uint((float)((mn[2 * i][1] >> (8 * t)) & 0xFF));     // row g, sub t+4
            am[i][3] = __float_as_uint((float)((mn[2 * i + 1][1] >> (8 * t)) & 0xFF));
        }
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
            if (nt >= ntv) break;
            const float *dg = sd + (col + 8 * nt + g) * XF; // column g's (d, sum) of the 8 sub-blocks
            const float v0 = dg[2 * t + 1], v1 = dg[2 * t + 9];
            const u32 h0 = mmq_tf32(v0), h1 = mmq_tf32(v1);
            const u32 l0 = mmq_tf32(v0 - __uint_as_float(h0)), l1 = mmq_tf32(v1 - __uint_as_float(h1));
            const float x0 = sd[(col + 8 * nt + 2 * t) * XF], x1 = sd[(col + 8 * nt + 2 * t + 1) * XF];
#pragma unroll
            for (int i = 0; i < WR; ++i) {
                float cm[4] = {0.f, 0.f, 0.f, 0.f};
                mmq_mma_tf32(cm, am[i], h0, h1);
                mmq_mma_tf32(cm, am[i], l0, l1);
                const float d0 = dd[2 * i], m0 = dm[2 * i], d1 = dd[2 * i + 1], m1 = dm[2 * i + 1];
                acc[i][nt][0] += (d0 * x0) * (float)ai[i][nt][0] - m0 * cm[0];
                acc[i][nt][1] += (d0 * x1) * (float)ai[i][nt][1] - m0 * cm[1];
                acc[i][nt][2] += (d1 * x0) * (float)ai[i][nt][2] - m1 * cm[2];
                acc[i][nt][3] += (d1 * x1) * (float)ai[i][nt][3] - m1 * cm[3];
            }
        }
    }

    // Q6_K (210-byte blocks at 2-byte misalignment mis): scales per 16 elements, so each 16-element
    // group is one m16n8k16 mma in the natural k order (lane t: elements 4t..4t+3 of the group).
    // Half n, quarter q of the block (sub-block 4n + q), group h: lane t needs ql bytes 64n +
    // 32(q & 1) + 16h + 4t + [0,4) (nibble q >> 1), qh bytes 128 + 32n + 16h + 4t + [0,4) (bits 2q,
    // 2q+1), scale byte 192 + 8n + 2q + h; d at 208.
    RF_DEV static void q6k(const u8 *sw, const u8 *sx, const float *sd, const int (&rr)[R], const int (&mis)[R], int col, int g,
                           int t, int ntv, float (&acc)[WR][NT][4]) {
        const u8 *w[R];
        float dw[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            w[r] = sw + rr[r] * F::WS;
            dw[r] = h2f(*(const u16 *)(w[r] + mis[r] + 208));
        }
        int ai[WR][NT][4] = {};
#pragma unroll
        for (int n = 0; n < 2; ++n) {
            u32 ql[R][2][2], qh[R][2];
            uint2 scw[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    ql[r][0][h] = mmq_lds4_a2(w[r], mis[r] + 64 * n + 16 * h + 4 * t);
                    ql[r][1][h] = mmq_lds4_a2(w[r], mis[r] + 64 * n + 32 + 16 * h + 4 * t);
                    qh[r][h] = mmq_lds4_a2(w[r], mis[r] + 128 + 32 * n + 16 * h + 4 * t);
                }
                scw[r] = mmq_lds8_a2(w[r], mis[r] + 192 + 8 * n);
            }
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int s = 4 * n + q;
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    u32 a[WR][2];
                    int sc[R];
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        // 4 (quant - 32): the nibble to bits 2..5, qh bits 2q, 2q + 1 to 6..7
                        const u32 l = ql[r][q & 1][h], hb = qh[r][h];
                        a[r >> 1][r & 1] = q6_times4_minus128(q >> 1 ? l >> 2 : l << 2, hb << (6 - 2 * q));
                        const u32 sw2 = (q >> 1 ? scw[r].y : scw[r].x) >> (16 * (q & 1) + 8 * h);
                        sc[r] = (int)(i8)(sw2 & 0xFF);
                    }
#pragma unroll
                    for (int nt = 0; nt < NT; ++nt) {
                        if (nt >= ntv) break;
                        const u32 b = *(const u32 *)(sx + (col + 8 * nt + g) * XS + 32 * s + 16 * h + 4 * t);
#pragma unroll
                        for (int i = 0; i < WR; ++i) {
                            int c[4];
                            mmq_mma_s8_k16(c, a[i], b);
                            ai[i][nt][0] += sc[2 * i] * c[0];
                            ai[i][nt][1] += sc[2 * i] * c[1];
                            ai[i][nt][2] += sc[2 * i + 1] * c[2];
                            ai[i][nt][3] += sc[2 * i + 1] * c[3];
                        }
                    }
                }
            }
        }
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
            if (nt >= ntv) break;
            const float x0 = sd[(col + 8 * nt + 2 * t) * XF], x1 = sd[(col + 8 * nt + 2 * t + 1) * XF];
#pragma unroll
            for (int i = 0; i < WR; ++i) { // ai: four times the sums (|4 s| < 2^30), >> 2 exact
                acc[i][nt][0] += (dw[2 * i] * x0) * (float)(ai[i][nt][0] >> 2);
                acc[i][nt][1] += (dw[2 * i] * x1) * (float)(ai[i][nt][1] >> 2);
                acc[i][nt][2] += (dw[2 * i + 1] * x0) * (float)(ai[i][nt][2] >> 2);
                acc[i][nt][3] += (dw[2 * i + 1] * x1) * (float)(ai[i][nt][3] >> 2);
            }
        }
    }

    // Q4_0 / Q5_0 / Q8_0: 4 blocks of 32 from misalignment mis; lane t's quants: Q8_0 bytes
    // 8t + [0,8), Q4_0 / Q5_0 bytes 8(t & 1) + [0,8) (low nibbles for t < 2, high for t >= 2:
    // elements 8t..8t+7), Q5_0's fifth bits 8t..8t+7 of its 32-bit qh moved to bit 4.
    // MAGIC: two FMAs per output (mmq_mma_s8_magic, mmq_scaled_add: 4 more live registers);
    // else four instructions (mmq_i2f, the scale product, the FMA).
    template <bool MAGIC = true>
    RF_DEV static void legacy(const u8 *sw, const u8 *sx, const float *sd, const int (&rr)[R], const int (&mis)[R], int col,
                              int g, int t, int ntv, int nsub, float (&acc)[WR][NT][4]) {
        const int BY = T == T_Q4_0 ? 18 : T == T_Q5_0 ? 22 : 34, piece = T == T_Q8_0 ? 8 * t : 8 * (t & 1);
        const int QS = T == T_Q5_0 ? 6 : 2; // the quants' offset in a block
        const u8 *w[R];
#pragma unroll
        for (int r = 0; r < R; ++r) w[r] = sw + rr[r] * F::WS;
#pragma unroll
        for (int s = 0; s < 4; ++s) {
            if (s >= nsub) break;
            u32 a[WR][4];
            float dw[R], dm[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int o = mis[r] + BY * s;
                dw[r] = h2f(*(const u16 *)(w[r] + o));
                dm[r] = MAGIC ? -MMQ_MAGIC_F * dw[r] : 0.f;
                uint2 q = mmq_lds8_a2(w[r], o + QS + piece);
                if (T == T_Q4_0) {
                    const int ns = 4 * (t >> 1);
                    q.x = (((q.x >> ns) & 0x0F0F0F0Fu) + 0x78787878u) ^ 0x80808080u; // q - 8 as signed bytes
                    q.y = (((q.y >> ns) & 0x0F0F0F0Fu) + 0x78787878u) ^ 0x80808080u;
                } else if (T == T_Q5_0) {
                    const int ns = 4 * (t >> 1);
                    const u32 qh = (u32)*(const u16 *)(w[r] + o + 2) | (u32)*(const u16 *)(w[r] + o + 4) << 16;
                    const u32 hb = qh >> (8 * t);
                    const u32 x = ((q.x >> ns) & 0x0F0F0F0Fu) | spread4_bit4(hb), y = ((q.y >> ns) & 0x0F0F0F0Fu) | spread4_bit4(hb >> 4);
                    q.x = (x + 0x70707070u) ^ 0x80808080u; // q - 16 as signed bytes
                    q.y = (y + 0x70707070u) ^ 0x80808080u;
                }
                a[r >> 1][r & 1] = q.x;
                a[r >> 1][2 + (r & 1)] = q.y;
            }
#pragma unroll
            for (int nt = 0; nt < NT; ++nt) {
                if (nt >= ntv) break;
                const uint2 b = *(const uint2 *)(sx + (col + 8 * nt + g) * XS + 32 * s + 8 * t);
                const float x0 = sd[(col + 8 * nt + 2 * t) * XF + 2 * s], x1 = sd[(col + 8 * nt + 2 * t + 1) * XF + 2 * s];
#pragma unroll
                for (int i = 0; i < WR; ++i) {
                    int c[4];
                    if (MAGIC) {
                        mmq_mma_s8_magic(c, a[i], b.x, b.y);
                        acc[i][nt][0] = mmq_scaled_add(acc[i][nt][0], c[0], dw[2 * i], dm[2 * i], x0);
                        acc[i][nt][1] = mmq_scaled_add(acc[i][nt][1], c[1], dw[2 * i], dm[2 * i], x1);
                        acc[i][nt][2] = mmq_scaled_add(acc[i][nt][2], c[2], dw[2 * i + 1], dm[2 * i + 1], x0);
                        acc[i][nt][3] = mmq_scaled_add(acc[i][nt][3], c[3], dw[2 * i + 1], dm[2 * i + 1], x1);
                    } else {
                        mmq_mma_s8(c, a[i], b.x, b.y);
                        acc[i][nt][0] += mmq_i2f(c[0]) * (dw[2 * i] * x0);
                        acc[i][nt][1] += mmq_i2f(c[1]) * (dw[2 * i] * x1);
                        acc[i][nt][2] += mmq_i2f(c[2]) * (dw[2 * i + 1] * x0);
                        acc[i][nt][3] += mmq_i2f(c[3]) * (dw[2 * i + 1] * x1);
                    }
                }
            }
        }
    }
};

#endif // RF_NVIDIA
