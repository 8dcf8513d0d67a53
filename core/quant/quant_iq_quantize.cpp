// Quantizers of IQ4_NL, IQ4_XS, TQ1_0 and TQ2_0, step for step as ggml: same searches, same
// float operations in the same order, so the bytes equal ggml's. IQ4_NL / IQ4_XS: quantize_iq4_nl
// / quantize_iq4_xs, the functions llama-quantize (ggml_quantize_chunk) runs, with their 15-step
// scale search and optional importance weights; ggml's quantize_row_iq4_nl_ref alone does a
// single pass. TQ1_0, TQ2_0: quantize_row_*_ref (ggml ignores importance weights for them).
// The grid i-quants are in quant_iq1/iq2/iq3_quantize.cpp.
#include <cmath>
#include <cstring>

#include "quant_internal.h"
#include "rocmforge/iq_grids.h"

namespace rf::quant {

using rf::iq::kValuesIq4nl;

namespace {

// Index of the table value nearest to x (values ascending; the lower one on ties, as ggml's
// best_index_int8).
int best_index_int8(int n, const int8_t *val, float x) {
    if (x <= val[0]) return 0;
    if (x >= val[n - 1]) return n - 1;
    int ml = 0, mu = n - 1;
    while (mu - ml > 1) {
        const int mav = (ml + mu) / 2;
        if (x < val[mav]) mu = mav;
        else ml = mav;
    }
    return x - val[mu - 1] < val[mu] - x ? mu - 1 : mu;
}

// ggml's quantize_row_iq4_nl_impl with ntry = 7 as quantize_iq4_nl and quantize_iq4_xs pass it:
// weights importance * sqrt(sigma2 + x^2), or x^2 without importance (quant_weights null).
void iq4_impl(int super_block_size, const float *x, uint16_t *dh, uint8_t *q4, uint16_t *scales_h,
              uint8_t *scales_l, float *scales, float *weight, uint8_t *L, const float *quant_weights,
              int ntry) {
    constexpr int block_size = 32;
    const int8_t *values = kValuesIq4nl;
    float sigma2 = 0;
    for (int j = 0; j < super_block_size; ++j) sigma2 += x[j] * x[j];
    sigma2 *= 2.f / float(super_block_size);
    std::memset(q4, 0, size_t(super_block_size / 2));
    dh[0] = float_to_half(0.f);

    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < super_block_size / block_size; ++ib) {
        const float *xb = x + ib * block_size;
        uint8_t *Lb = L + ib * block_size;
        if (quant_weights) {
            const float *qw = quant_weights + ib * block_size;
            for (int j = 0; j < block_size; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + xb[j] * xb[j]);
        } else {
            for (int j = 0; j < block_size; ++j) weight[j] = xb[j] * xb[j];
        }
        float amax = 0, max = 0;
        for (int j = 0; j < block_size; ++j) {
            const float ax = std::fabs(xb[j]);
            if (ax > amax) {
                amax = ax;
                max = xb[j];
            }
        }
        if (amax < GROUP_MAX_EPS) {
            scales[ib] = 0;
            continue;
        }
        float d = ntry > 0 ? -max / values[0] : max / values[0];
        float id = 1 / d;
        float sumqx = 0, sumq2 = 0;
        for (int j = 0; j < block_size; ++j) {
            const float al = id * xb[j];
            const int l = best_index_int8(16, values, al);
            Lb[j] = uint8_t(l);
            const float q = values[l];
            const float w = weight[j];
            sumqx += w * q * xb[j];
            sumq2 += w * q * q;
        }
        d = sumqx / sumq2;
        float best = d * sumqx;
        for (int itry = -ntry; itry <= ntry; ++itry) {
            id = (float(itry) + values[0]) / max;
            sumqx = sumq2 = 0;
            for (int j = 0; j < block_size; ++j) {
                const float al = id * xb[j];
                const int l = best_index_int8(16, values, al);
                const float q = values[l];
                const float w = weight[j];
                sumqx += w * q * xb[j];
                sumq2 += w * q * q;
            }
            if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                d = sumqx / sumq2;
                best = d * sumqx;
            }
        }
        scales[ib] = d;
        const float abs_d = std::fabs(d);
        if (abs_d > amax_scale) {
            amax_scale = abs_d;
            max_scale = d;
        }
    }

    if (super_block_size / block_size > 1) {
        const int nb = super_block_size / block_size;
        std::memset(scales_h, 0, size_t((nb + 7) / 8) * sizeof(uint16_t));
        const float d = -max_scale / 32;
        dh[0] = float_to_half(d);
        const float id = d != 0.f ? 1 / d : 0.f;
        for (int ib = 0; ib < nb; ++ib) {
            int l = nearest_int(id * scales[ib]);
            l = l < -32 ? -32 : l > 31 ? 31 : l;
            const float dl = d * float(l);
            const float idl = dl != 0.f ? 1 / dl : 0.f;
            uint8_t *Lb = L + ib * block_size;
            const float *xb = x + ib * block_size;
            for (int j = 0; j < block_size; ++j) Lb[j] = uint8_t(best_index_int8(16, values, idl * xb[j]));
            l += 32;
            const uint8_t l_l = uint8_t(l & 0xf), l_h = uint8_t(l >> 4);
            if (ib % 2 == 0) scales_l[ib / 2] = l_l;
            else scales_l[ib / 2] |= uint8_t(l_l << 4);
            scales_h[ib / 8] = uint16_t(scales_h[ib / 8] | (l_h << 2 * (ib % 8)));
        }
    } else {
        dh[0] = float_to_half(scales[0]);
        if (ntry > 0) {
            const float id = scales[0] != 0.f ? 1 / scales[0] : 0;
            for (int j = 0; j < super_block_size; ++j) L[j] = uint8_t(best_index_int8(16, values, id * x[j]));
        }
    }

    for (int i = 0; i < super_block_size / 32; ++i)
        for (int j = 0; j < 16; ++j) q4[16 * i + j] = uint8_t(L[32 * i + j] | (L[32 * i + 16 + j] << 4));
}

// ggml's lroundf(v) + 1 for v in [-1, 1]: the trit 0, 1, 2 of -1, 0, 1.
inline int trit_of(float v) { return int(std::lround(v)) + 1; }

} // namespace

void quantize_row_iq4_nl(const float *x, block_iq4_nl *y, int64_t k, const float *quant_weights) {
    const int64_t nblock = k / QK4_NL;
    uint8_t L[QK4_NL] = {};
    float weight[QK4_NL];
    uint16_t unused_h;
    float scale;
    for (int64_t ibl = 0; ibl < nblock; ++ibl)
        iq4_impl(QK4_NL, x + QK4_NL * ibl, &y[ibl].d, y[ibl].qs, &unused_h, nullptr, &scale, weight, L,
                 quant_weights ? quant_weights + QK4_NL * ibl : nullptr, 7);
}

void quantize_row_iq4_xs(const float *x, block_iq4_xs *y, int64_t k, const float *quant_weights) {
    const int64_t nblock = k / QK_K;
    uint8_t L[QK_K] = {};
    float weight[32];
    float scales[QK_K / 32];
    for (int64_t ibl = 0; ibl < nblock; ++ibl) {
        // The block's u16 scales_h may be unaligned inside a packed row: work on a copy.
        uint16_t scales_h;
        iq4_impl(QK_K, x + QK_K * ibl, &y[ibl].d, y[ibl].qs, &scales_h, y[ibl].scales_l, scales, weight, L,
                 quant_weights ? quant_weights + QK_K * ibl : nullptr, 7);
        std::memcpy(&y[ibl].scales_h, &scales_h, sizeof scales_h);
    }
}

void quantize_row_tq1_0(const float *x, block_tq1_0 *y, int64_t k) {
    const int64_t nb = k / QK_K;
    constexpr int kQs = sizeof(y->qs), kHead = kQs - kQs % 32, kQh = sizeof(y->qh);
    for (int64_t i = 0; i < nb; i++) {
        float amax = 0.0f;
        for (int j = 0; j < QK_K; j++) amax = amax > std::fabs(x[j]) ? amax : std::fabs(x[j]); // ggml's MAX
        const float d = amax;
        const float id = d != 0.f ? 1.0f / d : 0.0f;
        y[i].d = float_to_half(d);
        // 5 elements per byte, along 32 bytes, then along 16; the base-3 number t becomes the
        // fixed-point fraction ceil(t * 256 / 243) so the decoder reads trits by multiplying.
        for (int j = 0; j < kHead; j += 32) {
            for (int m = 0; m < 32; ++m) {
                uint8_t q = 0;
                for (int n = 0; n < 5; ++n) q = uint8_t(q * 3 + trit_of(x[m + n * 32] * id));
                y[i].qs[j + m] = uint8_t((uint16_t(q) * 256 + (243 - 1)) / 243);
            }
            x += 5 * 32;
        }
        for (int j = kHead; j < kQs; j += 16) {
            for (int m = 0; m < 16; ++m) {
                uint8_t q = 0;
                for (int n = 0; n < 5; ++n) q = uint8_t(q * 3 + trit_of(x[m + n * 16] * id));
                y[i].qs[j + m] = uint8_t((uint16_t(q) * 256 + (243 - 1)) / 243);
            }
            x += 5 * 16;
        }
        // 4 elements per byte, the first in the most significant trit.
        for (int j = 0; j < kQh; ++j) {
            uint8_t q = 0;
            for (int m = 0; m < 4; ++m) q = uint8_t(q * 3 + trit_of(x[j + m * kQh] * id));
            q = uint8_t(q * 3);
            y[i].qh[j] = uint8_t((uint16_t(q) * 256 + (243 - 1)) / 243);
        }
        x += 4 * kQh;
    }
}

void quantize_row_tq2_0(const float *x, block_tq2_0 *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        float amax = 0.0f;
        for (int j = 0; j < QK_K; j++) amax = amax > std::fabs(x[j]) ? amax : std::fabs(x[j]); // ggml's MAX
        const float d = amax;
        const float id = d != 0.f ? 1.0f / d : 0.0f;
        y[i].d = float_to_half(d);
        for (int j = 0; j < int(sizeof(y->qs)); j += 32) {
            for (int m = 0; m < 32; ++m) {
                uint8_t q = 0;
                for (int n = 0; n < 4; ++n) q = uint8_t(q + ((trit_of(x[m + n * 32] * id) & 3) << (2 * n)));
                y[i].qs[j + m] = q;
            }
            x += 4 * 32;
        }
    }
}

} // namespace rf::quant
