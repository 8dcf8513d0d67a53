// White-box: the 8-lane make_qkx2_quants must equal 8 scalar calls bit for bit, including the
// lanes that take the scalar routine's special paths (flat groups, positive-only groups).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "quant_internal.h"

namespace {
uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
} // namespace

TEST_CASE("make_qkx2_quants_x8 equals the scalar search", "[k-search]") {
    std::mt19937 rng(11);
    std::normal_distribution<float> g(0.0f, 1.0f);
    struct Params {
        int n, nmax;
        float rmin, rdelta;
        int nstep;
        bool mad;
    };
    const Params params[] = {{32, 15, -1.f, 0.1f, 20, false}, // Q4_K
                             {32, 31, -0.5f, 0.1f, 15, false}, // Q5_K
                             {16, 3, -0.5f, 0.1f, 15, true}};  // Q2_K
    for (const Params &p : params) {
        for (int trial = 0; trial < 300; ++trial) {
            std::vector<float> x(8 * p.n), w(8 * p.n);
            for (int gi = 0; gi < 8; ++gi) {
                const int kind = (trial + gi) % 5;
                for (int i = 0; i < p.n; ++i) {
                    float v = g(rng);
                    if (kind == 1) v = std::fabs(v) + 0.5f; // all positive: min clamps to 0
                    if (kind == 2) v = 0.25f;               // flat
                    if (kind == 3) v = 0.0f;                // all zero
                    if (kind == 4) v *= (i % 7 == 0) ? 20.0f : 0.01f; // outliers
                    x[gi * p.n + i] = v;
                }
            }
            for (size_t i = 0; i < x.size(); ++i) w[i] = p.mad ? std::fabs(x[i]) : 0.3f + std::fabs(x[i]);
            std::vector<uint8_t> L8(8 * p.n), L1(8 * p.n), aux(32);
            float s8[8], m8[8];
            rf::quant::make_qkx2_quants_x8(p.n, p.nmax, x.data(), w.data(), L8.data(), s8, m8, p.rmin,
                                           p.rdelta, p.nstep, p.mad);
            for (int gi = 0; gi < 8; ++gi) {
                float m1;
                const float s1 = rf::quant::make_qkx2_quants(p.n, p.nmax, x.data() + gi * p.n,
                                                             w.data() + gi * p.n, L1.data() + gi * p.n,
                                                             &m1, aux.data(), p.rmin, p.rdelta, p.nstep,
                                                             p.mad);
                INFO("n " << p.n << " trial " << trial << " group " << gi);
                REQUIRE(bits(s8[gi]) == bits(s1));
                REQUIRE(bits(m8[gi]) == bits(m1));
            }
            REQUIRE(L8 == L1);
        }
    }
}
