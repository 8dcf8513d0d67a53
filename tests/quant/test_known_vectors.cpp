// Known vectors: blocks with chosen bytes -> exact expected floats. The expected values are
// decoded here straight from the byte layout (offsets, bit positions, formulas) in double
// precision, independently of the library; every product involved is exact, so the one
// rounding to float must match the library bit for bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "rocmforge/types.h"

namespace {

using Bytes = std::vector<uint8_t>;

// IEEE half decoded from its fields (not through the library).
double half_value(const uint8_t *p) {
    const unsigned h = p[0] | (p[1] << 8);
    const int exp = (h >> 10) & 0x1F, man = h & 0x3FF;
    const double mag = exp == 0 ? std::ldexp(man, -24) : std::ldexp(1024 + man, exp - 25);
    return (h & 0x8000) ? -mag : mag;
}
int u8(const uint8_t *blk, int off) { return blk[off]; }
int s8(const uint8_t *blk, int off) { return static_cast<int8_t>(blk[off]); }
int bit(const uint8_t *p, int i) { return (p[i / 8] >> (i % 8)) & 1; }

// A normal half with exponent in [2^-5, 2^4] and a random mantissa and sign.
void put_half(uint8_t *p, std::mt19937 &rng, bool allow_negative = true) {
    const unsigned e = 10 + rng() % 10, m = rng() % 1024;
    const unsigned s = allow_negative ? (rng() & 1) : 0;
    const unsigned h = (s << 15) | (e << 10) | m;
    p[0] = h & 0xFF;
    p[1] = h >> 8;
}

struct Format {
    int type;
    int block_bytes;
    int block_elems;
    std::function<void(uint8_t *, std::mt19937 &)> fix_scales; // make scale fields sane
    std::function<double(const uint8_t *, int)> element;      // value of element i of a block
};

// Element i of a 32-element nibble block: low nibbles hold 0..15, high nibbles 16..31.
int nibble(const uint8_t *qs, int i) { return i < 16 ? qs[i] & 0xF : qs[i - 16] >> 4; }

double e2m1(int code) {
    static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
    return (code & 8) ? -mag[code & 7] : mag[code & 7];
}

// 6-bit code i from the little-endian bit stream qs.
int fp6_code(const uint8_t *qs, int i) {
    int c = 0;
    for (int b = 0; b < 6; ++b) c |= bit(qs, 6 * i + b) << b;
    return c;
}
double fp6_e2m3(int c) {
    const int e = (c >> 3) & 3, m = c & 7;
    const double mag = e == 0 ? m / 8.0 : (1 + m / 8.0) * std::ldexp(1.0, e - 1);
    return (c & 32) ? -mag : mag;
}
double fp6_e3m2(int c) {
    const int e = (c >> 2) & 7, m = c & 3;
    const double mag = e == 0 ? m / 4.0 * 0.25 : (1 + m / 4.0) * std::ldexp(1.0, e - 3);
    return (c & 32) ? -mag : mag;
}

// Q3_K / Q4_K packed 6-bit scales.
int q3k_scale(const uint8_t *sc, int j) {
    const int lo = j < 8 ? sc[j] & 0xF : sc[j - 8] >> 4;
    const int hi = (sc[8 + j % 4] >> (2 * (j / 4))) & 3;
    return (lo | (hi << 4)) - 32;
}
void q4k_scale_min(const uint8_t *sc, int j, int *s, int *m) {
    if (j < 4) {
        *s = sc[j] & 63;
        *m = sc[j + 4] & 63;
    } else {
        *s = (sc[j + 4] & 0xF) | ((sc[j - 4] >> 6) << 4);
        *m = (sc[j + 4] >> 4) | ((sc[j] >> 6) << 4);
    }
}

std::vector<Format> formats() {
    std::vector<Format> f;
    f.push_back({RF_TYPE_Q4_0, 18, 32, [](uint8_t *b, std::mt19937 &r) { put_half(b, r); },
                 [](const uint8_t *b, int i) { return (nibble(b + 2, i) - 8) * half_value(b); }});
    f.push_back({RF_TYPE_Q4_1, 20, 32,
                 [](uint8_t *b, std::mt19937 &r) { put_half(b, r); put_half(b + 2, r); },
                 [](const uint8_t *b, int i) { return nibble(b + 4, i) * half_value(b) + half_value(b + 2); }});
    f.push_back({RF_TYPE_Q5_0, 22, 32, [](uint8_t *b, std::mt19937 &r) { put_half(b, r); },
                 [](const uint8_t *b, int i) {
                     const int q = nibble(b + 6, i) | (bit(b + 2, i) << 4);
                     return (q - 16) * half_value(b);
                 }});
    f.push_back({RF_TYPE_Q5_1, 24, 32,
                 [](uint8_t *b, std::mt19937 &r) { put_half(b, r); put_half(b + 2, r); },
                 [](const uint8_t *b, int i) {
                     const int q = nibble(b + 8, i) | (bit(b + 4, i) << 4);
                     return q * half_value(b) + half_value(b + 2);
                 }});
    f.push_back({RF_TYPE_Q8_0, 34, 32, [](uint8_t *b, std::mt19937 &r) { put_half(b, r); },
                 [](const uint8_t *b, int i) { return s8(b, 2 + i) * half_value(b); }});
    // Q2_K: scales[16] @0, qs[64] @16, d @80, dmin @82
    f.push_back({RF_TYPE_Q2_K, 84, 256,
                 [](uint8_t *b, std::mt19937 &r) { put_half(b + 80, r); put_half(b + 82, r); },
                 [](const uint8_t *b, int i) {
                     const int half = i / 128, r = i % 128, shift = 2 * (r / 32), l = r % 32;
                     const int q = (u8(b, 16 + 32 * half + l) >> shift) & 3;
                     const int sc = u8(b, i / 16);
                     return half_value(b + 80) * (sc & 0xF) * q - half_value(b + 82) * (sc >> 4);
                 }});
    // Q3_K: hmask[32] @0, qs[64] @32, scales[12] @96, d @108
    f.push_back({RF_TYPE_Q3_K, 110, 256, [](uint8_t *b, std::mt19937 &r) { put_half(b + 108, r); },
                 [](const uint8_t *b, int i) {
                     const int half = i / 128, r = i % 128, shift = 2 * (r / 32), l = r % 32;
                     const int lo = (u8(b, 32 + 32 * half + l) >> shift) & 3;
                     const int hi = (u8(b, i % 32) >> (i / 32)) & 1;
                     return half_value(b + 108) * q3k_scale(b + 96, i / 16) * (lo + 4 * hi - 4);
                 }});
    // Q4_K: d @0, dmin @2, scales[12] @4, qs[128] @16
    f.push_back({RF_TYPE_Q4_K, 144, 256,
                 [](uint8_t *b, std::mt19937 &r) { put_half(b, r); put_half(b + 2, r); },
                 [](const uint8_t *b, int i) {
                     int s, m;
                     q4k_scale_min(b + 4, i / 32, &s, &m);
                     const int byte = u8(b, 16 + 32 * (i / 64) + i % 32);
                     const int q = (i / 32) % 2 == 0 ? byte & 0xF : byte >> 4;
                     return half_value(b) * s * q - half_value(b + 2) * m;
                 }});
    // Q5_K: d @0, dmin @2, scales[12] @4, qh[32] @16, qs[128] @48
    f.push_back({RF_TYPE_Q5_K, 176, 256,
                 [](uint8_t *b, std::mt19937 &r) { put_half(b, r); put_half(b + 2, r); },
                 [](const uint8_t *b, int i) {
                     int s, m;
                     q4k_scale_min(b + 4, i / 32, &s, &m);
                     const int byte = u8(b, 48 + 32 * (i / 64) + i % 32);
                     const int lo = (i / 32) % 2 == 0 ? byte & 0xF : byte >> 4;
                     const int hi = (u8(b, 16 + i % 32) >> (i / 32)) & 1;
                     return half_value(b) * s * (lo + 16 * hi) - half_value(b + 2) * m;
                 }});
    // Q6_K: ql[128] @0, qh[64] @128, scales[16] (int8) @192, d @208
    f.push_back({RF_TYPE_Q6_K, 210, 256, [](uint8_t *b, std::mt19937 &r) { put_half(b + 208, r); },
                 [](const uint8_t *b, int i) {
                     const int half = i / 128, r = i % 128, g = r / 32, l = r % 32;
                     const int byte = u8(b, 64 * half + 32 * (g % 2) + l);
                     const int lo = g < 2 ? byte & 0xF : byte >> 4;
                     const int hi = (u8(b, 128 + 32 * half + l) >> (2 * g)) & 3;
                     return half_value(b + 208) * s8(b, 192 + i / 16) * ((lo | (hi << 4)) - 32);
                 }});
    // Q8_K: d (f32) @0, qs[256] @4, bsums @260 (not used for values)
    f.push_back({RF_TYPE_Q8_K, 292, 256,
                 [](uint8_t *b, std::mt19937 &r) {
                     const float d = std::ldexp(static_cast<float>(r() % 100000 + 1), -20);
                     std::memcpy(b, &d, 4);
                 },
                 [](const uint8_t *b, int i) {
                     float d;
                     std::memcpy(&d, b, 4);
                     return static_cast<double>(d) * s8(b, 4 + i);
                 }});
    // MXFP4: e @0 (scale 2^(e-127)), 16 bytes of E2M1 nibbles @1
    f.push_back({RF_TYPE_MXFP4, 17, 32, [](uint8_t *b, std::mt19937 &r) { b[0] = 100 + r() % 50; },
                 [](const uint8_t *b, int i) { return e2m1(nibble(b + 1, i)) * std::ldexp(1.0, b[0] - 127); }});
    f.push_back({RF_TYPE_MXFP6_E2M3, 25, 32, [](uint8_t *b, std::mt19937 &r) { b[0] = 100 + r() % 50; },
                 [](const uint8_t *b, int i) { return fp6_e2m3(fp6_code(b + 1, i)) * std::ldexp(1.0, b[0] - 127); }});
    f.push_back({RF_TYPE_MXFP6_E3M2, 25, 32, [](uint8_t *b, std::mt19937 &r) { b[0] = 100 + r() % 50; },
                 [](const uint8_t *b, int i) { return fp6_e3m2(fp6_code(b + 1, i)) * std::ldexp(1.0, b[0] - 127); }});
    return f;
}

} // namespace

TEST_CASE("dequantize_row of random blocks equals the layout definition", "[known]") {
    std::mt19937 rng(1234);
    for (const Format &f : formats()) {
        INFO("type " << rf::type_name(f.type));
        REQUIRE(rf::row_size(f.type, f.block_elems) == static_cast<size_t>(f.block_bytes));
        for (int trial = 0; trial < 20; ++trial) {
            const int nblocks = 3;
            Bytes data(static_cast<size_t>(nblocks) * f.block_bytes);
            for (auto &b : data) b = static_cast<uint8_t>(rng());
            for (int k = 0; k < nblocks; ++k) f.fix_scales(data.data() + k * f.block_bytes, rng);
            std::vector<float> out(static_cast<size_t>(nblocks) * f.block_elems);
            rf::dequantize_row(f.type, data.data(), out.data(), static_cast<int64_t>(out.size()));
            for (int k = 0; k < nblocks; ++k)
                for (int i = 0; i < f.block_elems; ++i) {
                    const float expected = static_cast<float>(f.element(data.data() + k * f.block_bytes, i));
                    INFO("block " << k << " element " << i);
                    REQUIRE(out[k * f.block_elems + i] == expected);
                }
        }
    }
}

TEST_CASE("hand-written blocks", "[known]") {
    SECTION("q4_0: d = 0.5, nibbles 0..15") {
        Bytes b(18, 0);
        b[0] = 0x00;
        b[1] = 0x38; // 0.5
        for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
        std::vector<float> y(32);
        rf::dequantize_row(RF_TYPE_Q4_0, b.data(), y.data(), 32);
        for (int j = 0; j < 16; ++j) {
            CHECK(y[j] == (j - 8) * 0.5f);
            CHECK(y[16 + j] == (7 - j) * 0.5f);
        }
    }
    SECTION("q8_0: d = -2, qs = -128..127 pattern") {
        Bytes b(34, 0);
        b[1] = 0xC0; // -2.0
        for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(j * 8 - 128));
        std::vector<float> y(32);
        rf::dequantize_row(RF_TYPE_Q8_0, b.data(), y.data(), 32);
        for (int j = 0; j < 32; ++j) CHECK(y[j] == (j * 8 - 128) * -2.0f);
    }
    SECTION("mxfp4: e = 127 gives the plain E2M1 values; e = 0 and 1 are 2^-127 and 2^-126") {
        for (int e : {127, 0, 1, 254}) {
            Bytes b(17, 0);
            b[0] = static_cast<uint8_t>(e);
            for (int j = 0; j < 16; ++j) b[1 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
            std::vector<float> y(32);
            rf::dequantize_row(RF_TYPE_MXFP4, b.data(), y.data(), 32);
            const float s = std::ldexp(1.0f, e - 127);
            const float e2m1_values[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, 0, -0.5f, -1, -1.5f, -2, -3, -4, -6};
            for (int j = 0; j < 16; ++j) {
                CHECK(y[j] == e2m1_values[j] * s);
                CHECK(y[16 + j] == e2m1_values[15 - j] * s);
            }
        }
    }
    SECTION("mxfp6: bytes 5F 80 FE hold codes 0x1F, 0x01, 0x28, 0x3F") {
        Bytes b(25, 0);
        b[0] = 127;
        b[1] = 0x5F;
        b[2] = 0x80;
        b[3] = 0xFE;
        std::vector<float> y(32);
        rf::dequantize_row(RF_TYPE_MXFP6_E2M3, b.data(), y.data(), 32);
        CHECK(y[0] == 7.5f);
        CHECK(y[1] == 0.125f);
        CHECK(y[2] == -1.0f);
        CHECK(y[3] == -7.5f);
        for (int j = 4; j < 32; ++j) CHECK(y[j] == 0.0f);
        rf::dequantize_row(RF_TYPE_MXFP6_E3M2, b.data(), y.data(), 32);
        CHECK(y[0] == 28.0f);
        CHECK(y[1] == 0.0625f);
        CHECK(y[2] == -0.5f);
        CHECK(y[3] == -28.0f);
        b[0] = 255; // NaN scale
        rf::dequantize_row(RF_TYPE_MXFP6_E3M2, b.data(), y.data(), 32);
        CHECK(std::isnan(y[0]));
    }
    SECTION("f16, bf16, f32 rows") {
        const uint16_t h[4] = {0x3C00, 0xC000, 0x0001, 0x7BFF};
        std::vector<float> y(4);
        rf::dequantize_row(RF_TYPE_F16, h, y.data(), 4);
        CHECK(y == std::vector<float>{1.0f, -2.0f, std::ldexp(1.0f, -24), 65504.0f});
        const uint16_t bf[2] = {0x3F80, 0x4049};
        rf::dequantize_row(RF_TYPE_BF16, bf, y.data(), 2);
        CHECK(y[0] == 1.0f);
        CHECK(y[1] == 3.140625f);
        const float f[2] = {1.5f, -7.25f};
        rf::dequantize_row(RF_TYPE_F32, f, y.data(), 2);
        CHECK(y[0] == 1.5f);
        CHECK(y[1] == -7.25f);
    }
}
