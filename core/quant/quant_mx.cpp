// Microscaling (OCP MX v1.0) formats: 32 elements share one E8M0 power-of-two scale.
//  - MXFP4 exactly as ggml (dequantize_row_mxfp4 / quantize_row_mxfp4_ref): E2M1 elements via
//    the doubled value table kvalues_mxfp4 and the halved scale 2^(e-128).
//  - MXFP6 E2M3 / E3M2: ROCmForge layout (docs/FORMATS.md): 6-bit codes, 4 per 3 bytes,
//    code i in bits [6i, 6i+6) of the little-endian 24-byte stream.
#include <cmath>

#include "quant_internal.h"

namespace rf::quant {

// E2M1 values times two, indexed by the 4-bit code (bit 3 = sign).
static constexpr int8_t kvalues_mxfp4[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

void dequantize_row_mxfp4(const block_mxfp4 *x, float *y, int64_t k) {
    const int qk = QK_MXFP4;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        const float d = e8m0_to_float_half(x[i].e);
        for (int j = 0; j < qk / 2; ++j) {
            const int8_t x0 = kvalues_mxfp4[x[i].qs[j] & 0x0F];
            const int8_t x1 = kvalues_mxfp4[x[i].qs[j] >> 4];
            y[i * qk + j] = x0 * d;
            y[i * qk + j + qk / 2] = x1 * d;
        }
    }
}

// First code with the smallest |value*e - x| (ggml's best_index_mxfp4).
static inline int best_index_mxfp4(float x, float e) {
    int best_index = 0;
    float best_err = std::fabs(kvalues_mxfp4[0] * e - x);
    for (int i = 1; i < 16; i++) {
        const float err = std::fabs(kvalues_mxfp4[i] * e - x);
        if (err < best_err) {
            best_index = i;
            best_err = err;
        }
    }
    return best_index;
}

void quantize_row_mxfp4(const float *x, block_mxfp4 *y, int64_t k) {
    const int qk = QK_MXFP4;
    const int64_t nb = k / qk;
    for (int64_t i = 0; i < nb; i++) {
        float amax = 0.0f;
        for (int j = 0; j < qk; j++) {
            const float v = x[i * qk + j];
            if (amax < std::fabs(v)) amax = std::fabs(v);
        }
        // ggml: (uint8_t)(floorf(log2f(amax)) - 2 + 127); the float->int->byte path matches
        // x86 codegen for the (rare) out-of-range results too.
        const uint8_t e = amax > 0.0f
                              ? static_cast<uint8_t>(static_cast<int>(std::floor(std::log2(amax)) - 2 + 127))
                              : 0;
        const float d = e8m0_to_float_half(e);
        y[i].e = e;
        for (int j = 0; j < qk / 2; ++j) {
            const uint8_t x0 = static_cast<uint8_t>(best_index_mxfp4(x[i * qk + 0 + j], d));
            const uint8_t x1 = static_cast<uint8_t>(best_index_mxfp4(x[i * qk + qk / 2 + j], d));
            y[i].qs[j] = static_cast<uint8_t>(x0 | (x1 << 4));
        }
    }
}

//========================= MXFP6

namespace {

// One FP6 element encoding: 1 sign bit, EBITS exponent bits, MBITS mantissa bits.
struct Fp6Format {
    int ebits, mbits, bias;
    int emax_elem; // floor(log2(largest normal)): 2 for E2M3 (7.5), 4 for E3M2 (28)
};
constexpr Fp6Format kE2M3{2, 3, 1, 2};
constexpr Fp6Format kE3M2{3, 2, 3, 4};

// Magnitude of code c (0..31) as a double; exact.
double fp6_magnitude(const Fp6Format &f, int c) {
    const int m = c & ((1 << f.mbits) - 1);
    const int e = c >> f.mbits;
    if (e == 0) return std::ldexp(static_cast<double>(m), 1 - f.bias - f.mbits);
    return std::ldexp(static_cast<double>((1 << f.mbits) + m), e - f.bias - f.mbits);
}

struct Fp6Table {
    float value[64]; // signed value of every code
    explicit Fp6Table(const Fp6Format &f) {
        for (int c = 0; c < 32; ++c) {
            value[c] = static_cast<float>(fp6_magnitude(f, c));
            value[c + 32] = -value[c];
        }
    }
};
// Function-local statics: safe to use from other translation units' static initializers.
const Fp6Table &table_e2m3() {
    static const Fp6Table t(kE2M3);
    return t;
}
const Fp6Table &table_e3m2() {
    static const Fp6Table t(kE3M2);
    return t;
}

// E8M0 scale 2^(e-127); 0xFF is NaN per the spec (ggml's decode for e == 0 gives 2^-127 too).
inline float e8m0_to_float(uint8_t e) {
    if (e == 0xFF) return std::nanf("");
    return f32_from_bits(e == 0 ? 0x00400000u : static_cast<uint32_t>(e) << 23);
}

// Magnitude code of a >= 0 (already divided by the block scale): round to nearest, ties to
// even code, saturate to the largest finite magnitude (FP6 has no inf/NaN).
inline int fp6_round(const Fp6Format &f, double a) {
    const int max_code = (1 << (f.ebits + f.mbits)) - 1;
    if (!(a < fp6_magnitude(f, max_code))) return a > 0 ? max_code : 0; // saturate; NaN -> 0
    const int e_min = 1 - f.bias;
    int ex;
    std::frexp(a, &ex);
    int E = ex - 1; // floor(log2(a)) for a > 0
    if (a == 0 || E < e_min) E = e_min;
    // Levels in [2^E, 2^(E+1)) are spaced by 2^(E - mbits); below 2^e_min the subnormal
    // levels keep the same spacing. code = (E - e_min) * 2^mbits + r covers both cases,
    // including the carry when r rounds up to 2^(mbits+1).
    const double q = std::ldexp(a, f.mbits - E);
    double r = std::floor(q);
    const double frac = q - r;
    if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1;
    const int code = (E - e_min) * (1 << f.mbits) + static_cast<int>(r);
    return code < max_code ? code : max_code;
}

inline void put_code(uint8_t *qs, int i, int code) {
    const int bit = 6 * i;
    const uint32_t v = static_cast<uint32_t>(code) << (bit % 8);
    qs[bit / 8] |= static_cast<uint8_t>(v);
    if (bit % 8 > 2) qs[bit / 8 + 1] |= static_cast<uint8_t>(v >> 8);
}

inline int get_code(const uint8_t *qs, int i) {
    const int bit = 6 * i;
    uint32_t v = qs[bit / 8];
    if (bit % 8 > 2) v |= static_cast<uint32_t>(qs[bit / 8 + 1]) << 8;
    return static_cast<int>((v >> (bit % 8)) & 0x3F);
}

void dequantize_mxfp6(const Fp6Table &t, const block_mxfp6 *x, float *y, int64_t k) {
    const int64_t nb = k / QK_MXFP6;
    for (int64_t i = 0; i < nb; i++) {
        const float d = e8m0_to_float(x[i].e);
        for (int j = 0; j < QK_MXFP6; ++j) y[i * QK_MXFP6 + j] = t.value[get_code(x[i].qs, j)] * d;
    }
}

void quantize_mxfp6(const Fp6Format &f, const float *x, block_mxfp6 *y, int64_t k) {
    const int64_t nb = k / QK_MXFP6;
    for (int64_t i = 0; i < nb; i++) {
        const float *xb = x + i * QK_MXFP6;
        float amax = 0.0f;
        for (int j = 0; j < QK_MXFP6; j++)
            if (amax < std::fabs(xb[j])) amax = std::fabs(xb[j]);
        // Shared exponent X = floor(log2(amax)) - emax_elem (OCP MX v1.0, section 6.3),
        // stored biased by 127 and clamped to the finite E8M0 range [0, 254].
        int X = -127;
        if (amax > 0.0f && std::isfinite(amax)) {
            int ex;
            std::frexp(amax, &ex);
            X = ex - 1 - f.emax_elem;
        } else if (std::isinf(amax)) {
            X = 127;
        }
        X = X < -127 ? -127 : (X > 127 ? 127 : X);
        y[i].e = static_cast<uint8_t>(X + 127);
        std::memset(y[i].qs, 0, sizeof(y[i].qs));
        for (int j = 0; j < QK_MXFP6; ++j) {
            const double v = std::ldexp(static_cast<double>(xb[j]), -X);
            const int mag = fp6_round(f, std::fabs(v));
            const int sign = std::signbit(xb[j]) && mag != 0 ? 32 : 0;
            put_code(y[i].qs, j, sign | mag);
        }
    }
}

} // namespace

void dequantize_row_mxfp6_e2m3(const block_mxfp6 *x, float *y, int64_t k) { dequantize_mxfp6(table_e2m3(), x, y, k); }
void dequantize_row_mxfp6_e3m2(const block_mxfp6 *x, float *y, int64_t k) { dequantize_mxfp6(table_e3m2(), x, y, k); }
void quantize_row_mxfp6_e2m3(const float *x, block_mxfp6 *y, int64_t k) { quantize_mxfp6(kE2M3, x, y, k); }
void quantize_row_mxfp6_e3m2(const float *x, block_mxfp6 *y, int64_t k) { quantize_mxfp6(kE3M2, x, y, k); }

} // namespace rf::quant
