// The encoders bert and nomic-bert: every token's hidden state against the float64 reference,
// bidirectional attention, WordPiece text to a pooled unit vector, batches equal to single
// inputs, and the refusals (logits, inputs longer than one graph).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "rocmforge/embedding.h"
#include "rocmforge/error.h"
#include "rocmforge/tokenizer.h"
#include "rocmforge/types.h"
#include "tiny_encoder.h"
#include "tiny_model.h"

using namespace rf;
using namespace rf_test;

namespace {

struct Encoder {
    TinyEncoderWeights w;
    std::unique_ptr<Runtime> rt;
    std::unique_ptr<Model> model;
    std::unique_ptr<InferenceContext> ctx;
    explicit Encoder(const TinyEncoderSpec &spec, int64_t n_batch = 64, std::unique_ptr<Runtime> runtime = nullptr) {
        const std::string path = temp_path("encoder_" + spec.arch + std::to_string(spec.matrix_type) + ".gguf");
        w = write_tiny_encoder(path, spec);
        rt = runtime ? std::move(runtime) : cpu_runtime();
        model = Model::load(path, *rt);
        ContextParams cp;
        cp.n_ctx = 64;
        cp.n_batch = n_batch;
        cp.n_seq_max = 3;
        cp.type_k = cp.type_v = RF_TYPE_F32;
        ctx = std::make_unique<InferenceContext>(*model, *rt, cp);
    }
    // Every token's hidden state, the tokens run as sequence 0.
    std::vector<float> hidden(const std::vector<int32_t> &tokens) {
        ScopedOutputHidden on(*ctx, true);
        Batch b;
        for (int32_t t : tokens) b.add(t, 0, true);
        std::vector<float> h = ctx->decode(b);
        ctx->clear_sequence(0);
        return h;
    }
};

TinyEncoderSpec nomic_spec() {
    TinyEncoderSpec s;
    s.arch = "nomic-bert";
    s.pooling_type = 1;
    return s;
}

const std::vector<int32_t> kTokens = {2, 5, 9, 6, 17, 40, 7, 3};

void check_hidden(const TinyEncoderSpec &spec, double tol) {
    Encoder e(spec);
    const std::vector<float> h = e.hidden(kTokens);
    const auto ref = reference_encoder(e.w, kTokens);
    const int64_t E = spec.n_embd;
    REQUIRE(h.size() == kTokens.size() * (size_t)E);
    for (size_t t = 0; t < kTokens.size(); ++t) {
        INFO("token " << t);
        CHECK(rel_diff(h.data() + t * E, ref[t].data(), E) < tol);
    }
}

double norm(const std::vector<float> &v) {
    double s = 0;
    for (float x : v) s += (double)x * x;
    return std::sqrt(s);
}

} // namespace

TEST_CASE("bert: every token's hidden state matches the float64 reference", "[model][encoder]") {
    check_hidden(TinyEncoderSpec{}, 1e-4);
    TinyEncoderSpec f16;
    f16.matrix_type = RF_TYPE_F16;
    check_hidden(f16, 2e-3);
}

TEST_CASE("nomic-bert: fused QKV, NeoX RoPE, SwiGLU; matches the float64 reference", "[model][encoder]") {
    check_hidden(nomic_spec(), 1e-4);
}

TEST_CASE("encoders on a GPU-like backend without the encoder ops: those nodes and the KV cache on the CPU", "[model][encoder]") {
    for (const TinyEncoderSpec &spec : {TinyEncoderSpec{}, nomic_spec()}) {
        INFO(spec.arch);
        Encoder gpu(spec, 64, gpulike_runtime());
        REQUIRE(gpu.model->backend().name() == "gpulike");
        // The pools go where bidirectional attention runs (the executor refuses to copy them).
        CHECK(kv_cache_backend(*gpu.rt, gpu.model->backend(), true).name() == "cpu");
        CHECK(kv_cache_backend(*gpu.rt, gpu.model->backend(), false).name() == "gpulike");
        Encoder cpu(spec);
        const std::vector<float> a = gpu.hidden(kTokens), b = cpu.hidden(kTokens);
        REQUIRE(a.size() == b.size());
        CHECK(rel_diff(a.data(), b.data(), (int64_t)a.size()) < 1e-6);
    }
}

TEST_CASE("encoders attend both ways: a later token changes the first token's state", "[model][encoder]") {
    for (const TinyEncoderSpec &spec : {TinyEncoderSpec{}, nomic_spec()}) {
        INFO(spec.arch);
        Encoder e(spec);
        std::vector<int32_t> other = kTokens;
        other[6] = 8;
        const std::vector<float> a = e.hidden(kTokens), b = e.hidden(other);
        const int64_t E = spec.n_embd;
        CHECK(rel_diff(a.data(), b.data(), E) > 1e-3);
        const auto ref = reference_encoder(e.w, other);
        CHECK(rel_diff(b.data(), ref[0].data(), E) < 1e-4);
    }
}

TEST_CASE("bert: WordPiece text to a unit vector with the file's pooling (cls)", "[model][encoder]") {
    Encoder e(TinyEncoderSpec{});
    auto tok = Tokenizer::from_gguf(e.model->file());
    const std::vector<int32_t> ids = tok->encode("Hello, world", true, false);
    CHECK(ids == std::vector<int32_t>{2, 5, 1, 6, 3}); // "," has no piece: [UNK]
    REQUIRE(default_pooling(*e.model) == Pooling::Cls);
    EmbedOptions opt;
    opt.pooling = default_pooling(*e.model);
    const std::vector<float> v = embed_tokens(*e.ctx, ids, 0, opt);
    CHECK(std::fabs(norm(v) - 1.0) < 1e-6);
    // The CLS row of the reference, normalised.
    std::vector<double> ref = reference_encoder(e.w, ids)[0];
    double s = 0;
    for (double x : ref) s += x * x;
    for (double &x : ref) x /= std::sqrt(s);
    CHECK(rel_diff(v.data(), ref.data(), (int64_t)v.size()) < 1e-4);
}

TEST_CASE("encoder batches: each input as if alone (mean pooling)", "[model][encoder]") {
    Encoder e(nomic_spec());
    const std::vector<std::vector<int32_t>> inputs = {{2, 5, 6, 3}, {2, 7, 8, 9, 10, 11, 3}, {2, 12, 3}};
    EmbedOptions opt;
    opt.pooling = default_pooling(*e.model);
    REQUIRE(opt.pooling == Pooling::Mean);
    const auto batch = embed_batch(*e.ctx, inputs, opt);
    REQUIRE(batch.size() == inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
        INFO("input " << i);
        const std::vector<float> alone = embed_tokens(*e.ctx, inputs[i], 0, opt);
        CHECK(rel_diff(batch[i].data(), alone.data(), (int64_t)alone.size()) < 1e-5);
        CHECK(std::fabs(norm(batch[i]) - 1.0) < 1e-6);
    }
}

TEST_CASE("encoders refuse logits and inputs longer than one graph", "[model][encoder]") {
    Encoder e(TinyEncoderSpec{}, 8);
    Batch b;
    b.add(2, 0, true);
    CHECK_THROWS_WITH(e.ctx->decode(b), Catch::Contains("embedding model"));
    e.ctx->clear_sequence(0);
    const std::vector<int32_t> long_input(12, 5);
    CHECK_THROWS_WITH(embed_tokens(*e.ctx, long_input, 0, EmbedOptions{}), Catch::Contains("batch size of 8"));
    CHECK_THROWS_WITH(embed_batch(*e.ctx, {long_input}, EmbedOptions{}), Catch::Contains("batch size of 8"));
}
