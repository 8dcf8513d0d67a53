// AVX2 kernels for the weight formats beyond the Q4_K_M / Q8_0 core set: Q4_1, Q5_0, Q5_1,
// MXFP4 (q8_32 activations) and Q2_K, Q3_K (q8_K activations). Same scheme as
// kernels_avx2.cpp: unsigned weight bytes x int8 activations with maddubs, sub-block scales
// folded into the following madd, offsets applied through the activation sums.
#include "kernels_avx2_target.h"
#include "kernels_x86_block32.h"

namespace rfcpu {
using namespace rf;
using namespace x86;

namespace {

// ---- 32-element formats (unpackers in kernels_x86_block32.h); dot = d*da*sum(u*qa) + m*s_a ----

// Bit i of the 32-bit field -> 0x10 in byte i (byte i tests bit i%8 of byte i/8 of the field).
RF_AVX2_INLINE __m256i fifth_bits(const uint8_t *qh) {
    uint32_t bits;
    std::memcpy(&bits, qh, 4);
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(int(bits)),
                                               _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                                                2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

// sum of u8 x s8 products of 32 bytes, as 8 i32 lanes.
RF_AVX2_INLINE __m256i dot_u8s8(__m256i u, __m256i s) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

template <int NC, class U>
RF_AVX2 void dot_q32_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    const auto *x = static_cast<const typename U::B *>(w);
    __m256 acc[NC];
    float off[NC] = {};
    for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / 32; ++b) {
        const Block32 blk = U::get(x[b]);
        for (int c = 0; c < NC; ++c) {
            const block_q8_32 *a = col_block<block_q8_32>(act, st, c, b);
            const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs));
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(blk.d * a->d), _mm256_cvtepi32_ps(dot_u8s8(blk.u, av)), acc[c]);
            off[c] += blk.m * a->s;
        }
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]) + off[c];
}

// ---- Q2_K / Q3_K: 16 sub-blocks of 16 elements with their own scale ----

// Elements 64j..64j+31 (W[2j]) and 64j+32..64j+63 (W[2j+1]) as bytes; element 128n + 32i + l
// is bits 2i..2i+1 of qs[32n + l].
RF_AVX2_INLINE void low2_bits(const uint8_t *qs, __m256i W[8]) {
    const __m256i m3 = _mm256_set1_epi8(3);
    for (int n = 0; n < 2; ++n) {
        const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(qs + 32 * n));
        W[4 * n + 0] = _mm256_and_si256(q, m3);
        W[4 * n + 1] = _mm256_and_si256(_mm256_srli_epi16(q, 2), m3);
        W[4 * n + 2] = _mm256_and_si256(_mm256_srli_epi16(q, 4), m3);
        W[4 * n + 3] = _mm256_and_si256(_mm256_srli_epi16(q, 6), m3);
    }
}

// acc += d*da * sum_g sc[g] * (W . a)_g; accm += dmin*da * sum_g mins[g] * bsum_g.
template <int NC>
RF_AVX2_INLINE void kquant16(const __m256i W[8], const int8_t sc[16], __m256i mins16, float d, float dmin,
                             const void *act, size_t st, int64_t b, __m256 *acc, __m256 *accm) {
    __m256i sumi[NC];
    for (int c = 0; c < NC; ++c) sumi[c] = _mm256_setzero_si256();
    for (int i = 0; i < 8; ++i) {
        const __m256i scv = _mm256_set_m128i(_mm_set1_epi16(sc[2 * i + 1]), _mm_set1_epi16(sc[2 * i]));
        for (int c = 0; c < NC; ++c) {
            const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
            const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs + 32 * i));
            sumi[c] = _mm256_add_epi32(sumi[c], _mm256_madd_epi16(_mm256_maddubs_epi16(W[i], av), scv));
        }
    }
    for (int c = 0; c < NC; ++c) {
        const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
        acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * a->d), _mm256_cvtepi32_ps(sumi[c]), acc[c]);
        const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->bsums));
        accm[c] = _mm256_fmadd_ps(_mm256_set1_ps(dmin * a->d), _mm256_cvtepi32_ps(_mm256_madd_epi16(mins16, bs)), accm[c]);
    }
}

template <int NC>
RF_AVX2 void dot_q2_K_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    __m256 acc[NC], accm[NC];
    for (int c = 0; c < NC; ++c) acc[c] = accm[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / QK_K; ++b) {
        const auto *x = static_cast<const block_q2_K *>(w) + b;
        __m256i W[8];
        low2_bits(x->qs, W);
        alignas(16) int8_t sc[16];
        const __m128i sb = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x->scales));
        const __m128i m4 = _mm_set1_epi8(0x0F);
        _mm_store_si128(reinterpret_cast<__m128i *>(sc), _mm_and_si128(sb, m4));
        const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sb, 4), m4));
        kquant16<NC>(W, sc, mins16, h2f(x->d), h2f(x->dmin), act, st, b, acc, accm);
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]) - hsum256(accm[c]);
}

template <int NC>
RF_AVX2 void dot_q3_K_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    __m256 acc[NC], accm[NC];
    for (int c = 0; c < NC; ++c) acc[c] = accm[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / QK_K; ++b) {
        const auto *x = static_cast<const block_q3_K *>(w) + b;
        __m256i W[8];
        low2_bits(x->qs, W);
        // High bit of W[i] (element 128n + 32i' + l, i = 4n + i'): bit i of hmask[l]; set -> +4.
        const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x->hmask));
        for (int i = 0; i < 8; ++i) {
            const __m256i bit = _mm256_set1_epi8(char(1 << i));
            const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(hm, bit), bit);
            W[i] = _mm256_add_epi8(W[i], _mm256_and_si256(set, _mm256_set1_epi8(4)));
        }
        uint32_t aux[4];
        unpack_q3k_scales(x->scales, aux);
        alignas(16) int8_t sc[16];
        const __m128i sc8 = _mm_sub_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(aux)), _mm_set1_epi8(32));
        _mm_store_si128(reinterpret_cast<__m128i *>(sc), sc8);
        const __m256i mins16 = _mm256_slli_epi16(_mm256_cvtepi8_epi16(sc8), 2); // 4 * sc
        const float d = h2f(x->d);
        kquant16<NC>(W, sc, mins16, d, d, act, st, b, acc, accm);
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]) - hsum256(accm[c]);
}

template <int NC> struct Q4_1W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q32_w<NC, UnpackQ4_1>(k, w, a, s, o, os); } };
template <int NC> struct Q5_0W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q32_w<NC, UnpackQ5_0>(k, w, a, s, o, os); } };
template <int NC> struct Q5_1W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q32_w<NC, UnpackQ5_1>(k, w, a, s, o, os); } };
template <int NC> struct Mxfp4W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q32_w<NC, UnpackMxfp4>(k, w, a, s, o, os); } };
template <int NC> struct Q2_KW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q2_K_w<NC>(k, w, a, s, o, os); } };
template <int NC> struct Q3_KW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q3_K_w<NC>(k, w, a, s, o, os); } };

} // namespace

void init_kernels_avx2_extra(KernelSet *ks) {
    ks->matmul[RF_TYPE_Q4_1] = {ActFormat::Q8_32, dispatch_tiles_of_4<Q4_1W>};
    ks->matmul[RF_TYPE_Q5_0] = {ActFormat::Q8_32, dispatch_tiles_of_4<Q5_0W>};
    ks->matmul[RF_TYPE_Q5_1] = {ActFormat::Q8_32, dispatch_tiles_of_4<Q5_1W>};
    ks->matmul[RF_TYPE_MXFP4] = {ActFormat::Q8_32, dispatch_tiles_of_4<Mxfp4W>};
    ks->matmul[RF_TYPE_Q2_K] = {ActFormat::Q8_K, dispatch_tiles_of_4<Q2_KW>};
    ks->matmul[RF_TYPE_Q3_K] = {ActFormat::Q8_K, dispatch_tiles_of_4<Q3_KW>};
}

} // namespace rfcpu
