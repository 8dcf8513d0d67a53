// The 1.5-bit grid quantizers IQ1_S and IQ1_M, step for step as ggml's
// quantize_row_iq1_s_impl and quantize_row_iq1_m_impl: levels -1, 0, 1 shifted by +-delta, so
// for each group the best split of the sorted elements into three runs is found exhaustively,
// then each 8-element point is snapped to the grid. Same float operations in the same order
// as ggml (IQ1_M's split search as ggml has it through 2025: plain sums per split), so the
// same bytes. ggml sorts with qsort on the value alone; glibc's qsort is a stable merge sort
// for such small arrays, so ties keep index order here too.
#include <algorithm>
#include <cfloat>
#include <cstring>

#include "iq_neighbours.h"
#include "quant_internal.h"
#include "rocmforge/iq_grids.h"

namespace rf::quant {
namespace {

using rf::iq::kIq1Delta;

constexpr float kXp[3] = {-1 + kIq1Delta, kIq1Delta, 1 + kIq1Delta};
constexpr float kXm[3] = {-1 - kIq1Delta, -kIq1Delta, 1 - kIq1Delta};

// ggml's iq1_find_best_neighbour2: the neighbour of point u whose values xg[level] at
// `scale` are nearest to xval under weights (first on ties). ggml's fallback scan over the
// whole grid (reached only when every distance is NaN or infinite) reads out of bounds; here
// such input takes the first neighbour.
int best_neighbour_shifted(const IqSearchTable &t, int u, const float *xval, const float *weight,
                           float scale, const float *xg, int8_t *L) {
    const uint16_t *nb = t.neighbours_of(u);
    float best_score = FLT_MAX;
    int grid_index = -1;
    for (int j = 1; j <= nb[0]; ++j) {
        const uint64_t g = t.grid[nb[j]];
        float d2 = 0;
        for (int i = 0; i < 8; ++i) {
            const float q = xg[(int((g >> (8 * i)) & 0xff) - 1) / 2];
            const float w = weight[i];
            const float diff = scale * q - xval[i];
            d2 += w * diff * diff;
        }
        if (d2 < best_score) {
            best_score = d2;
            grid_index = nb[j];
        }
    }
    if (grid_index < 0) grid_index = nb[1];
    const uint64_t g = t.grid[size_t(grid_index)];
    for (int i = 0; i < 8; ++i) L[i] = int8_t((int((g >> (8 * i)) & 0xff) - 1) / 2);
    return grid_index;
}

// Element indices of xb[0..n) in ascending order of value, ties by index.
void sorted_order(const float *xb, int n, int *idx) {
    for (int j = 0; j < n; ++j) idx[j] = j;
    std::stable_sort(idx, idx + n, [xb](int a, int b) { return xb[a] < xb[b]; });
}

inline float block_sigma2(const float *xbl) {
    float sumx2 = 0;
    for (int i = 0; i < QK_K; ++i) sumx2 += xbl[i] * xbl[i];
    return 2 * sumx2 / QK_K;
}

inline float abs_max(const float *xb, int n) {
    float max = std::fabs(xb[0]);
    for (int i = 1; i < n; ++i) max = fmax_ggml(max, std::fabs(xb[i]));
    return max;
}

// Levels 0/1/2 of the split (i1, i2) over the sorted order.
inline void split_levels(const int *idx, int n, int i1, int i2, int8_t *L) {
    for (int j = 0; j < i1; ++j) L[idx[j]] = 0;
    for (int j = i1; j < i2; ++j) L[idx[j]] = 1;
    for (int j = i2; j < n; ++j) L[idx[j]] = 2;
}

inline int point_of(const int8_t *L) {
    int u = 0;
    for (int j = 0; j < 8; ++j) u |= L[j] << (2 * j);
    return u;
}

} // namespace

void quantize_row_iq1_s(const float *x, block_iq1_s *y, int64_t n, const float *quant_weights) {
    constexpr int block_size = 32;
    const IqSearchTable &t = iq1s_table();
    const int64_t nbl = n / QK_K;
    float scales[QK_K / block_size], weight[block_size], sumx[block_size + 1], sumw[block_size + 1];
    int8_t L[block_size], shifts[QK_K / block_size];
    int idx[block_size];
    uint16_t index[block_size / 8];

    for (int64_t ibl = 0; ibl < nbl; ++ibl) {
        y[ibl].d = float_to_half(0.f);
        std::memset(y[ibl].qs, 0, sizeof y[ibl].qs);
        uint16_t qh[QK_K / 32] = {};
        float max_scale = 0;
        const float *xbl = x + QK_K * ibl;
        const float sigma2 = block_sigma2(xbl);

        for (int ib = 0; ib < QK_K / block_size; ++ib) {
            const float *xb = xbl + block_size * ib;
            const float *qw = quant_weights + QK_K * ibl + block_size * ib;
            for (int i = 0; i < block_size; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
            const float max = abs_max(xb, block_size);
            if (max < GROUP_MAX_EPS_IQ1_S) {
                scales[ib] = 0;
                shifts[ib] = 1;
                std::memset(L, 1, block_size);
                continue;
            }
            // With three levels the weighted least-squares optimum is an exhaustive search over
            // the two boundaries of the sorted elements, on prefix sums.
            sorted_order(xb, block_size, idx);
            sumx[0] = sumw[0] = 0;
            for (int j = 0; j < block_size; ++j) {
                const int i = idx[j];
                sumx[j + 1] = sumx[j] + weight[i] * xb[i];
                sumw[j + 1] = sumw[j] + weight[i];
            }
            float best_score = -FLT_MAX, scale = max;
            int besti1 = -1, besti2 = -1, best_shift = 0;
            for (int i1 = 0; i1 <= block_size; ++i1) {
                for (int i2 = i1; i2 <= block_size; ++i2) {
                    for (int s = 1; s >= -1; s -= 2) {
                        const float *xs = s == 1 ? kXp : kXm;
                        const float sumqx = (sumx[i1] - sumx[0]) * xs[0] + (sumx[i2] - sumx[i1]) * xs[1] +
                                            (sumx[block_size] - sumx[i2]) * xs[2];
                        const float sumq2 = (sumw[i1] - sumw[0]) * xs[0] * xs[0] +
                                            (sumw[i2] - sumw[i1]) * xs[1] * xs[1] +
                                            (sumw[block_size] - sumw[i2]) * xs[2] * xs[2];
                        if (sumq2 > 0 && sumqx * sumqx > best_score * sumq2) {
                            scale = sumqx / sumq2;
                            best_score = scale * sumqx;
                            besti1 = i1;
                            besti2 = i2;
                            best_shift = s;
                        }
                    }
                }
            }
            if (besti1 < 0 || besti2 < 0 || best_shift == 0) {
                scales[ib] = 0;
                shifts[ib] = 1;
                std::memset(L, 1, block_size);
                continue;
            }
            split_levels(idx, block_size, besti1, besti2, L);
            if (scale < 0) {
                for (int j = 0; j < block_size; ++j) L[j] = int8_t(2 - L[j]);
                scale = -scale;
                best_shift = -best_shift;
            }
            bool all_on_grid = true;
            const float *xx = best_shift == 1 ? kXp : kXm;
            for (int k = 0; k < block_size / 8; ++k) {
                const int u = point_of(L + 8 * k);
                int grid_index = t.map[size_t(u)];
                if (grid_index < 0) {
                    all_on_grid = false;
                    grid_index = best_neighbour_shifted(t, u, xb + 8 * k, weight + 8 * k, scale, xx, L + 8 * k);
                }
                index[k] = uint16_t(grid_index);
            }
            if (!all_on_grid) {
                float sumqx = 0, sumq2 = 0;
                for (int k = 0; k < block_size / 8; ++k) {
                    const uint64_t g = t.grid[index[k]];
                    for (int j = 0; j < 8; ++j) {
                        const float w = weight[8 * k + j];
                        const float q = xx[(int((g >> (8 * j)) & 0xff) - 1) / 2];
                        sumqx += w * q * xb[8 * k + j];
                        sumq2 += w * q * q;
                    }
                }
                if (sumqx > 0 && sumq2 > 0) scale = sumqx / sumq2;
            }
            uint16_t h = 0;
            for (int k = 0; k < block_size / 8; ++k) {
                y[ibl].qs[(block_size / 8) * ib + k] = uint8_t(index[k] & 255);
                h = uint16_t(h | ((index[k] >> 8) << (3 * k)));
            }
            qh[ib] = h;
            scales[ib] = scale;
            shifts[ib] = int8_t(best_shift);
            max_scale = fmax_ggml(max_scale, scale);
        }

        if (!(max_scale != 0)) {
            std::memcpy(y[ibl].qh, qh, sizeof qh);
            continue;
        }
        const float d = max_scale / 15;
        y[ibl].d = float_to_half(d * 1.125f); // ggml's fudge factor
        const float id = 1 / d;
        for (int ib = 0; ib < QK_K / block_size; ++ib) {
            int l = nearest_int(0.5f * (id * scales[ib] - 1));
            l = l < 0 ? 0 : l > 7 ? 7 : l;
            if (shifts[ib] == -1) l |= 8;
            qh[ib] = uint16_t(qh[ib] | (l << 12));
        }
        std::memcpy(y[ibl].qh, qh, sizeof qh);
    }
}

void quantize_row_iq1_m(const float *x, block_iq1_m *y, int64_t n, const float *quant_weights) {
    constexpr int block_size = 16;
    const IqSearchTable &t = iq1s_table();
    const int64_t nbl = n / QK_K;
    constexpr uint8_t masks[4] = {0x00, 0x80, 0x08, 0x88};
    float scales[QK_K / block_size], weight[block_size];
    int8_t L[block_size], shifts[QK_K / block_size];
    int idx[block_size];
    uint16_t index[block_size / 8];

    // Shift of half h (0: first 8 elements) under sign combination k: 0 ++, 1 +-, 2 -+, 3 --.
    auto half_values = [](int k, int h) { return h == 0 ? (k < 2 ? kXp : kXm) : (k % 2 == 0 ? kXp : kXm); };
    auto weights_of = [&](const float *xb, const float *qw, float sigma2) {
        if (qw) {
            for (int i = 0; i < block_size; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
        } else {
            for (int i = 0; i < block_size; ++i) weight[i] = xb[i] * xb[i];
        }
    };

    for (int64_t ibl = 0; ibl < nbl; ++ibl) {
        std::memset(y[ibl].qs, 0, sizeof y[ibl].qs);
        std::memset(y[ibl].qh, 0, sizeof y[ibl].qh);
        std::memset(y[ibl].scales, 0, sizeof y[ibl].scales);
        float max_scale = 0;
        const float *xbl = x + QK_K * ibl;
        const float sigma2 = block_sigma2(xbl);

        for (int ib = 0; ib < QK_K / block_size; ++ib) {
            const float *xb = xbl + block_size * ib;
            weights_of(xb, quant_weights ? quant_weights + QK_K * ibl + block_size * ib : nullptr, sigma2);
            const float max = abs_max(xb, block_size);
            if (max < GROUP_MAX_EPS_IQ1_M) {
                scales[ib] = 0;
                shifts[ib] = 0;
                std::memset(L, 1, block_size);
                continue;
            }
            sorted_order(xb, block_size, idx);
            float best_score = -FLT_MAX, scale = max;
            int besti1 = -1, besti2 = -1, best_k = -1;
            for (int i1 = 0; i1 <= block_size; ++i1) {
                for (int i2 = i1; i2 <= block_size; ++i2) {
                    float sumqx[4] = {}, sumq2[4] = {};
                    for (int j = 0; j < block_size; ++j) {
                        const int i = idx[j];
                        const int level = j < i1 ? 0 : j < i2 ? 1 : 2;
                        const int h = i < block_size / 2 ? 0 : 1;
                        for (int k = 0; k < 4; ++k) {
                            const float v = half_values(k, h)[level];
                            sumqx[k] += weight[i] * v * xb[i];
                            sumq2[k] += weight[i] * v * v;
                        }
                    }
                    for (int k = 0; k < 4; ++k) {
                        if (sumq2[k] > 0 && sumqx[k] * sumqx[k] > best_score * sumq2[k]) {
                            scale = sumqx[k] / sumq2[k];
                            best_score = scale * sumqx[k];
                            besti1 = i1;
                            besti2 = i2;
                            best_k = k;
                        }
                    }
                }
            }
            // ggml asserts here (all weights zero); its later versions skip the group like this.
            if (besti1 < 0 || besti2 < 0 || best_k < 0) {
                scales[ib] = 0;
                shifts[ib] = 0;
                std::memset(L, 1, block_size);
                continue;
            }
            split_levels(idx, block_size, besti1, besti2, L);
            if (scale < 0) {
                for (int j = 0; j < block_size; ++j) L[j] = int8_t(2 - L[j]);
                scale = -scale;
                best_k = 3 - best_k; // swaps + and - in both halves
            }
            bool all_on_grid = true;
            for (int k = 0; k < block_size / 8; ++k) {
                const int u = point_of(L + 8 * k);
                int grid_index = t.map[size_t(u)];
                if (grid_index < 0) {
                    all_on_grid = false;
                    grid_index = best_neighbour_shifted(t, u, xb + 8 * k, weight + 8 * k, scale,
                                                        half_values(best_k, k), L + 8 * k);
                }
                index[k] = uint16_t(grid_index);
            }
            if (!all_on_grid) {
                float sumqx_f = 0, sumq2_f = 0;
                for (int k = 0; k < block_size / 8; ++k) {
                    const float *xx = half_values(best_k, k);
                    const uint64_t g = t.grid[index[k]];
                    for (int j = 0; j < 8; ++j) {
                        const float w = weight[8 * k + j];
                        const float q = xx[(int((g >> (8 * j)) & 0xff) - 1) / 2];
                        sumqx_f += w * q * xb[8 * k + j];
                        sumq2_f += w * q * q;
                    }
                }
                if (sumqx_f > 0 && sumq2_f > 0) scale = sumqx_f / sumq2_f;
            }
            y[ibl].qs[2 * ib + 0] = uint8_t(index[0] & 255);
            y[ibl].qs[2 * ib + 1] = uint8_t(index[1] & 255);
            y[ibl].qh[ib] = uint8_t((index[0] >> 8) | ((index[1] >> 8) << 4));
            scales[ib] = scale;
            shifts[ib] = int8_t(best_k);
            max_scale = fmax_ggml(max_scale, scale);
        }

        if (!(max_scale != 0)) continue;
        uint16_t sc[4] = {};
        float d = max_scale / 15;
        const float id = 1 / d;
        float sumqx_f = 0, sumq2_f = 0;
        // The super-block scale is refitted to the rounded 3-bit group scales.
        for (int ib = 0; ib < QK_K / block_size; ++ib) {
            int l = nearest_int(0.5f * (id * scales[ib] - 1));
            l = l < 0 ? 0 : l > 7 ? 7 : l;
            sc[ib / 4] = uint16_t(sc[ib / 4] | (l << (3 * (ib % 4))));
            y[ibl].qh[ib] = uint8_t(y[ibl].qh[ib] | masks[shifts[ib]]);
            const float *xb = xbl + block_size * ib;
            weights_of(xb, quant_weights ? quant_weights + QK_K * ibl + block_size * ib : nullptr, sigma2);
            for (int k = 0; k < block_size / 8; ++k) {
                const float *xx = half_values(shifts[ib], k);
                const int gi = y[ibl].qs[2 * ib + k] + ((y[ibl].qh[ib] << (8 - 4 * k)) & 0x700);
                const uint64_t g = t.grid[size_t(gi)];
                for (int j = 0; j < 8; ++j) {
                    const float w = weight[8 * k + j];
                    const float q = xx[(int((g >> (8 * j)) & 0xff) - 1) / 2] * float(2 * l + 1);
                    sumqx_f += w * q * xb[8 * k + j];
                    sumq2_f += w * q * q;
                }
            }
        }
        if (sumq2_f > 0) d = sumqx_f / sumq2_f;
        const uint16_t s = float_to_half(d * 1.1125f); // ggml's fudge factor
        sc[0] = uint16_t(sc[0] | ((s & 0x000f) << 12));
        sc[1] = uint16_t(sc[1] | ((s & 0x00f0) << 8));
        sc[2] = uint16_t(sc[2] | ((s & 0x0f00) << 4));
        sc[3] = uint16_t(sc[3] | (s & 0xf000));
        std::memcpy(y[ibl].scales, sc, sizeof sc);
    }
}

} // namespace rf::quant
