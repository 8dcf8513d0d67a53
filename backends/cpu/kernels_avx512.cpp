// AVX-512 VNNI kernels (target attributes, selected at run time). Weight blocks are unpacked
// to unsigned bytes once per column tile; vpdpbusd (32-element formats) or vpmaddubsw (K-quants)
// multiplies them with the int8 activations. K-quant sub-block scales are applied with vpdpwssd,
// the mins via the q8_K bsums.
#include "kernels_avx512_target.h"

namespace rfcpu {
using namespace rf;
using namespace x86;

namespace {

// ---- f32 helpers ----

RF_AVX512 float dot_f32(const float *a, const float *b, int64_t n) {
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), acc1);
    }
    for (; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
        acc0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), acc0);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

RF_AVX512 void axpy_f32(float *y, const float *x, float a, int64_t n) {
    const __m512 va = _mm512_set1_ps(a);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(va, _mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i)));
    }
}

RF_AVX512 void f16_to_f32(const uint16_t *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(x + i))));
    for (; i < n; ++i) y[i] = h2f(x[i]);
}

RF_AVX512 void f32_to_f16(const float *x, uint16_t *y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(y + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < n; ++i) y[i] = float_to_half(x[i]);
}

// ---- activation quantizers: bit-identical to the scalar ones (RNE rounding, same scale) ----

RF_AVX512 void quantize_q8_K(const float *x, void *vy, int64_t k) {
    auto *y = static_cast<block_q8_K *>(vy);
    for (int64_t b = 0; b < k / QK_K; ++b, x += QK_K) {
        __m512 mx = _mm512_setzero_ps();
        for (int i = 0; i < QK_K; i += 16) mx = _mm512_max_ps(mx, _mm512_abs_ps(_mm512_loadu_ps(x + i)));
        const float amax = _mm512_reduce_max_ps(mx);
        const float id = amax > 0.f ? 127.f / amax : 0.f;
        y[b].d = amax / 127.f;
        const __m512 vid = _mm512_set1_ps(id);
        for (int g = 0; g < QK_K / 16; ++g) {
            const __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + 16 * g), vid));
            _mm_storeu_si128(reinterpret_cast<__m128i *>(y[b].qs + 16 * g), _mm512_cvtsepi32_epi8(q));
            y[b].bsums[g] = int16_t(_mm512_reduce_add_epi32(q));
        }
    }
}

RF_AVX512 void quantize_q8_32(const float *x, void *vy, int64_t k) {
    auto *y = static_cast<block_q8_32 *>(vy);
    for (int64_t b = 0; b < k / 32; ++b, x += 32) {
        const __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(x0), _mm512_abs_ps(x1)));
        const float d = amax / 127.f, id = amax > 0.f ? 127.f / amax : 0.f;
        const __m512 vid = _mm512_set1_ps(id);
        const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(x0, vid)), q1 = _mm512_cvtps_epi32(_mm512_mul_ps(x1, vid));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(y[b].qs), _mm512_cvtsepi32_epi8(q0));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(y[b].qs + 16), _mm512_cvtsepi32_epi8(q1));
        y[b].d = d;
        y[b].s = d * float(_mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1)));
    }
}

// ---- f32 / f16 weights (f32 activations) ----

template <int NC, bool kHalf>
RF_AVX512 void dot_float_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    __m512 acc[NC];
    for (int c = 0; c < NC; ++c) acc[c] = _mm512_setzero_ps();
    const float *a[NC];
    for (int c = 0; c < NC; ++c) a[c] = reinterpret_cast<const float *>(static_cast<const uint8_t *>(act) + c * st);
    for (int64_t i = 0; i < k; i += 16) {
        const __mmask16 m = k - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (k - i)) - 1);
        __m512 wv;
        if constexpr (kHalf) wv = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, static_cast<const uint16_t *>(w) + i));
        else wv = _mm512_maskz_loadu_ps(m, static_cast<const float *>(w) + i);
        for (int c = 0; c < NC; ++c) acc[c] = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m, a[c] + i), acc[c]);
    }
    for (int c = 0; c < NC; ++c) out[c * os] = _mm512_reduce_add_ps(acc[c]);
}

// ---- Q8_0 / Q4_0 weights (q8_32 activations), two blocks per zmm ----

// Activation bytes of blocks b and b+1 of one column.
RF_AVX512_INLINE __m512i load_act_pair(const block_q8_32 *a) {
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a[0].qs));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a[1].qs));
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

RF_AVX512_INLINE __m512 pair_scale(float s0, float s1) {
    return _mm512_mask_blend_ps(__mmask16(0xFF00), _mm512_set1_ps(s0), _mm512_set1_ps(s1));
}

// Two q8_0 blocks of one weight row: |w| as unsigned bytes, the sign mask, both scales.
struct Q8_0Pair {
    __m512i wabs;
    __mmask64 neg;
    float d0, d1;
};

RF_AVX512_INLINE Q8_0Pair load_q8_0_pair(const block_q8_0 *x) {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x[0].qs));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x[1].qs));
    const __m512i wv = _mm512_inserti64x4(_mm512_castsi256_si512(w0), w1, 1);
    return {_mm512_abs_epi8(wv), _mm512_movepi8_mask(wv), h2f(x[0].d), h2f(x[1].d)};
}

// acc += the pair's products with activation blocks a[0..1] (av: their bytes).
RF_AVX512_INLINE __m512 q8_0_pair_step(const Q8_0Pair &w, const block_q8_32 *a, __m512i av, __m512 acc) {
    const __m512i as = _mm512_mask_sub_epi8(av, w.neg, _mm512_setzero_si512(), av);
    const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w.wabs, as);
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), pair_scale(w.d0 * a[0].d, w.d1 * a[1].d), acc);
}

// One odd trailing block of a row (k/32 odd), added in float after the vector sum.
RF_AVX512_INLINE float q8_0_tail(const block_q8_0 &x, const block_q8_32 &a) {
    int32_t s = 0;
    for (int i = 0; i < 32; ++i) s += int32_t(x.qs[i]) * a.qs[i];
    return h2f(x.d) * a.d * float(s);
}

template <int NC>
RF_AVX512 void dot_q8_0_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    const auto *x = static_cast<const block_q8_0 *>(w);
    const int64_t nb = k / 32;
    __m512 acc[NC];
    float tail[NC] = {};
    for (int c = 0; c < NC; ++c) acc[c] = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        const Q8_0Pair wp = load_q8_0_pair(x + b);
        for (int c = 0; c < NC; ++c) {
            const block_q8_32 *a = col_block<block_q8_32>(act, st, c, b);
            acc[c] = q8_0_pair_step(wp, a, load_act_pair(a), acc[c]);
        }
    }
    for (; b < nb; ++b)
        for (int c = 0; c < NC; ++c) tail[c] += q8_0_tail(x[b], *col_block<block_q8_32>(act, st, c, b));
    for (int c = 0; c < NC; ++c) out[c * os] = _mm512_reduce_add_ps(acc[c]) + tail[c];
}

template <int NC>
RF_AVX512 void dot_q4_0_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    const auto *x = static_cast<const block_q4_0 *>(w);
    const int64_t nb = k / 32;
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i shifts = _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0); // per 128-bit lane: lo, hi nibbles
    __m512 acc[NC];
    float off[NC] = {};
    for (int c = 0; c < NC; ++c) acc[c] = _mm512_setzero_ps();
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        const __m128i q0 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x[b].qs));
        const __m128i q1 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x[b + 1].qs));
        const __m512i dup = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(q0, q0)), _mm256_set_m128i(q1, q1), 1);
        const __m512i wv = _mm512_and_si512(_mm512_srlv_epi64(dup, shifts), m4);
        const float d0 = h2f(x[b].d), d1 = h2f(x[b + 1].d);
        for (int c = 0; c < NC; ++c) {
            const block_q8_32 *a = col_block<block_q8_32>(act, st, c, b);
            const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wv, load_act_pair(a));
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p), pair_scale(d0 * a[0].d, d1 * a[1].d), acc[c]);
            off[c] -= 8.f * (d0 * a[0].s + d1 * a[1].s);
        }
    }
    for (; b < nb; ++b) {
        const float d = h2f(x[b].d);
        for (int c = 0; c < NC; ++c) {
            const block_q8_32 *a = col_block<block_q8_32>(act, st, c, b);
            int32_t s = 0;
            for (int i = 0; i < 16; ++i) s += (x[b].qs[i] & 0xF) * a->qs[i] + (x[b].qs[i] >> 4) * a->qs[i + 16];
            off[c] += d * a->d * float(s) - 8.f * d * a->s;
        }
    }
    for (int c = 0; c < NC; ++c) out[c * os] = _mm512_reduce_add_ps(acc[c]) + off[c];
}

// ---- K-quants (q8_K activations) ----

// 8 six-bit scales and 8 mins of a q4_K/q5_K block as bytes [sc0..7, m0..7] (ggml's unpacking).
RF_AVX512_INLINE __m128i q4k_scales_mins(const uint8_t *scales) {
    uint32_t u[4];
    unpack_q4k_scales_mins(scales, u);
    return _mm_loadu_si128(reinterpret_cast<const __m128i *>(u));
}

// One q4_K/q5_K block unpacked for vpmaddubsw: W[j] holds elements 64j..64j+63 as unsigned
// bytes, sc[j] the scales of sub-blocks 2j (lanes 0-7) and 2j+1 (lanes 8-15) in both 16-bit
// halves of each 32-bit lane, mins16 the mins, dm = [d, dmin, 0, 0].
struct KQuantBlock {
    __m512i W[4], sc[4];
    __m256i mins16;
    __m128 dm;
};

// sc[j] from the bytes [sc0..7, m0..7]: one vpshufb each puts byte 2j (lanes 0-7) or 2j+1
// (lanes 8-15) in the low byte of both 16-bit halves of every 32-bit lane (control bytes 0x80
// give zeros): the unsigned 6-bit scales as kquant_step's vpdpwssd wants them.
RF_AVX512_INLINE void kquant_scales(__m128i scmin, KQuantBlock *blk) {
    const __m512i all = _mm512_broadcast_i32x4(scmin);
    for (int j = 0; j < 4; ++j) {
        const __m512i ctrl = _mm512_mask_blend_epi32(__mmask16(0xFF00), _mm512_set1_epi32(int(0x80008000u | (0x00020002u * j))),
                                                     _mm512_set1_epi32(int(0x80008000u | (0x00020002u * j + 0x00010001u))));
        blk->sc[j] = _mm512_shuffle_epi8(all, ctrl);
    }
    const __m128i dup = _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
    blk->mins16 = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(scmin, dup));
}

// [d, dmin, 0, 0] from the adjacent f16 pair at p (q4_K/q5_K block heads): one vcvtph2ps.
RF_AVX512_INLINE __m128 d_dmin(const void *p) {
    uint32_t both;
    std::memcpy(&both, p, 4);
    return _mm_cvtph_ps(_mm_cvtsi32_si128(int(both)));
}

template <bool kFive>
RF_AVX512_INLINE void unpack_q45_K(const void *w, int64_t b, KQuantBlock *blk) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    prefetch_ahead<kFive ? sizeof(block_q5_K) : sizeof(block_q4_K)>(static_cast<const uint8_t *>(w) + b * (kFive ? sizeof(block_q5_K) : sizeof(block_q4_K)));
    const uint8_t *qs, *scales;
    if constexpr (kFive) {
        const auto *x = static_cast<const block_q5_K *>(w) + b;
        qs = x->qs; scales = x->scales; blk->dm = d_dmin(&x->d);
    } else {
        const auto *x = static_cast<const block_q4_K *>(w) + b;
        qs = x->qs; scales = x->scales; blk->dm = d_dmin(&x->d);
    }
    for (int h = 0; h < 2; ++h) {
        // 64 bytes = chunks 2h, 2h+1: low nibbles [e(128h+0..31) | e(128h+64..95)], high [+32 | +96].
        const __m512i q = _mm512_loadu_si512(qs + 64 * h);
        const __m512i lo = _mm512_and_si512(q, m4);
        const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), m4);
        blk->W[2 * h] = _mm512_shuffle_i64x2(lo, hi, 0x44);
        blk->W[2 * h + 1] = _mm512_shuffle_i64x2(lo, hi, 0xEE);
    }
    if constexpr (kFive) {
        const __m512i sixteen = _mm512_set1_epi8(16);
        const auto *x = static_cast<const block_q5_K *>(w) + b;
        const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(x->qh)));
        for (int j = 0; j < 4; ++j) {
            // element 64j+l (l<32) takes bit 2j of qh[l]; element 64j+32+l takes bit 2j+1.
            const __m512i bits = _mm512_mask_blend_epi8(~__mmask64(0xFFFFFFFF), _mm512_set1_epi8(char(1 << (2 * j))),
                                                        _mm512_set1_epi8(char(1 << (2 * j + 1))));
            blk->W[j] = _mm512_mask_add_epi8(blk->W[j], _mm512_test_epi8_mask(qh, bits), blk->W[j], sixteen);
        }
    }
    kquant_scales(q4k_scales_mins(scales), blk);
}

// One block of one weight row against activation block a (av: its 256 bytes). vpmaddubsw sums
// byte pairs (|pair| <= 2 * 63 * 127, no saturation), vpdpwssd scales both 16-bit halves of a
// lane and adds them: the same integer per 32-bit lane as vpdpbusd then a scale multiply,
// without a zeroed register per product.
RF_AVX512_INLINE void kquant_step(const KQuantBlock &blk, const block_q8_K *a, const __m512i av[4], __m512 *acc,
                                  __m256 *accm) {
    __m512i s = _mm512_setzero_si512();
    for (int j = 0; j < 4; ++j) s = _mm512_dpwssd_epi32(s, _mm512_maddubs_epi16(blk.W[j], av[j]), blk.sc[j]);
    // [d * a.d, dmin * a.d]: the same two float products as before, in one multiply.
    const __m128 ds = _mm_mul_ps(blk.dm, _mm_set1_ps(a->d));
    *acc = _mm512_fmadd_ps(_mm512_broadcastss_ps(ds), _mm512_cvtepi32_ps(s), *acc);
    const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(a->bsums));
    *accm = _mm256_fmadd_ps(_mm256_broadcastss_ps(_mm_movehdup_ps(ds)), _mm256_cvtepi32_ps(_mm256_madd_epi16(blk.mins16, bs)), *accm);
}

RF_AVX512_INLINE void load_q8_K(const block_q8_K *a, __m512i av[4]) {
    for (int j = 0; j < 4; ++j) av[j] = _mm512_loadu_si512(a->qs + 64 * j);
}

// q6_K block b of row w in KQuantBlock form: the mins term is 32 * sum(scale * bsum), so
// mins16 holds the signed scales and dmin = 32 d.
RF_AVX512_INLINE void unpack_q6_K(const void *w, int64_t b, KQuantBlock *blk) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i m30 = _mm512_set1_epi8(0x30);
    // 16-bit shift counts: first 32 bytes / last 32 bytes of the zmm.
    const __m512i shl_lo = _mm512_mask_blend_epi16(__mmask32(0xFFFF0000), _mm512_set1_epi16(4), _mm512_set1_epi16(2));
    const __m512i shr_hi = _mm512_mask_blend_epi16(__mmask32(0xFFFF0000), _mm512_set1_epi16(0), _mm512_set1_epi16(2));
    // 16-bit element e of sc[j] takes scale 4j + e / 8: sub-blocks of 16 elements, 4 lanes each.
    const __m512i grp = _mm512_srli_epi16(_mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16,
                                                           15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), 3);
    const auto *x = static_cast<const block_q6_K *>(w) + b;
    prefetch_ahead<sizeof(block_q6_K)>(x);
    blk->dm = _mm_mul_ps(_mm_set1_ps(h2f(x->d)), _mm_setr_ps(1.f, 32.f, 0.f, 0.f)); // [d, 32 d]
    const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x->scales));
    blk->mins16 = _mm256_cvtepi8_epi16(sc8);
    const __m512i sc16 = _mm512_zextsi256_si512(blk->mins16);
    for (int h = 0; h < 2; ++h) {
        const __m512i ql = _mm512_loadu_si512(x->ql + 64 * h);
        const __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(x->qh + 32 * h)));
        blk->W[2 * h] = _mm512_or_si512(_mm512_and_si512(ql, m4), _mm512_and_si512(_mm512_sllv_epi16(qh, shl_lo), m30));
        blk->W[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4),
                                            _mm512_and_si512(_mm512_srlv_epi16(qh, shr_hi), m30));
        blk->sc[2 * h] = _mm512_permutexvar_epi16(_mm512_add_epi16(grp, _mm512_set1_epi16(short(8 * h))), sc16);
        blk->sc[2 * h + 1] = _mm512_permutexvar_epi16(_mm512_add_epi16(grp, _mm512_set1_epi16(short(8 * h + 4))), sc16);
    }
}

struct UnpackQ4_K { RF_AVX512_INLINE static void get(const void *w, int64_t b, KQuantBlock *blk) { unpack_q45_K<false>(w, b, blk); } };
struct UnpackQ5_K { RF_AVX512_INLINE static void get(const void *w, int64_t b, KQuantBlock *blk) { unpack_q45_K<true>(w, b, blk); } };
struct UnpackQ6_K { RF_AVX512_INLINE static void get(const void *w, int64_t b, KQuantBlock *blk) { unpack_q6_K(w, b, blk); } };

// One weight row against NC activation columns: each block unpacked once per column tile.
template <int NC, class U>
RF_AVX512 void dot_kquant_w(int64_t k, const void *w, const void *act, size_t st, float *out, size_t os) {
    __m512 acc[NC];
    __m256 accm[NC];
    for (int c = 0; c < NC; ++c) { acc[c] = _mm512_setzero_ps(); accm[c] = _mm256_setzero_ps(); }
    for (int64_t b = 0; b < k / QK_K; ++b) {
        KQuantBlock blk;
        U::get(w, b, &blk);
        for (int c = 0; c < NC; ++c) {
            const block_q8_K *a = col_block<block_q8_K>(act, st, c, b);
            __m512i av[4];
            load_q8_K(a, av);
            kquant_step(blk, a, av, &acc[c], &accm[c]);
        }
    }
    for (int c = 0; c < NC; ++c) out[c * os] = _mm512_reduce_add_ps(acc[c]) - hsum256(accm[c]);
}

template <int NC> struct F32W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_float_w<NC, false>(k, w, a, s, o, os); } };
template <int NC> struct F16W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_float_w<NC, true>(k, w, a, s, o, os); } };
template <int NC> struct Q8_0W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q8_0_w<NC>(k, w, a, s, o, os); } };
template <int NC> struct Q4_0W { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_q4_0_w<NC>(k, w, a, s, o, os); } };
template <int NC> struct Q4_KW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_kquant_w<NC, UnpackQ4_K>(k, w, a, s, o, os); } };
template <int NC> struct Q5_KW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_kquant_w<NC, UnpackQ5_K>(k, w, a, s, o, os); } };
template <int NC> struct Q6_KW { static void run(int64_t k, const void *w, const void *a, size_t s, float *o, size_t os) { dot_kquant_w<NC, UnpackQ6_K>(k, w, a, s, o, os); } };

} // namespace

void init_kernels_avx512(KernelSet *ks) {
    ks->level = SimdLevel::Avx512Vnni;
    ks->quantize_q8_K = quantize_q8_K;
    ks->quantize_q8_32 = quantize_q8_32;
    ks->dot_f32 = dot_f32;
    ks->axpy_f32 = axpy_f32;
    ks->f16_to_f32 = f16_to_f32;
    ks->f32_to_f16 = f32_to_f16;
    ks->matmul[RF_TYPE_F32] = {ActFormat::F32, dispatch_up_to_8<F32W>};
    ks->matmul[RF_TYPE_F16] = {ActFormat::F32, dispatch_up_to_8<F16W>};
    ks->matmul[RF_TYPE_Q8_0] = {ActFormat::Q8_32, dispatch_up_to_8<Q8_0W>};
    ks->matmul[RF_TYPE_Q4_0] = {ActFormat::Q8_32, dispatch_up_to_8<Q4_0W>};
    ks->matmul[RF_TYPE_Q4_K] = {ActFormat::Q8_K, dispatch_up_to_8<Q4_KW>};
    ks->matmul[RF_TYPE_Q5_K] = {ActFormat::Q8_K, dispatch_up_to_8<Q5_KW>};
    ks->matmul[RF_TYPE_Q6_K] = {ActFormat::Q8_K, dispatch_up_to_8<Q6_KW>};
    init_kernels_avx512_extra(ks);
}

} // namespace rfcpu
