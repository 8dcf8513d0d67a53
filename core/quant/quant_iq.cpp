// Dequantization of the i-quants (IQ1_S .. IQ4_XS) and the ternary formats (TQ1_0, TQ2_0),
// operation for operation as ggml's dequantize_row_* (same float products in the same order),
// so results are bit-identical. Grid indices are masked to the table sizes by construction,
// so corrupt blocks decode to some grid value, never past a table.
#include <cstring>

#include "quant_internal.h"
#include "rocmforge/iq_grids.h"

namespace rf::quant {

using namespace rf::iq;

namespace {

inline uint8_t byte_of(uint64_t v, int j) { return uint8_t(v >> (8 * j)); }
inline uint32_t load_u32(const void *p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
inline uint16_t load_u16(const void *p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}
inline float sign_of(uint8_t signs, int j) { return (signs >> j) & 1 ? -1.f : 1.f; }

} // namespace

void dequantize_row_iq2_xxs(const block_iq2_xxs *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_float(x[i].d);
        const auto *q = reinterpret_cast<const uint8_t *>(x[i].qs);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const uint32_t idx = load_u32(q + 8 * ib32), meta = load_u32(q + 8 * ib32 + 4);
            const float db = d * (0.5f + float(meta >> 28)) * 0.25f;
            for (int l = 0; l < 4; ++l) {
                const uint64_t g = kIq2xxsGrid[(idx >> (8 * l)) & 255];
                const uint8_t signs = kSignsIq2xs[(meta >> (7 * l)) & 127];
                for (int j = 0; j < 8; ++j) y[j] = db * float(byte_of(g, j)) * sign_of(signs, j);
                y += 8;
            }
        }
    }
}

void dequantize_row_iq2_xs(const block_iq2_xs *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_float(x[i].d);
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const float db[2] = {d * (0.5f + float(x[i].scales[ib32] & 0xf)) * 0.25f,
                                 d * (0.5f + float(x[i].scales[ib32] >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l) {
                const uint16_t q = load_u16(&x[i].qs[4 * ib32 + l]);
                const uint64_t g = kIq2xsGrid[q & 511];
                const uint8_t signs = kSignsIq2xs[q >> 9];
                for (int j = 0; j < 8; ++j) y[j] = db[l / 2] * float(byte_of(g, j)) * sign_of(signs, j);
                y += 8;
            }
        }
    }
}

void dequantize_row_iq2_s(const block_iq2_s *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_float(x[i].d);
        const uint8_t *qs = x[i].qs, *signs = x[i].qs + QK_K / 8;
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const float db[2] = {d * (0.5f + float(x[i].scales[ib32] & 0xf)) * 0.25f,
                                 d * (0.5f + float(x[i].scales[ib32] >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l) {
                const uint64_t g = kIq2sGrid[qs[l] | ((x[i].qh[ib32] << (8 - 2 * l)) & 0x300)];
                for (int j = 0; j < 8; ++j) y[j] = db[l / 2] * float(byte_of(g, j)) * sign_of(signs[l], j);
                y += 8;
            }
            qs += 4;
            signs += 4;
        }
    }
}

void dequantize_row_iq3_xxs(const block_iq3_xxs *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_float(x[i].d);
        const uint8_t *qs = x[i].qs, *scales_and_signs = x[i].qs + QK_K / 4;
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            const uint32_t meta = load_u32(scales_and_signs + 4 * ib32);
            const float db = d * (0.5f + float(meta >> 28)) * 0.5f;
            for (int l = 0; l < 4; ++l) {
                const uint8_t signs = kSignsIq2xs[(meta >> (7 * l)) & 127];
                const uint32_t g1 = kIq3xxsGrid[qs[2 * l]], g2 = kIq3xxsGrid[qs[2 * l + 1]];
                for (int j = 0; j < 4; ++j) {
                    y[j] = db * float(byte_of(g1, j)) * sign_of(signs, j);
                    y[j + 4] = db * float(byte_of(g2, j)) * sign_of(signs, j + 4);
                }
                y += 8;
            }
            qs += 8;
        }
    }
}

void dequantize_row_iq3_s(const block_iq3_s *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_float(x[i].d);
        const uint8_t *qs = x[i].qs, *qh = x[i].qh, *signs = x[i].signs;
        for (int ib32 = 0; ib32 < QK_K / 32; ++ib32) {
            // Odd 32-blocks take the high nibble of the shared scale byte and qh's next byte.
            const uint8_t sc = x[i].scales[ib32 / 2];
            const float db = d * float(1 + 2 * (ib32 % 2 ? sc >> 4 : sc & 0xf));
            for (int l = 0; l < 4; ++l) {
                const uint32_t g1 = kIq3sGrid[qs[2 * l] | ((qh[ib32] << (8 - 2 * l)) & 256)];
                const uint32_t g2 = kIq3sGrid[qs[2 * l + 1] | ((qh[ib32] << (7 - 2 * l)) & 256)];
                for (int j = 0; j < 4; ++j) {
                    y[j] = db * float(byte_of(g1, j)) * sign_of(signs[l], j);
                    y[j + 4] = db * float(byte_of(g2, j)) * sign_of(signs[l], j + 4);
                }
                y += 8;
            }
            qs += 8;
            signs += 4;
        }
    }
}

void dequantize_row_iq1_s(const block_iq1_s *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_float(x[i].d);
        const uint8_t *qs = x[i].qs;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const uint16_t qh = load_u16(&x[i].qh[ib]);
            const float dl = d * float(2 * ((qh >> 12) & 7) + 1);
            const float delta = qh & 0x8000 ? -kIq1Delta : kIq1Delta;
            for (int l = 0; l < 4; ++l) {
                const uint64_t g = kIq1sGrid[qs[l] | (((qh >> (3 * l)) & 7) << 8)];
                for (int j = 0; j < 8; ++j) y[j] = dl * (float(int8_t(byte_of(g, j))) + delta);
                y += 8;
            }
            qs += 4;
        }
    }
}

// The f16 super-block scale of an IQ1_M block: the top nibble of each of its 4 u16 scale words.
uint16_t iq1m_scale_bits(const block_iq1_m &x) {
    uint16_t sc[4];
    std::memcpy(sc, x.scales, sizeof sc);
    return uint16_t((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
}

void dequantize_row_iq1_m(const block_iq1_m *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        uint16_t sc[4];
        std::memcpy(sc, x[i].scales, sizeof sc);
        const float d = half_to_float(iq1m_scale_bits(x[i]));
        const uint8_t *qs = x[i].qs, *qh = x[i].qh;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const float dl1 = d * float(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 0)) & 0x7) + 1);
            const float dl2 = d * float(2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 0x7) + 1);
            const uint16_t idx[4] = {uint16_t(qs[0] | ((qh[0] << 8) & 0x700)), uint16_t(qs[1] | ((qh[0] << 4) & 0x700)),
                                     uint16_t(qs[2] | ((qh[1] << 8) & 0x700)), uint16_t(qs[3] | ((qh[1] << 4) & 0x700))};
            const float delta[4] = {qh[0] & 0x08 ? -kIq1Delta : kIq1Delta, qh[0] & 0x80 ? -kIq1Delta : kIq1Delta,
                                    qh[1] & 0x08 ? -kIq1Delta : kIq1Delta, qh[1] & 0x80 ? -kIq1Delta : kIq1Delta};
            for (int l = 0; l < 4; ++l) {
                const uint64_t g = kIq1sGrid[idx[l]];
                const float dl = l < 2 ? dl1 : dl2;
                for (int j = 0; j < 8; ++j) y[j] = dl * (float(int8_t(byte_of(g, j))) + delta[l]);
                y += 8;
            }
            qs += 4;
            qh += 2;
        }
    }
}

void dequantize_row_iq4_nl(const block_iq4_nl *x, float *y, int64_t k) {
    const int64_t nb = k / QK4_NL;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_float(x[i].d);
        for (int j = 0; j < QK4_NL / 2; ++j) {
            y[j] = d * float(kValuesIq4nl[x[i].qs[j] & 0xf]);
            y[j + QK4_NL / 2] = d * float(kValuesIq4nl[x[i].qs[j] >> 4]);
        }
        y += QK4_NL;
    }
}

void dequantize_row_iq4_xs(const block_iq4_xs *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; i++) {
        const uint8_t *qs = x[i].qs;
        const float d = half_to_float(x[i].d);
        const uint16_t scales_h = load_u16(&x[i].scales_h);
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const int ls = ((x[i].scales_l[ib / 2] >> 4 * (ib % 2)) & 0xf) | (((scales_h >> 2 * ib) & 3) << 4);
            const float dl = d * float(ls - 32);
            for (int j = 0; j < 16; ++j) {
                y[j] = dl * float(kValuesIq4nl[qs[j] & 0xf]);
                y[j + 16] = dl * float(kValuesIq4nl[qs[j] >> 4]);
            }
            y += 32;
            qs += 16;
        }
    }
}

// Trit n (0 = most significant) of a TQ1_0 byte: the byte is a fixed-point fraction of 3^5
// (or 3^4), multiplying by 3^n shifts trit n to the top, *3 >> 8 reads it.
inline int tq1_trit(uint8_t q, int n) {
    static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
    const uint8_t s = uint8_t(q * kPow3[n]);
    return (uint16_t(s) * 3) >> 8;
}

void dequantize_row_tq1_0(const block_tq1_0 *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    constexpr int kQs = sizeof(x->qs), kHead = kQs - kQs % 32; // 48 bytes: 32 then 16
    for (int64_t i = 0; i < nb; ++i) {
        const float d = half_to_float(x[i].d);
        for (int j = 0; j < kHead; j += 32)
            for (int n = 0; n < 5; ++n)
                for (int m = 0; m < 32; ++m) *y++ = float(tq1_trit(x[i].qs[j + m], n) - 1) * d;
        for (int j = kHead; j < kQs; j += 16)
            for (int n = 0; n < 5; ++n)
                for (int m = 0; m < 16; ++m) *y++ = float(tq1_trit(x[i].qs[j + m], n) - 1) * d;
        for (int n = 0; n < 4; ++n)
            for (int j = 0; j < int(sizeof(x->qh)); ++j) *y++ = float(tq1_trit(x[i].qh[j], n) - 1) * d;
    }
}

void dequantize_row_tq2_0(const block_tq2_0 *x, float *y, int64_t k) {
    const int64_t nb = k / QK_K;
    for (int64_t i = 0; i < nb; ++i) {
        const float d = half_to_float(x[i].d);
        for (int j = 0; j < int(sizeof(x->qs)); j += 32)
            for (int l = 0; l < 4; ++l)
                for (int m = 0; m < 32; ++m) *y++ = float(((x[i].qs[j + m] >> (l * 2)) & 3) - 1) * d;
    }
}

} // namespace rf::quant
