// AVX2 dot kernels of the most used i-quants and ternary formats: IQ4_NL, IQ4_XS, IQ2_XXS,
// IQ3_XXS, TQ2_0 (the others keep the scalar kernels of kernels_scalar_iq.cpp). Signed weights
// go through maddubs as |w| x (a with w's sign); the grid formats look their entries up per
// group and flip the activations' signs with a byte mask instead.
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
        for (int c = 0; c < NC; ++c) {
            const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * a->d), _mm256_cvtepi32_ps(sumi[c]), acc[c]);
        }
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
        for (int c = 0; c < NC; ++c) {
            const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * a->d), _mm256_cvtepi32_ps(sumi[c]), acc[c]);
        }
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

template <int NC> struct Iq4NlW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_iq4_nl_w<NC>(k, w, a, s, o, os); } };
template <int NC> struct Iq4XsW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_iq4_xs_w<NC>(k, w, a, s, o, os); } };
template <int NC> struct Iq2XxsW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_iq_xxs_w<NC, false>(k, w, a, s, o, os); } };
template <int NC> struct Iq3XxsW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_iq_xxs_w<NC, true>(k, w, a, s, o, os); } };
template <int NC> struct Tq2W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_tq2_0_w<NC>(k, w, a, s, o, os); } };

} // namespace

void init_kernels_avx2_iq(KernelSet *ks) {
    ks->matmul[RF_TYPE_IQ4_NL] = {ActFormat::Q8_32, dispatch_tiles_of_4<Iq4NlW>};
    ks->matmul[RF_TYPE_IQ4_XS] = {ActFormat::Q8_K, dispatch_tiles_of_4<Iq4XsW>};
    ks->matmul[RF_TYPE_IQ2_XXS] = {ActFormat::Q8_K, dispatch_tiles_of_4<Iq2XxsW>};
    ks->matmul[RF_TYPE_IQ3_XXS] = {ActFormat::Q8_K, dispatch_tiles_of_4<Iq3XxsW>};
    ks->matmul[RF_TYPE_TQ2_0] = {ActFormat::Q8_K, dispatch_tiles_of_4<Tq2W>};
}

} // namespace rfcpu
