// Quantize -> dequantize round trips: error bounds per format, idempotence where the format
// guarantees it, degenerate rows, and hand-derived bytes for the simple quantizers.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "rocmforge/types.h"

namespace {

std::vector<float> gaussian(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (auto &x : v) x = dist(rng);
    return v;
}

std::vector<uint8_t> quantize(int type, const std::vector<float> &x) {
    std::vector<uint8_t> q(rf::row_size(type, static_cast<int64_t>(x.size())));
    rf::quantize_row(type, x.data(), q.data(), static_cast<int64_t>(x.size()));
    return q;
}

std::vector<float> dequantize(int type, const std::vector<uint8_t> &q, size_t n) {
    std::vector<float> y(n);
    rf::dequantize_row(type, q.data(), y.data(), static_cast<int64_t>(n));
    return y;
}

double nmse(const std::vector<float> &x, const std::vector<float> &y) {
    double num = 0, den = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        num += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
        den += static_cast<double>(x[i]) * x[i];
    }
    return num / den;
}

struct Bound {
    int type;
    double max_nmse;
};
// Gaussian data; bounds sit ~1.4x above what ggml's reference quantizers reach on it
// (q8_0 3e-5, q4_0 7.4e-3, q4_K 5.1e-3, q2_K 8.8e-2, ...).
const Bound kBounds[] = {
    {RF_TYPE_F32, 0.0},         {RF_TYPE_F16, 6e-8},       {RF_TYPE_BF16, 4e-6},
    {RF_TYPE_Q8_0, 4e-5},       {RF_TYPE_Q8_K, 6.5e-5},    {RF_TYPE_Q6_K, 4.5e-4},
    {RF_TYPE_Q5_0, 2.6e-3},     {RF_TYPE_Q5_1, 2.1e-3},    {RF_TYPE_Q5_K, 1.9e-3},
    {RF_TYPE_Q4_0, 1.0e-2},     {RF_TYPE_Q4_1, 8.5e-3},    {RF_TYPE_Q4_K, 7e-3},
    {RF_TYPE_Q3_K, 3.2e-2},     {RF_TYPE_Q2_K, 1.2e-1},    {RF_TYPE_MXFP4, 1.8e-2},
    {RF_TYPE_MXFP6_E2M3, 1.2e-3}, {RF_TYPE_MXFP6_E3M2, 4e-3},
};

} // namespace

TEST_CASE("random round trips stay within per-format error bounds", "[roundtrip]") {
    const size_t n = 256 * 64;
    const auto x = gaussian(n, 42);
    for (const Bound &b : kBounds) {
        INFO("type " << rf::type_name(b.type));
        const auto q = quantize(b.type, x);
        const auto y = dequantize(b.type, q, n);
        const double e = nmse(x, y);
        INFO("nmse " << e);
        CHECK(e <= b.max_nmse);
        for (float v : y) REQUIRE(std::isfinite(v));
        // deterministic: the same input gives the same bytes
        CHECK(quantize(b.type, x) == q);
    }
}

TEST_CASE("round trips are scale invariant up to fp16 range", "[roundtrip]") {
    const size_t n = 256 * 8;
    for (float scale : {1e-3f, 30.0f}) {
        const auto x = gaussian(n, 7, scale);
        for (const Bound &b : kBounds) {
            INFO("type " << rf::type_name(b.type) << " scale " << scale);
            const auto y = dequantize(b.type, quantize(b.type, x), n);
            CHECK(nmse(x, y) <= b.max_nmse * 1.5 + 1e-7);
        }
    }
}

TEST_CASE("quantize(dequantize(quantize(x))) == quantize(x) for fixed-grid formats", "[roundtrip]") {
    const size_t n = 256 * 16;
    const auto x = gaussian(n, 99);
    // (not Q8_K: its f32 scale 1/iscale moves by an ulp when recomputed from the output)
    for (int type : {RF_TYPE_Q8_0, RF_TYPE_Q4_0, RF_TYPE_Q5_0, RF_TYPE_MXFP4,
                     RF_TYPE_MXFP6_E2M3, RF_TYPE_MXFP6_E3M2, RF_TYPE_F16, RF_TYPE_BF16}) {
        INFO("type " << rf::type_name(type));
        const auto q1 = quantize(type, x);
        const auto q2 = quantize(type, dequantize(type, q1, n));
        CHECK(q1 == q2);
    }
}

TEST_CASE("all-zero and constant rows", "[roundtrip]") {
    const size_t n = 512;
    for (const Bound &b : kBounds) {
        INFO("type " << rf::type_name(b.type));
        const std::vector<float> zeros(n, 0.0f);
        const auto y = dequantize(b.type, quantize(b.type, zeros), n);
        for (float v : y) REQUIRE(v == 0.0f);
        const std::vector<float> ones(n, 0.75f);
        const auto y1 = dequantize(b.type, quantize(b.type, ones), n);
        for (float v : y1) REQUIRE(std::fabs(v - 0.75f) <= 0.75f * 0.15f);
    }
}

TEST_CASE("hand-derived quantizer bytes (ggml's formulas)", "[roundtrip]") {
    SECTION("q8_0: d = amax/127, q = round(x/d) half away from zero") {
        std::vector<float> x(32, 0.0f);
        x[0] = 127.0f; // amax -> d = 1
        x[1] = -2.5f;  // rounds away from zero -> -3
        x[2] = 2.5f;   // -> 3
        x[3] = 0.49f;  // -> 0
        x[4] = -127.0f;
        const auto q = quantize(RF_TYPE_Q8_0, x);
        CHECK(q[0] == 0x00);
        CHECK(q[1] == 0x3C); // fp16 1.0
        CHECK(static_cast<int8_t>(q[2]) == 127);
        CHECK(static_cast<int8_t>(q[3]) == -3);
        CHECK(static_cast<int8_t>(q[4]) == 3);
        CHECK(static_cast<int8_t>(q[5]) == 0);
        CHECK(static_cast<int8_t>(q[6]) == -127);
    }
    SECTION("q4_0: d = max/-8 with the signed max, q = min(15, trunc(x/d + 8.5))") {
        std::vector<float> x(32, 0.0f);
        x[0] = -8.0f; // max by magnitude, negative -> d = 1
        x[1] = 7.0f;  // 15
        x[2] = 7.6f;  // trunc(16.1) = 16 -> clamped 15
        x[3] = -0.5f; // trunc(8.0) = 8
        x[16] = 3.0f; // high nibble of byte 0: 11
        const auto q = quantize(RF_TYPE_Q4_0, x);
        CHECK(q[0] == 0x00);
        CHECK(q[1] == 0x3C);
        CHECK(q[2] == (0 | (11 << 4)));
        CHECK(q[3] == (15 | (8 << 4)));
        CHECK(q[4] == (15 | (8 << 4)));
        CHECK(q[5] == (8 | (8 << 4)));
    }
    SECTION("q4_1: d = (max-min)/15, m = min, q = trunc((x-min)/d + 0.5)") {
        std::vector<float> x(32);
        for (int j = 0; j < 32; ++j) x[j] = -1.0f + static_cast<float>(j % 16); // min -1, max 14
        const auto q = quantize(RF_TYPE_Q4_1, x);
        CHECK((q[0] | (q[1] << 8)) == 0x3C00); // d = 1
        CHECK((q[2] | (q[3] << 8)) == 0xBC00); // m = -1
        for (int j = 0; j < 16; ++j) CHECK(q[4 + j] == (j | (j << 4)));
    }
    SECTION("mxfp4: e = floor(log2(amax)) - 2 + 127, nearest E2M1 value, first on ties") {
        std::vector<float> x(32, 0.0f);
        x[0] = 6.0f;   // amax: e = 2 - 2 + 127 = 127, element scale 1 -> code 7 (6.0)
        x[1] = 1.25f;  // tie between 1.0 (code 2) and 1.5 (code 3) -> first: code 2
        x[2] = -5.0f;  // tie between -4 (code 14) and -6 (code 15) -> code 14
        x[3] = 0.2f;   // nearest 0 (code 0)
        x[16] = -0.3f; // nearest -0.5 (code 9)
        const auto q = quantize(RF_TYPE_MXFP4, x);
        CHECK(q[0] == 127);
        CHECK(q[1] == (7 | (9 << 4)));
        CHECK(q[2] == 2);
        CHECK(q[3] == 14);
        CHECK(q[4] == 0);
    }
    SECTION("mxfp6 e2m3: X = floor(log2 amax) - 2, ties to even, saturation at 7.5") {
        std::vector<float> x(32, 0.0f);
        x[0] = 7.9f;     // amax: floor(log2) = 2 -> X = 0, e = 127; 7.9 saturates to 7.5 (0x1F)
        x[1] = 1.0625f;  // tie between 1.0 (code 0x08) and 1.125 (0x09) -> even 0x08
        x[2] = 1.1875f;  // tie between 1.125 (0x09) and 1.25 (0x0A) -> even 0x0A
        x[3] = -0.0625f; // tie between 0 and 0.125 -> 0 (code 0)
        const auto q = quantize(RF_TYPE_MXFP6_E2M3, x);
        CHECK(q[0] == 127);
        const uint32_t bits = q[1] | (q[2] << 8) | (q[3] << 16);
        CHECK((bits & 63) == 0x1F);
        CHECK(((bits >> 6) & 63) == 0x08);
        CHECK(((bits >> 12) & 63) == 0x0A);
        CHECK(((bits >> 18) & 63) == 0x00);
    }
    SECTION("mxfp6 e3m2: X = floor(log2 amax) - 4; subnormal steps of 1/16") {
        std::vector<float> x(32, 0.0f);
        x[0] = -16.0f;   // amax: X = 0; -16 = -(1.0 * 2^4): sign | e=7, m=0 -> 0x20 | 0x1C
        x[1] = 0.09375f; // 1.5/16: tie between 1/16 (code 1) and 2/16 (code 2) -> even 2
        x[2] = 30.0f;    // saturates to 28 (0x1F)
        const auto q = quantize(RF_TYPE_MXFP6_E3M2, x);
        CHECK(q[0] == 127);
        const uint32_t bits = q[1] | (q[2] << 8) | (q[3] << 16);
        CHECK((bits & 63) == 0x3C);
        CHECK(((bits >> 6) & 63) == 0x02);
        CHECK(((bits >> 12) & 63) == 0x1F);
    }
}

TEST_CASE("k-quant structure", "[roundtrip]") {
    const size_t n = 256 * 4;
    const auto x = gaussian(n, 5);
    SECTION("q8_K bsums are the sums of 16 quants") {
        const auto q = quantize(RF_TYPE_Q8_K, x);
        for (size_t blk = 0; blk < n / 256; ++blk) {
            const uint8_t *b = q.data() + blk * 292;
            for (int g = 0; g < 16; ++g) {
                int sum = 0;
                for (int i = 0; i < 16; ++i) sum += static_cast<int8_t>(b[4 + 16 * g + i]);
                int16_t bs;
                std::memcpy(&bs, b + 260 + 2 * g, 2);
                CHECK(bs == sum);
            }
        }
    }
    SECTION("q6_K of an exactly representable row is exact") {
        // values q/32 with q in [-30, 30] and -31/32 leading every 16-group: the search finds
        // the exact grid (iscale 31.1/max) and the super-block scale -2^-12 * -128 is exact.
        std::vector<float> v(256);
        for (int i = 0; i < 256; ++i)
            v[i] = i % 16 == 0 ? -31.0f / 32 : static_cast<float>((i * 7) % 61 - 30) / 32.0f;
        const auto y = dequantize(RF_TYPE_Q6_K, quantize(RF_TYPE_Q6_K, v), 256);
        CHECK(y == v);
    }
}
