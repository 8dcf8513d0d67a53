// Embeddings: the hidden-state output of the forward graph against the float64 reference, and
// mean / cls / last pooling with L2 normalisation against float64 pooling of those states.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "rocmforge/embedding.h"
#include "rocmforge/types.h"
#include "tiny_model.h"

using namespace rf;
using namespace rf_test;

namespace {

double norm(const std::vector<float> &v) {
    double s = 0;
    for (float x : v) s += (double)x * x;
    return std::sqrt(s);
}

double cosine(const std::vector<float> &a, const std::vector<float> &b) {
    double d = 0;
    for (size_t i = 0; i < a.size(); ++i) d += (double)a[i] * b[i];
    return d / (norm(a) * norm(b));
}

// Float64 pooling of rows [T][E], then normalised when asked: the test's own reference.
std::vector<double> pool_reference(const std::vector<std::vector<double>> &rows, Pooling p, bool normalize) {
    const size_t T = rows.size(), E = rows[0].size();
    std::vector<double> v(E, 0.0);
    if (p == Pooling::Cls) v = rows[0];
    else if (p == Pooling::Last) v = rows[T - 1];
    else {
        for (const auto &r : rows)
            for (size_t i = 0; i < E; ++i) v[i] += r[i];
        for (double &x : v) x /= (double)T;
    }
    if (normalize) {
        double s = 0;
        for (double x : v) s += x * x;
        for (double &x : v) x /= std::sqrt(s);
    }
    return v;
}

double max_abs_diff(const std::vector<float> &a, const std::vector<double> &b) {
    REQUIRE(a.size() == b.size());
    double m = 0;
    for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs((double)a[i] - b[i]));
    return m;
}

std::vector<int32_t> some_tokens(int n, int salt) {
    std::vector<int32_t> t;
    for (int i = 0; i < n; ++i) t.push_back((i * 37 + salt) % 97);
    return t;
}

struct TinyEmbedder {
    TinyWeights w;
    std::unique_ptr<Runtime> rt;
    std::unique_ptr<Model> model;
    std::unique_ptr<InferenceContext> ctx;
    explicit TinyEmbedder(const TinySpec &spec, int64_t n_batch = 512, int n_seq = 2) {
        const std::string path = temp_path("embed_" + spec.arch + std::to_string(spec.pooling_type) + ".gguf");
        w = write_tiny_model(path, spec);
        rt = cpu_runtime();
        model = Model::load(path, *rt);
        ContextParams cp;
        cp.n_ctx = 64;
        cp.n_batch = n_batch;
        cp.n_seq_max = n_seq;
        cp.type_k = cp.type_v = RF_TYPE_F32;
        ctx = std::make_unique<InferenceContext>(*model, *rt, cp);
    }
};

} // namespace

TEST_CASE("pool_rows: mean, cls and last against float64", "[embedding]") {
    const std::vector<float> rows = {1.0f, 2.0f, -3.0f, 0.25f, 4.0f, 1e-7f, 7.0f, -0.5f, 2.0f};
    const auto mean = pool_rows(rows.data(), 3, 3, Pooling::Mean);
    CHECK(mean[0] == Approx((1.0 + 0.25 + 7.0) / 3).epsilon(1e-7));
    CHECK(mean[1] == Approx((2.0 + 4.0 - 0.5) / 3).epsilon(1e-7));
    CHECK(mean[2] == Approx((-3.0 + 1e-7 + 2.0) / 3).epsilon(1e-6));
    // cls / last get the one row they read.
    CHECK(pool_rows(rows.data() + 6, 1, 3, Pooling::Last) == std::vector<float>{7.0f, -0.5f, 2.0f});
    CHECK(pool_rows(rows.data(), 1, 3, Pooling::Cls) == std::vector<float>{1.0f, 2.0f, -3.0f});
    CHECK(pooling_reads_row(Pooling::Cls, 0, 5));
    CHECK_FALSE(pooling_reads_row(Pooling::Cls, 1, 5));
    CHECK(pooling_reads_row(Pooling::Last, 4, 5));
    CHECK_FALSE(pooling_reads_row(Pooling::Last, 3, 5));
    CHECK(pooling_reads_row(Pooling::Mean, 3, 5));
    CHECK_THROWS_AS(pool_rows(rows.data(), 0, 3, Pooling::Mean), Error);
}

TEST_CASE("l2_normalize: length 1, direction kept, zero left alone", "[embedding]") {
    std::vector<float> v = {3.0f, -4.0f, 0.0f};
    l2_normalize(v);
    CHECK(v[0] == Approx(0.6));
    CHECK(v[1] == Approx(-0.8));
    CHECK(norm(v) == Approx(1.0).epsilon(1e-7));
    std::vector<float> z(4, 0.0f);
    l2_normalize(z);
    CHECK(z == std::vector<float>(4, 0.0f));
}

TEST_CASE("parse_pooling names", "[embedding]") {
    CHECK(parse_pooling("mean") == Pooling::Mean);
    CHECK(parse_pooling("cls") == Pooling::Cls);
    CHECK(parse_pooling("last") == Pooling::Last);
    CHECK(std::string(pooling_name(Pooling::Last)) == "last");
    CHECK_THROWS_AS(parse_pooling("max"), UsageError);
    CHECK_THROWS_AS(parse_pooling(""), UsageError);
}

TEST_CASE("hidden-state output equals the float64 forward up to the final norm", "[embedding]") {
    for (const char *arch : {"llama", "qwen3", "gemma2"}) {
        TinySpec spec;
        spec.arch = arch;
        TinyEmbedder e(spec);
        const auto tokens = some_tokens(9, 5);
        const auto ref = reference_hidden(e.w, tokens, 64);
        Batch b;
        for (int32_t t : tokens) b.add(t, 0, true);
        e.ctx->set_output_hidden(true);
        CHECK(e.ctx->output_width() == spec.n_embd);
        const std::vector<float> &h = e.ctx->decode(b);
        REQUIRE(h.size() == tokens.size() * (size_t)spec.n_embd);
        for (size_t t = 0; t < tokens.size(); ++t)
            CHECK(rel_diff(h.data() + t * (size_t)spec.n_embd, ref[t].data(), spec.n_embd) < 2e-3);
        e.ctx->set_output_hidden(false);
        CHECK(e.ctx->output_width() == spec.n_vocab);
    }
}

TEST_CASE("embed_tokens pools the context's hidden states as float64 pooling does", "[embedding]") {
    TinySpec spec;
    TinyEmbedder e(spec);
    const auto tokens = some_tokens(11, 3);
    // The states the pooling reads, from the same context (the tolerance is the pooling's own).
    Batch b;
    for (int32_t t : tokens) b.add(t, 0, true);
    std::vector<std::vector<double>> rows;
    {
        ScopedOutputHidden hidden(*e.ctx, true);
        const std::vector<float> &h = e.ctx->decode(b);
        for (size_t t = 0; t < tokens.size(); ++t)
            rows.emplace_back(h.begin() + (long)(t * spec.n_embd), h.begin() + (long)((t + 1) * spec.n_embd));
    }
    e.ctx->clear_sequence(0);
    CHECK_FALSE(e.ctx->output_hidden());
    const auto ref64 = reference_hidden(e.w, tokens, 64);
    for (Pooling p : {Pooling::Mean, Pooling::Cls, Pooling::Last}) {
        for (bool normalize : {true, false}) {
            INFO(pooling_name(p) << (normalize ? " normalised" : " raw"));
            const std::vector<float> v = embed_tokens(*e.ctx, tokens, 0, {p, normalize});
            REQUIRE(v.size() == (size_t)spec.n_embd);
            CHECK(max_abs_diff(v, pool_reference(rows, p, normalize)) < 1e-6);
            // And against the float64 forward itself.
            const auto r = pool_reference(ref64, p, normalize);
            CHECK(rel_diff(v.data(), r.data(), spec.n_embd) < 2e-3);
            if (normalize) CHECK(norm(v) == Approx(1.0).epsilon(1e-6));
            CHECK(e.ctx->seq_length(0) == 0); // nothing left in the cache
        }
    }
    // Different poolings give different vectors (the test would pass for a constant otherwise).
    CHECK(cosine(embed_tokens(*e.ctx, tokens, 0, {Pooling::Cls, true}), embed_tokens(*e.ctx, tokens, 0, {Pooling::Last, true})) <
          0.999);
}

TEST_CASE("embed_tokens: the same input gives the same vector, on any sequence, split or not", "[embedding]") {
    TinySpec spec;
    TinyEmbedder whole(spec);
    TinyEmbedder split(spec, /*n_batch=*/4);
    const auto a = some_tokens(13, 7), other = some_tokens(6, 2);
    const auto v0 = embed_tokens(*whole.ctx, a, 0, {});
    // Another input in between, and the other sequence: nothing of either remains.
    const auto vo = embed_tokens(*whole.ctx, other, 1, {});
    const auto v1 = embed_tokens(*whole.ctx, a, 1, {});
    CHECK(v0 == v1);
    CHECK(cosine(v0, v1) == Approx(1.0).epsilon(1e-12));
    CHECK(cosine(v0, vo) < 0.999);
    const auto vs = embed_tokens(*split.ctx, a, 0, {});
    CHECK(max_abs_diff(vs, std::vector<double>(v0.begin(), v0.end())) < 1e-5);
    CHECK(whole.ctx->cache().pages().free_pages() == whole.ctx->cache().pages().n_pages());
}

TEST_CASE("embed_tokens refuses bad inputs and leaves the sequence empty", "[embedding]") {
    TinySpec spec;
    TinyEmbedder e(spec);
    CHECK_THROWS_WITH(embed_tokens(*e.ctx, {}, 0, {}), Catch::Contains("no tokens"));
    CHECK_THROWS_WITH(embed_tokens(*e.ctx, some_tokens(65, 1), 0, {}), Catch::Contains("context size of 64"));
    CHECK_THROWS_WITH(embed_tokens(*e.ctx, {1, 2}, 2, {}), Catch::Contains("sequence id 2"));
    CHECK_THROWS_WITH(embed_tokens(*e.ctx, {1, 500, 2}, 0, {}), Catch::Contains("outside the vocabulary"));
    CHECK(e.ctx->seq_length(0) == 0);
    Batch b;
    b.add(3, 0, false);
    e.ctx->decode(b);
    CHECK_THROWS_WITH(embed_tokens(*e.ctx, {1, 2}, 0, {}), Catch::Contains("empty sequence"));
    CHECK(e.ctx->seq_length(0) == 1); // a refused embedding does not touch the sequence
    CHECK_FALSE(e.ctx->output_hidden());
    // The hidden-state output and an output top-k exclude each other.
    e.ctx->set_output_top_k(4);
    CHECK_THROWS_AS(e.ctx->set_output_hidden(true), Error);
    e.ctx->set_output_top_k(0);
    e.ctx->set_output_hidden(true);
    CHECK_THROWS_AS(e.ctx->set_output_top_k(4), Error);
}

TEST_CASE("the GGUF's pooling_type picks the default pooling", "[embedding]") {
    TinySpec spec;
    CHECK(default_pooling(*TinyEmbedder(spec).model) == Pooling::Mean);
    spec.pooling_type = 3;
    TinyEmbedder last(spec);
    CHECK(model_pooling(*last.model) == Pooling::Last);
    CHECK(default_pooling(*last.model) == Pooling::Last);
    spec.pooling_type = 2;
    CHECK(default_pooling(*TinyEmbedder(spec).model) == Pooling::Cls);
    spec.pooling_type = 0; // none: per-token output, which one vector per input cannot be
    CHECK(!model_pooling(*TinyEmbedder(spec).model));
}

TEST_CASE("embed_batch: several inputs per graph, each as embed_tokens alone", "[embedding]") {
    TinySpec spec;
    for (int64_t n_batch : {int64_t(512), int64_t(16)}) {
        INFO("n_batch " << n_batch);
        TinyEmbedder alone(spec);
        TinyEmbedder grouped(spec, n_batch, /*n_seq=*/3);
        // Lengths that fill groups unevenly, one longer than n_batch = 16 (it runs alone).
        std::vector<std::vector<int32_t>> inputs;
        for (int len : {5, 9, 1, 20, 7, 7, 3}) inputs.push_back(some_tokens(len, len + 1));
        for (Pooling p : {Pooling::Mean, Pooling::Cls, Pooling::Last}) {
            const auto got = embed_batch(*grouped.ctx, inputs, {p, true});
            REQUIRE(got.size() == inputs.size());
            for (size_t i = 0; i < inputs.size(); ++i) {
                const auto ref = embed_tokens(*alone.ctx, inputs[i], 0, {p, true});
                CHECK(max_abs_diff(got[i], std::vector<double>(ref.begin(), ref.end())) < 1e-5);
                const auto r64 = pool_reference(reference_hidden(grouped.w, inputs[i], 64), p, true);
                CHECK(rel_diff(got[i].data(), r64.data(), spec.n_embd) < 2e-3);
            }
            for (int s = 0; s < 3; ++s) CHECK(grouped.ctx->seq_length(s) == 0);
        }
        CHECK(grouped.ctx->cache().pages().free_pages() == grouped.ctx->cache().pages().n_pages());
    }
}

TEST_CASE("embed_batch refuses bad inputs by index and leaves the context empty", "[embedding]") {
    TinySpec spec;
    TinyEmbedder e(spec, 512, 2);
    CHECK_THROWS_WITH(embed_batch(*e.ctx, {{1, 2}, {}}, {}), Catch::Contains("input 1 has no tokens"));
    CHECK_THROWS_WITH(embed_batch(*e.ctx, {{1, 2}, {3, 97}}, {}), Catch::Contains("input 1: token id 97"));
    CHECK_THROWS_WITH(embed_batch(*e.ctx, {some_tokens(65, 1)}, {}), Catch::Contains("input 0 has 65 tokens"));
    CHECK(embed_batch(*e.ctx, {}, {}).empty());
    Batch b;
    b.add(3, 1, false);
    e.ctx->decode(b);
    CHECK_THROWS_WITH(embed_batch(*e.ctx, {{1, 2}}, {}), Catch::Contains("empty context"));
    CHECK(e.ctx->seq_length(1) == 1);
}
