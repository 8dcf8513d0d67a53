// K-quants (256-element super-blocks): ggml's dequantize_row_q{2..8}_K and
// quantize_row_q{2..8}_K_ref (no importance matrix), same arithmetic in the same order.
// Scratch arrays live on the stack: no allocation per call.
#include <cmath>

#include "quant_internal.h"

namespace rf::quant {

static inline int imax(int a, int b) { return a > b ? a : b; }
static inline int imin(int a, int b) { return a < b ? a : b; }

// 6-bit scale and min of sub-block j from the 12-byte packed K_SCALE area (Q4_K, Q5_K).
static inline void get_scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
    }
}

// Inverse of get_scale_min_k4 for all 8 sub-blocks.
static inline void pack_scale_min_k4(const uint8_t ls[8], const uint8_t lm[8], uint8_t *scales) {
    for (int j = 0; j < QK_K / 32; ++j) {
        if (j < 4) {
            scales[j] = ls[j];
            scales[j + 4] = lm[j];
        } else {
            scales[j + 4] = static_cast<uint8_t>((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
            scales[j - 4] |= static_cast<uint8_t>((ls[j] >> 4) << 6);
            scales[j - 0] |= static_cast<uint8_t>((lm[j] >> 4) << 6);
        }
    }
}

// 2-bit levels L[256] -> qs[64]: byte l of each 128-half holds elements l, l+32, l+64, l+96.
static inline void pack_2bit(const uint8_t *L, uint8_t *qs) {
    for (int j = 0; j < QK_K; j += 128)
        for (int l = 0; l < 32; ++l)
            qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) |
                                                 (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

//========================= Q2_K

void quantize_row_q2_K(const float *x, block_q2_K *y, int64_t k) {
    const int64_t nb = k / QK_K;
    uint8_t L[QK_K];
    float weights[QK_K];
    float mins[QK_K / 16];
    float scales[QK_K / 16];
    const float q4scale = 15.f;

    for (int64_t i = 0; i < nb; i++) {
        // make_qkx2_quants(16, 3, ..., -0.5f, 0.1f, 15, true) on the 16 sub-blocks, 8 at a time
        for (int l = 0; l < QK_K; ++l) weights[l] = std::fabs(x[l]);
        for (int half = 0; half < 2; ++half)
            make_qkx2_quants_x8(16, 3, x + 128 * half, weights + 128 * half, L + 128 * half,
                                scales + 8 * half, mins + 8 * half, -0.5f, 0.1f, 15, true);
        float max_scale = 0; // as we are deducting the min, scales are always positive
        float max_min = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            const float scale = scales[j];
            if (scale > max_scale) max_scale = scale;
            const float min = mins[j];
            if (min > max_min) max_min = min;
        }

        if (max_scale > 0) {
            const float iscale = q4scale / max_scale;
            for (int j = 0; j < QK_K / 16; ++j) {
                const int l = nearest_int(iscale * scales[j]);
                y[i].scales[j] = static_cast<uint8_t>(l);
            }
            y[i].d = float_to_half(max_scale / q4scale);
        } else {
            for (int j = 0; j < QK_K / 16; ++j) y[i].scales[j] = 0;
            y[i].d = float_to_half(0.f);
        }
        if (max_min > 0) {
            const float iscale = q4scale / max_min;
            for (int j = 0; j < QK_K / 16; ++j) {
                const int l = nearest_int(iscale * mins[j]);
                y[i].scales[j] |= static_cast<uint8_t>(l << 4);
            }
            y[i].dmin = float_to_half(max_min / q4scale);
        } else {
            y[i].dmin = float_to_half(0.f);
        }
        // Re-quantize against the rounded (fp16, 4-bit) scales actually stored.
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = half_to_float(y[i].d) * (y[i].scales[j] & 0xF);
            if (!d) continue;
            const float dm = half_to_float(y[i].dmin) * (y[i].scales[j] >> 4);
            for (int ii = 0; ii < 16; ++ii) {
                int l = nearest_int((x[16 * j + ii] + dm) / d);
                l = imax(0, imin(3, l));
                L[16 * j + ii] = static_cast<uint8_t>(l);
            }
        }
        pack_2bit(L, y[i].qs);
        x += QK_K;
    }
}

void dequantize_row_q2_K(const block_q2_K *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_float(x[i].d);
        const float min = half_to_float(x[i].dmin);
        const uint8_t *q = x[i].qs;
        int is = 0;
        float dl, ml;
        for (int n = 0; n < QK_K; n += 128) {
            int shift = 0;
            for (int j = 0; j < 4; ++j) {
                uint8_t sc = x[i].scales[is++];
                dl = d * (sc & 0xF);
                ml = min * (sc >> 4);
                for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<int8_t>((q[l] >> shift) & 3) - ml;
                sc = x[i].scales[is++];
                dl = d * (sc & 0xF);
                ml = min * (sc >> 4);
                for (int l = 0; l < 16; ++l)
                    *y++ = dl * static_cast<int8_t>((q[l + 16] >> shift) & 3) - ml;
                shift += 2;
            }
            q += 32;
        }
    }
}

//========================= Q3_K

// Signed 6-bit scale j (bias 32 removed) from the 12-byte Q3_K scale area.
static inline int8_t q3_scale(const uint8_t *scales, int j) {
    int8_t sc = static_cast<int8_t>(j < 8 ? scales[j] & 0xF : scales[j - 8] >> 4);
    sc = static_cast<int8_t>((sc | (((scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32);
    return sc;
}

void quantize_row_q3_K(const float *x, block_q3_K *y, int64_t k) {
    const int64_t nb = k / QK_K;
    int8_t L[QK_K];
    float scales[QK_K / 16];

    for (int64_t i = 0; i < nb; i++) {
        float max_scale = 0;
        float amax = 0;
        for (int j = 0; j < QK_K / 16; ++j) {
            scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j, true);
            const float scale = std::fabs(scales[j]);
            if (scale > amax) {
                amax = scale;
                max_scale = scales[j];
            }
        }

        std::memset(y[i].scales, 0, 12);
        if (max_scale) {
            const float iscale = -32.f / max_scale;
            for (int j = 0; j < QK_K / 16; ++j) {
                int8_t l = static_cast<int8_t>(nearest_int(iscale * scales[j]));
                l = static_cast<int8_t>(imax(-32, imin(31, l)) + 32);
                if (j < 8) {
                    y[i].scales[j] = l & 0xF;
                } else {
                    y[i].scales[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
                }
                l = static_cast<int8_t>(l >> 4);
                y[i].scales[j % 4 + 8] |= static_cast<uint8_t>(l << (2 * (j / 4)));
            }
            y[i].d = float_to_half(1 / iscale);
        } else {
            y[i].d = float_to_half(0.f);
        }

        for (int j = 0; j < QK_K / 16; ++j) {
            const int8_t sc = q3_scale(y[i].scales, j);
            const float d = half_to_float(y[i].d) * sc;
            if (!d) continue;
            for (int ii = 0; ii < 16; ++ii) {
                int l = nearest_int(x[16 * j + ii] / d);
                l = imax(-4, imin(3, l));
                L[16 * j + ii] = static_cast<int8_t>(l + 4);
            }
        }

        std::memset(y[i].hmask, 0, QK_K / 8);
        // High bit of the first 32 quants into bit 0 of hmask[0..31], the next 32 into bit 1, ...
        int m = 0;
        uint8_t hm = 1;
        for (int j = 0; j < QK_K; ++j) {
            if (L[j] > 3) {
                y[i].hmask[m] |= hm;
                L[j] = static_cast<int8_t>(L[j] - 4);
            }
            if (++m == QK_K / 8) {
                m = 0;
                hm = static_cast<uint8_t>(hm << 1);
            }
        }
        pack_2bit(reinterpret_cast<const uint8_t *>(L), y[i].qs);
        x += QK_K;
    }
}

void dequantize_row_q3_K(const block_q3_K *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    const uint32_t kmask1 = 0x03030303;
    const uint32_t kmask2 = 0x0f0f0f0f;
    uint32_t aux[4];
    int8_t scales[16];

    for (int64_t i = 0; i < nb; i++) {
        const float d_all = half_to_float(x[i].d);
        const uint8_t *q = x[i].qs;
        const uint8_t *hm = x[i].hmask;
        uint8_t m = 1;

        std::memcpy(aux, x[i].scales, 12);
        const uint32_t tmp = aux[2];
        aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
        aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
        aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
        aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
        std::memcpy(scales, aux, 16);

        int is = 0;
        float dl;
        for (int n = 0; n < QK_K; n += 128) {
            int shift = 0;
            for (int j = 0; j < 4; ++j) {
                dl = d_all * (scales[is++] - 32);
                for (int l = 0; l < 16; ++l)
                    *y++ = dl * (static_cast<int8_t>((q[l + 0] >> shift) & 3) - ((hm[l + 0] & m) ? 0 : 4));
                dl = d_all * (scales[is++] - 32);
                for (int l = 0; l < 16; ++l)
                    *y++ = dl * (static_cast<int8_t>((q[l + 16] >> shift) & 3) - ((hm[l + 16] & m) ? 0 : 4));
                shift += 2;
                m = static_cast<uint8_t>(m << 1);
            }
            q += 32;
        }
    }
}

//========================= Q4_K / Q5_K share the scale/min quantization

// Per 32-element sub-block: weights av_x + |x|, then make_qkx2_quants; writes the 6-bit packed
// scales/mins in `packed` and the fp16 super-scales.
template <int NMAX>
static inline void q45_scales(const float *x, uint8_t *L, float rmin, float rdelta, int nstep,
                              uint8_t *packed, fp16_t *d_out, fp16_t *dmin_out) {
    float mins[QK_K / 32];
    float scales[QK_K / 32];
    float weights[QK_K];
    for (int j = 0; j < QK_K / 32; ++j) {
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
        const float av_x = std::sqrt(sum_x2 / 32);
        for (int l = 0; l < 32; ++l) weights[32 * j + l] = av_x + std::fabs(x[32 * j + l]);
    }
    // make_qkx2_quants(32, NMAX, ...) on the 8 sub-blocks at once (bit-identical).
    make_qkx2_quants_x8(32, NMAX, x, weights, L, scales, mins, rmin, rdelta, nstep, false);
    float max_scale = 0; // as we are deducting the min, scales are always positive
    float max_min = 0;
    for (int j = 0; j < QK_K / 32; ++j) {
        const float scale = scales[j];
        if (scale > max_scale) max_scale = scale;
        const float min = mins[j];
        if (min > max_min) max_min = min;
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    uint8_t ls[QK_K / 32], lm[QK_K / 32];
    for (int j = 0; j < QK_K / 32; ++j) {
        ls[j] = static_cast<uint8_t>(nearest_int(inv_scale * scales[j]));
        lm[j] = static_cast<uint8_t>(nearest_int(inv_min * mins[j]));
        ls[j] = ls[j] < 63 ? ls[j] : 63;
        lm[j] = lm[j] < 63 ? lm[j] : 63;
    }
    pack_scale_min_k4(ls, lm, packed);
    *d_out = float_to_half(max_scale / 63.f);
    *dmin_out = float_to_half(max_min / 63.f);
    // Re-quantize against the stored (rounded) scales.
    for (int j = 0; j < QK_K / 32; ++j) {
        uint8_t sc, m;
        get_scale_min_k4(j, packed, &sc, &m);
        const float d = half_to_float(*d_out) * sc;
        if (!d) continue;
        const float dm = half_to_float(*dmin_out) * m;
        for (int ii = 0; ii < 32; ++ii) {
            int l = nearest_int((x[32 * j + ii] + dm) / d);
            l = imax(0, imin(NMAX, l));
            L[32 * j + ii] = static_cast<uint8_t>(l);
        }
    }
}

void quantize_row_q4_K(const float *x, block_q4_K *y, int64_t k) {
    const int64_t nb = k / QK_K;
    uint8_t L[QK_K];
    for (int64_t i = 0; i < nb; i++) {
        q45_scales<15>(x, L, -1.f, 0.1f, 20, y[i].scales, &y[i].d, &y[i].dmin);
        uint8_t *q = y[i].qs;
        for (int j = 0; j < QK_K; j += 64) {
            for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
            q += 32;
        }
        x += QK_K;
    }
}

void dequantize_row_q4_K(const block_q4_K *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *q = x[i].qs;
        const float d = half_to_float(x[i].d);
        const float min = half_to_float(x[i].dmin);
        int is = 0;
        uint8_t sc, m;
        for (int j = 0; j < QK_K; j += 64) {
            get_scale_min_k4(is + 0, x[i].scales, &sc, &m);
            const float d1 = d * sc;
            const float m1 = min * m;
            get_scale_min_k4(is + 1, x[i].scales, &sc, &m);
            const float d2 = d * sc;
            const float m2 = min * m;
            for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
            q += 32;
            is += 2;
        }
    }
}

void quantize_row_q5_K(const float *x, block_q5_K *y, int64_t k) {
    const int64_t nb = k / QK_K;
    uint8_t L[QK_K];
    for (int64_t i = 0; i < nb; i++) {
        q45_scales<31>(x, L, -0.5f, 0.1f, 15, y[i].scales, &y[i].d, &y[i].dmin);
        uint8_t *qh = y[i].qh;
        uint8_t *ql = y[i].qs;
        std::memset(qh, 0, QK_K / 8);
        uint8_t m1 = 1, m2 = 2;
        for (int n = 0; n < QK_K; n += 64) {
            for (int j = 0; j < 32; ++j) {
                int l1 = L[n + j];
                if (l1 > 15) {
                    l1 -= 16;
                    qh[j] |= m1;
                }
                int l2 = L[n + j + 32];
                if (l2 > 15) {
                    l2 -= 16;
                    qh[j] |= m2;
                }
                ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
            }
            m1 = static_cast<uint8_t>(m1 << 2);
            m2 = static_cast<uint8_t>(m2 << 2);
            ql += 32;
        }
        x += QK_K;
    }
}

void dequantize_row_q5_K(const block_q5_K *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *ql = x[i].qs;
        const uint8_t *qh = x[i].qh;
        const float d = half_to_float(x[i].d);
        const float min = half_to_float(x[i].dmin);
        int is = 0;
        uint8_t sc, m;
        uint8_t u1 = 1, u2 = 2;
        for (int j = 0; j < QK_K; j += 64) {
            get_scale_min_k4(is + 0, x[i].scales, &sc, &m);
            const float d1 = d * sc;
            const float m1 = min * m;
            get_scale_min_k4(is + 1, x[i].scales, &sc, &m);
            const float d2 = d * sc;
            const float m2 = min * m;
            for (int l = 0; l < 32; ++l) *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
            ql += 32;
            is += 2;
            u1 = static_cast<uint8_t>(u1 << 2);
            u2 = static_cast<uint8_t>(u2 << 2);
        }
    }
}

//========================= Q6_K

// ggml's quantize_row_q6_K_ref is its importance-weighted quantizer without weights.
void quantize_row_q6_K(const float *x, block_q6_K *y, int64_t k) { quantize_row_q6_K_w(x, y, k, nullptr); }

void dequantize_row_q6_K(const block_q6_K *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_float(x[i].d);
        const uint8_t *ql = x[i].ql;
        const uint8_t *qh = x[i].qh;
        const int8_t *sc = x[i].scales;
        for (int n = 0; n < QK_K; n += 128) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int8_t q1 = static_cast<int8_t>(((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
                const int8_t q2 = static_cast<int8_t>(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
                const int8_t q3 = static_cast<int8_t>(((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
                const int8_t q4 = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
                y[l + 0] = d * sc[is + 0] * q1;
                y[l + 32] = d * sc[is + 2] * q2;
                y[l + 64] = d * sc[is + 4] * q3;
                y[l + 96] = d * sc[is + 6] * q4;
            }
            y += 128;
            ql += 64;
            qh += 32;
            sc += 8;
        }
    }
}

//========================= Q8_K

void quantize_row_q8_K(const float *x, block_q8_K *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const auto [max, amax] = max_by_magnitude(x, QK_K);
        if (!amax) {
            // ggml leaves bsums unwritten here; we zero them so output bytes are deterministic.
            std::memset(&y[i], 0, sizeof(block_q8_K));
            x += QK_K;
            continue;
        }
        const float iscale = -127.f / max;
        for (int j = 0; j < QK_K; ++j) {
            const int v = nearest_int(iscale * x[j]);
            y[i].qs[j] = static_cast<int8_t>(imin(127, v));
        }
        for (int j = 0; j < QK_K / 16; ++j) {
            int sum = 0;
            for (int ii = 0; ii < 16; ++ii) sum += y[i].qs[j * 16 + ii];
            y[i].bsums[j] = static_cast<int16_t>(sum);
        }
        y[i].d = 1 / iscale;
        x += QK_K;
    }
}

void dequantize_row_q8_K(const block_q8_K *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++)
        for (int j = 0; j < QK_K; ++j) *y++ = x[i].d * x[i].qs[j];
}

} // namespace rf::quant
