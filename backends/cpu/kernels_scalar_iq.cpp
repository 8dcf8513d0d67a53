// Portable dot kernels of the i-quants and ternary formats: the reference the SIMD kernels must
// agree with. A 256-element block unpacks to signed integer values v and 16 integer scales (one
// per 16 elements) with one float factor, value e = d * sc[e/16] * v[e] exactly (the formats'
// half-step scales and IQ1 deltas are folded into integers: IQ2 d*(s+1/2)/4 = d/8 * (2s+1),
// IQ1 grid +- 1/8 = (8*grid +- 1) / 8), so a block against q8_K is one integer sum per group.
// IQ4_NL's 32-element blocks take the q8_32 activation of the legacy formats.
#include <cstring>

#include "fp16.h"
#include "kernels.h"
#include "rocmforge/abi.h"
#include "rocmforge/iq_grids.h"

namespace rfcpu {
using namespace rf;
using namespace rf::iq;

namespace {

struct UnpackedIQ {
    int8_t v[QK_K];
    int32_t sc[16]; // per 16 elements
    float d;
};

inline int grid_byte(uint64_t g, int j) { return int((g >> (8 * j)) & 0xFF); }
inline uint32_t load_u32(const uint8_t *p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
inline uint16_t load_u16(const uint8_t *p) { uint16_t v; std::memcpy(&v, p, 2); return v; }
inline int sign_at(uint8_t signs, int j) { return (signs >> j) & 1 ? -1 : 1; }

template <class Unpack>
void dot_iq(int64_t k, const void *w, size_t block_bytes, const void *act, size_t st, int nc, float *out,
            size_t os, Unpack unpack) {
    float sum[kMaxCols] = {};
    const auto *wb = static_cast<const uint8_t *>(w);
    UnpackedIQ u;
    for (int64_t b = 0; b < k / QK_K; ++b) {
        unpack(wb + b * block_bytes, u);
        for (int c = 0; c < nc; ++c) {
            const auto *a = reinterpret_cast<const block_q8_K *>(static_cast<const uint8_t *>(act) + c * st) + b;
            int32_t acc = 0;
            for (int g = 0; g < 16; ++g) {
                int32_t s = 0;
                for (int i = 0; i < 16; ++i) s += int32_t(u.v[16 * g + i]) * a->qs[16 * g + i];
                acc += u.sc[g] * s;
            }
            sum[c] += u.d * a->d * float(acc);
        }
    }
    for (int c = 0; c < nc; ++c) out[c * os] = sum[c];
}

void unpack_iq2_xxs(const uint8_t *p, UnpackedIQ &u) {
    u.d = half_to_float(load_u16(p)) * 0.125f;
    for (int ib = 0; ib < 8; ++ib) {
        const uint8_t *q = p + 2 + 8 * ib;
        const uint32_t meta = load_u32(q + 4);
        u.sc[2 * ib] = u.sc[2 * ib + 1] = int32_t(2 * (meta >> 28) + 1);
        for (int l = 0; l < 4; ++l) {
            const uint64_t g = kIq2xxsGrid[q[l]];
            const uint8_t signs = kSignsIq2xs[(meta >> (7 * l)) & 127];
            for (int j = 0; j < 8; ++j) u.v[32 * ib + 8 * l + j] = int8_t(grid_byte(g, j) * sign_at(signs, j));
        }
    }
}

void unpack_iq2_xs(const uint8_t *p, UnpackedIQ &u) {
    const auto *x = reinterpret_cast<const block_iq2_xs *>(p);
    u.d = half_to_float(load_u16(p)) * 0.125f;
    for (int ib = 0; ib < 8; ++ib) {
        u.sc[2 * ib] = 2 * (x->scales[ib] & 0xF) + 1;
        u.sc[2 * ib + 1] = 2 * (x->scales[ib] >> 4) + 1;
        for (int l = 0; l < 4; ++l) {
            const uint16_t q = load_u16(p + 2 + 2 * (4 * ib + l));
            const uint64_t g = kIq2xsGrid[q & 511];
            const uint8_t signs = kSignsIq2xs[q >> 9];
            for (int j = 0; j < 8; ++j) u.v[32 * ib + 8 * l + j] = int8_t(grid_byte(g, j) * sign_at(signs, j));
        }
    }
}

void unpack_iq2_s(const uint8_t *p, UnpackedIQ &u) {
    const auto *x = reinterpret_cast<const block_iq2_s *>(p);
    u.d = half_to_float(load_u16(p)) * 0.125f;
    for (int ib = 0; ib < 8; ++ib) {
        u.sc[2 * ib] = 2 * (x->scales[ib] & 0xF) + 1;
        u.sc[2 * ib + 1] = 2 * (x->scales[ib] >> 4) + 1;
        for (int l = 0; l < 4; ++l) {
            const uint64_t g = kIq2sGrid[x->qs[4 * ib + l] | ((x->qh[ib] << (8 - 2 * l)) & 0x300)];
            const uint8_t signs = x->qs[QK_K / 8 + 4 * ib + l];
            for (int j = 0; j < 8; ++j) u.v[32 * ib + 8 * l + j] = int8_t(grid_byte(g, j) * sign_at(signs, j));
        }
    }
}

void unpack_iq3_xxs(const uint8_t *p, UnpackedIQ &u) {
    const auto *x = reinterpret_cast<const block_iq3_xxs *>(p);
    u.d = half_to_float(load_u16(p)) * 0.25f;
    for (int ib = 0; ib < 8; ++ib) {
        const uint32_t meta = load_u32(x->qs + QK_K / 4 + 4 * ib);
        u.sc[2 * ib] = u.sc[2 * ib + 1] = int32_t(2 * (meta >> 28) + 1);
        for (int l = 0; l < 4; ++l) {
            const uint8_t signs = kSignsIq2xs[(meta >> (7 * l)) & 127];
            const uint32_t g1 = kIq3xxsGrid[x->qs[8 * ib + 2 * l]], g2 = kIq3xxsGrid[x->qs[8 * ib + 2 * l + 1]];
            for (int j = 0; j < 4; ++j) {
                u.v[32 * ib + 8 * l + j] = int8_t(grid_byte(g1, j) * sign_at(signs, j));
                u.v[32 * ib + 8 * l + j + 4] = int8_t(grid_byte(g2, j) * sign_at(signs, j + 4));
            }
        }
    }
}

void unpack_iq3_s(const uint8_t *p, UnpackedIQ &u) {
    const auto *x = reinterpret_cast<const block_iq3_s *>(p);
    u.d = half_to_float(load_u16(p));
    for (int ib = 0; ib < 8; ++ib) {
        const uint8_t sc = x->scales[ib / 2];
        u.sc[2 * ib] = u.sc[2 * ib + 1] = 1 + 2 * (ib % 2 ? sc >> 4 : sc & 0xF);
        for (int l = 0; l < 4; ++l) {
            const uint8_t *qs = x->qs + 8 * ib + 2 * l;
            const uint32_t g1 = kIq3sGrid[qs[0] | ((x->qh[ib] << (8 - 2 * l)) & 256)];
            const uint32_t g2 = kIq3sGrid[qs[1] | ((x->qh[ib] << (7 - 2 * l)) & 256)];
            const uint8_t signs = x->signs[4 * ib + l];
            for (int j = 0; j < 4; ++j) {
                u.v[32 * ib + 8 * l + j] = int8_t(grid_byte(g1, j) * sign_at(signs, j));
                u.v[32 * ib + 8 * l + j + 4] = int8_t(grid_byte(g2, j) * sign_at(signs, j + 4));
            }
        }
    }
}

// 8 * (grid byte) + (delta sign), the IQ1 value in units of 1/8.
inline int8_t iq1_value(uint64_t g, int j, bool negative_delta) {
    return int8_t(8 * int8_t(grid_byte(g, j)) + (negative_delta ? -1 : 1));
}

void unpack_iq1_s(const uint8_t *p, UnpackedIQ &u) {
    const auto *x = reinterpret_cast<const block_iq1_s *>(p);
    u.d = half_to_float(load_u16(p)) * 0.125f;
    for (int ib = 0; ib < 8; ++ib) {
        const uint16_t qh = load_u16(p + 34 + 2 * ib);
        u.sc[2 * ib] = u.sc[2 * ib + 1] = 2 * ((qh >> 12) & 7) + 1;
        for (int l = 0; l < 4; ++l) {
            const uint64_t g = kIq1sGrid[x->qs[4 * ib + l] | (((qh >> (3 * l)) & 7) << 8)];
            for (int j = 0; j < 8; ++j) u.v[32 * ib + 8 * l + j] = iq1_value(g, j, qh & 0x8000);
        }
    }
}

void unpack_iq1_m(const uint8_t *p, UnpackedIQ &u) {
    const auto *x = reinterpret_cast<const block_iq1_m *>(p);
    uint16_t sc[4];
    std::memcpy(sc, x->scales, sizeof sc);
    const uint16_t dbits = uint16_t((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
    u.d = half_to_float(dbits) * 0.125f;
    for (int ib = 0; ib < 8; ++ib) {
        u.sc[2 * ib] = 2 * ((sc[ib / 2] >> (6 * (ib % 2))) & 7) + 1;
        u.sc[2 * ib + 1] = 2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 7) + 1;
        for (int l = 0; l < 4; ++l) {
            const int h = x->qh[2 * ib + l / 2] >> (4 * (l % 2)); // low nibble: even groups
            const uint64_t g = kIq1sGrid[x->qs[4 * ib + l] | ((h & 7) << 8)];
            for (int j = 0; j < 8; ++j) u.v[32 * ib + 8 * l + j] = iq1_value(g, j, h & 8);
        }
    }
}

void unpack_iq4_xs(const uint8_t *p, UnpackedIQ &u) {
    const auto *x = reinterpret_cast<const block_iq4_xs *>(p);
    u.d = half_to_float(load_u16(p));
    const uint16_t scales_h = load_u16(p + 2);
    for (int ib = 0; ib < 8; ++ib) {
        const int ls = ((x->scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4);
        u.sc[2 * ib] = u.sc[2 * ib + 1] = ls - 32;
        for (int j = 0; j < 16; ++j) {
            u.v[32 * ib + j] = kValuesIq4nl[x->qs[16 * ib + j] & 0xF];
            u.v[32 * ib + j + 16] = kValuesIq4nl[x->qs[16 * ib + j] >> 4];
        }
    }
}

void unpack_tq1_0(const uint8_t *p, UnpackedIQ &u) {
    const auto *x = reinterpret_cast<const block_tq1_0 *>(p);
    static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
    auto trit = [](uint8_t q, int n) { return int8_t(((uint16_t(uint8_t(q * kPow3[n])) * 3) >> 8) - 1); };
    u.d = half_to_float(x->d);
    for (int g = 0; g < 16; ++g) u.sc[g] = 1;
    int e = 0;
    for (int n = 0; n < 5; ++n)
        for (int m = 0; m < 32; ++m) u.v[e++] = trit(x->qs[m], n);
    for (int n = 0; n < 5; ++n)
        for (int m = 0; m < 16; ++m) u.v[e++] = trit(x->qs[32 + m], n);
    for (int n = 0; n < 4; ++n)
        for (int j = 0; j < 4; ++j) u.v[e++] = trit(x->qh[j], n);
}

void unpack_tq2_0(const uint8_t *p, UnpackedIQ &u) {
    const auto *x = reinterpret_cast<const block_tq2_0 *>(p);
    u.d = half_to_float(x->d);
    for (int g = 0; g < 16; ++g) u.sc[g] = 1;
    for (int e = 0; e < QK_K; ++e) u.v[e] = int8_t(((x->qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3) - 1);
}

template <class B, void (*Unpack)(const uint8_t *, UnpackedIQ &)>
void dot_iq_type(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    dot_iq(k, w, sizeof(B), act, st, nc, out, os, Unpack);
}

void dot_iq4_nl(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    float sum[kMaxCols] = {};
    const auto *x = static_cast<const block_iq4_nl *>(w);
    for (int64_t b = 0; b < k / QK4_NL; ++b) {
        int8_t v[32];
        for (int j = 0; j < 16; ++j) {
            v[j] = kValuesIq4nl[x[b].qs[j] & 0xF];
            v[j + 16] = kValuesIq4nl[x[b].qs[j] >> 4];
        }
        const float dw = half_to_float(x[b].d);
        for (int c = 0; c < nc; ++c) {
            const auto *a = reinterpret_cast<const block_q8_32 *>(static_cast<const uint8_t *>(act) + c * st) + b;
            int32_t s = 0;
            for (int i = 0; i < 32; ++i) s += int32_t(v[i]) * a->qs[i];
            sum[c] += dw * a->d * float(s);
        }
    }
    for (int c = 0; c < nc; ++c) out[c * os] = sum[c];
}

} // namespace

void init_kernels_scalar_iq(KernelSet *ks) {
    ks->matmul[RF_TYPE_IQ2_XXS] = {ActFormat::Q8_K, dot_iq_type<block_iq2_xxs, unpack_iq2_xxs>};
    ks->matmul[RF_TYPE_IQ2_XS] = {ActFormat::Q8_K, dot_iq_type<block_iq2_xs, unpack_iq2_xs>};
    ks->matmul[RF_TYPE_IQ2_S] = {ActFormat::Q8_K, dot_iq_type<block_iq2_s, unpack_iq2_s>};
    ks->matmul[RF_TYPE_IQ3_XXS] = {ActFormat::Q8_K, dot_iq_type<block_iq3_xxs, unpack_iq3_xxs>};
    ks->matmul[RF_TYPE_IQ3_S] = {ActFormat::Q8_K, dot_iq_type<block_iq3_s, unpack_iq3_s>};
    ks->matmul[RF_TYPE_IQ1_S] = {ActFormat::Q8_K, dot_iq_type<block_iq1_s, unpack_iq1_s>};
    ks->matmul[RF_TYPE_IQ1_M] = {ActFormat::Q8_K, dot_iq_type<block_iq1_m, unpack_iq1_m>};
    ks->matmul[RF_TYPE_IQ4_XS] = {ActFormat::Q8_K, dot_iq_type<block_iq4_xs, unpack_iq4_xs>};
    ks->matmul[RF_TYPE_TQ1_0] = {ActFormat::Q8_K, dot_iq_type<block_tq1_0, unpack_tq1_0>};
    ks->matmul[RF_TYPE_TQ2_0] = {ActFormat::Q8_K, dot_iq_type<block_tq2_0, unpack_tq2_0>};
    ks->matmul[RF_TYPE_IQ4_NL] = {ActFormat::Q8_32, dot_iq4_nl};
}

} // namespace rfcpu
