// The grid quantizers' lookup tables, derived from the grids in iq_grids.h exactly as ggml's
// iq2xs_init_impl / iq3xs_init_impl derive them from their index lists. Only points whose
// fields are valid levels get neighbour lists (ggml also lists points with a 2-bit field of 3,
// which no quantizer can produce because the levels are clamped to 0..2); their map entries
// stay -1, which reads as the first list, so even a stray lookup stays in bounds.
#include "iq_neighbours.h"

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <utility>

#include "rocmforge/iq_grids.h"

namespace rf::quant {
namespace {

// Level index (0..nlevels-1) of a grid byte, by position in the format's level list.
template <size_t N>
int level_of(uint8_t byte, const uint8_t (&levels)[N]) {
    for (size_t i = 0; i < N; ++i)
        if (levels[i] == byte) return int(i);
    return -1; // unreachable for the grids of iq_grids.h
}

// bits: bits per field (2 or 3); nel: elements per entry (8 or 4); nwant: distances kept.
template <typename Grid, size_t N>
IqSearchTable build(const Grid &src, const uint8_t (&levels)[N], int bits, int nel, int nwant,
                    int map_size) {
    IqSearchTable t;
    const int ngrid = int(src.size());
    t.grid.assign(size_t(ngrid), 0);
    t.map.assign(size_t(map_size), -1);
    for (int k = 0; k < ngrid; ++k) {
        const uint64_t e = uint64_t(src[size_t(k)]);
        int index = 0;
        uint64_t g = 0;
        for (int i = 0; i < nel; ++i) {
            const int l = level_of(uint8_t(e >> (8 * i)), levels);
            index |= l << (bits * i);
            g |= uint64_t(2 * l + 1) << (8 * i);
        }
        t.grid[size_t(k)] = g;
        t.map[size_t(index)] = k;
    }

    const int nlevels = int(N);
    std::vector<std::pair<int, int>> dist(static_cast<size_t>(ngrid)); // (d2, position)
    int pos[8];
    for (int u = 0; u < map_size; ++u) {
        if (t.map[size_t(u)] >= 0) continue;
        bool valid = true;
        for (int i = 0; i < nel; ++i) {
            const int l = (u >> (bits * i)) & ((1 << bits) - 1);
            valid = valid && l < nlevels;
            pos[i] = 2 * l + 1;
        }
        if (!valid) continue;
        for (int j = 0; j < ngrid; ++j) {
            int d2 = 0;
            for (int i = 0; i < nel; ++i) {
                const int q = int((t.grid[size_t(j)] >> (8 * i)) & 0xff) - pos[i];
                d2 += q * q;
            }
            dist[size_t(j)] = {d2, j};
        }
        std::sort(dist.begin(), dist.end()); // ggml's qsort with a (d2, j) comparator
        const size_t offset = t.neighbours.size();
        t.neighbours.push_back(0);
        int d2 = dist[0].first, nhave = 1;
        for (const auto &[d, j] : dist) {
            if (d > d2) {
                if (nhave == nwant) break;
                d2 = d;
                ++nhave;
            }
            t.neighbours.push_back(uint16_t(j));
        }
        t.neighbours[offset] = uint16_t(t.neighbours.size() - offset - 1);
        t.map[size_t(u)] = -int(offset + 1);
    }
    return t;
}

constexpr uint8_t kLevelsIq2[3] = {8, 25, 43};
constexpr uint8_t kLevelsIq1[3] = {0xFF, 0x00, 0x01};
constexpr uint8_t kLevelsIq3xxs[8] = {4, 12, 20, 28, 36, 44, 52, 62};
constexpr uint8_t kLevelsIq3s[8] = {1, 3, 5, 7, 9, 11, 13, 15};
constexpr int kMap8 = 43692; // ggml's kmap_size: the largest 8x2-bit index of levels 0..2, + 2
constexpr int kMap4 = 4096;

template <int Nel>
int best_neighbour(const IqSearchTable &t, int u, const float *xval, const float *weight,
                   float scale, int8_t *L) {
    const uint16_t *nb = t.neighbours_of(u);
    const int n = nb[0];
    float best_d2 = FLT_MAX;
    int grid_index = -1;
    for (int j = 1; j <= n; ++j) {
        const uint64_t g = t.grid[nb[j]];
        float d2 = 0;
        for (int i = 0; i < Nel; ++i) {
            const float q = float(int((g >> (8 * i)) & 0xff));
            const float diff = scale * q - xval[i];
            d2 += weight[i] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            grid_index = nb[j];
        }
    }
    // Every list is non-empty and NaN-free inputs always beat FLT_MAX; a NaN row falls back
    // to the first neighbour rather than ggml's abort.
    if (grid_index < 0) grid_index = nb[1];
    const uint64_t g = t.grid[size_t(grid_index)];
    for (int i = 0; i < Nel; ++i) L[i] = int8_t((int((g >> (8 * i)) & 0xff) - 1) / 2);
    return grid_index;
}

} // namespace

const IqSearchTable &iq2xxs_table() {
    static const IqSearchTable t = build(rf::iq::kIq2xxsGrid, kLevelsIq2, 2, 8, 2, kMap8);
    return t;
}
const IqSearchTable &iq2xs_table() {
    static const IqSearchTable t = build(rf::iq::kIq2xsGrid, kLevelsIq2, 2, 8, 2, kMap8);
    return t;
}
const IqSearchTable &iq2s_table() {
    static const IqSearchTable t = build(rf::iq::kIq2sGrid, kLevelsIq2, 2, 8, 1, kMap8);
    return t;
}
const IqSearchTable &iq1s_table() {
    static const IqSearchTable t = build(rf::iq::kIq1sGrid, kLevelsIq1, 2, 8, 3, kMap8);
    return t;
}
const IqSearchTable &iq3xxs_table() {
    static const IqSearchTable t = build(rf::iq::kIq3xxsGrid, kLevelsIq3xxs, 3, 4, 2, kMap4);
    return t;
}
const IqSearchTable &iq3s_table() {
    static const IqSearchTable t = build(rf::iq::kIq3sGrid, kLevelsIq3s, 3, 4, 3, kMap4);
    return t;
}

int iq_best_neighbour8(const IqSearchTable &t, int u, const float *xval, const float *weight,
                       float scale, int8_t *L) {
    return best_neighbour<8>(t, u, xval, weight, scale, L);
}
int iq_best_neighbour4(const IqSearchTable &t, int u, const float *xval, const float *weight,
                       float scale, int8_t *L) {
    return best_neighbour<4>(t, u, xval, weight, scale, L);
}

} // namespace rf::quant
