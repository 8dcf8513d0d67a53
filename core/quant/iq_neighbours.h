// Internal to rf_quant: the search tables of the grid quantizers (ggml's iq2xs_init_impl and
// iq3xs_init_impl). A point of a lattice cell is the index of its per-element levels (2 bits
// each for the 8-element IQ2/IQ1 grids, 3 bits each for the 4-element IQ3 grids); `map` gives
// its grid position, or -(offset + 1) into `neighbours` for a point that is not on the grid:
// there neighbours[offset] = n and the next n entries are the grid positions at the nwant
// smallest squared distances, ordered by (distance, position) as ggml's sort leaves them.
// `grid` holds each grid entry as bytes 2*level + 1, the odd-integer form ggml searches in.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "quant_internal.h"

namespace rf::quant {

struct IqSearchTable {
    std::vector<uint64_t> grid; // 8 bytes per entry (IQ2/IQ1) or 4 in the low half (IQ3)
    std::vector<int> map;
    std::vector<uint16_t> neighbours;
    // The neighbour list of an off-grid point u (map[u] < 0): count, then positions.
    const uint16_t *neighbours_of(int u) const { return neighbours.data() + (-map[size_t(u)] - 1); }
};

// Built once on first use (thread-safe); same content as ggml's tables for every point a
// quantizer can look up.
const IqSearchTable &iq2xxs_table(); // 256-entry grid, 2 nearest distances
const IqSearchTable &iq2xs_table();  // 512 entries, 2
const IqSearchTable &iq2s_table();   // 1024 entries, 1
const IqSearchTable &iq1s_table();   // 2048 entries (IQ1_S and IQ1_M), 3
const IqSearchTable &iq3xxs_table(); // 256 entries of 4 elements, 2
const IqSearchTable &iq3s_table();   // 512 entries of 4 elements, 3

// ggml's iq2_find_best_neighbour / iq3_find_best_neighbour: the neighbour of point u
// nearest to xval/scale under weights, first one on ties; writes its levels to L.
int iq_best_neighbour8(const IqSearchTable &t, int u, const float *xval, const float *weight,
                       float scale, int8_t *L);
int iq_best_neighbour4(const IqSearchTable &t, int u, const float *xval, const float *weight,
                       float scale, int8_t *L);

// Levels 0..kLevels-1 of N magnitudes (N = 8: 2 bits each, N = 4: 3 bits each) at inverse scale
// id, snapped to the grid (its nearest neighbour at scale); true if already on it.
template <int N, int kLevels>
bool iq_round_to_grid(const IqSearchTable &t, float id, float scale, const float *xval, const float *waux, int8_t *L) {
    static_assert(N == 8 || N == 4);
    constexpr int bits = N == 8 ? 2 : 3;
    int u = 0;
    for (int i = 0; i < N; ++i) {
        const int l = nearest_int(0.5f * (id * xval[i] - 1));
        L[i] = int8_t(l < 0 ? 0 : l > kLevels - 1 ? kLevels - 1 : l);
        u |= L[i] << (bits * i);
    }
    if (t.map[size_t(u)] >= 0) return true;
    if constexpr (N == 8)
        iq_best_neighbour8(t, u, xval, waux, scale, L);
    else
        iq_best_neighbour4(t, u, xval, waux, scale, L);
    return false;
}

// sum w*x*q and sum w*q*q over n elements with q = 2*L + 1 (the grids' odd-integer form).
inline void iq_correlate(int n, const float *weight, const float *xval, const int8_t *L, float &sumqx, float &sumq2) {
    sumqx = 0;
    sumq2 = 0;
    for (int i = 0; i < n; ++i) {
        const float w = weight[i];
        const float q = float(2 * L[i] + 1);
        sumqx += w * xval[i] * q;
        sumq2 += w * q * q;
    }
}

// The sign step of the even-sign formats (IQ2_XXS, IQ2_XS, IQ3_XXS), 8 elements: xval gets
// the magnitudes; when an odd number are negative, the element of least weight*x^2 (the
// first on ties) keeps its sign flipped into xval, so the 7 stored bits imply the eighth.
// Returns the 7 sign bits.
inline uint8_t fold_even_signs(const float *xb, const float *weight, float *xval) {
    int nflip = 0;
    uint8_t s = 0;
    for (int i = 0; i < 8; ++i) {
        if (xb[i] >= 0) {
            xval[i] = xb[i];
        } else {
            xval[i] = -xb[i];
            ++nflip;
            s = uint8_t(s | (1 << i));
        }
    }
    if (nflip % 2) {
        int imin = 0;
        float min = weight[imin] * xb[imin] * xb[imin];
        for (int i = 1; i < 8; ++i) {
            const float ax = weight[i] * xb[i] * xb[i];
            if (ax < min) {
                min = ax;
                imin = i;
            }
        }
        xval[imin] = -xval[imin];
        s = uint8_t(s ^ (1 << imin));
    }
    return uint8_t(s & 127);
}

// Grid position of the point with levels L[0..nel) (bits per field). ggml aborts when the
// point is off the grid, which only NaN input can cause; here that gives position 0.
inline int grid_position(const IqSearchTable &t, const int8_t *L, int nel, int bits) {
    int u = 0;
    for (int i = 0; i < nel; ++i) {
        if (L[i] < 0 || L[i] >= (1 << bits)) return 0;
        u |= L[i] << (bits * i);
    }
    return size_t(u) < t.map.size() && t.map[size_t(u)] >= 0 ? t.map[size_t(u)] : 0;
}

// ggml's MAX(a, b) for floats (a NaN b picks b, as the macro does).
inline float fmax_ggml(float a, float b) { return a > b ? a : b; }

} // namespace rf::quant
