// Internal to rf_quant: per-format kernels and the scalar helpers they share.
// Every routine here mirrors ggml's reference code operation by operation (same float
// evaluation order), so results are bit-identical to ggml-quants.c. The library is built with
// -ffp-contract=off so the compiler never fuses a*b+c into an FMA that ggml would not use.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "rocmforge/blocks.h"

namespace rf::quant {

inline uint32_t f32_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
inline float f32_from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// ggml_compute_fp16_to_fp32 (exact for every half value).
inline float half_to_float(uint16_t h) {
    const uint32_t w = static_cast<uint32_t>(h) << 16;
    const uint32_t sign = w & 0x80000000u;
    const uint32_t two_w = w + w;
    const uint32_t exp_offset = 0xE0u << 23;
    const float exp_scale = 0x1.0p-112f;
    const float normalized_value = f32_from_bits((two_w >> 4) + exp_offset) * exp_scale;
    const uint32_t magic_mask = 126u << 23;
    const float magic_bias = 0.5f;
    const float denormalized_value = f32_from_bits((two_w >> 17) | magic_mask) - magic_bias;
    const uint32_t denormalized_cutoff = 1u << 27;
    const uint32_t result =
        sign | (two_w < denormalized_cutoff ? f32_bits(denormalized_value) : f32_bits(normalized_value));
    return f32_from_bits(result);
}

// ggml_compute_fp32_to_fp16: round to nearest even, overflow to inf, NaN -> 0x7E00 | sign.
inline uint16_t float_to_half(float f) {
    const float scale_to_inf = 0x1.0p+112f;
    const float scale_to_zero = 0x1.0p-110f;
    float base = (__builtin_fabsf(f) * scale_to_inf) * scale_to_zero;
    const uint32_t w = f32_bits(f);
    const uint32_t shl1_w = w + w;
    const uint32_t sign = w & 0x80000000u;
    uint32_t bias = shl1_w & 0xFF000000u;
    if (bias < 0x71000000u) bias = 0x71000000u;
    base = f32_from_bits((bias >> 1) + 0x07800000u) + base;
    const uint32_t bits = f32_bits(base);
    const uint32_t exp_bits = (bits >> 13) & 0x00007C00u;
    const uint32_t mantissa_bits = bits & 0x00000FFFu;
    const uint32_t nonsign = exp_bits + mantissa_bits;
    return static_cast<uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

// ggml's nearest_int: round to nearest even through the 1.5*2^23 magic constant.
// Valid for |fval| <= 4194303 (ggml asserts this); other inputs give garbage but never trap.
inline int nearest_int(float fval) {
    const float val = fval + 12582912.f;
    int i;
    std::memcpy(&i, &val, sizeof(int));
    return (i & 0x007fffff) - 0x00400000;
}

// The element of largest magnitude in x[0..n) (the first one wins on ties) and that magnitude,
// the search ggml's symmetric quantizers start with. {0, 0} when every element is 0 or NaN.
struct SignedMax {
    float max;  // the signed element
    float amax; // its absolute value
};
inline SignedMax max_by_magnitude(const float *x, int n) {
    SignedMax r{0.f, 0.f};
    for (int i = 0; i < n; ++i) {
        const float ax = std::fabs(x[i]);
        if (ax > r.amax) {
            r.amax = ax;
            r.max = x[i];
        }
    }
    return r;
}

// ggml_e8m0_to_fp32_half: 2^(e-128), the scale MXFP4 uses with its doubled E2M1 table.
inline float e8m0_to_float_half(uint8_t e) {
    const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
    return f32_from_bits(bits);
}

// --- legacy 32-element formats (quant_legacy.cpp)
void dequantize_row_q4_0(const block_q4_0 *x, float *y, int64_t k);
void dequantize_row_q4_1(const block_q4_1 *x, float *y, int64_t k);
void dequantize_row_q5_0(const block_q5_0 *x, float *y, int64_t k);
void dequantize_row_q5_1(const block_q5_1 *x, float *y, int64_t k);
void dequantize_row_q8_0(const block_q8_0 *x, float *y, int64_t k);
void quantize_row_q4_0(const float *x, block_q4_0 *y, int64_t k);
void quantize_row_q4_1(const float *x, block_q4_1 *y, int64_t k);
void quantize_row_q5_0(const float *x, block_q5_0 *y, int64_t k);
void quantize_row_q5_1(const float *x, block_q5_1 *y, int64_t k);
void quantize_row_q8_0(const float *x, block_q8_0 *y, int64_t k);

// --- k-quants (quant_k.cpp)
void dequantize_row_q2_K(const block_q2_K *x, float *y, int64_t k);
void dequantize_row_q3_K(const block_q3_K *x, float *y, int64_t k);
void dequantize_row_q4_K(const block_q4_K *x, float *y, int64_t k);
void dequantize_row_q5_K(const block_q5_K *x, float *y, int64_t k);
void dequantize_row_q6_K(const block_q6_K *x, float *y, int64_t k);
void dequantize_row_q8_K(const block_q8_K *x, float *y, int64_t k);
void quantize_row_q2_K(const float *x, block_q2_K *y, int64_t k);
void quantize_row_q3_K(const float *x, block_q3_K *y, int64_t k);
void quantize_row_q4_K(const float *x, block_q4_K *y, int64_t k);
void quantize_row_q5_K(const float *x, block_q5_K *y, int64_t k);
void quantize_row_q6_K(const float *x, block_q6_K *y, int64_t k);
void quantize_row_q8_K(const float *x, block_q8_K *y, int64_t k);

// --- k-quant scale searches (quant_k_search.cpp), ggml's names and arguments
constexpr float GROUP_MAX_EPS = 1e-15f;
// The i-quants' all-zero thresholds (ggml-quants.c).
constexpr float GROUP_MAX_EPS_IQ3_XXS = 1e-8f;
constexpr float GROUP_MAX_EPS_IQ2_S = 1e-8f;
constexpr float GROUP_MAX_EPS_IQ1_M = 1e-7f;
constexpr float GROUP_MAX_EPS_IQ1_S = 1e-12f;
// Symmetric levels in [-nmax, nmax-1] (stored + nmax), weighted least squares; qw may be null.
float make_qx_quants(int n, int nmax, const float *x, int8_t *L, int rmse_type, const float *qw);
// Symmetric 3-bit search with iterative refinement (Q3_K).
float make_q3_quants(int n, int nmax, const float *x, int8_t *L, bool do_rmse);
// Asymmetric levels in [0, nmax] with a min, scanning nstep+1 scales (Q2_K/Q4_K/Q5_K).
float make_qkx2_quants(int n, int nmax, const float *x, const float *weights, uint8_t *L,
                       float *the_min, uint8_t *Laux, float rmin, float rdelta, int nstep,
                       bool use_mad);
// make_qkx2_quants with the importance-weighted search's parameters (ggml's make_qkx3_quants:
// the weighted Q2_K/Q4_K/Q5_K/Q4_1/Q5_1 quantizers); weights may be null (then x^2).
float make_qkx3_quants(int n, int nmax, const float *x, const float *weights, uint8_t *L, float *the_min,
                       uint8_t *Laux, float rmin, float rdelta, int nstep, bool use_mad);
// Non-negative levels in [0, nmax] with weights (never null) and a refinement pass; ggml uses
// it for the Q2_K sub-block scales and the IQ2_XXS starting scale.
float make_qp_quants(int n, int nmax, const float *x, uint8_t *L, const float *quant_weights);
// make_qkx2_quants on 8 independent groups of n <= 32 elements (group g at x + g*n, same for
// weights and L), bit-identical to 8 scalar calls; scales[g] and the_mins[g] are its results.
void make_qkx2_quants_x8(int n, int nmax, const float *x, const float *weights, uint8_t *L,
                         float *scales, float *the_mins, float rmin, float rdelta, int nstep,
                         bool use_mad);

// --- microscaling formats (quant_mx.cpp)
void dequantize_row_mxfp4(const block_mxfp4 *x, float *y, int64_t k);
void quantize_row_mxfp4(const float *x, block_mxfp4 *y, int64_t k);
void dequantize_row_mxfp6_e2m3(const block_mxfp6 *x, float *y, int64_t k);
void dequantize_row_mxfp6_e3m2(const block_mxfp6 *x, float *y, int64_t k);
void quantize_row_mxfp6_e2m3(const float *x, block_mxfp6 *y, int64_t k);
void quantize_row_mxfp6_e3m2(const float *x, block_mxfp6 *y, int64_t k);

// --- i-quants and ternary formats (quant_iq.cpp): dequantization
void dequantize_row_iq2_xxs(const block_iq2_xxs *x, float *y, int64_t k);
void dequantize_row_iq2_xs(const block_iq2_xs *x, float *y, int64_t k);
void dequantize_row_iq2_s(const block_iq2_s *x, float *y, int64_t k);
void dequantize_row_iq3_xxs(const block_iq3_xxs *x, float *y, int64_t k);
void dequantize_row_iq3_s(const block_iq3_s *x, float *y, int64_t k);
void dequantize_row_iq1_s(const block_iq1_s *x, float *y, int64_t k);
void dequantize_row_iq1_m(const block_iq1_m *x, float *y, int64_t k);
void dequantize_row_iq4_nl(const block_iq4_nl *x, float *y, int64_t k);
void dequantize_row_iq4_xs(const block_iq4_xs *x, float *y, int64_t k);
void dequantize_row_tq1_0(const block_tq1_0 *x, float *y, int64_t k);
void dequantize_row_tq2_0(const block_tq2_0 *x, float *y, int64_t k);
// Quantizers as ggml_quantize_chunk runs them for one row of k elements; quant_weights holds
// k importance weights or is null (ggml's quantize_<type>(..., quant_weights)).
// quant_iq_quantize.cpp: IQ4_NL / IQ4_XS as quantize_iq4_nl / quantize_iq4_xs; TQ*: _ref.
void quantize_row_iq4_nl(const float *x, block_iq4_nl *y, int64_t k, const float *quant_weights);
void quantize_row_iq4_xs(const float *x, block_iq4_xs *y, int64_t k, const float *quant_weights);
// quant_k_weighted.cpp: ggml's quantize_row_<type>_impl with importance weights (non-null;
// without them ggml runs the _ref quantizers above), k-quants and legacy 32-element formats.
void quantize_row_q2_K_w(const float *x, block_q2_K *y, int64_t k, const float *quant_weights);
void quantize_row_q3_K_w(const float *x, block_q3_K *y, int64_t k, const float *quant_weights);
void quantize_row_q4_K_w(const float *x, block_q4_K *y, int64_t k, const float *quant_weights);
void quantize_row_q5_K_w(const float *x, block_q5_K *y, int64_t k, const float *quant_weights);
void quantize_row_q6_K_w(const float *x, block_q6_K *y, int64_t k, const float *quant_weights);
void quantize_row_q4_0_w(const float *x, block_q4_0 *y, int64_t k, const float *quant_weights);
void quantize_row_q4_1_w(const float *x, block_q4_1 *y, int64_t k, const float *quant_weights);
void quantize_row_q5_0_w(const float *x, block_q5_0 *y, int64_t k, const float *quant_weights);
void quantize_row_q5_1_w(const float *x, block_q5_1 *y, int64_t k, const float *quant_weights);
// quant_iq2/iq3/iq1_quantize.cpp, the grid formats. IQ2_XXS, IQ2_XS and IQ1_S need weights
// (non-null, as ggml asserts); the others fall back to ggml's importance-free weights.
void quantize_row_iq2_xxs(const float *x, block_iq2_xxs *y, int64_t k, const float *quant_weights);
void quantize_row_iq2_xs(const float *x, block_iq2_xs *y, int64_t k, const float *quant_weights);
void quantize_row_iq2_s(const float *x, block_iq2_s *y, int64_t k, const float *quant_weights);
void quantize_row_iq3_xxs(const float *x, block_iq3_xxs *y, int64_t k, const float *quant_weights);
void quantize_row_iq3_s(const float *x, block_iq3_s *y, int64_t k, const float *quant_weights);
void quantize_row_iq1_s(const float *x, block_iq1_s *y, int64_t k, const float *quant_weights);
void quantize_row_iq1_m(const float *x, block_iq1_m *y, int64_t k, const float *quant_weights);
void quantize_row_tq1_0(const float *x, block_tq1_0 *y, int64_t k);
void quantize_row_tq2_0(const float *x, block_tq2_0 *y, int64_t k);
// The f16 bits of an IQ1_M block's super-block scale (spread over its scale words).
uint16_t iq1m_scale_bits(const block_iq1_m &x);

} // namespace rf::quant
