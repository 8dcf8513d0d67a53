// fp16 / bf16 scalar conversions: ggml's rounding (nearest even), overflow, subnormals, NaN.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "rocmforge/types.h"

namespace {
float from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
} // namespace

TEST_CASE("fp16 decode of special and subnormal values", "[fp16]") {
    CHECK(rf::fp16_to_fp32(0x0000) == 0.0f);
    CHECK(bits(rf::fp16_to_fp32(0x8000)) == 0x80000000u); // -0
    CHECK(rf::fp16_to_fp32(0x3C00) == 1.0f);
    CHECK(rf::fp16_to_fp32(0xC000) == -2.0f);
    CHECK(rf::fp16_to_fp32(0x7BFF) == 65504.0f);
    CHECK(rf::fp16_to_fp32(0x0001) == std::ldexp(1.0f, -24)); // smallest subnormal
    CHECK(rf::fp16_to_fp32(0x03FF) == std::ldexp(1023.0f, -24));
    CHECK(rf::fp16_to_fp32(0x0400) == std::ldexp(1.0f, -14)); // smallest normal
    CHECK(rf::fp16_to_fp32(0x7C00) == std::numeric_limits<float>::infinity());
    CHECK(rf::fp16_to_fp32(0xFC00) == -std::numeric_limits<float>::infinity());
    CHECK(std::isnan(rf::fp16_to_fp32(0x7E00)));
    CHECK(std::isnan(rf::fp16_to_fp32(0x7C01)));
}

TEST_CASE("fp16 decode is exact for every finite half", "[fp16]") {
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const int exp = (h >> 10) & 0x1F, man = h & 0x3FF;
        if (exp == 31) continue;
        const double mag = exp == 0 ? std::ldexp(man, -24) : std::ldexp(1024 + man, exp - 25);
        const double expected = (h & 0x8000) ? -mag : mag;
        REQUIRE(static_cast<double>(rf::fp16_to_fp32(static_cast<uint16_t>(h))) == expected);
        // and encoding that value gives the same half back (except -0/+0 which keep sign too)
        REQUIRE(rf::fp32_to_fp16(rf::fp16_to_fp32(static_cast<uint16_t>(h))) == h);
    }
}

TEST_CASE("fp16 encode rounds to nearest even and saturates to inf", "[fp16]") {
    CHECK(rf::fp32_to_fp16(1.0f) == 0x3C00);
    CHECK(rf::fp32_to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);     // tie -> even
    CHECK(rf::fp32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02); // tie -> even (up)
    CHECK(rf::fp32_to_fp16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)) == 0x3C01);
    CHECK(rf::fp32_to_fp16(65504.0f) == 0x7BFF);
    CHECK(rf::fp32_to_fp16(65519.99f) == 0x7BFF);
    CHECK(rf::fp32_to_fp16(65520.0f) == 0x7C00); // halfway to 2^16 rounds to inf
    CHECK(rf::fp32_to_fp16(1e10f) == 0x7C00);
    CHECK(rf::fp32_to_fp16(-1e10f) == 0xFC00);
    CHECK(rf::fp32_to_fp16(std::numeric_limits<float>::infinity()) == 0x7C00);
    CHECK(rf::fp32_to_fp16(-std::numeric_limits<float>::infinity()) == 0xFC00);
    // subnormals: 2^-24 is the smallest; 2^-25 is a tie between 0 and 2^-24 -> 0 (even)
    CHECK(rf::fp32_to_fp16(std::ldexp(1.0f, -24)) == 0x0001);
    CHECK(rf::fp32_to_fp16(std::ldexp(1.0f, -25)) == 0x0000);
    CHECK(rf::fp32_to_fp16(std::ldexp(3.0f, -25)) == 0x0002); // tie 1.5 ulp -> 2
    CHECK(rf::fp32_to_fp16(std::ldexp(1.0f, -25) * 1.0001f) == 0x0001);
    CHECK(rf::fp32_to_fp16(-std::ldexp(1.0f, -24)) == 0x8001);
    CHECK(rf::fp32_to_fp16(1e-30f) == 0x0000);
    CHECK(rf::fp32_to_fp16(-0.0f) == 0x8000);
    // NaN -> 0x7E00 with the sign kept (ggml)
    CHECK(rf::fp32_to_fp16(from_bits(0x7FC00000u)) == 0x7E00);
    CHECK(rf::fp32_to_fp16(from_bits(0xFFC00000u)) == 0xFE00);
    CHECK(rf::fp32_to_fp16(from_bits(0x7F800001u)) == 0x7E00);
}

TEST_CASE("bf16 conversions", "[bf16]") {
    CHECK(rf::bf16_to_fp32(0x3F80) == 1.0f);
    CHECK(rf::bf16_to_fp32(0xC040) == -3.0f);
    CHECK(rf::bf16_to_fp32(0x0001) == from_bits(0x00010000u)); // subnormal kept exactly
    CHECK(rf::fp32_to_bf16(1.0f) == 0x3F80);
    CHECK(rf::fp32_to_bf16(from_bits(0x3F808000u)) == 0x3F80); // tie -> even (down)
    CHECK(rf::fp32_to_bf16(from_bits(0x3F818000u)) == 0x3F82); // tie -> even (up)
    CHECK(rf::fp32_to_bf16(from_bits(0x3F808001u)) == 0x3F81);
    CHECK(rf::fp32_to_bf16(from_bits(0x7F7FFFFFu)) == 0x7F80); // FLT_MAX rounds to inf
    CHECK(rf::fp32_to_bf16(std::numeric_limits<float>::infinity()) == 0x7F80);
    CHECK(rf::fp32_to_bf16(-std::numeric_limits<float>::infinity()) == 0xFF80);
    CHECK(rf::fp32_to_bf16(from_bits(0x00008000u)) == 0x0000); // subnormal tie -> even
    CHECK(rf::fp32_to_bf16(from_bits(0x00018000u)) == 0x0002);
    CHECK(rf::fp32_to_bf16(-0.0f) == 0x8000);
    // NaN: top bits kept, forced quiet (| 64), never rounded into inf
    CHECK(rf::fp32_to_bf16(from_bits(0x7F800001u)) == 0x7FC0);
    CHECK(rf::fp32_to_bf16(from_bits(0x7FFFFFFFu)) == 0x7FFF);
    CHECK(rf::fp32_to_bf16(from_bits(0xFFC00000u)) == 0xFFC0);
    CHECK(std::isnan(rf::bf16_to_fp32(0x7FC0)));
}
