// The importance-weighted k-quant and legacy quantizers, step for step as ggml's
// quantize_row_{q2_K,q3_K,q4_K,q5_K,q6_K,q4_0,q4_1,q5_0,q5_1}_impl: weights
// importance * sqrt(sigma2 + x^2) (Q6_K: the importance alone, as ggml), the sub-block scales
// and mins quantized by weighted searches (make_qp_quants / make_qx_quants) instead of the
// reference quantizers' max scaling. ggml uses them only with an importance matrix.
#include <cstring>

#include "quant_internal.h"

namespace rf::quant {
namespace {

inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

inline float super_block_sigma2(const float *x, float factor) {
    float sum_x2 = 0;
    for (int l = 0; l < QK_K; ++l) sum_x2 += x[l] * x[l];
    return factor * sum_x2 / QK_K;
}

// Q4_K / Q5_K's 6-bit scale and min of sub-block j (ggml's get_scale_min_k4).
inline void get_scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
    if (j < 4) {
        *d = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *d = uint8_t((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = uint8_t((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
    }
}

inline void pack_scales_k4(const uint8_t *Ls, const uint8_t *Lm, uint8_t *scales) {
    for (int j = 0; j < QK_K / 32; ++j) {
        const uint8_t ls = Ls[j] < 63 ? Ls[j] : 63, lm = Lm[j] < 63 ? Lm[j] : 63;
        if (j < 4) {
            scales[j] = ls;
            scales[j + 4] = lm;
        } else {
            scales[j + 4] = uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
            scales[j - 4] = uint8_t(scales[j - 4] | ((ls >> 4) << 6));
            scales[j - 0] = uint8_t(scales[j - 0] | ((lm >> 4) << 6));
        }
    }
}

// The shared part of Q4_K and Q5_K: per 32 elements a make_qkx3_quants search, then the
// scales and mins themselves quantized against the sub-blocks' weight sums; L gets the
// levels requantized with the stored scales.
void k45_impl(const float *x, const float *qw, int nmax, uint16_t *d_out, uint16_t *dmin_out, uint8_t *scales_out,
              uint8_t *L) {
    uint8_t Laux[32], Ls[QK_K / 32], Lm[QK_K / 32];
    float weights[32], sw[QK_K / 32], mins[QK_K / 32], scales[QK_K / 32];
    const float sigma2 = super_block_sigma2(x, 2);
    for (int j = 0; j < QK_K / 32; ++j) {
        for (int l = 0; l < 32; ++l) weights[l] = qw[32 * j + l] * std::sqrt(sigma2 + x[32 * j + l] * x[32 * j + l]);
        float sumw = 0;
        for (int l = 0; l < 32; ++l) sumw += weights[l];
        sw[j] = sumw;
        scales[j] = make_qkx3_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, -0.9f, 0.05f, 36, false);
    }
    const float d_block = make_qp_quants(QK_K / 32, 63, scales, Ls, sw);
    const float m_block = make_qp_quants(QK_K / 32, 63, mins, Lm, sw);
    pack_scales_k4(Ls, Lm, scales_out);
    *d_out = float_to_half(d_block);
    *dmin_out = float_to_half(m_block);
    for (int j = 0; j < QK_K / 32; ++j) {
        uint8_t sc, m;
        get_scale_min_k4(j, scales_out, &sc, &m);
        const float d = half_to_float(*d_out) * sc;
        if (!(d != 0)) continue;
        const float dm = half_to_float(*dmin_out) * m;
        for (int ii = 0; ii < 32; ++ii) L[32 * j + ii] = uint8_t(clampi(nearest_int((x[32 * j + ii] + dm) / d), 0, nmax));
    }
}

inline float row_sigma2(const float *x, int64_t n) {
    float sum_x2 = 0;
    for (int64_t j = 0; j < n; ++j) sum_x2 += x[j] * x[j];
    return sum_x2 / float(n);
}

} // namespace

void quantize_row_q2_K_w(const float *x, block_q2_K *y, int64_t k, const float *quant_weights) {
    const int64_t nb = k / QK_K;
    uint8_t L[QK_K], Laux[16], Ls[QK_K / 16], Lm[QK_K / 16];
    float mins[QK_K / 16], scales[QK_K / 16], sw[QK_K / 16], weight[16];
    for (int64_t i = 0; i < nb; i++) {
        std::memset(sw, 0, sizeof sw);
        const float sigma2 = super_block_sigma2(x, 1);
        for (int j = 0; j < QK_K / 16; ++j) {
            const float *qw = quant_weights + QK_K * i + 16 * j;
            for (int l = 0; l < 16; ++l) weight[l] = qw[l] * std::sqrt(sigma2 + x[16 * j + l] * x[16 * j + l]);
            for (int l = 0; l < QK_K / 16; ++l) sw[j] += weight[l];
            scales[j] = make_qkx3_quants(16, 3, x + 16 * j, weight, L + 16 * j, &mins[j], Laux, -0.9f, 0.05f, 36, false);
        }
        const float dm0 = make_qp_quants(QK_K / 16, 15, scales, Ls, sw);
        const float mm0 = make_qp_quants(QK_K / 16, 15, mins, Lm, sw);
        y[i].d = float_to_half(dm0);
        y[i].dmin = float_to_half(mm0);
        const float dm = half_to_float(y[i].d), mm = half_to_float(y[i].dmin);
        for (int j = 0; j < QK_K / 16; ++j) y[i].scales[j] = uint8_t(Ls[j] | (Lm[j] << 4));
        for (int j = 0; j < QK_K / 16; ++j) { // ggml's requantize step
            const float d = dm * (y[i].scales[j] & 0xF);
            if (!(d != 0)) continue;
            const float m = mm * (y[i].scales[j] >> 4);
            for (int ii = 0; ii < 16; ++ii) L[16 * j + ii] = uint8_t(clampi(nearest_int((x[16 * j + ii] + m) / d), 0, 3));
        }
        for (int j = 0; j < QK_K; j += 128)
            for (int l = 0; l < 32; ++l)
                y[i].qs[j / 4 + l] = uint8_t(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
        x += QK_K;
    }
}

void quantize_row_q3_K_w(const float *x, block_q3_K *y, int64_t k, const float *quant_weights) {
    const int64_t nb = k / QK_K;
    int8_t L[QK_K], Ls[QK_K / 16];
    float scales[QK_K / 16], weight[16], sw[QK_K / 16];
    for (int64_t i = 0; i < nb; i++) {
        const float sigma2 = super_block_sigma2(x, 2);
        for (int j = 0; j < QK_K / 16; ++j) {
            const float *qw = quant_weights + QK_K * i + 16 * j;
            for (int l = 0; l < 16; ++l) weight[l] = qw[l] * std::sqrt(sigma2 + x[16 * j + l] * x[16 * j + l]);
            float sumw = 0;
            for (int l = 0; l < 16; ++l) sumw += weight[l];
            sw[j] = sumw;
            scales[j] = make_qx_quants(16, 4, x + 16 * j, L + 16 * j, 1, weight);
        }
        std::memset(y[i].scales, 0, 12);
        const float d_block = make_qx_quants(QK_K / 16, 32, scales, Ls, 1, sw);
        for (int j = 0; j < QK_K / 16; ++j) {
            int l = Ls[j];
            if (j < 8) y[i].scales[j] = uint8_t(l & 0xF);
            else y[i].scales[j - 8] = uint8_t(y[i].scales[j - 8] | ((l & 0xF) << 4));
            l >>= 4;
            y[i].scales[j % 4 + 8] = uint8_t(y[i].scales[j % 4 + 8] | (l << (2 * (j / 4))));
        }
        y[i].d = float_to_half(d_block);
        for (int j = 0; j < QK_K / 16; ++j) {
            int8_t sc = int8_t(j < 8 ? y[i].scales[j] & 0xF : y[i].scales[j - 8] >> 4);
            sc = int8_t((sc | (((y[i].scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32);
            const float d = half_to_float(y[i].d) * sc;
            if (!(d != 0)) continue;
            for (int ii = 0; ii < 16; ++ii) L[16 * j + ii] = int8_t(clampi(nearest_int(x[16 * j + ii] / d), -4, 3) + 4);
        }
        std::memset(y[i].hmask, 0, QK_K / 8);
        int m = 0;
        uint8_t hm = 1;
        for (int j = 0; j < QK_K; ++j) { // the high bit of the first 8 elements in bit 0, ...
            if (L[j] > 3) {
                y[i].hmask[m] = uint8_t(y[i].hmask[m] | hm);
                L[j] = int8_t(L[j] - 4);
            }
            if (++m == QK_K / 8) {
                m = 0;
                hm = uint8_t(hm << 1);
            }
        }
        for (int j = 0; j < QK_K; j += 128)
            for (int l = 0; l < 32; ++l)
                y[i].qs[j / 4 + l] = uint8_t(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
        x += QK_K;
    }
}

void quantize_row_q4_K_w(const float *x, block_q4_K *y, int64_t k, const float *quant_weights) {
    const int64_t nb = k / QK_K;
    uint8_t L[QK_K];
    for (int64_t i = 0; i < nb; i++) {
        k45_impl(x, quant_weights + QK_K * i, 15, &y[i].d, &y[i].dmin, y[i].scales, L);
        uint8_t *q = y[i].qs;
        for (int j = 0; j < QK_K; j += 64) {
            for (int l = 0; l < 32; ++l) q[l] = uint8_t(L[j + l] | (L[j + l + 32] << 4));
            q += 32;
        }
        x += QK_K;
    }
}

void quantize_row_q5_K_w(const float *x, block_q5_K *y, int64_t k, const float *quant_weights) {
    const int64_t nb = k / QK_K;
    uint8_t L[QK_K];
    for (int64_t i = 0; i < nb; i++) {
        k45_impl(x, quant_weights + QK_K * i, 31, &y[i].d, &y[i].dmin, y[i].scales, L);
        uint8_t *qh = y[i].qh, *ql = y[i].qs;
        std::memset(qh, 0, QK_K / 8);
        uint8_t m1 = 1, m2 = 2;
        for (int n = 0; n < QK_K; n += 64) {
            for (int j = 0; j < 32; ++j) {
                int l1 = L[n + j], l2 = L[n + j + 32];
                if (l1 > 15) {
                    l1 -= 16;
                    qh[j] = uint8_t(qh[j] | m1);
                }
                if (l2 > 15) {
                    l2 -= 16;
                    qh[j] = uint8_t(qh[j] | m2);
                }
                ql[j] = uint8_t(l1 | (l2 << 4));
            }
            m1 = uint8_t(m1 << 2);
            m2 = uint8_t(m2 << 2);
            ql += 32;
        }
        x += QK_K;
    }
}

// quant_weights null: no importance (quantize_row_q6_K, ggml's reference quantizer).
void quantize_row_q6_K_w(const float *x, block_q6_K *y, int64_t k, const float *quant_weights) {
    const int64_t nb = k / QK_K;
    int8_t L[QK_K];
    float scales[QK_K / 16];
    for (int64_t i = 0; i < nb; i++) {
        float max_scale = 0, max_abs_scale = 0;
        for (int ib = 0; ib < QK_K / 16; ++ib) {
            // ggml passes the importance itself here, without the sigma2 term.
            const float scale = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib, 1, quant_weights ? quant_weights + QK_K * i + 16 * ib : nullptr);
            scales[ib] = scale;
            const float abs_scale = std::fabs(scale);
            if (abs_scale > max_abs_scale) {
                max_abs_scale = abs_scale;
                max_scale = scale;
            }
        }
        if (max_abs_scale < GROUP_MAX_EPS) {
            std::memset(&y[i], 0, sizeof(block_q6_K));
            y[i].d = float_to_half(0.f);
            x += QK_K;
            continue;
        }
        const float iscale = -128.f / max_scale;
        y[i].d = float_to_half(1 / iscale);
        for (int ib = 0; ib < QK_K / 16; ++ib) {
            const int v = nearest_int(iscale * scales[ib]);
            y[i].scales[ib] = int8_t(v < 127 ? v : 127);
        }
        for (int j = 0; j < QK_K / 16; ++j) {
            const float d = half_to_float(y[i].d) * y[i].scales[j];
            if (!(d != 0)) continue;
            for (int ii = 0; ii < 16; ++ii) L[16 * j + ii] = int8_t(clampi(nearest_int(x[16 * j + ii] / d), -32, 31) + 32);
        }
        uint8_t *ql = y[i].ql, *qh = y[i].qh;
        for (int j = 0; j < QK_K; j += 128) {
            for (int l = 0; l < 32; ++l) {
                const uint8_t q1 = L[j + l + 0] & 0xF, q2 = L[j + l + 32] & 0xF;
                const uint8_t q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
                ql[l + 0] = uint8_t(q1 | (q3 << 4));
                ql[l + 32] = uint8_t(q2 | (q4 << 4));
                qh[l] = uint8_t((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) |
                                ((L[j + l + 96] >> 4) << 6));
            }
            ql += 64;
            qh += 32;
        }
        x += QK_K;
    }
}

// The legacy formats' sigma2 is over the whole row (ggml's n_per_row), not per block.
void quantize_row_q4_0_w(const float *x, block_q4_0 *y, int64_t k, const float *quant_weights) {
    float weight[QK4_0];
    int8_t L[QK4_0];
    const float sigma2 = row_sigma2(x, k);
    for (int64_t ib = 0; ib < k / QK4_0; ++ib) {
        const float *xb = x + QK4_0 * ib, *qw = quant_weights + QK4_0 * ib;
        for (int j = 0; j < QK4_0; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + xb[j] * xb[j]);
        const float d = make_qx_quants(QK4_0, 8, xb, L, 1, weight);
        y[ib].d = float_to_half(d);
        for (int j = 0; j < 16; ++j) y[ib].qs[j] = uint8_t(L[j] | (L[j + 16] << 4));
    }
}

void quantize_row_q4_1_w(const float *x, block_q4_1 *y, int64_t k, const float *quant_weights) {
    float weight[QK4_1];
    uint8_t L[QK4_1], Laux[QK4_1];
    const float sigma2 = row_sigma2(x, k);
    for (int64_t ib = 0; ib < k / QK4_1; ++ib) {
        const float *xb = x + QK4_1 * ib, *qw = quant_weights + QK4_1 * ib;
        for (int j = 0; j < QK4_1; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + xb[j] * xb[j]);
        float min;
        const float d = make_qkx3_quants(QK4_1, 15, xb, weight, L, &min, Laux, -0.9f, 0.05f, 36, false);
        y[ib].d = float_to_half(d);
        y[ib].m = float_to_half(-min);
        for (int j = 0; j < 16; ++j) y[ib].qs[j] = uint8_t(L[j] | (L[j + 16] << 4));
    }
}

// Q5_0 / Q5_1: low nibbles in qs, the fifth bits in the 32-bit qh.
template <typename Block, typename Level>
void pack_q5(Block &b, const Level *L) {
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
        const uint8_t xi0 = uint8_t(L[j]), xi1 = uint8_t(L[j + 16]);
        b.qs[j] = uint8_t((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
        qh |= ((xi0 & 0x10u) >> 4) << (j + 0);
        qh |= ((xi1 & 0x10u) >> 4) << (j + QK5_0 / 2);
    }
    std::memcpy(&b.qh, &qh, sizeof qh);
}

void quantize_row_q5_0_w(const float *x, block_q5_0 *y, int64_t k, const float *quant_weights) {
    float weight[QK5_0];
    int8_t L[QK5_0];
    const float sigma2 = row_sigma2(x, k);
    for (int64_t ib = 0; ib < k / QK5_0; ++ib) {
        const float *xb = x + QK5_0 * ib, *qw = quant_weights + QK5_0 * ib;
        for (int j = 0; j < QK5_0; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + xb[j] * xb[j]);
        const float d = make_qx_quants(QK5_0, 16, xb, L, 1, weight);
        y[ib].d = float_to_half(d);
        pack_q5(y[ib], L);
    }
}

void quantize_row_q5_1_w(const float *x, block_q5_1 *y, int64_t k, const float *quant_weights) {
    float weight[QK5_1];
    uint8_t L[QK5_1], Laux[QK5_1];
    const float sigma2 = row_sigma2(x, k);
    for (int64_t ib = 0; ib < k / QK5_1; ++ib) {
        const float *xb = x + QK5_1 * ib, *qw = quant_weights + QK5_1 * ib;
        for (int j = 0; j < QK5_1; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + xb[j] * xb[j]);
        float min;
        const float d = make_qkx3_quants(QK5_1, 31, xb, weight, L, &min, Laux, -0.9f, 0.05f, 36, false);
        y[ib].d = float_to_half(d);
        y[ib].m = float_to_half(-min);
        pack_q5(y[ib], L);
    }
}

} // namespace rf::quant
