// Type traits, names and row sizes against ggml's table; argument errors.
#include <catch2/catch.hpp>

#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/types.h"

namespace {
struct Expected {
    int id;
    const char *name;
    int64_t block;
    size_t size;
    bool quantized;
};
// ggml's type_traits (ggml.c): name, blck_size, type_size; MXFP6 ids are ROCmForge's.
const Expected kExpected[] = {
    {0, "f32", 1, 4, false},      {1, "f16", 1, 2, false},      {2, "q4_0", 32, 18, true},
    {3, "q4_1", 32, 20, true},    {6, "q5_0", 32, 22, true},    {7, "q5_1", 32, 24, true},
    {8, "q8_0", 32, 34, true},    {9, "q8_1", 32, 36, true},    {10, "q2_K", 256, 84, true},
    {11, "q3_K", 256, 110, true}, {12, "q4_K", 256, 144, true}, {13, "q5_K", 256, 176, true},
    {14, "q6_K", 256, 210, true}, {15, "q8_K", 256, 292, true}, {24, "i8", 1, 1, false},
    {25, "i16", 1, 2, false},     {26, "i32", 1, 4, false},     {27, "i64", 1, 8, false},
    {28, "f64", 1, 8, false},     {30, "bf16", 1, 2, false},    {39, "mxfp4", 32, 17, true},
    {200, "mxfp6_e2m3", 32, 25, true}, {201, "mxfp6_e3m2", 32, 25, true},
    {16, "iq2_xxs", 256, 66, true}, {17, "iq2_xs", 256, 74, true},   {18, "iq3_xxs", 256, 98, true},
    {19, "iq1_s", 256, 50, true},   {20, "iq4_nl", 32, 18, true},    {21, "iq3_s", 256, 110, true},
    {22, "iq2_s", 256, 82, true},   {23, "iq4_xs", 256, 136, true},  {29, "iq1_m", 256, 56, true},
    {34, "tq1_0", 256, 54, true},   {35, "tq2_0", 256, 66, true},
};
} // namespace

TEST_CASE("type traits match ggml", "[types]") {
    for (const Expected &e : kExpected) {
        INFO("type " << e.name);
        const rf::TypeTraits *t = rf::type_traits(e.id);
        REQUIRE(t != nullptr);
        CHECK(std::string(t->name) == e.name);
        CHECK(t->block_size == e.block);
        CHECK(t->type_size == e.size);
        CHECK(t->quantized == e.quantized);
        CHECK(rf::type_is_known(e.id));
        CHECK(std::string(rf::type_name(e.id)) == e.name);
        CHECK(rf::type_from_name(e.name) == e.id);
    }
    for (int id : {4, 5, 31, 32, 33, 36, 38, 40, 199, 202, -1, 1000}) {
        CHECK_FALSE(rf::type_is_known(id));
        CHECK(rf::type_traits(id) == nullptr);
        CHECK(std::string(rf::type_name(id)) == "?");
    }
}

TEST_CASE("type_from_name is case-insensitive and strict", "[types]") {
    CHECK(rf::type_from_name("Q4_K") == RF_TYPE_Q4_K);
    CHECK(rf::type_from_name("q4_k") == RF_TYPE_Q4_K);
    CHECK(rf::type_from_name("F16") == RF_TYPE_F16);
    CHECK(rf::type_from_name("BF16") == RF_TYPE_BF16);
    CHECK(rf::type_from_name("MXFP6_E2M3") == RF_TYPE_MXFP6_E2M3);
    CHECK(rf::type_from_name("MxFp4") == RF_TYPE_MXFP4);
    CHECK(rf::type_from_name("") == -1);
    CHECK(rf::type_from_name("q4") == -1);
    CHECK(rf::type_from_name("q4_K_M") == -1);
    CHECK(rf::type_from_name(" f32") == -1);
}

TEST_CASE("row_size", "[types]") {
    CHECK(rf::row_size(RF_TYPE_F32, 7) == 28);
    CHECK(rf::row_size(RF_TYPE_Q4_0, 4096) == 128 * 18);
    CHECK(rf::row_size(RF_TYPE_Q4_K, 4096) == 16 * 144);
    CHECK(rf::row_size(RF_TYPE_MXFP6_E3M2, 64) == 50);
    CHECK(rf::row_size(RF_TYPE_Q6_K, 0) == 0);
    CHECK_THROWS_AS(rf::row_size(RF_TYPE_Q4_K, 100), rf::Error);
    CHECK_THROWS_AS(rf::row_size(RF_TYPE_F16, -2), rf::Error);
    CHECK_THROWS_WITH(rf::row_size(77, 32), Catch::Contains("77"));
    CHECK_THROWS_WITH(rf::row_size(RF_TYPE_Q8_0, 33), Catch::Contains("q8_0") && Catch::Contains("32"));
}

TEST_CASE("row conversions reject bad arguments", "[types]") {
    std::vector<float> f(256);
    std::vector<uint8_t> b(1024);
    CHECK_THROWS_AS(rf::dequantize_row(RF_TYPE_Q8_1, b.data(), f.data(), 32), rf::Error);
    CHECK_THROWS_AS(rf::dequantize_row(RF_TYPE_I32, b.data(), f.data(), 32), rf::Error);
    CHECK_THROWS_AS(rf::dequantize_row(RF_TYPE_F64, b.data(), f.data(), 32), rf::Error);
    CHECK_THROWS_AS(rf::dequantize_row(123, b.data(), f.data(), 32), rf::Error);
    CHECK_THROWS_AS(rf::dequantize_row(RF_TYPE_Q4_K, b.data(), f.data(), 32), rf::Error);
    CHECK_THROWS_AS(rf::dequantize_row(RF_TYPE_Q4_0, nullptr, f.data(), 32), rf::Error);
    CHECK_THROWS_AS(rf::quantize_row(RF_TYPE_Q8_1, f.data(), b.data(), 32), rf::Error);
    CHECK_THROWS_AS(rf::quantize_row(RF_TYPE_Q4_0, f.data(), nullptr, 32), rf::Error);
    CHECK_THROWS_AS(rf::quantize_row(RF_TYPE_Q6_K, f.data(), b.data(), 255), rf::Error);
    CHECK_NOTHROW(rf::quantize_row(RF_TYPE_Q6_K, nullptr, nullptr, 0));
    for (int id : {0, 1, 2, 3, 6, 7, 8, 10, 11, 12, 13, 14, 15, 30, 39, 200, 201, 20, 23, 34, 35, 18, 21, 22, 29})
        CHECK(rf::can_quantize(id));
    // IQ2_XXS, IQ2_XS, IQ1_S quantize only with an importance matrix (quantize_row_weighted).
    for (int id : {9, 24, 25, 26, 27, 28, 5, 999, 16, 17, 19}) CHECK_FALSE(rf::can_quantize(id));
}
