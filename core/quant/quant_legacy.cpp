// Legacy 32-element formats Q4_0, Q4_1, Q5_0, Q5_1, Q8_0: ggml's dequantize_row_* and
// quantize_row_*_ref, same arithmetic in the same order.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "quant_internal.h"

namespace rf::quant {

void dequantize_row_q4_0(const block_q4_0 *x, float *y, int64_t k) {
    const int qk = QK4_0;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_float(x[i].d);
        for (int j = 0; j < qk / 2; ++j) {
            const int x0 = (x[i].qs[j] & 0x0F) - 8;
            const int x1 = (x[i].qs[j] >> 4) - 8;
            y[i * qk + j] = x0 * d;
            y[i * qk + j + qk / 2] = x1 * d;
        }
    }
}

void dequantize_row_q4_1(const block_q4_1 *x, float *y, int64_t k) {
    const int qk = QK4_1;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_float(x[i].d);
        const float m = half_to_float(x[i].m);
        for (int j = 0; j < qk / 2; ++j) {
            const int x0 = x[i].qs[j] & 0x0F;
            const int x1 = x[i].qs[j] >> 4;
            y[i * qk + j] = x0 * d + m;
            y[i * qk + j + qk / 2] = x1 * d + m;
        }
    }
}

void dequantize_row_q5_0(const block_q5_0 *x, float *y, int64_t k) {
    const int qk = QK5_0;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_float(x[i].d);
        uint32_t qh;
        std::memcpy(&qh, x[i].qh, sizeof(qh));
        for (int j = 0; j < qk / 2; ++j) {
            const uint8_t xh_0 = ((qh >> (j + 0)) << 4) & 0x10;
            const uint8_t xh_1 = ((qh >> (j + 12))) & 0x10;
            const int32_t x0 = ((x[i].qs[j] & 0x0F) | xh_0) - 16;
            const int32_t x1 = ((x[i].qs[j] >> 4) | xh_1) - 16;
            y[i * qk + j] = x0 * d;
            y[i * qk + j + qk / 2] = x1 * d;
        }
    }
}

void dequantize_row_q5_1(const block_q5_1 *x, float *y, int64_t k) {
    const int qk = QK5_1;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_float(x[i].d);
        const float m = half_to_float(x[i].m);
        uint32_t qh;
        std::memcpy(&qh, x[i].qh, sizeof(qh));
        for (int j = 0; j < qk / 2; ++j) {
            const uint8_t xh_0 = ((qh >> (j + 0)) << 4) & 0x10;
            const uint8_t xh_1 = ((qh >> (j + 12))) & 0x10;
            const int x0 = (x[i].qs[j] & 0x0F) | xh_0;
            const int x1 = (x[i].qs[j] >> 4) | xh_1;
            y[i * qk + j] = x0 * d + m;
            y[i * qk + j + qk / 2] = x1 * d + m;
        }
    }
}

void dequantize_row_q8_0(const block_q8_0 *x, float *y, int64_t k) {
    const int qk = QK8_0;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        const float d = half_to_float(x[i].d);
        for (int j = 0; j < qk; ++j) y[i * qk + j] = x[i].qs[j] * d;
    }
}

// ggml casts the biased value to int8_t; the value is in [0, 17) for finite input, where
// truncation through int gives the same result.
static inline int trunc_small(float v) { return static_cast<int>(v); }

// Minimum and maximum of x[0..n), as ggml's asymmetric quantizers search them.
static void min_and_max(const float *x, int n, float &min, float &max) {
    min = FLT_MAX;
    max = -FLT_MAX;
    for (int j = 0; j < n; j++) {
        const float v = x[j];
        if (v < min) min = v;
        if (v > max) max = v;
    }
}

// Stores 5-bit codes xi0 (element j) and xi1 (element j + 16; QK5_0 == QK5_1): low nibbles
// into qs[j], the fifth bits into bits j and j + 16 of qh.
static inline void pack_q5_pair(uint8_t xi0, uint8_t xi1, int j, uint8_t *qs, uint32_t &qh) {
    qs[j] = static_cast<uint8_t>((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
    qh |= ((xi0 & 0x10u) >> 4) << (j + 0);
    qh |= ((xi1 & 0x10u) >> 4) << (j + QK5_0 / 2);
}

void quantize_row_q4_0(const float *x, block_q4_0 *y, int64_t k) {
    const int qk = QK4_0;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        const float max = max_by_magnitude(x + i * qk, qk).max;
        const float d = max / -8;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = float_to_half(d);
        for (int j = 0; j < qk / 2; ++j) {
            const float x0 = x[i * qk + 0 + j] * id;
            const float x1 = x[i * qk + qk / 2 + j] * id;
            const uint8_t xi0 = static_cast<uint8_t>(std::min(15, trunc_small(x0 + 8.5f)));
            const uint8_t xi1 = static_cast<uint8_t>(std::min(15, trunc_small(x1 + 8.5f)));
            y[i].qs[j] = static_cast<uint8_t>(xi0 | (xi1 << 4));
        }
    }
}

void quantize_row_q4_1(const float *x, block_q4_1 *y, int64_t k) {
    const int qk = QK4_1;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        float min, max;
        min_and_max(x + i * qk, qk, min, max);
        const float d = (max - min) / ((1 << 4) - 1);
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = float_to_half(d);
        y[i].m = float_to_half(min);
        for (int j = 0; j < qk / 2; ++j) {
            const float x0 = (x[i * qk + 0 + j] - min) * id;
            const float x1 = (x[i * qk + qk / 2 + j] - min) * id;
            const uint8_t xi0 = static_cast<uint8_t>(std::min(15, trunc_small(x0 + 0.5f)));
            const uint8_t xi1 = static_cast<uint8_t>(std::min(15, trunc_small(x1 + 0.5f)));
            y[i].qs[j] = static_cast<uint8_t>(xi0 | (xi1 << 4));
        }
    }
}

void quantize_row_q5_0(const float *x, block_q5_0 *y, int64_t k) {
    const int qk = QK5_0;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        const float max = max_by_magnitude(x + i * qk, qk).max;
        const float d = max / -16;
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = float_to_half(d);
        uint32_t qh = 0;
        for (int j = 0; j < qk / 2; ++j) {
            const float x0 = x[i * qk + 0 + j] * id;
            const float x1 = x[i * qk + qk / 2 + j] * id;
            const uint8_t xi0 = static_cast<uint8_t>(std::min(31, trunc_small(x0 + 16.5f)));
            const uint8_t xi1 = static_cast<uint8_t>(std::min(31, trunc_small(x1 + 16.5f)));
            pack_q5_pair(xi0, xi1, j, y[i].qs, qh);
        }
        std::memcpy(&y[i].qh, &qh, sizeof(qh));
    }
}

void quantize_row_q5_1(const float *x, block_q5_1 *y, int64_t k) {
    const int qk = QK5_1;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        float min, max;
        min_and_max(x + i * qk, qk, min, max);
        const float d = (max - min) / ((1 << 5) - 1);
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = float_to_half(d);
        y[i].m = float_to_half(min);
        uint32_t qh = 0;
        for (int j = 0; j < qk / 2; ++j) {
            const float x0 = (x[i * qk + 0 + j] - min) * id;
            const float x1 = (x[i * qk + qk / 2 + j] - min) * id;
            // ggml: (uint8_t)(x + 0.5f), no clamp (x is in [0, 31.5] by construction)
            const uint8_t xi0 = static_cast<uint8_t>(trunc_small(x0 + 0.5f));
            const uint8_t xi1 = static_cast<uint8_t>(trunc_small(x1 + 0.5f));
            pack_q5_pair(xi0, xi1, j, y[i].qs, qh);
        }
        std::memcpy(&y[i].qh, &qh, sizeof(y[i].qh));
    }
}

void quantize_row_q8_0(const float *x, block_q8_0 *y, int64_t k) {
    const int64_t nb = k / QK8_0;
    for (int64_t i = 0; i < nb; i++) {
        float amax = 0.0f;
        for (int j = 0; j < QK8_0; j++) {
            const float v = std::fabs(x[i * QK8_0 + j]);
            amax = amax > v ? amax : v; // ggml's MAX macro (differs from std::max on NaN)
        }
        const float d = amax / ((1 << 7) - 1);
        const float id = d ? 1.0f / d : 0.0f;
        y[i].d = float_to_half(d);
        for (int j = 0; j < QK8_0; ++j) {
            const float x0 = x[i * QK8_0 + j] * id;
            y[i].qs[j] = static_cast<int8_t>(static_cast<int>(std::round(x0)));
        }
    }
}

} // namespace rf::quant
