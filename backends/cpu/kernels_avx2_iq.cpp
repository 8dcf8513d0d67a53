// AVX2 dot kernels of the i-quants and the ternary formats (the scalar references are in
// kernels_scalar_iq.cpp). Signed weights go through maddubs as |w| x (a with w's sign); the
// grid formats look their entries up per group of 8 (or 4) elements and flip the activations'
// signs with a byte mask instead.
#include "kernels_avx2_target.h"
#include "rocmforge/iq_grids.h"

namespace rfcpu {
using namespace rf;
using namespace rf::iq;
using namespace x86;

namespace {

RF_AVX2_INLINE __m256i iq4_values(const uint8_t *qs) {
    const __m128i lut = _mm_loadu_si128(reinterpret_cast<const __m128i *>(kValuesIq4nl));
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i *>(qs));
    const __m128i m4 = _mm_set1_epi8(0x0F);
    return _mm256_set_m128i(_mm_shuffle_epi8(lut, _mm_and_si128(_mm_srli_epi16(q, 4), m4)),
                            _mm_shuffle_epi8(lut, _mm_and_si128(q, m4)));
}

// Signed bytes w x signed bytes a, summed in pairs to i16 (|w|, |a| <= 127: no saturation).
RF_AVX2_INLINE __m256i dot_s8s8_i16(__m256i w, __m256i a) {
    return _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(a, w));
}

RF_AVX2_INLINE uint16_t load_u16(const void *p) { uint16_t v; std::memcpy(&v, p, 2); return v; }
RF_AVX2_INLINE uint32_t load_u32(const void *p) { uint32_t v; std::memcpy(&v, p, 4); return v; }

// Column c's integer sum of 256-block b, scaled by the weights' d and its q8_K d, into acc[c].
template <int NC>
RF_AVX2_INLINE void add_block_sums(__m256 (&acc)[NC], const __m256i (&sumi)[NC], float d, const void *act, size_t st, int64_t b) {
    for (int c = 0; c < NC; ++c) {
        const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
        acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * a->d), _mm256_cvtepi32_ps(sumi[c]), acc[c]);
    }
}

// 32 signed weights v of sub-block ib against each column's quants there, pairs weighted by scale.
template <int NC>
RF_AVX2_INLINE void add_sub_block(__m256i (&sumi)[NC], __m256i v, __m256i scale, const void *act, size_t st, int64_t b, int ib) {
    for (int c = 0; c < NC; ++c) {
        const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
        const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs + 32 * ib));
        sumi[c] = _mm256_add_epi32(sumi[c], _mm256_madd_epi16(dot_s8s8_i16(v, av), scale));
    }
}


template <int NC>
RF_AVX2 void dot_iq4_nl_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    const auto *x = static_cast<const block_iq4_nl *>(w);
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc[NC];
    for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / QK4_NL; ++b) {
        const __m256i wv = iq4_values(x[b].qs);
        const float d = h2f(x[b].d);
        for (int c = 0; c < NC; ++c) {
            const block_q8_32 *a = col_block<block_q8_32>(act, st, c, b);
            const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs));
            const __m256i s = _mm256_madd_epi16(dot_s8s8_i16(wv, av), ones);
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * a->d), _mm256_cvtepi32_ps(s), acc[c]);
        }
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]);
}

template <int NC>
RF_AVX2 void dot_iq4_xs_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    __m256 acc[NC];
    for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / QK_K; ++b) {
        const auto *x = static_cast<const block_iq4_xs *>(w) + b;
        prefetch_ahead<sizeof(block_iq4_xs)>(x);
        const float d = h2f(x->d);
        const uint16_t scales_h = load_u16(&x->scales_h);
        __m256i sumi[NC];
        for (int c = 0; c < NC; ++c) sumi[c] = _mm256_setzero_si256();
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const int ls = ((x->scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4);
            const __m256i scale = _mm256_set1_epi16(int16_t(ls - 32));
            const __m256i wv = iq4_values(x->qs + 16 * ib);
            for (int c = 0; c < NC; ++c) {
                const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
                const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs + 32 * ib));
                sumi[c] = _mm256_add_epi32(sumi[c], _mm256_madd_epi16(dot_s8s8_i16(wv, av), scale));
            }
        }
        add_block_sums(acc, sumi, d, act, st, b);
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]);
}

// The 4 groups of 8 signs of a 32-element block (7 stored bits each at meta >> 7l) as byte masks.
RF_AVX2_INLINE __m256i sign_masks(uint32_t meta) {
    return _mm256_set_epi64x(int64_t(kSignMasksIq2xs[(meta >> 21) & 127]), int64_t(kSignMasksIq2xs[(meta >> 14) & 127]),
                             int64_t(kSignMasksIq2xs[(meta >> 7) & 127]), int64_t(kSignMasksIq2xs[meta & 127]));
}

// a where mask is 0, -a where mask is 0xFF (a in -127..127).
RF_AVX2_INLINE __m256i flip(__m256i a, __m256i mask) { return _mm256_sub_epi8(_mm256_xor_si256(a, mask), mask); }

// IQ2_XXS and IQ3_XXS share the 32-element block shape: grid magnitudes, then a u32 of four
// 7-bit sign groups and a 4-bit scale s (value = d * factor * (2s+1) * magnitude * sign).
template <int NC, bool kThree>
RF_AVX2 void dot_iq_xxs_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    constexpr size_t kBlock = kThree ? sizeof(block_iq3_xxs) : sizeof(block_iq2_xxs);
    constexpr float kFactor = kThree ? 0.25f : 0.125f;
    __m256 acc[NC];
    for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / QK_K; ++b) {
        const uint8_t *p = static_cast<const uint8_t *>(w) + b * kBlock;
        prefetch_ahead<kBlock>(p);
        const float d = h2f(load_u16(p)) * kFactor;
        __m256i sumi[NC];
        for (int c = 0; c < NC; ++c) sumi[c] = _mm256_setzero_si256();
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            __m256i mag;
            uint32_t meta;
            if constexpr (kThree) {
                const uint8_t *q = p + 2 + 8 * ib;
                meta = load_u32(p + 2 + QK_K / 4 + 4 * ib);
                mag = _mm256_set_epi32(int(kIq3xxsGrid[q[7]]), int(kIq3xxsGrid[q[6]]), int(kIq3xxsGrid[q[5]]),
                                       int(kIq3xxsGrid[q[4]]), int(kIq3xxsGrid[q[3]]), int(kIq3xxsGrid[q[2]]),
                                       int(kIq3xxsGrid[q[1]]), int(kIq3xxsGrid[q[0]]));
            } else {
                const uint8_t *q = p + 2 + 8 * ib;
                meta = load_u32(q + 4);
                mag = _mm256_set_epi64x(int64_t(kIq2xxsGrid[q[3]]), int64_t(kIq2xxsGrid[q[2]]),
                                        int64_t(kIq2xxsGrid[q[1]]), int64_t(kIq2xxsGrid[q[0]]));
            }
            const __m256i masks = sign_masks(meta);
            const __m256i scale = _mm256_set1_epi16(int16_t(2 * (meta >> 28) + 1));
            for (int c = 0; c < NC; ++c) {
                const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
                const __m256i av = flip(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs + 32 * ib)), masks);
                sumi[c] = _mm256_add_epi32(sumi[c], _mm256_madd_epi16(_mm256_maddubs_epi16(mag, av), scale));
            }
        }
        add_block_sums(acc, sumi, d, act, st, b);
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]);
}

// 4 sign bytes (bit j of byte g: element 8g + j negative) as 32 byte masks.
RF_AVX2_INLINE __m256i byte_sign_masks(uint32_t four) {
    const __m256i shuf = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                          2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bits = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
    const __m256i b = _mm256_shuffle_epi8(_mm256_set1_epi32(int(four)), shuf);
    return _mm256_cmpeq_epi8(_mm256_and_si256(b, bits), bits);
}

// One 32-element block of a grid format: unsigned magnitudes, sign masks and the int16 scales of
// its two 16-element halves (the madd lanes 0..7 hold elements 0..15, lanes 8..15 the rest).
struct Grid32 {
    __m256i mag, masks, scales;
};

RF_AVX2_INLINE __m256i half_scales(int lo, int hi) {
    return _mm256_set_m128i(_mm_set1_epi16(int16_t(hi)), _mm_set1_epi16(int16_t(lo)));
}

struct Iq2Xs {
    static constexpr size_t kBlock = sizeof(block_iq2_xs);
    static constexpr float kFactor = 0.125f;
    RF_AVX2_INLINE static Grid32 get(const uint8_t *p, int ib) {
        const auto *x = reinterpret_cast<const block_iq2_xs *>(p);
        uint16_t q[4];
        std::memcpy(q, p + 2 + 8 * ib, 8);
        return {_mm256_set_epi64x(int64_t(kIq2xsGrid[q[3] & 511]), int64_t(kIq2xsGrid[q[2] & 511]),
                                  int64_t(kIq2xsGrid[q[1] & 511]), int64_t(kIq2xsGrid[q[0] & 511])),
                _mm256_set_epi64x(int64_t(kSignMasksIq2xs[q[3] >> 9]), int64_t(kSignMasksIq2xs[q[2] >> 9]),
                                  int64_t(kSignMasksIq2xs[q[1] >> 9]), int64_t(kSignMasksIq2xs[q[0] >> 9])),
                half_scales(2 * (x->scales[ib] & 0xF) + 1, 2 * (x->scales[ib] >> 4) + 1)};
    }
};

struct Iq2S {
    static constexpr size_t kBlock = sizeof(block_iq2_s);
    static constexpr float kFactor = 0.125f;
    RF_AVX2_INLINE static Grid32 get(const uint8_t *p, int ib) {
        const auto *x = reinterpret_cast<const block_iq2_s *>(p);
        const uint8_t *qs = x->qs + 4 * ib;
        const int qh = x->qh[ib];
        return {_mm256_set_epi64x(int64_t(kIq2sGrid[qs[3] | ((qh << 2) & 0x300)]), int64_t(kIq2sGrid[qs[2] | ((qh << 4) & 0x300)]),
                                  int64_t(kIq2sGrid[qs[1] | ((qh << 6) & 0x300)]), int64_t(kIq2sGrid[qs[0] | ((qh << 8) & 0x300)])),
                byte_sign_masks(load_u32(x->qs + QK_K / 8 + 4 * ib)),
                half_scales(2 * (x->scales[ib] & 0xF) + 1, 2 * (x->scales[ib] >> 4) + 1)};
    }
};

struct Iq3S {
    static constexpr size_t kBlock = sizeof(block_iq3_s);
    static constexpr float kFactor = 1.0f;
    RF_AVX2_INLINE static Grid32 get(const uint8_t *p, int ib) {
        const auto *x = reinterpret_cast<const block_iq3_s *>(p);
        const uint8_t *qs = x->qs + 8 * ib;
        const int qh = x->qh[ib];
        auto g = [&](int k) { return int(kIq3sGrid[qs[k] | (((qh >> k) & 1) << 8)]); };
        const uint8_t sc = x->scales[ib / 2];
        const int s = 1 + 2 * (ib % 2 ? sc >> 4 : sc & 0xF);
        return {_mm256_set_epi32(g(7), g(6), g(5), g(4), g(3), g(2), g(1), g(0)),
                byte_sign_masks(load_u32(x->signs + 4 * ib)), half_scales(s, s)};
    }
};

// IQ2_XS, IQ2_S, IQ3_S: value = d * factor * scale(half) * magnitude * sign.
template <int NC, class F>
RF_AVX2 void dot_grid_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    __m256 acc[NC];
    for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / QK_K; ++b) {
        const uint8_t *p = static_cast<const uint8_t *>(w) + b * F::kBlock;
        prefetch_ahead<F::kBlock>(p);
        const float d = h2f(load_u16(p)) * F::kFactor;
        __m256i sumi[NC];
        for (int c = 0; c < NC; ++c) sumi[c] = _mm256_setzero_si256();
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const Grid32 g = F::get(p, ib);
            for (int c = 0; c < NC; ++c) {
                const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
                const __m256i av = flip(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs + 32 * ib)), g.masks);
                sumi[c] = _mm256_add_epi32(sumi[c], _mm256_madd_epi16(_mm256_maddubs_epi16(g.mag, av), g.scales));
            }
        }
        add_block_sums(acc, sumi, d, act, st, b);
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]);
}

// IQ1_S: value = d/8 * (2s+1) * (8 * grid +- 1), grid bytes in {-1, 0, 1}.
template <int NC>
RF_AVX2 void dot_iq1_s_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    __m256 acc[NC];
    for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / QK_K; ++b) {
        const auto *x = static_cast<const block_iq1_s *>(w) + b;
        prefetch_ahead<sizeof(block_iq1_s)>(x);
        const float d = h2f(x->d) * 0.125f;
        __m256i sumi[NC];
        for (int c = 0; c < NC; ++c) sumi[c] = _mm256_setzero_si256();
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const uint16_t qh = load_u16(&x->qh[ib]);
            const uint8_t *qs = x->qs + 4 * ib;
            auto g = [&](int l) { return int64_t(kIq1sGrid[qs[l] | (((qh >> (3 * l)) & 7) << 8)]); };
            __m256i v = _mm256_set_epi64x(g(3), g(2), g(1), g(0));
            v = _mm256_add_epi8(v, v);
            v = _mm256_add_epi8(v, v);
            v = _mm256_add_epi8(v, v);
            v = _mm256_add_epi8(v, _mm256_set1_epi8(qh & 0x8000 ? -1 : 1));
            const __m256i scale = _mm256_set1_epi16(int16_t(2 * ((qh >> 12) & 7) + 1));
            add_sub_block(sumi, v, scale, act, st, b, ib);
        }
        add_block_sums(acc, sumi, d, act, st, b);
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]);
}

// IQ1_M: as IQ1_S with the delta sign per 8 elements, a 3-bit scale per 16 and the f16 d spread
// over the top nibbles of the scale words.
template <int NC>
RF_AVX2 void dot_iq1_m_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    __m256 acc[NC];
    for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / QK_K; ++b) {
        const auto *x = static_cast<const block_iq1_m *>(w) + b;
        prefetch_ahead<sizeof(block_iq1_m)>(x);
        uint16_t sc[4];
        std::memcpy(sc, x->scales, sizeof sc);
        const uint16_t dbits = uint16_t((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
        const float d = h2f(dbits) * 0.125f;
        __m256i sumi[NC];
        for (int c = 0; c < NC; ++c) sumi[c] = _mm256_setzero_si256();
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const uint8_t *qs = x->qs + 4 * ib, *qh = x->qh + 2 * ib;
            // Group l's nibble: low nibble of qh[l / 2] for even l, high for odd.
            auto nib = [&](int l) { return (qh[l / 2] >> (4 * (l % 2))) & 15; };
            auto g = [&](int l) { return int64_t(kIq1sGrid[qs[l] | ((nib(l) & 7) << 8)]); };
            auto delta = [&](int l) { return nib(l) & 8 ? int64_t(-1) : int64_t(0x0101010101010101); };
            __m256i v = _mm256_set_epi64x(g(3), g(2), g(1), g(0));
            v = _mm256_add_epi8(v, v);
            v = _mm256_add_epi8(v, v);
            v = _mm256_add_epi8(v, v);
            v = _mm256_add_epi8(v, _mm256_set_epi64x(delta(3), delta(2), delta(1), delta(0)));
            const int s1 = 2 * ((sc[ib / 2] >> (6 * (ib % 2))) & 7) + 1, s2 = 2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3)) & 7) + 1;
            const __m256i scale = half_scales(s1, s2);
            add_sub_block(sumi, v, scale, act, st, b, ib);
        }
        add_block_sums(acc, sumi, d, act, st, b);
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]);
}

// TQ2_0: value (q - 1) * d with q the 2-bit code: sum(q * a) - sum(a), sum(a) from the bsums.
template <int NC>
RF_AVX2 void dot_tq2_0_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    const __m256i m3 = _mm256_set1_epi8(3), ones = _mm256_set1_epi16(1);
    __m256 acc[NC];
    for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / QK_K; ++b) {
        const auto *x = static_cast<const block_tq2_0 *>(w) + b;
        prefetch_ahead<sizeof(block_tq2_0)>(x);
        const float d = h2f(x->d);
        __m256i sumi[NC];
        for (int c = 0; c < NC; ++c) sumi[c] = _mm256_setzero_si256();
        for (int h = 0; h < 2; ++h) {
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x->qs + 32 * h));
            for (int l = 0; l < 4; ++l) {
                const __m256i v = _mm256_and_si256(_mm256_srli_epi16(q, 2 * l), m3);
                for (int c = 0; c < NC; ++c) {
                    const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
                    const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs + 128 * h + 32 * l));
                    sumi[c] = _mm256_add_epi32(sumi[c], _mm256_madd_epi16(_mm256_maddubs_epi16(v, av), ones));
                }
            }
        }
        for (int c = 0; c < NC; ++c) {
            const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
            const __m256i bs = _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->bsums)), ones);
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * a->d), _mm256_cvtepi32_ps(_mm256_sub_epi32(sumi[c], bs)), acc[c]);
        }
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]);
}

// Trits of 16 TQ1_0 bytes, element i multiplied by mult[i] (3^n selects trit n): the byte is a
// base-3 fraction, (q * 3^n mod 256) * 3 >> 8 reads trit n.
RF_AVX2_INLINE __m128i trits16(__m128i q, __m256i mult) {
    const __m256i m = _mm256_and_si256(_mm256_mullo_epi16(_mm256_cvtepu8_epi16(q), mult), _mm256_set1_epi16(0xFF));
    const __m256i t = _mm256_srli_epi16(_mm256_mullo_epi16(m, _mm256_set1_epi16(3)), 8);
    return _mm_packus_epi16(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
}

// TQ1_0: value (t - 1) * d: sum(t * a) - sum(a) as for TQ2_0. The 256 trits unpack to 8 vectors
// of 32 consecutive elements: 5 from the first 32 bytes, 2.5 from the next 16, 0.5 from qh.
template <int NC>
RF_AVX2 void dot_tq1_0_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    const __m256i ones = _mm256_set1_epi16(1);
    static constexpr int16_t kPow3[5] = {1, 3, 9, 27, 81};
    __m256 acc[NC];
    for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / QK_K; ++b) {
        const auto *x = static_cast<const block_tq1_0 *>(w) + b;
        prefetch_ahead<sizeof(block_tq1_0)>(x);
        const float d = h2f(x->d);
        const __m128i q0 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x->qs));
        const __m128i q1 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x->qs + 16));
        const __m128i q2 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x->qs + 32));
        __m256i v[8];
        for (int n = 0; n < 5; ++n) {
            const __m256i p = _mm256_set1_epi16(kPow3[n]);
            v[n] = _mm256_set_m128i(trits16(q1, p), trits16(q0, p));
        }
        v[5] = _mm256_set_m128i(trits16(q2, _mm256_set1_epi16(3)), trits16(q2, ones));
        v[6] = _mm256_set_m128i(trits16(q2, _mm256_set1_epi16(27)), trits16(q2, _mm256_set1_epi16(9)));
        const __m256i qh_mult = _mm256_setr_epi16(1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27);
        v[7] = _mm256_set_m128i(trits16(_mm_set1_epi32(int(load_u32(x->qh))), qh_mult), trits16(q2, _mm256_set1_epi16(81)));
        for (int c = 0; c < NC; ++c) {
            const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
            __m256i sumi = _mm256_setzero_si256();
            for (int i = 0; i < 8; ++i) {
                const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs + 32 * i));
                sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(_mm256_maddubs_epi16(v[i], av), ones));
            }
            const __m256i bs = _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->bsums)), ones);
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * a->d), _mm256_cvtepi32_ps(_mm256_sub_epi32(sumi, bs)), acc[c]);
        }
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]);
}

template <int NC> struct Iq4NlW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_iq4_nl_w<NC>(k, w, a, s, o, os); } };
template <int NC> struct Iq4XsW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_iq4_xs_w<NC>(k, w, a, s, o, os); } };
template <int NC> struct Iq2XxsW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_iq_xxs_w<NC, false>(k, w, a, s, o, os); } };
template <int NC> struct Iq3XxsW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_iq_xxs_w<NC, true>(k, w, a, s, o, os); } };
template <int NC> struct Iq2XsW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_grid_w<NC, Iq2Xs>(k, w, a, s, o, os); } };
template <int NC> struct Iq2SW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_grid_w<NC, Iq2S>(k, w, a, s, o, os); } };
template <int NC> struct Iq3SW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_grid_w<NC, Iq3S>(k, w, a, s, o, os); } };
template <int NC> struct Iq1SW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_iq1_s_w<NC>(k, w, a, s, o, os); } };
template <int NC> struct Iq1MW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_iq1_m_w<NC>(k, w, a, s, o, os); } };
template <int NC> struct Tq1W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_tq1_0_w<NC>(k, w, a, s, o, os); } };
template <int NC> struct Tq2W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_tq2_0_w<NC>(k, w, a, s, o, os); } };

} // namespace

void init_kernels_avx2_iq(KernelSet *ks) {
    ks->matmul[RF_TYPE_IQ4_NL] = {ActFormat::Q8_32, dispatch_tiles_of_4<Iq4NlW>};
    ks->matmul[RF_TYPE_IQ4_XS] = {ActFormat::Q8_K, dispatch_tiles_of_4<Iq4XsW>};
    ks->matmul[RF_TYPE_IQ2_XXS] = {ActFormat::Q8_K, dispatch_tiles_of_4<Iq2XxsW>};
    ks->matmul[RF_TYPE_IQ3_XXS] = {ActFormat::Q8_K, dispatch_tiles_of_4<Iq3XxsW>};
    ks->matmul[RF_TYPE_TQ2_0] = {ActFormat::Q8_K, dispatch_tiles_of_4<Tq2W>};
    ks->matmul[RF_TYPE_TQ1_0] = {ActFormat::Q8_K, dispatch_tiles_of_4<Tq1W>};
    ks->matmul[RF_TYPE_IQ1_M] = {ActFormat::Q8_K, dispatch_tiles_of_4<Iq1MW>};
    ks->matmul[RF_TYPE_IQ2_XS] = {ActFormat::Q8_K, dispatch_tiles_of_4<Iq2XsW>};
    ks->matmul[RF_TYPE_IQ2_S] = {ActFormat::Q8_K, dispatch_tiles_of_4<Iq2SW>};
    ks->matmul[RF_TYPE_IQ3_S] = {ActFormat::Q8_K, dispatch_tiles_of_4<Iq3SW>};
    ks->matmul[RF_TYPE_IQ1_S] = {ActFormat::Q8_K, dispatch_tiles_of_4<Iq1SW>};
}

} // namespace rfcpu
