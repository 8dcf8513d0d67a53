// MATMUL for every weight type of the foundation against float64 reference math (weights
// dequantized with rf::dequantize_row), on every SIMD level, plus SIMD-vs-scalar agreement.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>

#include "cpu_test_util.h"
#include "matmul_weights.h"
#include "rocmforge/types.h"

using namespace cputest;

namespace {

struct Case { int64_t K, N, M, ne2_w, ne2_x; };

std::vector<double> reference(const std::vector<float> &w, const Tensor &x, const Case &c) {
    std::vector<double> ref(size_t(c.N * c.M * c.ne2_x));
    const float *xv = reinterpret_cast<const float *>(x.t.data);
    for (int64_t s = 0; s < c.ne2_x; ++s) {
        const int64_t sw = s / (c.ne2_x / c.ne2_w);
        for (int64_t m = 0; m < c.M; ++m)
            for (int64_t n = 0; n < c.N; ++n) {
                double acc = 0;
                const float *wr = w.data() + (sw * c.N + n) * c.K;
                const float *xr = xv + (s * c.M + m) * c.K;
                for (int64_t k = 0; k < c.K; ++k) acc += double(wr[k]) * double(xr[k]);
                ref[size_t((s * c.M + m) * c.N + n)] = acc;
            }
    }
    return ref;
}

std::vector<Case> cases_for(int type) {
    const int64_t bs = rf::type_traits(type)->block_size;
    // K not a multiple of 256 where the block size allows it; N, M off the tile sizes.
    const int64_t k_small = bs == 256 ? 256 : (bs == 1 ? 100 : 96);
    const int64_t k_big = bs == 256 ? 768 : (bs == 1 ? 333 : 544);
    return {{k_small, 33, 1, 1, 1}, {k_big, 19, 7, 1, 1}, {k_small, 37, 64, 1, 1}, {k_big, 5, 3, 2, 4}};
}

} // namespace

TEST_CASE("cpu matmul: every weight type vs float64 reference", "[cpu][matmul]") {
    const auto configs = simd_configs();
    std::vector<std::unique_ptr<Backend>> backends;
    for (const auto &cfg : configs) backends.push_back(std::make_unique<Backend>(cfg));

    for (int type : kMatmulWeightTypes) {
        INFO("type " << rf::type_name(type));
        for (const Case &c : cases_for(type)) {
            INFO("K=" << c.K << " N=" << c.N << " M=" << c.M << " ne2 " << c.ne2_w << "/" << c.ne2_x);
            std::vector<float> deq;
            Tensor w = make_weight(type, c.K, c.N, c.ne2_w, &deq);
            Tensor x(RF_TYPE_F32, {c.K, c.M, c.ne2_x});
            fill_normal(x.f32(), x.n());
            const std::vector<double> ref = reference(deq, x, c);
            std::vector<std::vector<float>> outs;
            for (size_t b = 0; b < backends.size(); ++b) {
                INFO("config " << configs[b]);
                Tensor y(RF_TYPE_F32, {c.N, c.M, c.ne2_x});
                rf_node node = make_node(RF_OP_MATMUL, y, {&w, &x});
                REQUIRE(backends[b]->supports(node));
                std::string err;
                REQUIRE(backends[b]->run(node, &err) == RF_OK);
                REQUIRE(all_finite(y.f32(), y.n()));
                const double e = nmse(ref, y.f32(), y.n());
                CHECK(e < matmul_threshold(type));
                outs.push_back(y.as_floats());
            }
            // SIMD levels agree with the scalar path (integer sums are exact; only the float
            // accumulation order differs).
            std::vector<double> scalar_out(outs[1].begin(), outs[1].end());
            for (size_t b = 0; b < outs.size(); ++b) {
                INFO("config " << configs[b] << " vs scalar");
                CHECK(nmse(scalar_out, outs[b].data(), int64_t(outs[b].size())) < 1e-9);
            }
        }
    }
}

TEST_CASE("cpu matmul: a wrong shape is refused", "[cpu][matmul]") {
    Backend be("{}");
    Tensor w(RF_TYPE_Q4_K, {256, 8}), x(RF_TYPE_F32, {255, 2}), y(RF_TYPE_F32, {8, 2});
    rf_node node = make_node(RF_OP_MATMUL, y, {&w, &x});
    CHECK_FALSE(be.supports(node));
    std::string err;
    CHECK(be.run(node, &err) == RF_ERR_UNSUPPORTED);
    CHECK(err.find("shapes do not match") != std::string::npos);
}

TEST_CASE("cpu matmul: multi-part row splits (short last part) equal the one-thread result bit for bit", "[cpu][matmul]") {
    // 1000 rows: parts of tens to hundreds of rows (by row bytes) with a short last part; a row
    // missed or computed twice by the split shows up as a difference to the single-part run.
    Backend one(R"({"n_threads": 1})"), two(R"({"n_threads": 2})"), three(R"({"n_threads": 3})");
    for (int type : {RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_Q8_0}) {
        for (int64_t M : {1, 9}) {
            INFO("type " << rf::type_name(type) << " M=" << M);
            const Case c{256, 1000, M, 1, 1};
            std::vector<float> deq;
            Tensor w = make_weight(type, c.K, c.N, 1, &deq);
            Tensor x(RF_TYPE_F32, {c.K, c.M});
            fill_normal(x.f32(), x.n());
            std::vector<std::vector<float>> outs;
            for (Backend *be : {&one, &two, &three}) {
                Tensor y(RF_TYPE_F32, {c.N, c.M});
                rf_node node = make_node(RF_OP_MATMUL, y, {&w, &x});
                std::string err;
                REQUIRE(be->run(node, &err) == RF_OK);
                outs.push_back(y.as_floats());
            }
            CHECK(nmse(reference(deq, x, c), outs[0].data(), int64_t(outs[0].size())) < matmul_threshold(type));
            CHECK(outs[1] == outs[0]);
            CHECK(outs[2] == outs[0]);
        }
    }
}
