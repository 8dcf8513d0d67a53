// AVX2 + FMA + F16C kernels (target attributes; selected at run time on CPUs without
// AVX-512 VNNI). Same structure as the AVX-512 kernels, with maddubs/madd instead of vpdpbusd:
// u8 weights x s8 activations -> i16 pairs -> i32 with the sub-block scale folded into madd.
#include "kernels_avx2_target.h"

namespace rfcpu {
using namespace rf;
using namespace x86;

namespace {

// ---- activation quantizers: bit-identical to the scalar ones (RNE rounding, same scale) ----

RF_AVX2_INLINE float hmax(__m256 v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

RF_AVX2_INLINE int32_t hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

// 32 floats times id -> 32 int8 (saturation never triggers: |x * id| <= 127), and their sum.
RF_AVX2_INLINE int32_t quantize32(const float *x, __m256 vid, int8_t *out) {
    __m256i q[4];
    for (int i = 0; i < 4; ++i) q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * i), vid));
    const __m256i p01 = _mm256_packs_epi32(q[0], q[1]), p23 = _mm256_packs_epi32(q[2], q[3]);
    const __m256i p = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p01, p23), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(out), p);
    return hsum_i32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
}

RF_AVX2_INLINE float absmax(const float *x, int n) {
    const __m256 sign_off = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    __m256 mx = _mm256_setzero_ps();
    for (int i = 0; i < n; i += 8) mx = _mm256_max_ps(mx, _mm256_and_ps(_mm256_loadu_ps(x + i), sign_off));
    return hmax(mx);
}

RF_AVX2 void quantize_q8_K(const float *x, void *vy, int64_t k) {
    auto *y = static_cast<block_q8_K *>(vy);
    for (int64_t b = 0; b < k / QK_K; ++b, x += QK_K) {
        const float amax = absmax(x, QK_K);
        const __m256 vid = _mm256_set1_ps(amax > 0.f ? 127.f / amax : 0.f);
        y[b].d = amax / 127.f;
        for (int i = 0; i < QK_K; i += 32) quantize32(x + i, vid, y[b].qs + i);
        for (int g = 0; g < QK_K / 16; ++g) {
            const __m256i q16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(y[b].qs + 16 * g)));
            y[b].bsums[g] = int16_t(hsum_i32(_mm256_madd_epi16(q16, _mm256_set1_epi16(1))));
        }
    }
}

RF_AVX2 void quantize_q8_32(const float *x, void *vy, int64_t k) {
    auto *y = static_cast<block_q8_32 *>(vy);
    for (int64_t b = 0; b < k / 32; ++b, x += 32) {
        const float amax = absmax(x, 32);
        const float d = amax / 127.f;
        const int32_t sum = quantize32(x, _mm256_set1_ps(amax > 0.f ? 127.f / amax : 0.f), y[b].qs);
        y[b].d = d;
        y[b].s = d * float(sum);
    }
}

RF_AVX2 float dot_f32(const float *a, const float *b, int64_t n) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
    }
    float s = hsum256(_mm256_add_ps(acc0, acc1));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

RF_AVX2 void axpy_f32(float *y, const float *x, float a, int64_t n) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; ++i) y[i] += a * x[i];
}

RF_AVX2 void f16_to_f32(const uint16_t *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x + i))));
    for (; i < n; ++i) y[i] = h2f(x[i]);
}

RF_AVX2 void f32_to_f16(const float *x, uint16_t *y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i *>(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; ++i) y[i] = float_to_half(x[i]);
}

template <int NC, bool kHalf>
RF_AVX2 void dot_float_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    __m256 acc[NC];
    const float *a[NC];
    for (int c = 0; c < NC; ++c) {
        acc[c] = _mm256_setzero_ps();
        a[c] = reinterpret_cast<const float *>(static_cast<const uint8_t *>(act) + c * st);
    }
    int64_t i = 0;
    for (; i + 8 <= k; i += 8) {
        __m256 wv;
        if constexpr (kHalf) wv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(static_cast<const uint16_t *>(w) + i)));
        else wv = _mm256_loadu_ps(static_cast<const float *>(w) + i);
        for (int c = 0; c < NC; ++c) acc[c] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(a[c] + i), acc[c]);
    }
    for (int c = 0; c < NC; ++c) {
        float s = hsum256(acc[c]);
        for (int64_t j = i; j < k; ++j) {
            const float wf = kHalf ? h2f(static_cast<const uint16_t *>(w)[j]) : static_cast<const float *>(w)[j];
            s += wf * a[c][j];
        }
        out[c * os] = s;
    }
}

// sum of u8 x s8 products of 32 bytes, as 8 i32 lanes.
RF_AVX2_INLINE __m256i dot_u8s8(__m256i u, __m256i s) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}

template <int NC>
RF_AVX2 void dot_q8_0_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    const auto *x = static_cast<const block_q8_0 *>(w);
    __m256 acc[NC];
    for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / 32; ++b) {
        const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x[b].qs));
        const __m256i wabs = _mm256_sign_epi8(wv, wv);
        const float d = h2f(x[b].d);
        for (int c = 0; c < NC; ++c) {
            const block_q8_32 *a = col_block<block_q8_32>(act, st, c, b);
            const __m256i av = _mm256_sign_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs)), wv);
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * a->d), _mm256_cvtepi32_ps(dot_u8s8(wabs, av)), acc[c]);
        }
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]);
}

template <int NC>
RF_AVX2 void dot_q4_0_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    const auto *x = static_cast<const block_q4_0 *>(w);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256 acc[NC];
    float off[NC] = {};
    for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / 32; ++b) {
        const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x[b].qs));
        const __m256i wv = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), m4);
        const float d = h2f(x[b].d);
        for (int c = 0; c < NC; ++c) {
            const block_q8_32 *a = col_block<block_q8_32>(act, st, c, b);
            const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs));
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * a->d), _mm256_cvtepi32_ps(dot_u8s8(wv, av)), acc[c]);
            off[c] -= 8.f * d * a->s;
        }
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]) + off[c];
}

RF_AVX2_INLINE void q4k_scales_mins(const uint8_t *scales, uint8_t out[16]) {
    uint32_t u[4];
    unpack_q4k_scales_mins(scales, u);
    std::memcpy(out, u, 16);
}

template <int NC, bool kFive>
RF_AVX2 void dot_q45_K_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i one = _mm256_set1_epi8(1);
    __m256 acc[NC], accm[NC];
    for (int c = 0; c < NC; ++c) acc[c] = accm[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / QK_K; ++b) {
        prefetch_ahead<kFive ? sizeof(block_q5_K) : sizeof(block_q4_K)>(static_cast<const uint8_t *>(w) + b * (kFive ? sizeof(block_q5_K) : sizeof(block_q4_K)));
        const uint8_t *qs, *scales, *qhp = nullptr;
        float d, dmin;
        if constexpr (kFive) {
            const auto *x = static_cast<const block_q5_K *>(w) + b;
            qs = x->qs; scales = x->scales; qhp = x->qh; d = h2f(x->d); dmin = h2f(x->dmin);
        } else {
            const auto *x = static_cast<const block_q4_K *>(w) + b;
            qs = x->qs; scales = x->scales; d = h2f(x->d); dmin = h2f(x->dmin);
        }
        alignas(16) uint8_t sm[16];
        q4k_scales_mins(scales, sm);
        const __m128i smv = _mm_load_si128(reinterpret_cast<const __m128i *>(sm));
        const __m128i dup = _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
        const __m256i mins16 = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(smv, dup));
        __m256i qh;
        if constexpr (kFive) qh = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(qhp));
        __m256i sumi[NC];
        for (int c = 0; c < NC; ++c) sumi[c] = _mm256_setzero_si256();
        for (int j = 0; j < 4; ++j) {
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(qs + 32 * j));
            __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            if constexpr (kFive) {
                const __m128i s0 = _mm_cvtsi32_si128(2 * j), s1 = _mm_cvtsi32_si128(2 * j + 1);
                lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(qh, s0), one), 4));
                hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srl_epi16(qh, s1), one), 4));
            }
            const __m256i sc_lo = _mm256_set1_epi16(sm[2 * j]), sc_hi = _mm256_set1_epi16(sm[2 * j + 1]);
            for (int c = 0; c < NC; ++c) {
                const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
                const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs + 64 * j));
                const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs + 64 * j + 32));
                const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, a0), sc_lo);
                const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, a1), sc_hi);
                sumi[c] = _mm256_add_epi32(sumi[c], _mm256_add_epi32(p0, p1));
            }
        }
        for (int c = 0; c < NC; ++c) {
            const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * a->d), _mm256_cvtepi32_ps(sumi[c]), acc[c]);
            const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->bsums));
            accm[c] = _mm256_fmadd_ps(_mm256_set1_ps(dmin * a->d), _mm256_cvtepi32_ps(_mm256_madd_epi16(mins16, bs)), accm[c]);
        }
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]) - hsum256(accm[c]);
}

template <int NC>
RF_AVX2 void dot_q6_K_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
    __m256 acc[NC], accm[NC];
    for (int c = 0; c < NC; ++c) acc[c] = accm[c] = _mm256_setzero_ps();
    for (int64_t b = 0; b < k / QK_K; ++b) {
        const auto *x = static_cast<const block_q6_K *>(w) + b;
        prefetch_ahead<sizeof(block_q6_K)>(x);
        const float d = h2f(x->d);
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x->scales)));
        __m256i sumi[NC];
        for (int c = 0; c < NC; ++c) sumi[c] = _mm256_setzero_si256();
        for (int h = 0; h < 2; ++h) {
            const __m256i ql0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x->ql + 64 * h));
            const __m256i ql1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x->ql + 64 * h + 32));
            const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x->qh + 32 * h));
            __m256i W[4];
            W[0] = _mm256_or_si256(_mm256_and_si256(ql0, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 4), m30));
            W[1] = _mm256_or_si256(_mm256_and_si256(ql1, m4), _mm256_and_si256(_mm256_slli_epi16(qh, 2), m30));
            W[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4), _mm256_and_si256(qh, m30));
            W[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4), _mm256_and_si256(_mm256_srli_epi16(qh, 2), m30));
            for (int i = 0; i < 4; ++i) {
                const int g = 8 * h + 2 * i;
                const __m256i scv = _mm256_set_m128i(_mm_set1_epi16(x->scales[g + 1]), _mm_set1_epi16(x->scales[g]));
                for (int c = 0; c < NC; ++c) {
                    const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
                    const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->qs + 128 * h + 32 * i));
                    sumi[c] = _mm256_add_epi32(sumi[c], _mm256_madd_epi16(_mm256_maddubs_epi16(W[i], av), scv));
                }
            }
        }
        for (int c = 0; c < NC; ++c) {
            const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
            acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(d * a->d), _mm256_cvtepi32_ps(sumi[c]), acc[c]);
            const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->bsums));
            accm[c] = _mm256_fmadd_ps(_mm256_set1_ps(32.f * d * a->d), _mm256_cvtepi32_ps(_mm256_madd_epi16(sc16, bs)), accm[c]);
        }
    }
    for (int c = 0; c < NC; ++c) out[c * os] = hsum256(acc[c]) - hsum256(accm[c]);
}

// 16 ymm registers: at most 4 columns per kernel call (dispatch_tiles_of_4).
template <int NC> struct F32W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_float_w<NC, false>(k, w, a, s, o, os); } };
template <int NC> struct F16W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_float_w<NC, true>(k, w, a, s, o, os); } };
template <int NC> struct Q8_0W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q8_0_w<NC>(k, w, a, s, o, os); } };
template <int NC> struct Q4_0W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q4_0_w<NC>(k, w, a, s, o, os); } };
template <int NC> struct Q4_KW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q45_K_w<NC, false>(k, w, a, s, o, os); } };
template <int NC> struct Q5_KW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q45_K_w<NC, true>(k, w, a, s, o, os); } };
template <int NC> struct Q6_KW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q6_K_w<NC>(k, w, a, s, o, os); } };

} // namespace

void init_kernels_avx2(KernelSet *ks) {
    ks->level = SimdLevel::Avx2;
    ks->quantize_q8_K = quantize_q8_K;
    ks->quantize_q8_32 = quantize_q8_32;
    ks->dot_f32 = dot_f32;
    ks->axpy_f32 = axpy_f32;
    ks->f16_to_f32 = f16_to_f32;
    ks->f32_to_f16 = f32_to_f16;
    ks->matmul[RF_TYPE_F32] = {ActFormat::F32, dispatch_tiles_of_4<F32W>};
    ks->matmul[RF_TYPE_F16] = {ActFormat::F32, dispatch_tiles_of_4<F16W>};
    ks->matmul[RF_TYPE_Q8_0] = {ActFormat::Q8_32, dispatch_tiles_of_4<Q8_0W>};
    ks->matmul[RF_TYPE_Q4_0] = {ActFormat::Q8_32, dispatch_tiles_of_4<Q4_0W>};
    ks->matmul[RF_TYPE_Q4_K] = {ActFormat::Q8_K, dispatch_tiles_of_4<Q4_KW>};
    ks->matmul[RF_TYPE_Q5_K] = {ActFormat::Q8_K, dispatch_tiles_of_4<Q5_KW>};
    ks->matmul[RF_TYPE_Q6_K] = {ActFormat::Q8_K, dispatch_tiles_of_4<Q6_KW>};
    init_kernels_avx2_extra(ks);
    init_kernels_avx2_iq(ks);
}

} // namespace rfcpu
