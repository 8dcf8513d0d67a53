// See iq_grids_host.h. Only constant tables and plain functions (the packs link as C: no C++
// runtime is needed).
#include "iq_grids_host.h"

#include "rocmforge/abi.h"
#include "rocmforge/iq_grid_index.h"

namespace {

template <int N> struct Grid { uint64_t v[N]; };

// Entry k: the 2-bit (IQ2, IQ1) or 3-bit (IQ3) fields of index k mapped through the levels.
template <int N> constexpr Grid<N> expand(const unsigned short (&idx)[N], int bits, const unsigned char *level) {
    Grid<N> g{};
    const int per = bits == 2 ? 8 : 4, mask = (1 << bits) - 1;
    for (int k = 0; k < N; ++k)
        for (int i = 0; i < per; ++i) g.v[k] |= (uint64_t)level[(idx[k] >> (bits * i)) & mask] << (8 * i);
    return g;
}

constexpr unsigned char kIq2Levels[4] = {8, 25, 43, 0};
constexpr unsigned char kIq1Levels[4] = {0xFF, 0x00, 0x01, 0}; // -1, 0, 1
constexpr unsigned char kIq3xxsLevels[8] = {4, 12, 20, 28, 36, 44, 52, 62};
constexpr unsigned char kIq3sLevels[8] = {1, 3, 5, 7, 9, 11, 13, 15};

constexpr Grid<256> kIq2xxs = expand(rf_iq_index::kIqIndex2bit256, 2, kIq2Levels);
constexpr Grid<512> kIq2xs = expand(rf_iq_index::kIqIndex2bit512, 2, kIq2Levels);
constexpr Grid<1024> kIq2s = expand(rf_iq_index::kIqIndex2bit1024, 2, kIq2Levels);
constexpr Grid<2048> kIq1s = expand(rf_iq_index::kIqIndex1bit2048, 2, kIq1Levels);
constexpr Grid<256> kIq3xxs = expand(rf_iq_index::kIqIndex3bit256, 3, kIq3xxsLevels);
constexpr Grid<512> kIq3s = expand(rf_iq_index::kIqIndex3bit512, 3, kIq3sLevels);

template <int N> uint64_t at(const Grid<N> &g, int k) { return k >= 0 && k < N ? g.v[k] : 0; }

} // namespace

uint64_t pm_iq_grid(int type, int k) {
    switch (type) {
    case RF_TYPE_IQ2_XXS: return at(kIq2xxs, k);
    case RF_TYPE_IQ2_XS: return at(kIq2xs, k);
    case RF_TYPE_IQ2_S: return at(kIq2s, k);
    case RF_TYPE_IQ1_S: case RF_TYPE_IQ1_M: return at(kIq1s, k);
    case RF_TYPE_IQ3_XXS: return at(kIq3xxs, k);
    case RF_TYPE_IQ3_S: return at(kIq3s, k);
    default: return 0;
    }
}
