// The grid i-quant quantizers (IQ1_S .. IQ3_S) and the importance-weighted IQ4 ones: error
// bounds against float64, determinism and row independence, decodable in-range blocks,
// properties every ggml-exact result has (explicit sign bits, zero rows), the refusal without
// an importance matrix, and the search tables (white-box).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "iq_neighbours.h"
#include "rocmforge/error.h"
#include "rocmforge/types.h"

namespace {

using Bytes = std::vector<uint8_t>;

struct Rows {
    std::vector<float> x, imp;
    int64_t n = 0, rows = 0;
};

Rows gaussian(int64_t n, int64_t rows, uint32_t seed) {
    Rows r;
    r.n = n;
    r.rows = rows;
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.f, 1.f);
    r.x.resize(size_t(n * rows));
    for (float &v : r.x) v = nd(rng);
    r.imp.resize(size_t(n));
    for (float &v : r.imp) v = std::exp(nd(rng));
    return r;
}

Bytes quantize(int type, const Rows &r, const float *imp) {
    const size_t rs = rf::row_size(type, r.n);
    Bytes q(rs * size_t(r.rows));
    for (int64_t i = 0; i < r.rows; ++i) rf::quantize_row_weighted(type, r.x.data() + i * r.n, q.data() + i * rs, r.n, imp);
    return q;
}

// Relative squared error in float64, weighted by the importance when given.
double nmse(int type, const Rows &r, const Bytes &q, const float *w) {
    const size_t rs = rf::row_size(type, r.n);
    std::vector<float> y(size_t(r.n));
    double e = 0, s = 0;
    for (int64_t i = 0; i < r.rows; ++i) {
        rf::dequantize_row(type, q.data() + i * rs, y.data(), r.n);
        for (int64_t j = 0; j < r.n; ++j) {
            const double x = r.x[size_t(i * r.n + j)], d = x - y[size_t(j)], wj = w ? w[j] : 1.0;
            REQUIRE(std::isfinite(y[size_t(j)]));
            e += wj * d * d;
            s += wj * x * x;
        }
    }
    return e / s;
}

struct Case {
    int type;
    double bound_plain;    // NMSE bound without importance (< 0: importance required)
    double bound_weighted; // importance-weighted NMSE bound with importance
};
// Bounds about 25% above what ggml's algorithms reach on unit Gaussians (measured here).
const Case kCases[] = {
    {RF_TYPE_IQ2_XXS, -1, 0.11},  {RF_TYPE_IQ2_XS, -1, 0.085}, {RF_TYPE_IQ2_S, 0.088, 0.065},
    {RF_TYPE_IQ3_XXS, 0.057, 0.030}, {RF_TYPE_IQ3_S, 0.035, 0.019}, {RF_TYPE_IQ1_S, -1, 0.25},
    {RF_TYPE_IQ1_M, 0.42, 0.20},  {RF_TYPE_IQ4_XS, 0.0075, 0.0065}, {RF_TYPE_IQ4_NL, 0.0075, 0.0065},
};

} // namespace

TEST_CASE("grid i-quants: error bounds against float64", "[iq][quantize]") {
    const Rows r = gaussian(1024, 8, 11);
    for (const Case &c : kCases) {
        INFO(rf::type_name(c.type));
        CHECK(rf::importance_aware(c.type));
        CHECK(rf::importance_required(c.type) == (c.bound_plain < 0));
        CHECK(nmse(c.type, r, quantize(c.type, r, r.imp.data()), r.imp.data()) < c.bound_weighted);
        if (c.bound_plain > 0) CHECK(nmse(c.type, r, quantize(c.type, r, nullptr), nullptr) < c.bound_plain);
        // Importance steers the error to where the weights are small.
        if (c.bound_plain > 0)
            CHECK(nmse(c.type, r, quantize(c.type, r, r.imp.data()), r.imp.data()) <
                  nmse(c.type, r, quantize(c.type, r, nullptr), r.imp.data()));
    }
}

TEST_CASE("grid i-quants: deterministic, rows independent, scale-covariant decode", "[iq][quantize]") {
    const Rows r = gaussian(512, 4, 5);
    for (const Case &c : kCases) {
        INFO(rf::type_name(c.type));
        const Bytes a = quantize(c.type, r, r.imp.data());
        CHECK(a == quantize(c.type, r, r.imp.data()));
        // A row's bytes do not depend on its neighbours: quantize row 2 alone.
        const size_t rs = rf::row_size(c.type, r.n);
        Bytes one(rs);
        rf::quantize_row_weighted(c.type, r.x.data() + 2 * r.n, one.data(), r.n, r.imp.data());
        CHECK(Bytes(a.begin() + 2 * rs, a.begin() + 3 * rs) == one);
        // Every decoded value stays within a few times the input's range.
        std::vector<float> y(size_t(r.n));
        float amax = 0;
        for (float v : r.x) amax = std::max(amax, std::fabs(v));
        for (int64_t i = 0; i < r.rows; ++i) {
            rf::dequantize_row(c.type, a.data() + i * rs, y.data(), r.n);
            for (float v : y) CHECK(std::fabs(v) <= 2.5f * amax);
        }
    }
}

TEST_CASE("grid i-quants: zero rows and explicit signs", "[iq][quantize]") {
    const std::vector<float> zeros(256, 0.f), ones(256, 1.f);
    for (const Case &c : kCases) {
        if (c.type == RF_TYPE_IQ4_XS || c.type == RF_TYPE_IQ4_NL) continue; // they encode 0 as level 1
        INFO(rf::type_name(c.type));
        Bytes q(rf::row_size(c.type, 256), 0xAB);
        rf::quantize_row_weighted(c.type, zeros.data(), q.data(), 256, ones.data());
        for (uint8_t b : q) CHECK(b == 0); // ggml: d = 0 and every field 0
    }
    // IQ2_S and IQ3_S store all 8 sign bits: they equal the input's signs wherever the element
    // decodes to non-zero (the levels are odd, so never zero).
    const Rows r = gaussian(256, 1, 9);
    for (int type : {RF_TYPE_IQ2_S, RF_TYPE_IQ3_S}) {
        INFO(rf::type_name(type));
        Bytes q(rf::row_size(type, 256));
        rf::quantize_row_weighted(type, r.x.data(), q.data(), 256, r.imp.data());
        std::vector<float> y(256);
        rf::dequantize_row(type, q.data(), y.data(), 256);
        for (int i = 0; i < 256; ++i)
            if (y[size_t(i)] != 0.f) CHECK(std::signbit(y[size_t(i)]) == std::signbit(r.x[size_t(i)]));
    }
}

TEST_CASE("grid i-quants: IQ2_XXS, IQ2_XS and IQ1_S need an importance matrix", "[iq][quantize]") {
    const std::vector<float> x(256, 0.5f);
    Bytes q(rf::row_size(RF_TYPE_IQ1_S, 256));
    for (int type : {RF_TYPE_IQ2_XXS, RF_TYPE_IQ2_XS, RF_TYPE_IQ1_S}) {
        q.resize(rf::row_size(type, 256));
        CHECK_FALSE(rf::can_quantize(type));
        CHECK_THROWS_WITH(rf::quantize_row(type, x.data(), q.data(), 256), Catch::Contains("importance matrix"));
        CHECK_THROWS_AS(rf::quantize_row_weighted(type, x.data(), q.data(), 256, nullptr), rf::Error);
    }
    for (int type : {RF_TYPE_IQ2_S, RF_TYPE_IQ3_XXS, RF_TYPE_IQ3_S, RF_TYPE_IQ1_M}) CHECK(rf::can_quantize(type));
    CHECK(rf::importance_aware(RF_TYPE_Q4_K));
    CHECK_FALSE(rf::importance_aware(RF_TYPE_Q8_0));
    CHECK_FALSE(rf::importance_aware(RF_TYPE_TQ2_0));
}

TEST_CASE("grid search tables: every reachable point is on the grid or has neighbours", "[iq][quantize]") {
    struct T {
        const rf::quant::IqSearchTable &t;
        int nel, bits, nlevels, ngrid;
    };
    const T tables[] = {
        {rf::quant::iq2xxs_table(), 8, 2, 3, 256}, {rf::quant::iq2xs_table(), 8, 2, 3, 512},
        {rf::quant::iq2s_table(), 8, 2, 3, 1024},  {rf::quant::iq1s_table(), 8, 2, 3, 2048},
        {rf::quant::iq3xxs_table(), 4, 3, 8, 256}, {rf::quant::iq3s_table(), 4, 3, 8, 512},
    };
    for (const T &e : tables) {
        INFO(e.ngrid << " x " << e.nel);
        REQUIRE(int(e.t.grid.size()) == e.ngrid);
        int on_grid = 0;
        for (int u = 0; u < int(e.t.map.size()); ++u) {
            bool valid = true;
            for (int i = 0; i < e.nel; ++i) valid = valid && ((u >> (e.bits * i)) & ((1 << e.bits) - 1)) < e.nlevels;
            if (!valid) continue;
            if (e.t.map[size_t(u)] >= 0) {
                ++on_grid;
                continue;
            }
            const uint16_t *nb = e.t.neighbours_of(u);
            REQUIRE(nb[0] > 0);
            int prev_d2 = -1, prev_j = -1;
            for (int k = 1; k <= nb[0]; ++k) { // ordered by (distance, position)
                REQUIRE(nb[k] < e.ngrid);
                int d2 = 0;
                for (int i = 0; i < e.nel; ++i) {
                    const int q = int((e.t.grid[nb[k]] >> (8 * i)) & 0xff) - (2 * ((u >> (e.bits * i)) & ((1 << e.bits) - 1)) + 1);
                    d2 += q * q;
                }
                CHECK((d2 > prev_d2 || (d2 == prev_d2 && nb[k] > prev_j)));
                prev_d2 = d2;
                prev_j = nb[k];
            }
        }
        CHECK(on_grid == e.ngrid);
    }
}

TEST_CASE("importance-weighted k-quants and legacy formats", "[iq][quantize]") {
    const Rows r = gaussian(1024, 8, 21);
    // (type, weighted-NMSE bound with importance), about twice what ggml's searches reach here.
    const std::pair<int, double> cases[] = {
        {RF_TYPE_Q2_K, 0.10}, {RF_TYPE_Q3_K, 0.035}, {RF_TYPE_Q4_K, 0.0085}, {RF_TYPE_Q5_K, 0.0022},
        {RF_TYPE_Q6_K, 0.0006}, {RF_TYPE_Q4_0, 0.011}, {RF_TYPE_Q4_1, 0.0095}, {RF_TYPE_Q5_0, 0.0028},
        {RF_TYPE_Q5_1, 0.0024},
    };
    for (const auto &[type, bound] : cases) {
        INFO(rf::type_name(type));
        CHECK(rf::importance_aware(type));
        const Bytes w = quantize(type, r, r.imp.data());
        CHECK(w == quantize(type, r, r.imp.data()));
        CHECK(w != quantize(type, r, nullptr)); // a different search than the reference one
        CHECK(nmse(type, r, w, r.imp.data()) < bound);
    }
}
