// The 3-bit grid quantizers IQ3_XXS and IQ3_S, step for step as ggml's
// quantize_row_iq3_xxs_impl and quantize_row_iq3_s_impl: 4-element lattice points with levels
// 0..7 (stored as the odd values 1..15), a scan of trial scales per 32 elements, off-grid
// points snapped to their best neighbour. Same float operations in the same order as ggml, so
// the same bytes; without an importance matrix the weights are x^2, as in ggml.
#include <cstring>

#include "iq_neighbours.h"
#include "quant_internal.h"

namespace rf::quant {
namespace {

constexpr int kMaxQ = 8;

// Weights of 32 elements: importance * sqrt(sigma2 + x^2), or x^2 without an importance matrix.
inline void group_weights(const float *xb, const float *qw, float sigma2, float *weight, float *waux) {
    if (qw) {
        for (int i = 0; i < 32; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
    } else {
        for (int i = 0; i < 32; ++i) weight[i] = xb[i] * xb[i];
    }
    for (int i = 0; i < 32; ++i) waux[i] = std::sqrt(weight[i]);
}

inline float block_sigma2(const float *xbl) {
    float sumx2 = 0;
    for (int i = 0; i < QK_K; ++i) sumx2 += xbl[i] * xbl[i];
    return 2 * sumx2 / QK_K;
}

// The trial-scale scan shared by both formats (ntry trials either side, step 0.2); returns
// the scale and leaves the chosen levels in L. `refine_all`: IQ3_S re-rounds every 4-group
// after the scan, IQ3_XXS only the groups the best trial had off the grid.
float search32(const IqSearchTable &t, const float *xval, const float *weight, const float *waux,
               float max, int ntry, bool on_grid_start, bool refine_all, int8_t *L) {
    int8_t Laux[32];
    bool is_on_grid[8], is_on_grid_aux[8];
    for (int k = 0; k < 8; ++k) is_on_grid[k] = on_grid_start;
    float best = 0;
    float scale = max / (2 * kMaxQ - 1);
    for (int is = -ntry; is <= ntry; ++is) {
        const float id = (2 * kMaxQ - 1 + is * 0.2f) / max;
        const float this_scale = 1 / id;
        for (int k = 0; k < 8; ++k)
            is_on_grid_aux[k] = iq_round_to_grid<4, kMaxQ>(t, id, this_scale, xval + 4 * k, waux + 4 * k, Laux + 4 * k);
        float sumqx, sumq2;
        iq_correlate(32, weight, xval, Laux, sumqx, sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            std::memcpy(L, Laux, 32);
            for (int k = 0; k < 8; ++k) is_on_grid[k] = is_on_grid_aux[k];
        }
    }
    int n_not_ongrid = 0;
    for (int k = 0; k < 8; ++k) n_not_ongrid += !is_on_grid[k];
    if (n_not_ongrid > 0 && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < 8; ++k) {
            if (!refine_all && is_on_grid[k]) continue;
            iq_round_to_grid<4, kMaxQ>(t, id, scale, xval + 4 * k, waux + 4 * k, L + 4 * k);
        }
        float sumqx, sumq2;
        iq_correlate(32, weight, xval, L, sumqx, sumq2);
        if (sumq2 > 0) scale = sumqx / sumq2;
    }
    return scale;
}

inline int scale_nibble(float id, float scale) {
    const int l = nearest_int(0.5f * (id * scale - 1));
    return l < 0 ? 0 : l > 15 ? 15 : l;
}

} // namespace

void quantize_row_iq3_xxs(const float *x, block_iq3_xxs *y, int64_t n, const float *quant_weights) {
    const IqSearchTable &t = iq3xxs_table();
    const int64_t nbl = n / QK_K;
    float scales[QK_K / 32], weight[32], xval[32], waux[32];
    int8_t L[32];
    uint8_t block_signs[4];
    uint8_t q3[3 * (QK_K / 8)]; // 64 grid indices, then per 32 elements a u32 of signs + scale
    uint32_t scales_and_signs[QK_K / 32];

    for (int64_t ibl = 0; ibl < nbl; ++ibl) {
        y[ibl].d = float_to_half(0.f);
        std::memset(q3, 0, sizeof q3);
        std::memset(scales_and_signs, 0, sizeof scales_and_signs);
        float max_scale = 0;
        const float *xbl = x + QK_K * ibl;
        const float sigma2 = block_sigma2(xbl);

        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const float *xb = xbl + 32 * ib;
            group_weights(xb, quant_weights ? quant_weights + QK_K * ibl + 32 * ib : nullptr, sigma2, weight, waux);
            for (int k = 0; k < 4; ++k) block_signs[k] = fold_even_signs(xb + 8 * k, weight + 8 * k, xval + 8 * k);
            float max = xval[0];
            for (int i = 1; i < 32; ++i) max = fmax_ggml(max, xval[i]);
            std::memset(L, 0, 32);
            if (max < GROUP_MAX_EPS_IQ3_XXS) {
                scales[ib] = 0;
                continue;
            }
            float scale = search32(t, xval, weight, waux, max, 15, true, false, L);
            if (scale < 0) { // never for finite input; ggml flips the first four sign bytes
                scale = -scale;
                for (int k = 0; k < 4; ++k) block_signs[k] = uint8_t(~block_signs[k] & 127);
            }
            for (int k = 0; k < 8; ++k) q3[8 * ib + k] = uint8_t(grid_position(t, L + 4 * k, 4, 3));
            scales_and_signs[ib] = uint32_t(block_signs[0]) | uint32_t(block_signs[1]) << 7 |
                                   uint32_t(block_signs[2]) << 14 | uint32_t(block_signs[3]) << 21;
            scales[ib] = scale;
            max_scale = fmax_ggml(max_scale, scale);
        }

        if (!(max_scale != 0)) {
            std::memset(y[ibl].qs, 0, sizeof y[ibl].qs);
            continue;
        }
        const float d = max_scale / 31;
        y[ibl].d = float_to_half(d * 1.0125f); // ggml's fudge factor
        const float id = 1 / d;
        for (int ib = 0; ib < QK_K / 32; ++ib) scales_and_signs[ib] |= uint32_t(scale_nibble(id, scales[ib])) << 28;
        std::memcpy(y[ibl].qs, q3, QK_K / 4);
        std::memcpy(y[ibl].qs + QK_K / 4, scales_and_signs, sizeof scales_and_signs);
    }
}

void quantize_row_iq3_s(const float *x, block_iq3_s *y, int64_t n, const float *quant_weights) {
    const IqSearchTable &t = iq3s_table();
    const int64_t nbl = n / QK_K;
    constexpr int bs4 = 8, bs8 = 4; // 4-groups and sign bytes per 32 elements
    float scales[QK_K / 32], weight[32], xval[32], waux[32];
    int8_t L[32];
    uint8_t block_signs[bs8];

    for (int64_t ibl = 0; ibl < nbl; ++ibl) {
        std::memset(&y[ibl], 0, sizeof(block_iq3_s));
        y[ibl].d = float_to_half(0.f);
        uint8_t *qs = y[ibl].qs;
        uint8_t *qh = y[ibl].qh;
        uint8_t *signs = y[ibl].signs;
        float max_scale = 0;
        const float *xbl = x + QK_K * ibl;
        const float sigma2 = block_sigma2(xbl);

        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const float *xb = xbl + 32 * ib;
            group_weights(xb, quant_weights ? quant_weights + QK_K * ibl + 32 * ib : nullptr, sigma2, weight, waux);
            for (int k = 0; k < bs8; ++k) {
                uint8_t s = 0;
                for (int i = 0; i < 8; ++i) {
                    const float v = xb[8 * k + i];
                    xval[8 * k + i] = v >= 0 ? v : -v;
                    if (!(v >= 0)) s = uint8_t(s | (1 << i));
                }
                block_signs[k] = s;
            }
            float max = xval[0];
            for (int i = 1; i < 32; ++i) max = fmax_ggml(max, xval[i]);
            std::memset(L, 0, 32);
            // An all-zero group skips the pointer advance below, as in ggml: the following
            // groups' indices and signs land one group early (ggml's bytes, kept).
            if (!(max != 0)) {
                scales[ib] = 0;
                continue;
            }
            float scale = search32(t, xval, weight, waux, max, 9, false, true, L);
            if (scale < 0) {
                scale = -scale;
                for (int k = 0; k < bs8; ++k) block_signs[k] = uint8_t(~block_signs[k]);
            }
            for (int k = 0; k < bs4; ++k) {
                const int grid_index = grid_position(t, L + 4 * k, 4, 3);
                qs[k] = uint8_t(grid_index & 255);
                const int j = ib * bs4 + k;
                qh[j / 8] = uint8_t(qh[j / 8] | ((grid_index >> 8) << (j % 8)));
            }
            qs += bs4;
            for (int k = 0; k < bs8; ++k) signs[k] = block_signs[k];
            signs += bs8;
            scales[ib] = scale;
            max_scale = fmax_ggml(max_scale, scale);
        }

        if (!(max_scale != 0)) continue;
        const float d = max_scale / 31;
        y[ibl].d = float_to_half(d * 1.033f); // ggml's fudge factor
        const float id = 1 / d;
        for (int ib = 0; ib < QK_K / 32; ib += 2)
            y[ibl].scales[ib / 2] = uint8_t(scale_nibble(id, scales[ib]) | (scale_nibble(id, scales[ib + 1]) << 4));
    }
}

} // namespace rf::quant
