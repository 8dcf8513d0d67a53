// AVX-512 VNNI kernels for the weight formats beyond the Q4_K_M / Q8_0 core set: the 32-element
// formats Q4_1, Q5_0, Q5_1, MXFP4 (q8_32 activations) and the low-bit K-quants Q2_K, Q3_K
// (q8_K activations). Same scheme as kernels_avx512.cpp: weights are unpacked to unsigned
// bytes, vpdpbusd multiplies them with the int8 activations, offsets are applied through the
// activation sums (q8_32 `s`, q8_K `bsums`).
#include "kernels_avx512_target.h"
#include "kernels_x86_block32.h"

namespace rfcpu {
using namespace rf;
using namespace x86;

namespace {

// ---- 32-element formats (unpackers in kernels_x86_block32.h) ----

// Bit i of the 32-bit field -> 0x10 in byte i.
RF_AVX512_INLINE __m256i fifth_bits(const uint8_t *qh) {
    uint32_t bits;
    std::memcpy(&bits, qh, 4);
    return _mm256_maskz_mov_epi8(__mmask32(bits), _mm256_set1_epi8(0x10));
}

RF_AVX512_INLINE __m512i load_act_pair(const block_q8_32 *a) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a[0].qs));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a[1].qs));
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// Two blocks per zmm; an odd last block takes the upper half of a pair with zero weights.
template <int NC, class U>
RF_AVX512 void dot_q32_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    const auto *x = static_cast<const typename U::B *>(w);
    const int64_t nb = k / 32;
    __m512 acc[NC];
    float off[NC] = {};
    for (int c = 0; c < NC; ++c) acc[c] = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        const Block32 b0 = U::get(x[b]), b1 = U::get(x[b + 1]);
        const __m512i wv = _mm512_inserti64x4(_mm512_castsi256_si512(b0.u), b1.u, 1);
        for (int c = 0; c < NC; ++c) {
            const block_q8_32 *a = col_block<block_q8_32>(act, st, c, b);
            const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wv, load_act_pair(a));
            const __m512 sc = _mm512_mask_blend_ps(__mmask16(0xFF00), _mm512_set1_ps(b0.d * a[0].d), _mm512_set1_ps(b1.d * a[1].d));
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), sc, acc[c]);
            off[c] += b0.m * a[0].s + b1.m * a[1].s;
        }
    }
    if (b < nb) {
        const Block32 b0 = U::get(x[b]);
        for (int c = 0; c < NC; ++c) {
            const block_q8_32 *a = col_block<block_q8_32>(act, st, c, b);
            const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs));
            const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_castsi256_si512(b0.u), _mm512_castsi256_si512(av));
            const __m512 pf = _mm512_maskz_cvtepi32_ps(__mmask16(0x00FF), p);
            acc[c] = _mm512_fmadd_ps(pf, _mm512_set1_ps(b0.d * a->d), acc[c]);
            off[c] += b0.m * a->s;
        }
    }
    for (int c = 0; c < NC; ++c) out[c * os] = _mm512_reduce_add_ps(acc[c]) + off[c];
}

// ---- Q2_K / Q3_K: 16 sub-blocks of 16 elements with their own scale ----

// W[j] = elements 64j..64j+63 as bytes; element 128n + 32i + l is bits 2i..2i+1 of qs[32n + l].
RF_AVX512_INLINE void low2_bits(const uint8_t *qs, __m512i W[4]) {
    const __m512i m3 = _mm512_set1_epi8(3);
    // 16-bit shift counts: 2i for the first 32 bytes, 2i + 2 for the second.
    for (int h = 0; h < 2; ++h) {
        const __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(qs + 32 * h)));
        for (int t = 0; t < 2; ++t) {
            const __m512i shift = _mm512_mask_blend_epi16(__mmask32(0xFFFF0000), _mm512_set1_epi16(short(4 * t)),
                                                          _mm512_set1_epi16(short(4 * t + 2)));
            W[2 * h + t] = _mm512_and_si512(_mm512_srlv_epi16(q, shift), m3);
        }
    }
}

// Sum over the block of sc[g] * (W . a) over sub-blocks g, plus the q8_K mins term.
template <int NC>
RF_AVX512_INLINE void kquant16_4x64(const __m512i W[4], __m512i sc32, __m256i mins16, float d, float dmin,
                                    const void *act, size_t st, int64_t b, __m512 *acc, __m256 *accm) {
    // dpbusd lane i of W[j] covers elements 64j + 4i..4i+3: sub-block 4j + i/4.
    const __m512i lane_group = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    __m512i S[4];
    for (int j = 0; j < 4; ++j)
        S[j] = scales_for_dpwssd(_mm512_permutexvar_epi32(_mm512_add_epi32(lane_group, _mm512_set1_epi32(4 * j)), sc32));
    for (int c = 0; c < NC; ++c) {
        const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
        __m512i s = _mm512_setzero_si512();
        for (int j = 0; j < 4; ++j) {
            s = add_scaled_lanes(s, _mm512_dpbusd_epi32(_mm512_setzero_si512(), W[j], _mm512_loadu_si512(a->qs + 64 * j)), S[j]);
        }
        acc[c] = _mm512_fmadd_ps(_mm512_set1_ps(d * a->d), _mm512_cvtepi32_ps(s), acc[c]);
        const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->bsums));
        accm[c] = _mm256_fmadd_ps(_mm256_set1_ps(dmin * a->d), _mm256_cvtepi32_ps(_mm256_madd_epi16(mins16, bs)), accm[c]);
    }
}

template <int NC>
RF_AVX512 void dot_q2_K_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    __m512 acc[NC];
    __m256 accm[NC];
    for (int c = 0; c < NC; ++c) { acc[c] = _mm512_setzero_ps(); accm[c] = _mm256_setzero_ps(); }
    for (int64_t b = 0; b < k / QK_K; ++b) {
        const auto *x = static_cast<const block_q2_K *>(w) + b;
        __m512i W[4];
        low2_bits(x->qs, W);
        const __m128i sb = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x->scales));
        const __m128i m4 = _mm_set1_epi8(0x0F);
        const __m512i sc32 = _mm512_cvtepu8_epi32(_mm_and_si128(sb, m4));
        const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sb, 4), m4));
        kquant16_4x64<NC>(W, sc32, mins16, h2f(x->d), h2f(x->dmin), act, st, b, acc, accm);
    }
    for (int c = 0; c < NC; ++c) out[c * os] = _mm512_reduce_add_ps(acc[c]) - _mm512_reduce_add_ps(_mm512_zextps256_ps512(accm[c]));
}

// 16 signed Q3_K scales (bias removed) as bytes, ggml's unpacking of the 12-byte scale area.
RF_AVX512_INLINE __m128i q3k_scales(const uint8_t *scales) {
    uint32_t aux[4];
    unpack_q3k_scales(scales, aux);
    return _mm_sub_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(aux)), _mm_set1_epi8(32));
}

template <int NC>
RF_AVX512 void dot_q3_K_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    __m512 acc[NC];
    __m256 accm[NC];
    for (int c = 0; c < NC; ++c) { acc[c] = _mm512_setzero_ps(); accm[c] = _mm256_setzero_ps(); }
    const __m512i four = _mm512_set1_epi8(4);
    for (int64_t b = 0; b < k / QK_K; ++b) {
        const auto *x = static_cast<const block_q3_K *>(w) + b;
        __m512i W[4];
        low2_bits(x->qs, W);
        // High bit of element 64j + 32t + l: bit 2j + t of hmask[l]; set -> +4.
        const __m512i hm = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(x->hmask)));
        for (int j = 0; j < 4; ++j) {
            const __m512i bits = _mm512_mask_blend_epi8(~__mmask64(0xFFFFFFFF), _mm512_set1_epi8(char(1 << (2 * j))),
                                                        _mm512_set1_epi8(char(1 << (2 * j + 1))));
            W[j] = _mm512_mask_add_epi8(W[j], _mm512_test_epi8_mask(hm, bits), W[j], four);
        }
        const __m128i sc8 = q3k_scales(x->scales);
        const __m256i mins16 = _mm256_slli_epi16(_mm256_cvtepi8_epi16(sc8), 2); // 4 * sc
        const float d = h2f(x->d);
        kquant16_4x64<NC>(W, _mm512_cvtepi8_epi32(sc8), mins16, d, d, act, st, b, acc, accm);
    }
    for (int c = 0; c < NC; ++c) out[c * os] = _mm512_reduce_add_ps(acc[c]) - _mm512_reduce_add_ps(_mm512_zextps256_ps512(accm[c]));
}

template <int NC> struct Q4_1W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q32_w<NC, UnpackQ4_1>(k, w, a, s, o, os); } };
template <int NC> struct Q5_0W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q32_w<NC, UnpackQ5_0>(k, w, a, s, o, os); } };
template <int NC> struct Q5_1W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q32_w<NC, UnpackQ5_1>(k, w, a, s, o, os); } };
template <int NC> struct Mxfp4W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q32_w<NC, UnpackMxfp4>(k, w, a, s, o, os); } };
template <int NC> struct Q2_KW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q2_K_w<NC>(k, w, a, s, o, os); } };
template <int NC> struct Q3_KW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q3_K_w<NC>(k, w, a, s, o, os); } };

} // namespace

void init_kernels_avx512_extra(KernelSet *ks) {
    ks->matmul[RF_TYPE_Q4_1] = {ActFormat::Q8_32, dispatch_up_to_8<Q4_1W>};
    ks->matmul[RF_TYPE_Q5_0] = {ActFormat::Q8_32, dispatch_up_to_8<Q5_0W>};
    ks->matmul[RF_TYPE_Q5_1] = {ActFormat::Q8_32, dispatch_up_to_8<Q5_1W>};
    ks->matmul[RF_TYPE_MXFP4] = {ActFormat::Q8_32, dispatch_up_to_8<Mxfp4W>};
    ks->matmul[RF_TYPE_Q2_K] = {ActFormat::Q8_K, dispatch_up_to_8<Q2_KW>};
    ks->matmul[RF_TYPE_Q3_K] = {ActFormat::Q8_K, dispatch_up_to_8<Q3_KW>};
}

} // namespace rfcpu
