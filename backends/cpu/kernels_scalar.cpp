// Portable kernels: the reference every SIMD kernel must agree with, and the fallback for CPUs
// without AVX2. Weight blocks are unpacked to small integer arrays, then dotted per column.
#include <array>
#include <cmath>
#include <cstring>

#include "fp16.h"
#include "kernels.h"
#include "rocmforge/abi.h"

namespace rfcpu {
using namespace rf;

size_t act_row_size(ActFormat fmt, int64_t k) {
    switch (fmt) {
    case ActFormat::Q8_K: return size_t(k / QK_K) * sizeof(block_q8_K);
    case ActFormat::Q8_32: return size_t(k / 32) * sizeof(block_q8_32);
    default: return size_t(k) * sizeof(float);
    }
}

namespace {

// ---- activation quantizers (symmetric, round to nearest even, range -127..127) ----

void quantize_q8_K_scalar(const float *x, void *vy, int64_t k) {
    auto *y = static_cast<block_q8_K *>(vy);
    for (int64_t b = 0; b < k / QK_K; ++b, x += QK_K) {
        float amax = 0.f;
        for (int i = 0; i < QK_K; ++i) amax = std::fmax(amax, std::fabs(x[i]));
        const float d = amax / 127.f;
        const float id = amax > 0.f ? 127.f / amax : 0.f;
        y[b].d = d;
        for (int i = 0; i < QK_K; ++i) y[b].qs[i] = int8_t(std::nearbyint(x[i] * id));
        for (int g = 0; g < QK_K / 16; ++g) {
            int s = 0;
            for (int i = 0; i < 16; ++i) s += y[b].qs[g * 16 + i];
            y[b].bsums[g] = int16_t(s);
        }
    }
}

void quantize_q8_32_scalar(const float *x, void *vy, int64_t k) {
    auto *y = static_cast<block_q8_32 *>(vy);
    for (int64_t b = 0; b < k / 32; ++b, x += 32) {
        float amax = 0.f;
        for (int i = 0; i < 32; ++i) amax = std::fmax(amax, std::fabs(x[i]));
        const float d = amax / 127.f;
        const float id = amax > 0.f ? 127.f / amax : 0.f;
        int s = 0;
        for (int i = 0; i < 32; ++i) {
            y[b].qs[i] = int8_t(std::nearbyint(x[i] * id));
            s += y[b].qs[i];
        }
        y[b].d = d;
        y[b].s = d * float(s);
    }
}

// ---- small vector helpers ----

float dot_f32_scalar(const float *a, const float *b, int64_t n) {
    float acc[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
    float s = 0.f;
    for (; i < n; ++i) s += a[i] * b[i];
    for (float v : acc) s += v;
    return s;
}
void axpy_f32_scalar(float *y, const float *x, float a, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}
void f16_to_f32_scalar(const uint16_t *x, float *y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = half_to_float(x[i]);
}
void f32_to_f16_scalar(const float *x, uint16_t *y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = float_to_half(x[i]);
}

// ---- dot kernels ----

template <class Col>
inline void for_cols(const void *act, size_t stride, int ncols, float *out, size_t ostride, Col col) {
    for (int c = 0; c < ncols; ++c)
        out[c * ostride] = col(static_cast<const uint8_t *>(act) + c * stride);
}

void dot_f32w(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    for_cols(act, st, nc, out, os, [&](const uint8_t *a) {
        return dot_f32_scalar(static_cast<const float *>(w), reinterpret_cast<const float *>(a), k);
    });
}

void dot_f16w(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    const auto *wh = static_cast<const uint16_t *>(w);
    for_cols(act, st, nc, out, os, [&](const uint8_t *ab) {
        const auto *a = reinterpret_cast<const float *>(ab);
        float s = 0.f;
        for (int64_t i = 0; i < k; ++i) s += half_to_float(wh[i]) * a[i];
        return s;
    });
}

// Legacy 32-element formats: weight = dw * (q + offset_q) or dw * q + mw, q unsigned.
// dot = dw*da*sum(q*a) + (offset_q*dw or mw) * s_a.
struct Unpacked32 {
    uint8_t q[32];
    float d;
    float m; // coefficient of s_a
};

inline int32_t idot32(const uint8_t *q, const int8_t *a) {
    int32_t s = 0;
    for (int i = 0; i < 32; ++i) s += int32_t(q[i]) * a[i];
    return s;
}

template <class Unpack>
void dot_legacy(int64_t k, const void *w, size_t block_bytes, const void *act, size_t st, int nc,
                float *out, size_t os, Unpack unpack) {
    float sum[kMaxCols] = {};
    const auto *wb = static_cast<const uint8_t *>(w);
    Unpacked32 u;
    for (int64_t b = 0; b < k / 32; ++b) {
        unpack(wb + b * block_bytes, u);
        for (int c = 0; c < nc; ++c) {
            const auto *a = reinterpret_cast<const block_q8_32 *>(static_cast<const uint8_t *>(act) + c * st) + b;
            sum[c] += u.d * a->d * float(idot32(u.q, a->qs)) + u.m * a->s;
        }
    }
    for (int c = 0; c < nc; ++c) out[c * os] = sum[c];
}

void dot_q4_0(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    dot_legacy(k, w, sizeof(block_q4_0), act, st, nc, out, os, [](const uint8_t *p, Unpacked32 &u) {
        const auto *x = reinterpret_cast<const block_q4_0 *>(p);
        for (int i = 0; i < 16; ++i) { u.q[i] = x->qs[i] & 0xF; u.q[i + 16] = x->qs[i] >> 4; }
        u.d = half_to_float(x->d);
        u.m = -8.f * u.d;
    });
}
void dot_q4_1(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    dot_legacy(k, w, sizeof(block_q4_1), act, st, nc, out, os, [](const uint8_t *p, Unpacked32 &u) {
        const auto *x = reinterpret_cast<const block_q4_1 *>(p);
        for (int i = 0; i < 16; ++i) { u.q[i] = x->qs[i] & 0xF; u.q[i + 16] = x->qs[i] >> 4; }
        u.d = half_to_float(x->d);
        u.m = half_to_float(x->m);
    });
}
inline void unpack_q5(const uint8_t *qs, const uint8_t *qh4, uint8_t *q) {
    uint32_t qh;
    std::memcpy(&qh, qh4, 4);
    for (int i = 0; i < 16; ++i) {
        q[i] = uint8_t((qs[i] & 0xF) | (((qh >> i) & 1) << 4));
        q[i + 16] = uint8_t((qs[i] >> 4) | (((qh >> (i + 16)) & 1) << 4));
    }
}
void dot_q5_0(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    dot_legacy(k, w, sizeof(block_q5_0), act, st, nc, out, os, [](const uint8_t *p, Unpacked32 &u) {
        const auto *x = reinterpret_cast<const block_q5_0 *>(p);
        unpack_q5(x->qs, x->qh, u.q);
        u.d = half_to_float(x->d);
        u.m = -16.f * u.d;
    });
}
void dot_q5_1(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    dot_legacy(k, w, sizeof(block_q5_1), act, st, nc, out, os, [](const uint8_t *p, Unpacked32 &u) {
        const auto *x = reinterpret_cast<const block_q5_1 *>(p);
        unpack_q5(x->qs, x->qh, u.q);
        u.d = half_to_float(x->d);
        u.m = half_to_float(x->m);
    });
}
void dot_mxfp4(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    // value = d * (u - 12) with u = table + 12 in [0, 24].
    dot_legacy(k, w, sizeof(block_mxfp4), act, st, nc, out, os, [](const uint8_t *p, Unpacked32 &u) {
        const auto *x = reinterpret_cast<const block_mxfp4 *>(p);
        for (int i = 0; i < 16; ++i) {
            u.q[i] = uint8_t(kMxfp4Values[x->qs[i] & 0xF] + 12);
            u.q[i + 16] = uint8_t(kMxfp4Values[x->qs[i] >> 4] + 12);
        }
        u.d = e8m0_to_float_half(x->e);
        u.m = -12.f * u.d;
    });
}
void dot_q8_0(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    float sum[kMaxCols] = {};
    const auto *x = static_cast<const block_q8_0 *>(w);
    for (int64_t b = 0; b < k / 32; ++b) {
        const float dw = half_to_float(x[b].d);
        for (int c = 0; c < nc; ++c) {
            const auto *a = reinterpret_cast<const block_q8_32 *>(static_cast<const uint8_t *>(act) + c * st) + b;
            int32_t s = 0;
            for (int i = 0; i < 32; ++i) s += int32_t(x[b].qs[i]) * a->qs[i];
            sum[c] += dw * a->d * float(s);
        }
    }
    for (int c = 0; c < nc; ++c) out[c * os] = sum[c];
}

// K-quants: unpack a super-block to 256 unsigned values with 16 (scale, min) pairs of 16
// elements each; dot = d*da*sum_g sc_g*sum(q*a) - dmin*da*sum_g m_g*bsum_g (+ offset*bsum).
struct UnpackedK {
    uint8_t q[QK_K];
    int32_t sc[16]; // per 16 elements
    int32_t mn[16]; // per 16 elements, subtracted: value = d*sc*q - dmin*mn
    float d, dmin;
};

inline void q4k_scale_min(const uint8_t *s, int j, int32_t *sc, int32_t *m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

template <class Unpack>
void dot_kquant(int64_t k, const void *w, size_t block_bytes, const void *act, size_t st, int nc,
                float *out, size_t os, Unpack unpack) {
    float sum[kMaxCols] = {};
    const auto *wb = static_cast<const uint8_t *>(w);
    UnpackedK u;
    for (int64_t b = 0; b < k / QK_K; ++b) {
        unpack(wb + b * block_bytes, u);
        for (int c = 0; c < nc; ++c) {
            const auto *a = reinterpret_cast<const block_q8_K *>(static_cast<const uint8_t *>(act) + c * st) + b;
            int32_t main = 0, mins = 0;
            for (int g = 0; g < 16; ++g) {
                int32_t s = 0;
                for (int i = 0; i < 16; ++i) s += int32_t(u.q[g * 16 + i]) * a->qs[g * 16 + i];
                main += u.sc[g] * s;
                mins += u.mn[g] * a->bsums[g];
            }
            sum[c] += a->d * (u.d * float(main) - u.dmin * float(mins));
        }
    }
    for (int c = 0; c < nc; ++c) out[c * os] = sum[c];
}

void dot_q4_K(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    dot_kquant(k, w, sizeof(block_q4_K), act, st, nc, out, os, [](const uint8_t *p, UnpackedK &u) {
        const auto *x = reinterpret_cast<const block_q4_K *>(p);
        u.d = half_to_float(x->d);
        u.dmin = half_to_float(x->dmin);
        for (int j = 0; j < 4; ++j) {
            for (int l = 0; l < 32; ++l) {
                u.q[64 * j + l] = x->qs[32 * j + l] & 0xF;
                u.q[64 * j + 32 + l] = x->qs[32 * j + l] >> 4;
            }
        }
        for (int j = 0; j < 8; ++j) {
            int32_t sc, m;
            q4k_scale_min(x->scales, j, &sc, &m);
            u.sc[2 * j] = u.sc[2 * j + 1] = sc;
            u.mn[2 * j] = u.mn[2 * j + 1] = m;
        }
    });
}

void dot_q5_K(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    dot_kquant(k, w, sizeof(block_q5_K), act, st, nc, out, os, [](const uint8_t *p, UnpackedK &u) {
        const auto *x = reinterpret_cast<const block_q5_K *>(p);
        u.d = half_to_float(x->d);
        u.dmin = half_to_float(x->dmin);
        for (int j = 0; j < 4; ++j) {
            for (int l = 0; l < 32; ++l) {
                u.q[64 * j + l] = uint8_t((x->qs[32 * j + l] & 0xF) | (((x->qh[l] >> (2 * j)) & 1) << 4));
                u.q[64 * j + 32 + l] = uint8_t((x->qs[32 * j + l] >> 4) | (((x->qh[l] >> (2 * j + 1)) & 1) << 4));
            }
        }
        for (int j = 0; j < 8; ++j) {
            int32_t sc, m;
            q4k_scale_min(x->scales, j, &sc, &m);
            u.sc[2 * j] = u.sc[2 * j + 1] = sc;
            u.mn[2 * j] = u.mn[2 * j + 1] = m;
        }
    });
}

// Q2_K and Q3_K share the element order: element 128n + 32j + l is bits 2j..2j+1 of
// qs[32n + l]; Q3_K adds bit 4n + j of hmask[l] (set: +4 after the -4 offset, i.e. q - 4).
void dot_q2_K(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    dot_kquant(k, w, sizeof(block_q2_K), act, st, nc, out, os, [](const uint8_t *p, UnpackedK &u) {
        const auto *x = reinterpret_cast<const block_q2_K *>(p);
        u.d = half_to_float(x->d);
        u.dmin = half_to_float(x->dmin);
        for (int e = 0; e < QK_K; ++e) u.q[e] = (x->qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
        for (int g = 0; g < 16; ++g) {
            u.sc[g] = x->scales[g] & 0xF;
            u.mn[g] = x->scales[g] >> 4;
        }
    });
}

// Signed 6-bit scale g of a Q3_K block (bias 32 removed).
inline int32_t q3k_scale(const uint8_t *s, int g) {
    const int lo = g < 8 ? s[g] & 0xF : s[g - 8] >> 4;
    const int hi = (s[8 + g % 4] >> (2 * (g / 4))) & 3;
    return (lo | (hi << 4)) - 32;
}

void dot_q3_K(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    // value = d * sc * (u - 4), u = low bits + 4 * high bit in [0, 7]: mins term 4*sc, dmin = d.
    dot_kquant(k, w, sizeof(block_q3_K), act, st, nc, out, os, [](const uint8_t *p, UnpackedK &u) {
        const auto *x = reinterpret_cast<const block_q3_K *>(p);
        u.d = u.dmin = half_to_float(x->d);
        for (int e = 0; e < QK_K; ++e) {
            const int n = e / 128, j = (e % 128) / 32, l = e % 32;
            const int lo = (x->qs[32 * n + l] >> (2 * j)) & 3, hi = (x->hmask[l] >> (4 * n + j)) & 1;
            u.q[e] = uint8_t(lo | (hi << 2));
        }
        for (int g = 0; g < 16; ++g) {
            u.sc[g] = q3k_scale(x->scales, g);
            u.mn[g] = 4 * u.sc[g];
        }
    });
}

void dot_q6_K(int64_t k, const void *w, const void *act, size_t st, int nc, float *out, size_t os) {
    // value = d * sc * (q - 32): mins term is 32*sc with dmin = d.
    dot_kquant(k, w, sizeof(block_q6_K), act, st, nc, out, os, [](const uint8_t *p, UnpackedK &u) {
        const auto *x = reinterpret_cast<const block_q6_K *>(p);
        u.d = u.dmin = half_to_float(x->d);
        for (int h = 0; h < 2; ++h) {
            const uint8_t *ql = x->ql + 64 * h, *qh = x->qh + 32 * h;
            uint8_t *q = u.q + 128 * h;
            for (int l = 0; l < 32; ++l) {
                q[l] = uint8_t((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4));
                q[l + 32] = uint8_t((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4));
                q[l + 64] = uint8_t((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
                q[l + 96] = uint8_t((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
            }
        }
        for (int g = 0; g < 16; ++g) {
            u.sc[g] = x->scales[g];
            u.mn[g] = 32 * x->scales[g];
        }
    });
}

} // namespace

void init_kernels_scalar(KernelSet *ks) {
    *ks = KernelSet{};
    ks->level = SimdLevel::Scalar;
    ks->quantize_q8_K = quantize_q8_K_scalar;
    ks->quantize_q8_32 = quantize_q8_32_scalar;
    ks->dot_f32 = dot_f32_scalar;
    ks->axpy_f32 = axpy_f32_scalar;
    ks->f16_to_f32 = f16_to_f32_scalar;
    ks->f32_to_f16 = f32_to_f16_scalar;
    ks->matmul[RF_TYPE_F32] = {ActFormat::F32, dot_f32w};
    ks->matmul[RF_TYPE_F16] = {ActFormat::F32, dot_f16w};
    ks->matmul[RF_TYPE_Q4_0] = {ActFormat::Q8_32, dot_q4_0};
    ks->matmul[RF_TYPE_Q4_1] = {ActFormat::Q8_32, dot_q4_1};
    ks->matmul[RF_TYPE_Q5_0] = {ActFormat::Q8_32, dot_q5_0};
    ks->matmul[RF_TYPE_Q5_1] = {ActFormat::Q8_32, dot_q5_1};
    ks->matmul[RF_TYPE_Q8_0] = {ActFormat::Q8_32, dot_q8_0};
    ks->matmul[RF_TYPE_MXFP4] = {ActFormat::Q8_32, dot_mxfp4};
    ks->matmul[RF_TYPE_Q2_K] = {ActFormat::Q8_K, dot_q2_K};
    ks->matmul[RF_TYPE_Q3_K] = {ActFormat::Q8_K, dot_q3_K};
    ks->matmul[RF_TYPE_Q4_K] = {ActFormat::Q8_K, dot_q4_K};
    ks->matmul[RF_TYPE_Q5_K] = {ActFormat::Q8_K, dot_q5_K};
    ks->matmul[RF_TYPE_Q6_K] = {ActFormat::Q8_K, dot_q6_K};
    init_kernels_scalar_iq(ks);
    // BF16, MXFP6_*: generic path (rf::dequantize_row + f32 dots).
}

const KernelSet &kernels_for(SimdLevel level) {
    static const std::array<KernelSet, 3> sets = [] {
        std::array<KernelSet, 3> s;
        init_kernels_scalar(&s[0]);
        s[1] = s[0];
        init_kernels_avx2(&s[1]);
        s[2] = s[1];
        init_kernels_avx512(&s[2]);
        return s;
    }();
    return sets[int(level)];
}

} // namespace rfcpu
