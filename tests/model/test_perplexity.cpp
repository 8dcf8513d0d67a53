#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "rocmforge/perplexity.h"
#include "tiny_model.h"

using namespace rf;
using namespace rf_test;

TEST_CASE("token_nll is -log softmax", "[perplexity]") {
    const std::vector<float> uniform(4, 3.0f);
    CHECK(token_nll(uniform.data(), 4, 2) == Approx(std::log(4.0)).epsilon(1e-7));
    const std::vector<float> l = {1.0f, 2.0f, 0.5f};
    const double z = std::exp(1.0) + std::exp(2.0) + std::exp(0.5);
    CHECK(token_nll(l.data(), 3, 1) == Approx(-(2.0 - std::log(z))).epsilon(1e-6));
    CHECK_THROWS_AS(token_nll(l.data(), 3, 3), Error);
}

TEST_CASE("accumulator: llama.cpp's final estimate", "[perplexity]") {
    PerplexityAccumulator acc;
    for (double v : {1.0, 2.0, 3.0, 4.0}) acc.add(v);
    CHECK(acc.ppl() == Approx(std::exp(2.5)));
    // mean(v^2) - mean^2 = 7.5 - 6.25 = 1.25; sqrt(1.25 / 3) * ppl
    CHECK(acc.ppl_error() == Approx(std::sqrt(1.25 / 3.0) * std::exp(2.5)));
    PerplexityAccumulator flat;
    flat.add(1.0), flat.add(1.0);
    CHECK(flat.ppl_error() < 0); // "Unexpected negative standard deviation"
}

TEST_CASE("chunks score the second half with BOS first, as llama.cpp", "[perplexity]") {
    TinySpec spec;
    const std::string path = temp_path("ppl.gguf");
    const TinyWeights w = write_tiny_model(path, spec);
    auto rt = cpu_runtime();
    auto model = Model::load(path, *rt);
    ContextParams cp;
    cp.n_ctx = 10;
    cp.n_batch = 4; // chunks span several graphs
    cp.type_k = cp.type_v = RF_TYPE_F32;
    InferenceContext ctx(*model, *rt, cp);

    std::vector<int32_t> tokens;
    for (int i = 0; i < 23; ++i) tokens.push_back((i * 37 + 11) % 97);
    const int32_t bos = 1;
    PerplexityAccumulator acc;
    score_perplexity_chunk(ctx, tokens, 0, 10, bos, acc);
    score_perplexity_chunk(ctx, tokens, 1, 10, bos, acc);
    CHECK(acc.count == 2 * (10 - 1 - 5));
    CHECK_THROWS_AS(score_perplexity_chunk(ctx, tokens, 2, 10, bos, acc), Error); // 23 < 30

    double nll = 0;
    for (int c = 0; c < 2; ++c) {
        std::vector<int32_t> chunk(tokens.begin() + c * 10, tokens.begin() + c * 10 + 10);
        chunk[0] = bos;
        const auto ref = reference_forward(w, chunk);
        for (int i = 5; i < 9; ++i) {
            double mx = -1e300, sum = 0;
            for (double v : ref[(size_t)i]) mx = std::max(mx, v);
            for (double v : ref[(size_t)i]) sum += std::exp(v - mx);
            nll += -(ref[(size_t)i][(size_t)tokens[(size_t)(c * 10 + i + 1)]] - mx - std::log(sum));
        }
    }
    CHECK(acc.nll == Approx(nll).epsilon(1e-4));
    CHECK(acc.ppl() == Approx(std::exp(nll / 8.0)).epsilon(1e-4));
}
