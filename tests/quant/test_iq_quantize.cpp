// The IQ4_NL, IQ4_XS, TQ1_0 and TQ2_0 reference quantizers: bytes derived by hand from ggml's
// algorithm for inputs where every step is exact, round-trip error bounds, the ternary formats'
// idempotence, and degenerate rows (zeros, one outlier, non-multiple lengths).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/iq_grids.h"
#include "rocmforge/types.h"

namespace {

using Bytes = std::vector<uint8_t>;
using rf::iq::kValuesIq4nl;

Bytes quantize(int type, const std::vector<float> &x) {
    Bytes q(rf::row_size(type, int64_t(x.size())));
    rf::quantize_row(type, x.data(), q.data(), int64_t(x.size()));
    return q;
}
std::vector<float> dequantize(int type, const Bytes &q, size_t n) {
    std::vector<float> y(n);
    rf::dequantize_row(type, q.data(), y.data(), int64_t(n));
    return y;
}
unsigned u16(const uint8_t *p) { return p[0] | (p[1] << 8); }

double nmse(const std::vector<float> &x, const std::vector<float> &y) {
    double e = 0, s = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        e += (double(x[i]) - y[i]) * (double(x[i]) - y[i]);
        s += double(x[i]) * x[i];
    }
    return s > 0 ? e / s : e;
}

// Nibble pattern of a 32-block: every table index appears, index 0 (the -127 level) first so
// it is the element of largest magnitude.
int pattern(int b, int j) { return j == 0 ? 0 : (j * 7 + b * 3) % 15 + 1; }

} // namespace

TEST_CASE("iq4_nl quantization of exact table multiples", "[iq][quantize]") {
    // x = s * kvalues[p]: ggml's scale search (quantize_iq4_nl, ntry 7) lands on d = s exactly
    // (power of two, so every product and quotient is exact; the exact fit scores best) and the
    // indices p.
    const float s[3] = {0.25f, -2.0f, 1.0f / 64};
    std::vector<float> x(96);
    for (int b = 0; b < 3; ++b)
        for (int j = 0; j < 32; ++j) x[size_t(32 * b + j)] = s[b] * kValuesIq4nl[pattern(b, j)];
    const Bytes q = quantize(RF_TYPE_IQ4_NL, x);
    for (int b = 0; b < 3; ++b) {
        const uint8_t *blk = q.data() + 18 * b;
        CHECK(u16(blk) == rf::fp32_to_fp16(s[b]));
        for (int j = 0; j < 16; ++j) {
            CHECK((blk[2 + j] & 15) == pattern(b, j));
            CHECK((blk[2 + j] >> 4) == pattern(b, j + 16));
        }
    }
    CHECK(dequantize(RF_TYPE_IQ4_NL, q, 96) == x);
}

TEST_CASE("iq4_xs quantization of exact per-block scales", "[iq][quantize]") {
    // Block scales s_ib = -l_ib / 32 with the super-block d = -max_scale / 32 = -1/32: the scale
    // search lands on s_ib exactly (the exact fit beats every other candidate), l_ib + 32 is
    // stored, and the indices are p.
    const float s[8] = {1.0f, 0.5f, -0.25f, 0.125f, -0.5f, 0.0625f, -0.125f, 0.25f};
    std::vector<float> x(256);
    for (int b = 0; b < 8; ++b)
        for (int j = 0; j < 32; ++j) x[size_t(32 * b + j)] = s[b] * kValuesIq4nl[pattern(b, j)];
    const Bytes q = quantize(RF_TYPE_IQ4_XS, x);
    REQUIRE(q.size() == 136);
    CHECK(u16(q.data()) == rf::fp32_to_fp16(-1.0f / 32));
    const unsigned scales_h = u16(q.data() + 2);
    for (int b = 0; b < 8; ++b) {
        const int stored = int(-32 * s[b]) + 32;
        INFO("block " << b);
        CHECK(((q[4 + b / 2] >> (4 * (b % 2))) & 15) == (stored & 15));
        CHECK(((scales_h >> (2 * b)) & 3) == unsigned(stored >> 4));
        for (int j = 0; j < 16; ++j) {
            CHECK((q[8 + 16 * b + j] & 15) == pattern(b, j));
            CHECK((q[8 + 16 * b + j] >> 4) == pattern(b, j + 16));
        }
    }
    CHECK(dequantize(RF_TYPE_IQ4_XS, q, 256) == x);
}

TEST_CASE("tq1_0 and tq2_0 quantization of ternary rows", "[iq][quantize]") {
    // x = 0.75 * t with t in {-1, 0, 1}: d = 0.75 and the codes t + 1.
    std::vector<float> x(512);
    std::vector<int> t(512);
    for (size_t e = 0; e < x.size(); ++e) {
        t[e] = int((e * 5 + e / 7) % 3) - 1;
        x[e] = 0.75f * float(t[e]);
    }
    const Bytes q2 = quantize(RF_TYPE_TQ2_0, x);
    for (int b = 0; b < 2; ++b) {
        const uint8_t *blk = q2.data() + 66 * b;
        CHECK(u16(blk + 64) == rf::fp32_to_fp16(0.75f));
        for (int e = 0; e < 256; ++e) {
            const int code = (blk[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3;
            CHECK(code == t[size_t(256 * b + e)] + 1);
        }
    }
    const Bytes q1 = quantize(RF_TYPE_TQ1_0, x);
    for (int b = 0; b < 2; ++b) {
        const uint8_t *blk = q1.data() + 54 * b;
        const int *tb = t.data() + 256 * b;
        CHECK(u16(blk + 52) == rf::fp32_to_fp16(0.75f));
        // Byte m of the first 32: trits of elements m, m+32, .., m+128, most significant first.
        for (int m = 0; m < 32; ++m) {
            int v = 0;
            for (int n = 0; n < 5; ++n) v = 3 * v + tb[m + 32 * n] + 1;
            CHECK(blk[m] == (v * 256 + 242) / 243);
        }
        for (int m = 0; m < 16; ++m) {
            int v = 0;
            for (int n = 0; n < 5; ++n) v = 3 * v + tb[160 + m + 16 * n] + 1;
            CHECK(blk[32 + m] == (v * 256 + 242) / 243);
        }
        for (int j = 0; j < 4; ++j) {
            int v = 0;
            for (int n = 0; n < 4; ++n) v = 3 * v + tb[240 + j + 4 * n] + 1;
            CHECK(blk[48 + j] == (3 * v * 256 + 242) / 243);
        }
    }
    for (int type : {RF_TYPE_TQ1_0, RF_TYPE_TQ2_0}) {
        INFO("type " << rf::type_name(type));
        const Bytes q = quantize(type, x);
        const std::vector<float> y = dequantize(type, q, x.size());
        CHECK(y == x);
        CHECK(quantize(type, y) == q); // idempotent
    }
}

TEST_CASE("iq4 and ternary round trips and degenerate rows", "[iq][quantize]") {
    std::mt19937 rng(99);
    std::normal_distribution<float> nd(0.f, 1.f);
    std::vector<float> x(1024);
    for (auto &v : x) v = nd(rng);
    // 4-bit non-linear levels with a scale search: Q4-class error on gaussian rows.
    CHECK(nmse(x, dequantize(RF_TYPE_IQ4_NL, quantize(RF_TYPE_IQ4_NL, x), x.size())) < 0.012);
    CHECK(nmse(x, dequantize(RF_TYPE_IQ4_XS, quantize(RF_TYPE_IQ4_XS, x), x.size())) < 0.012);
    // Ternary of a noisy ternary row: the levels survive; d = amax overshoots by the largest
    // noise sample, which is most of the error.
    std::vector<float> t(1024);
    for (size_t i = 0; i < t.size(); ++i) t[i] = float(int(rng() % 3) - 1) + 0.05f * nd(rng);
    for (int type : {RF_TYPE_TQ1_0, RF_TYPE_TQ2_0})
        CHECK(nmse(t, dequantize(type, quantize(type, t), t.size())) < 0.03);

    for (int type : {RF_TYPE_IQ4_NL, RF_TYPE_IQ4_XS, RF_TYPE_TQ1_0, RF_TYPE_TQ2_0}) {
        INFO("type " << rf::type_name(type));
        const std::vector<float> zeros(256, 0.f);
        const Bytes qz = quantize(type, zeros);
        const std::vector<float> y0 = dequantize(type, qz, 256);
        for (float v : y0) CHECK(v == 0.f);
        if (type == RF_TYPE_IQ4_NL) // d = 0 and every index the level nearest 0 (8)
            for (size_t b = 0; b < qz.size(); b += 18)
                for (int j = 0; j < 16; ++j) CHECK(qz[b + 2 + size_t(j)] == 0x88);
        std::vector<float> spike(256, 0.f);
        spike[77] = -300.f;
        const std::vector<float> ys = dequantize(type, quantize(type, spike), 256);
        CHECK(ys[77] == Approx(-300.f).epsilon(0.01));
        // The IQ4 levels have no zero: the spike's 32-block neighbours become d * 1 (small).
        const bool iq4 = type == RF_TYPE_IQ4_NL || type == RF_TYPE_IQ4_XS;
        for (size_t i = 0; i < 256; ++i) {
            if (i == 77) continue;
            if (iq4 && i / 32 == 77 / 32) CHECK(std::fabs(ys[i]) <= 300.f / 100);
            else CHECK(ys[i] == 0.f);
        }
        std::vector<float> odd(255, 1.f);
        Bytes out(rf::row_size(type, 256));
        CHECK_THROWS_AS(rf::quantize_row(type, odd.data(), out.data(), 255), rf::Error);
    }
}
