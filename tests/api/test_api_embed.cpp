// rocmforge_embed (API 0.4) on the default model: normalised, deterministic, the cache left as it
// was, independent of what else the context holds; and every bad argument an error code.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "api_fixture.h"

using api_test::model;

namespace {

std::vector<rocmforge_token> tokenize(const std::string &text) {
    std::vector<rocmforge_token> t(256);
    size_t n = 0;
    REQUIRE(rocmforge_tokenize(model(), text.data(), text.size(), t.data(), t.size(), true, false, &n) == ROCMFORGE_OK);
    t.resize(n);
    return t;
}

rocmforge_context *new_context(uint32_t n_seq, uint32_t n_ctx = 0) {
    rocmforge_context_params p = rocmforge_context_default_params();
    p.n_seq_max = n_seq;
    p.n_ctx = n_ctx;
    rocmforge_context *c = nullptr;
    REQUIRE(rocmforge_context_init(model(), &p, &c) == ROCMFORGE_OK);
    return c;
}

std::vector<float> embed(rocmforge_context *ctx, const std::vector<rocmforge_token> &t, int seq,
                         rocmforge_pooling pooling = ROCMFORGE_POOLING_DEFAULT, bool normalize = true) {
    std::vector<float> v((size_t)rocmforge_model_n_embd(model()));
    const rocmforge_status st = rocmforge_embed(ctx, t.data(), (int32_t)t.size(), seq, pooling, normalize, v.data(), v.size());
    INFO(rocmforge_last_error());
    REQUIRE(st == ROCMFORGE_OK);
    return v;
}

double dot(const std::vector<float> &a, const std::vector<float> &b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += (double)a[i] * b[i];
    return s;
}

} // namespace

TEST_CASE("API 0.4: rocmforge_embed gives unit vectors, the same for the same text", "[api][embed]") {
    REQUIRE(ROCMFORGE_API_VERSION_MINOR >= 4);
    rocmforge_context *ctx = new_context(2);
    const auto a = tokenize("The quick brown fox jumps over the lazy dog.");
    const auto b = tokenize("Once upon a time there was a little girl.");
    const auto va = embed(ctx, a, 0);
    CHECK(std::sqrt(dot(va, va)) == Approx(1.0).epsilon(1e-6));
    CHECK(rocmforge_kv_seq_length(ctx, 0) == 0);
    // Another text on the other sequence first: the same vector again.
    const auto vb = embed(ctx, b, 1);
    CHECK(dot(va, vb) < 0.9999);
    CHECK(embed(ctx, a, 1) == va);
    // The default pooling of a decoder model without pooling_type is the mean.
    CHECK(embed(ctx, a, 0, ROCMFORGE_POOLING_MEAN) == va);
    const auto raw = embed(ctx, a, 0, ROCMFORGE_POOLING_MEAN, false);
    const double n = std::sqrt(dot(raw, raw));
    CHECK(n > 0);
    for (size_t i = 0; i < raw.size(); ++i) CHECK(raw[i] / n == Approx(va[i]).margin(1e-6));
    const auto last = embed(ctx, a, 0, ROCMFORGE_POOLING_LAST);
    const auto cls = embed(ctx, a, 0, ROCMFORGE_POOLING_CLS);
    CHECK(dot(last, va) < 0.9999);
    CHECK(dot(cls, last) < 0.9999);
    // A sequence holding a prompt is left alone: embeddings need an empty one.
    rocmforge_batch batch = rocmforge_batch_init(1);
    batch.token[0] = a[0], batch.seq_id[0] = 0, batch.logits[0] = 1, batch.n_tokens = 1;
    REQUIRE(rocmforge_decode(ctx, &batch) == ROCMFORGE_OK);
    rocmforge_batch_free(batch);
    CHECK(embed(ctx, a, 1) == va);
    CHECK(rocmforge_kv_seq_length(ctx, 0) == 1);
    CHECK(rocmforge_get_logits_ith(ctx, 0) == nullptr); // the embedding replaced the logits
    rocmforge_context_free(ctx);
}

TEST_CASE("API 0.4: rocmforge_embed refuses bad arguments", "[api][embed][errors]") {
    rocmforge_context *ctx = new_context(1, 64);
    const auto a = tokenize("hello world");
    std::vector<float> v((size_t)rocmforge_model_n_embd(model()));
    REQUIRE_FAILS(rocmforge_embed(nullptr, a.data(), (int32_t)a.size(), 0, ROCMFORGE_POOLING_MEAN, true, v.data(), v.size()),
                  ROCMFORGE_ERR_INVALID_ARGUMENT, "ctx is NULL");
    REQUIRE_FAILS(rocmforge_embed(ctx, a.data(), (int32_t)a.size(), 0, ROCMFORGE_POOLING_MEAN, true, nullptr, v.size()),
                  ROCMFORGE_ERR_INVALID_ARGUMENT, "out is NULL");
    REQUIRE_FAILS(rocmforge_embed(ctx, nullptr, 3, 0, ROCMFORGE_POOLING_MEAN, true, v.data(), v.size()),
                  ROCMFORGE_ERR_INVALID_ARGUMENT, "tokens is NULL");
    REQUIRE_FAILS(rocmforge_embed(ctx, a.data(), 0, 0, ROCMFORGE_POOLING_MEAN, true, v.data(), v.size()),
                  ROCMFORGE_ERR_INVALID_ARGUMENT, "at least one token");
    REQUIRE_FAILS(rocmforge_embed(ctx, a.data(), (int32_t)a.size(), 0, ROCMFORGE_POOLING_MEAN, true, v.data(), v.size() - 1),
                  ROCMFORGE_ERR_BUFFER_TOO_SMALL, "embeddings have");
    REQUIRE_FAILS(rocmforge_embed(ctx, a.data(), (int32_t)a.size(), 0, (rocmforge_pooling)7, true, v.data(), v.size()),
                  ROCMFORGE_ERR_INVALID_ARGUMENT, "not a rocmforge_pooling");
    REQUIRE_FAILS(rocmforge_embed(ctx, a.data(), (int32_t)a.size(), 1, ROCMFORGE_POOLING_MEAN, true, v.data(), v.size()),
                  ROCMFORGE_ERR_INVALID_ARGUMENT, "sequence id 1");
    const std::vector<rocmforge_token> bad = {a[0], 1 << 20};
    REQUIRE_FAILS(rocmforge_embed(ctx, bad.data(), 2, 0, ROCMFORGE_POOLING_MEAN, true, v.data(), v.size()),
                  ROCMFORGE_ERR_INVALID_ARGUMENT, "outside the vocabulary");
    const std::vector<rocmforge_token> many(65, a[0]);
    REQUIRE_FAILS(rocmforge_embed(ctx, many.data(), 65, 0, ROCMFORGE_POOLING_MEAN, true, v.data(), v.size()),
                  ROCMFORGE_ERR_INVALID_ARGUMENT, "context size");
    CHECK(rocmforge_kv_seq_length(ctx, 0) == 0);
    rocmforge_context_free(ctx);
}
