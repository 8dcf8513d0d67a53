// TOPK over vocabulary-sized rows (a sampler's candidates) and GATHER, against a sort of the row.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "cpu_test_util.h"

using namespace cputest;

namespace {

// The row's indices by TOPK's order: larger value first, equal values (-0 == +0) by lower index.
std::vector<int32_t> sorted_order(const float *v, int64_t E) {
    std::vector<int32_t> order((size_t)E);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return v[a] > v[b]; });
    return order;
}

} // namespace

TEST_CASE("cpu select: TOPK of vocabulary rows with ties, -0 / +0 and -inf", "[cpu][select]") {
    auto be = all_backends();
    const int64_t E = 32003, M = 3;
    for (int pattern = 0; pattern < 3; ++pattern)
        for (int64_t k : {int64_t(1), int64_t(40), int64_t(257)}) {
            INFO("pattern " << pattern << " k=" << k);
            Tensor x(RF_TYPE_F32, {E, M}), ids(RF_TYPE_I32, {k, M});
            fill_normal(x.f32(), x.n(), 3.f);
            for (int64_t i = 0; i < x.n(); ++i) {
                float &f = x.f32()[i];
                if (pattern == 1) f = std::round(f); // a few distinct values: ties everywhere
                if (pattern == 2) f = i % 3 == 0 ? -0.0f : i % 3 == 1 ? 0.0f : -std::numeric_limits<float>::infinity();
            }
            rf_node node = make_node(RF_OP_TOPK, ids, {&x});
            run_ok(*be.front(), node);
            for (int64_t m = 0; m < M; ++m) {
                const std::vector<int32_t> order = sorted_order(x.f32() + m * E, E);
                for (int64_t j = 0; j < k; ++j) REQUIRE(ids.i32()[m * k + j] == order[(size_t)j]);
            }
        }
}

TEST_CASE("cpu select: TOPK of a row holding NaN gives k distinct indices", "[cpu][select]") {
    auto be = all_backends();
    const int64_t E = 5000, k = 40;
    Tensor x(RF_TYPE_F32, {E, 1}), ids(RF_TYPE_I32, {k, 1});
    fill_normal(x.f32(), E);
    for (int64_t i = 0; i < E; i += 7) x.f32()[i] = std::numeric_limits<float>::quiet_NaN();
    rf_node node = make_node(RF_OP_TOPK, ids, {&x});
    run_ok(*be.front(), node);
    std::set<int32_t> seen(ids.i32(), ids.i32() + k);
    CHECK(seen.size() == (size_t)k);
    CHECK(*seen.begin() >= 0);
    CHECK(*seen.rbegin() < E);
}

TEST_CASE("cpu select: GATHER picks each row's entries; indices outside the row give 0", "[cpu][select]") {
    auto be = all_backends();
    const int64_t E = 1000, k = 13, M = 4;
    Tensor x(RF_TYPE_F32, {E, M}), ids(RF_TYPE_I32, {k, M}), out(RF_TYPE_F32, {k, M});
    fill_normal(x.f32(), x.n());
    std::uniform_int_distribution<int32_t> pick(-3, (int32_t)E + 2);
    for (int64_t i = 0; i < ids.n(); ++i) ids.i32()[i] = pick(rng());
    ids.i32()[0] = -1, ids.i32()[1] = (int32_t)E, ids.i32()[2] = 0, ids.i32()[3] = (int32_t)E - 1;
    rf_node node = make_node(RF_OP_GATHER, out, {&x, &ids});
    run_ok(*be.front(), node);
    for (int64_t m = 0; m < M; ++m)
        for (int64_t j = 0; j < k; ++j) {
            const int32_t id = ids.i32()[m * k + j];
            const float want = id >= 0 && id < E ? x.f32()[m * E + id] : 0.0f;
            REQUIRE(out.f32()[m * k + j] == want);
        }
}

TEST_CASE("cpu select: GATHER refuses mismatched shapes", "[cpu][select]") {
    auto be = all_backends();
    Tensor x(RF_TYPE_F32, {100, 2}), ids(RF_TYPE_I32, {5, 3}), out(RF_TYPE_F32, {5, 3});
    rf_node node = make_node(RF_OP_GATHER, out, {&x, &ids});
    CHECK_FALSE(be.front()->supports(node));
}
