// The 2-bit grid quantizers IQ2_XXS, IQ2_XS and IQ2_S, step for step as ggml's
// quantize_row_iq2_{xxs,xs,s}_impl: per group a scan of trial scales, each rounding the
// magnitudes to the nearest lattice point and snapping off-grid points to their best grid
// neighbour, then the scale that maximises the weighted correlation. The float operations are
// ggml's, in ggml's order, so the bytes equal ggml's for the same input and importance.
#include <cstring>

#include "iq_neighbours.h"
#include "quant_internal.h"

namespace rf::quant {
namespace {

constexpr int kMaxQ = 3; // levels 0..2, stored as the odd values 1, 3, 5

inline float block_sigma2(const float *xbl, float factor) {
    float sumx2 = 0;
    for (int i = 0; i < QK_K; ++i) sumx2 += xbl[i] * xbl[i];
    return factor * sumx2 / QK_K;
}

// The scale search IQ2_XS and IQ2_S share (16 elements, 19 trial scales). Fills L and
// returns the scale; is_on_grid flags which halves the best trial found on the grid.
float search16(const IqSearchTable &t, const float *xval, const float *weight, const float *waux,
               float max, int8_t *L) {
    int8_t Laux[16];
    bool is_on_grid[2] = {true, true}, is_on_grid_aux[2];
    float best = 0;
    float scale = max / (2 * kMaxQ - 1);
    for (int is = -9; is <= 9; ++is) {
        const float id = (2 * kMaxQ - 1 + is * 0.1f) / max;
        const float this_scale = 1 / id;
        for (int k = 0; k < 2; ++k)
            is_on_grid_aux[k] = iq_round_to_grid<8, kMaxQ>(t, id, this_scale, xval + 8 * k, waux + 8 * k, Laux + 8 * k);
        float sumqx, sumq2;
        iq_correlate(16, weight, xval, Laux, sumqx, sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            std::memcpy(L, Laux, 16);
            for (int k = 0; k < 2; ++k) is_on_grid[k] = is_on_grid_aux[k];
        }
    }
    const int n_not_ongrid = int(!is_on_grid[0]) + int(!is_on_grid[1]);
    if (n_not_ongrid > 0 && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < 2; ++k) {
            if (is_on_grid[k]) continue;
            iq_round_to_grid<8, kMaxQ>(t, id, scale, xval + 8 * k, waux + 8 * k, L + 8 * k);
        }
        float sumqx, sumq2;
        iq_correlate(16, weight, xval, L, sumqx, sumq2);
        if (sumq2 > 0) scale = sumqx / sumq2;
    }
    return scale;
}

} // namespace

void quantize_row_iq2_xxs(const float *x, block_iq2_xxs *y, int64_t n, const float *quant_weights) {
    const IqSearchTable &t = iq2xxs_table();
    const int64_t nbl = n / QK_K;
    float scales[QK_K / 32], weight[32], xval[32], waux[32];
    int8_t L[32], Laux[32];
    uint8_t block_signs[4];
    uint32_t q2[2 * (QK_K / 32)];

    for (int64_t ibl = 0; ibl < nbl; ++ibl) {
        y[ibl].d = float_to_half(0.f);
        std::memset(q2, 0, sizeof q2);
        float max_scale = 0;
        const float *xbl = x + QK_K * ibl;
        const float sigma2 = block_sigma2(xbl, 1);

        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const float *xb = xbl + 32 * ib;
            const float *qw = quant_weights + QK_K * ibl + 32 * ib;
            for (int i = 0; i < 32; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            for (int i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
            for (int k = 0; k < 4; ++k) block_signs[k] = fold_even_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k);
            float max = xval[0];
            for (int i = 1; i < 32; ++i) max = fmax_ggml(max, xval[i]);
            if (max < GROUP_MAX_EPS) {
                scales[ib] = 0;
                std::memset(L, 0, 32);
                continue;
            }
            float scale = make_qp_quants(32, kMaxQ + 1, xval, reinterpret_cast<uint8_t *>(L), weight);
            const float eff_max = scale * kMaxQ;
            if (eff_max <= 0) {
                scales[ib] = 0;
                std::memset(L, 0, 32);
                continue;
            }
            float best = 0;
            for (int is = -6; is <= 6; ++is) {
                const float id = (2 * kMaxQ - 1 + is * 0.1f) / eff_max;
                const float this_scale = 1 / id;
                for (int k = 0; k < 4; ++k) iq_round_to_grid<8, kMaxQ>(t, id, this_scale, xval + 8 * k, waux + 8 * k, Laux + 8 * k);
                float sumqx, sumq2;
                iq_correlate(32, weight, xval, Laux, sumqx, sumq2);
                if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    std::memcpy(L, Laux, 32);
                }
            }
            if (scale > 0) {
                const float id = 1 / scale;
                for (int k = 0; k < 4; ++k) iq_round_to_grid<8, kMaxQ>(t, id, scale, xval + 8 * k, waux + 8 * k, L + 8 * k);
                float sumqx, sumq2;
                iq_correlate(32, weight, xval, L, sumqx, sumq2);
                if (sumq2 > 0) scale = sumqx / sumq2;
            }
            if (scale < 0) { // never for finite input (xval >= 0); ggml keeps the scale unsigned
                scale = -scale;
                for (int k = 0; k < 4; ++k) block_signs[k] = uint8_t(~block_signs[k] & 127);
            }
            for (int k = 0; k < 4; ++k) {
                const int grid_index = grid_position(t, L + 8 * k, 8, 2);
                q2[2 * ib + 0] |= uint32_t(grid_index) << (8 * k);
                q2[2 * ib + 1] |= uint32_t(block_signs[k]) << (7 * k);
            }
            scales[ib] = scale;
            max_scale = fmax_ggml(max_scale, scale);
        }

        if (!(max_scale != 0)) {
            std::memset(y[ibl].qs, 0, sizeof y[ibl].qs);
            continue;
        }
        const float d = max_scale / 31;
        y[ibl].d = float_to_half(d);
        const float id = 1 / d;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            int l = nearest_int(0.5f * (id * scales[ib] - 1));
            l = l < 0 ? 0 : l > 15 ? 15 : l;
            q2[2 * ib + 1] |= uint32_t(l) << 28;
        }
        std::memcpy(y[ibl].qs, q2, sizeof q2);
    }
}

void quantize_row_iq2_xs(const float *x, block_iq2_xs *y, int64_t n, const float *quant_weights) {
    const IqSearchTable &t = iq2xs_table();
    const int64_t nbl = n / QK_K;
    float scales[QK_K / 16], weight[16], xval[16], waux[16];
    int8_t L[16];
    uint8_t block_signs[2];
    uint16_t q2[2 * (QK_K / 16)];

    for (int64_t ibl = 0; ibl < nbl; ++ibl) {
        y[ibl].d = float_to_half(0.f);
        std::memset(q2, 0, sizeof q2);
        std::memset(y[ibl].scales, 0, sizeof y[ibl].scales);
        float max_scale = 0;
        const float *xbl = x + QK_K * ibl;
        const float sigma2 = block_sigma2(xbl, 1);

        for (int ib = 0; ib < QK_K / 16; ++ib) {
            const float *xb = xbl + 16 * ib;
            const float *qw = quant_weights + QK_K * ibl + 16 * ib;
            for (int i = 0; i < 16; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            for (int i = 0; i < 16; ++i) waux[i] = std::sqrt(weight[i]);
            for (int k = 0; k < 2; ++k) block_signs[k] = fold_even_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k);
            float max = xval[0];
            for (int i = 1; i < 16; ++i) max = fmax_ggml(max, xval[i]);
            std::memset(L, 0, 16);
            if (max < GROUP_MAX_EPS) {
                scales[ib] = 0;
                continue;
            }
            float scale = search16(t, xval, weight, waux, max, L);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < 2; ++k) block_signs[k] = uint8_t(~block_signs[k] & 127);
            }
            for (int k = 0; k < 2; ++k)
                q2[2 * ib + k] = uint16_t(grid_position(t, L + 8 * k, 8, 2) | (block_signs[k] << 9));
            scales[ib] = scale;
            max_scale = fmax_ggml(max_scale, scale);
        }

        if (!(max_scale != 0)) {
            std::memset(y[ibl].qs, 0, sizeof y[ibl].qs);
            continue;
        }
        const float d = max_scale / 31;
        y[ibl].d = float_to_half(d);
        const float id = 1 / d;
        for (int ib = 0; ib < QK_K / 16; ++ib) {
            int l = nearest_int(0.5f * (id * scales[ib] - 1));
            l = l < 0 ? 0 : l > 15 ? 15 : l;
            if (ib % 2 == 0) y[ibl].scales[ib / 2] = uint8_t(l);
            else y[ibl].scales[ib / 2] = uint8_t(y[ibl].scales[ib / 2] | (l << 4));
        }
        std::memcpy(y[ibl].qs, q2, sizeof q2);
    }
}

void quantize_row_iq2_s(const float *x, block_iq2_s *y, int64_t n, const float *quant_weights) {
    const IqSearchTable &t = iq2s_table();
    const int64_t nbl = n / QK_K;
    float scales[QK_K / 16], weight[16], xval[16], waux[16];
    // Not reset per group, as in ggml: a group whose weights are all zero keeps the previous
    // group's levels (ggml starts a row with whatever the stack holds; here zeros).
    int8_t L[16] = {};
    uint8_t block_signs[2];

    for (int64_t ibl = 0; ibl < nbl; ++ibl) {
        std::memset(&y[ibl], 0, sizeof(block_iq2_s));
        y[ibl].d = float_to_half(0.f);
        float max_scale = 0;
        const float *xbl = x + QK_K * ibl;
        const float sigma2 = block_sigma2(xbl, 2);

        for (int ib = 0; ib < QK_K / 16; ++ib) {
            const float *xb = xbl + 16 * ib;
            if (quant_weights) {
                const float *qw = quant_weights + QK_K * ibl + 16 * ib;
                for (int i = 0; i < 16; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            } else {
                for (int i = 0; i < 16; ++i) weight[i] = 0.25f * sigma2 + xb[i] * xb[i];
            }
            for (int i = 0; i < 16; ++i) waux[i] = std::sqrt(weight[i]);
            // IQ2_S stores all 8 sign bits: no even-sign folding.
            for (int k = 0; k < 2; ++k) {
                uint8_t s = 0;
                for (int i = 0; i < 8; ++i) {
                    const float v = xb[8 * k + i];
                    xval[8 * k + i] = v >= 0 ? v : -v;
                    if (!(v >= 0)) s = uint8_t(s | (1 << i));
                }
                block_signs[k] = s;
            }
            float max = xval[0];
            for (int i = 1; i < 16; ++i) max = fmax_ggml(max, xval[i]);
            if (max < GROUP_MAX_EPS_IQ2_S) {
                scales[ib] = 0;
                continue;
            }
            float scale = search16(t, xval, weight, waux, max, L);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < 2; ++k) block_signs[k] = uint8_t(~block_signs[k]);
            }
            for (int k = 0; k < 2; ++k) {
                const int grid_index = grid_position(t, L + 8 * k, 8, 2);
                const int i8 = 2 * ib + k;
                y[ibl].qs[i8] = uint8_t(grid_index & 255);
                y[ibl].qh[i8 / 4] = uint8_t(y[ibl].qh[i8 / 4] | ((grid_index >> 8) << (2 * (i8 % 4))));
                y[ibl].qs[QK_K / 8 + i8] = block_signs[k];
            }
            scales[ib] = scale;
            max_scale = fmax_ggml(max_scale, scale);
        }

        if (!(max_scale != 0)) continue;
        const float d = max_scale / 31;
        y[ibl].d = float_to_half(d * 0.9875f);
        const float id = 1 / d;
        for (int ib = 0; ib < QK_K / 16; ++ib) {
            int l = nearest_int(0.5f * (id * scales[ib] - 1));
            l = l < 0 ? 0 : l > 15 ? 15 : l;
            if (ib % 2 == 0) y[ibl].scales[ib / 2] = uint8_t(l);
            else y[ibl].scales[ib / 2] = uint8_t(y[ibl].scales[ib / 2] | (l << 4));
        }
    }
}

} // namespace rf::quant
