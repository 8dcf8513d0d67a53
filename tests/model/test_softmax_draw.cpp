// The whole-vocabulary draw (core/model/softmax_draw.h): the fast exp against std::exp, and the
// inverse CDF against softmax computed in double, across block boundaries and with impossible
// (-inf) tokens.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "softmax_draw.h"

using namespace rf;

namespace {

struct Draw {
    std::vector<float> w;
    std::vector<double> b;
    SoftmaxWeights sw{w, b};
    bool weigh(const std::vector<float> &l, float t) { return softmax_weigh(l.data(), (int64_t)l.size(), t, sw); }
    int64_t pick(double u) const { return softmax_pick(sw, u); }
};

// How often each token is picked over `steps` evenly spaced u in [0, 1).
std::vector<double> pick_shares(const Draw &d, size_t n, int steps) {
    std::vector<double> share(n, 0.0);
    for (int s = 0; s < steps; ++s) share[(size_t)d.pick((s + 0.5) / steps)] += 1.0 / steps;
    return share;
}

} // namespace

TEST_CASE("exp_nonpositive: within 3e-7 of exp on [-87.3, 0], 0 below and at -inf", "[sampler][softmax_draw]") {
    double worst = 0;
    for (double x = 0; x > -87.3; x -= 0.000731) {
        const float xf = (float)x;
        const double ref = std::exp((double)xf);
        worst = std::max(worst, std::fabs((double)exp_nonpositive(xf) - ref) / ref);
    }
    CHECK(worst < 3e-7);
    CHECK(exp_nonpositive(0.0f) == 1.0f);
    CHECK(exp_nonpositive(-0.0f) == 1.0f);
    CHECK(exp_nonpositive(-87.4f) == 0.0f);
    CHECK(exp_nonpositive(-1000.0f) == 0.0f);
    CHECK(exp_nonpositive(-INFINITY) == 0.0f);
}

TEST_CASE("softmax draw: the picks follow softmax(l / T) across blocks", "[sampler][softmax_draw]") {
    // 300 tokens (five blocks, the last partial) with varied logits.
    std::vector<float> l(300);
    for (size_t i = 0; i < l.size(); ++i) l[i] = (float)std::sin(0.37 * (double)i) * 4.0f + (float)(i % 7) * 0.25f;
    for (float t : {0.5f, 1.0f, 2.0f}) {
        Draw d;
        REQUIRE(d.weigh(l, t));
        double mx = -1e30, z = 0;
        for (float v : l) mx = std::max(mx, (double)v);
        for (float v : l) z += std::exp(((double)v - mx) / t);
        const std::vector<double> share = pick_shares(d, l.size(), 200000);
        double worst = 0;
        for (size_t i = 0; i < l.size(); ++i) worst = std::max(worst, std::fabs(share[i] - std::exp(((double)l[i] - mx) / t) / z));
        CHECK(worst < 2e-5); // the u grid's resolution
        // The pick never goes backwards as u grows.
        int64_t prev = 0;
        for (int s = 0; s < 5000; ++s) {
            const int64_t p = d.pick(s / 5000.0);
            REQUIRE(p >= prev);
            prev = p;
        }
    }
}

TEST_CASE("softmax draw: impossible tokens are never picked; NaN refuses; infinities", "[sampler][softmax_draw]") {
    // -inf at the start, the end, a block boundary and a whole block.
    std::vector<float> l(200, 0.0f);
    for (size_t i : {0, 63, 64, 199}) l[i] = -INFINITY;
    for (size_t i = 128; i < 192; ++i) l[i] = -INFINITY;
    Draw d;
    REQUIRE(d.weigh(l, 0.8f));
    for (int s = 0; s <= 10000; ++s) {
        const double u = s == 10000 ? std::nextafter(1.0, 0.0) : s / 10000.0;
        const int64_t p = d.pick(u);
        REQUIRE(p >= 0);
        REQUIRE(p < 200);
        REQUIRE(std::isfinite(l[(size_t)p]));
    }
    CHECK(d.pick(0.0) == 1);
    CHECK(d.pick(std::nextafter(1.0, 0.0)) == 198);
    // Far below the largest logit (beyond float's range at this temperature): weight 0 as well.
    std::vector<float> far = {0.0f, -200.0f, 0.0f};
    REQUIRE(d.weigh(far, 1.0f));
    for (int s = 0; s < 1000; ++s) REQUIRE(d.pick(s / 1000.0) != 1);
    // NaN: refused (the sampler's sorted path takes it).
    std::vector<float> nan = {0.0f, NAN, 1.0f};
    CHECK_FALSE(d.weigh(nan, 1.0f));
    // +inf tokens take all the weight, equally; all -inf: every token equally.
    std::vector<float> pinf = {1.0f, INFINITY, 2.0f, INFINITY};
    REQUIRE(d.weigh(pinf, 1.0f));
    CHECK(d.pick(0.25) == 1);
    CHECK(d.pick(0.75) == 3);
    std::vector<float> ninf(3, -INFINITY);
    REQUIRE(d.weigh(ninf, 1.0f));
    CHECK(d.pick(0.1) == 0);
    CHECK(d.pick(0.9) == 2);
}
