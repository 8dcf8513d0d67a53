// Bad input to the C API: each call returns its error code and a message saying what was wrong.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "api_fixture.h"

using api_test::model;

namespace {

struct Ctx {
    rocmforge_context *ctx = nullptr;
    explicit Ctx(uint32_t n_seq = 2, uint32_t n_ctx = 64) {
        rocmforge_context_params p = rocmforge_context_default_params();
        p.n_seq_max = n_seq;
        p.n_ctx = n_ctx;
        REQUIRE(rocmforge_context_init(model(), &p, &ctx) == ROCMFORGE_OK);
    }
    ~Ctx() { rocmforge_context_free(ctx); }
};

} // namespace

TEST_CASE("null pointers are refused by name", "[api][errors]") {
    rocmforge_model *m = nullptr;
    REQUIRE_FAILS(rocmforge_model_load("x.gguf", nullptr, nullptr), ROCMFORGE_ERR_INVALID_ARGUMENT, "out_model is NULL");
    rocmforge_context *c = nullptr;
    REQUIRE_FAILS(rocmforge_context_init(nullptr, nullptr, &c), ROCMFORGE_ERR_INVALID_ARGUMENT, "model is NULL");
    REQUIRE(c == nullptr);
    size_t n = 0;
    REQUIRE_FAILS(rocmforge_tokenize(model(), nullptr, 0, nullptr, 0, true, true, &n), ROCMFORGE_ERR_INVALID_ARGUMENT, "text is NULL");
    REQUIRE_FAILS(rocmforge_tokenize(nullptr, "a", 1, nullptr, 0, true, true, &n), ROCMFORGE_ERR_INVALID_ARGUMENT, "model is NULL");
    REQUIRE_FAILS(rocmforge_decode(nullptr, nullptr), ROCMFORGE_ERR_INVALID_ARGUMENT, "ctx is NULL");
    REQUIRE_FAILS(rocmforge_sampler_init(nullptr, nullptr), ROCMFORGE_ERR_INVALID_ARGUMENT, "out_sampler is NULL");
    REQUIRE_FAILS(rocmforge_generate(nullptr, "x", nullptr, 4, nullptr, nullptr, nullptr), ROCMFORGE_ERR_INVALID_ARGUMENT, "ctx is NULL");
    REQUIRE_FAILS(rocmforge_model_meta_val_str(model(), nullptr, nullptr, 0, nullptr), ROCMFORGE_ERR_INVALID_ARGUMENT, "key is NULL");
    REQUIRE(rocmforge_get_logits_ith(nullptr, 0) == nullptr);
    REQUIRE(std::string(rocmforge_last_error()).find("ctx is NULL") != std::string::npos);
    // The free functions and the queries accept NULL.
    rocmforge_model_free(m);
    rocmforge_context_free(nullptr);
    rocmforge_sampler_free(nullptr);
    REQUIRE(rocmforge_model_n_vocab(nullptr) == 0);
    REQUIRE(rocmforge_kv_seq_length(nullptr, 0) == -1);
}

TEST_CASE("a missing file and files that are not models", "[api][errors]") {
    rocmforge_model *m = nullptr;
    REQUIRE_FAILS(rocmforge_model_load("/nonexistent/model.gguf", nullptr, &m), ROCMFORGE_ERR_FILE, "does not exist");
    REQUIRE(m == nullptr);

    const std::string junk = api_test::temp_file("junk.gguf");
    std::ofstream(junk) << "this is not a GGUF file, only some text long enough to be read";
    REQUIRE_FAILS(rocmforge_model_load(junk.c_str(), nullptr, &m), ROCMFORGE_ERR_FILE, junk);
    REQUIRE(m == nullptr);

    // A valid GGUF without the tensors of a model: the tokenizer test vocabularies are those.
    const std::string vocab = std::string(std::getenv("RF_TEST_DATA")) + "/vocab/ggml-vocab-llama-spm.gguf";
    REQUIRE(std::ifstream(vocab).good());
    REQUIRE_FAILS(rocmforge_model_load(vocab.c_str(), nullptr, &m), ROCMFORGE_ERR_FILE, "missing tensor");
    REQUIRE(m == nullptr);
}

TEST_CASE("a backend that does not exist and a cancelled load", "[api][errors]") {
    rocmforge_model *m = nullptr;
    rocmforge_model_params p = rocmforge_model_default_params();
    p.backends = "warpdrive";
    REQUIRE_FAILS(rocmforge_model_load(api_test::model_path().c_str(), &p, &m), ROCMFORGE_ERR_INVALID_ARGUMENT, "warpdrive");

    p = rocmforge_model_default_params();
    int calls = 0;
    p.progress_callback = [](float, void *user) { return ++*static_cast<int *>(user) < 3; };
    p.progress_callback_user_data = &calls;
    REQUIRE_FAILS(rocmforge_model_load(api_test::model_path().c_str(), &p, &m), ROCMFORGE_ERR_CANCELLED, "cancelled");
    REQUIRE(calls == 3);
    REQUIRE(m == nullptr);
}

TEST_CASE("a context larger than memory, and bad context parameters", "[api][errors]") {
    rocmforge_context *c = nullptr;
    rocmforge_context_params p = rocmforge_context_default_params();
    p.n_ctx = 4000000000u; // ~4 TiB of KV cache for the default model
    REQUIRE_FAILS(rocmforge_context_init(model(), &p, &c), ROCMFORGE_ERR_OUT_OF_MEMORY, "GiB free");
    REQUIRE(c == nullptr);

    p = rocmforge_context_default_params();
    p.n_seq_max = 0;
    REQUIRE_FAILS(rocmforge_context_init(model(), &p, &c), ROCMFORGE_ERR_INVALID_ARGUMENT, "n_seq_max");
    p = rocmforge_context_default_params();
    p.type_k = (rocmforge_cache_type)42;
    REQUIRE_FAILS(rocmforge_context_init(model(), &p, &c), ROCMFORGE_ERR_INVALID_ARGUMENT, "type_k");
    REQUIRE(c == nullptr);
}

TEST_CASE("token ids outside the vocabulary", "[api][errors]") {
    Ctx c;
    const int32_t n_vocab = rocmforge_model_n_vocab(model());
    rocmforge_batch b = rocmforge_batch_init(2);
    b.n_tokens = 2;
    b.token[0] = 1;
    b.token[1] = n_vocab; // one past the end
    REQUIRE_FAILS(rocmforge_decode(c.ctx, &b), ROCMFORGE_ERR_INVALID_ARGUMENT, "token id " + std::to_string(n_vocab) + " at batch index 1");
    b.token[1] = -5;
    REQUIRE_FAILS(rocmforge_decode(c.ctx, &b), ROCMFORGE_ERR_INVALID_ARGUMENT, "outside the vocabulary");
    REQUIRE(rocmforge_kv_seq_length(c.ctx, 0) == 0); // nothing ran
    rocmforge_batch_free(b);

    char buf[32];
    size_t len = 0;
    REQUIRE_FAILS(rocmforge_token_to_piece(model(), -1, buf, sizeof buf, false, &len), ROCMFORGE_ERR_INVALID_ARGUMENT, "outside the vocabulary");
    const rocmforge_token bad[] = {5, n_vocab + 100};
    REQUIRE_FAILS(rocmforge_detokenize(model(), bad, 2, buf, sizeof buf, false, false, &len), ROCMFORGE_ERR_INVALID_ARGUMENT,
                  std::to_string(n_vocab + 100));
    REQUIRE_FALSE(rocmforge_token_is_eog(model(), n_vocab));
}

TEST_CASE("sequence ids outside the context", "[api][errors]") {
    Ctx c(2);
    rocmforge_batch b = rocmforge_batch_init(1);
    b.n_tokens = 1;
    b.token[0] = 1;
    b.seq_id[0] = 2;
    REQUIRE_FAILS(rocmforge_decode(c.ctx, &b), ROCMFORGE_ERR_INVALID_ARGUMENT, "sequence id 2 is outside 0..1");
    rocmforge_batch_free(b);
    REQUIRE_FAILS(rocmforge_kv_seq_clear(c.ctx, -1), ROCMFORGE_ERR_INVALID_ARGUMENT, "sequence id -1");
    REQUIRE_FAILS(rocmforge_kv_seq_rm(c.ctx, 7, 0, -1), ROCMFORGE_ERR_INVALID_ARGUMENT, "sequence id 7");
    REQUIRE_FAILS(rocmforge_kv_seq_cp(c.ctx, 0, 2, -1), ROCMFORGE_ERR_INVALID_ARGUMENT, "sequence id 2");
    REQUIRE(rocmforge_kv_seq_length(c.ctx, 2) == -1);
}

TEST_CASE("bad batches, logits not asked for, small buffers, bad sampler values", "[api][errors]") {
    Ctx c;
    rocmforge_batch empty{};
    REQUIRE_FAILS(rocmforge_decode(c.ctx, &empty), ROCMFORGE_ERR_INVALID_ARGUMENT, "0 tokens");
    REQUIRE(rocmforge_get_logits_ith(c.ctx, 0) == nullptr);
    REQUIRE(std::string(rocmforge_last_error()).find("no decode has succeeded") != std::string::npos);

    rocmforge_batch b = rocmforge_batch_init(2);
    b.n_tokens = 2;
    b.token[0] = 1;
    b.token[1] = 2;
    b.logits[1] = 1;
    REQUIRE(rocmforge_decode(c.ctx, &b) == ROCMFORGE_OK);
    REQUIRE(rocmforge_get_logits_ith(c.ctx, 1) != nullptr);
    REQUIRE(rocmforge_get_logits_ith(c.ctx, 0) == nullptr);
    REQUIRE(std::string(rocmforge_last_error()).find("batch index 0 has no logits") != std::string::npos);
    REQUIRE(rocmforge_get_logits_ith(c.ctx, 2) == nullptr);
    rocmforge_batch_free(b);

    // Only a tail can be removed.
    REQUIRE_FAILS(rocmforge_kv_seq_rm(c.ctx, 0, 0, 1), ROCMFORGE_ERR_UNSUPPORTED, "only a tail");
    REQUIRE_FAILS(rocmforge_kv_seq_cp(c.ctx, 0, 1, 5), ROCMFORGE_ERR_INVALID_ARGUMENT, "holds 2 tokens");

    char small[4];
    size_t len = 0;
    REQUIRE_FAILS(rocmforge_model_desc(model(), small, sizeof small, &len), ROCMFORGE_ERR_BUFFER_TOO_SMALL, "needs");
    REQUIRE(len > sizeof small);
    rocmforge_token one[1];
    size_t n = 0;
    REQUIRE_FAILS(rocmforge_tokenize(model(), "In the beginning", 16, one, 1, true, false, &n), ROCMFORGE_ERR_BUFFER_TOO_SMALL, "tokens");
    REQUIRE(n > 1);
    REQUIRE_FAILS(rocmforge_model_meta_val_str(model(), "no.such.key", small, sizeof small, &len), ROCMFORGE_ERR_INVALID_ARGUMENT, "no.such.key");

    rocmforge_sampler_params sp = rocmforge_sampler_default_params();
    sp.top_p = 0;
    rocmforge_sampler *s = nullptr;
    REQUIRE_FAILS(rocmforge_sampler_init(&sp, &s), ROCMFORGE_ERR_INVALID_ARGUMENT, "top_p");
    REQUIRE(s == nullptr);
    REQUIRE_FAILS(rocmforge_generate(c.ctx, "x", nullptr, -2, nullptr, nullptr, nullptr), ROCMFORGE_ERR_INVALID_ARGUMENT, "n_predict");
}

TEST_CASE("a full context is an error code that changes nothing", "[api][errors]") {
    Ctx c(1, 16);
    rocmforge_batch b = rocmforge_batch_init(20);
    b.n_tokens = 20;
    for (int i = 0; i < 20; ++i) b.token[i] = 1 + i;
    REQUIRE_FAILS(rocmforge_decode(c.ctx, &b), ROCMFORGE_ERR_CONTEXT_FULL, "context full");
    REQUIRE(rocmforge_kv_seq_length(c.ctx, 0) == 0);
    b.n_tokens = 16;
    REQUIRE(rocmforge_decode(c.ctx, &b) == ROCMFORGE_OK);
    rocmforge_batch_free(b);
}

TEST_CASE("backend options: each checked against the backend's options, good ones load", "[api][errors]") {
    rocmforge_model *m = nullptr;
    rocmforge_model_params p = rocmforge_model_default_params();
    p.backends = "cpu";
    const std::string path = api_test::model_path();
    p.backend_options = R"({"cpu": {"simd": "avx9"}})";
    REQUIRE_FAILS(rocmforge_model_load(path.c_str(), &p, &m), ROCMFORGE_ERR_INVALID_ARGUMENT,
                  "backend_options.cpu.simd is \"avx9\", but option simd of backend 'cpu' is of type enum: one of auto, scalar, avx2, avx512vnni");
    REQUIRE_FAILS(rocmforge_model_load(path.c_str(), &p, &m), ROCMFORGE_ERR_INVALID_ARGUMENT, "rocmforge_model_params.backend_options");
    p.backend_options = R"({"cpu": {"n_threads": 5000}})";
    REQUIRE_FAILS(rocmforge_model_load(path.c_str(), &p, &m), ROCMFORGE_ERR_INVALID_ARGUMENT, "an integer in 0..1024");
    p.backend_options = R"({"cpu": {"n_threads": "many"}})";
    REQUIRE_FAILS(rocmforge_model_load(path.c_str(), &p, &m), ROCMFORGE_ERR_INVALID_ARGUMENT, "of type int");
    p.backend_options = R"({"cpu": {"smd": "scalar"}})";
    REQUIRE_FAILS(rocmforge_model_load(path.c_str(), &p, &m), ROCMFORGE_ERR_INVALID_ARGUMENT, "is not an option of backend 'cpu'");
    p.backend_options = R"({"warpdrive": {"x": 1}})";
    REQUIRE_FAILS(rocmforge_model_load(path.c_str(), &p, &m), ROCMFORGE_ERR_INVALID_ARGUMENT, "names backend 'warpdrive'");
    p.backend_options = "[1, 2]";
    REQUIRE_FAILS(rocmforge_model_load(path.c_str(), &p, &m), ROCMFORGE_ERR_INVALID_ARGUMENT, "not a JSON object");
    p.backend_options = R"({"cpu": 3})";
    REQUIRE_FAILS(rocmforge_model_load(path.c_str(), &p, &m), ROCMFORGE_ERR_INVALID_ARGUMENT, "cpu must be an object");
    REQUIRE(m == nullptr);

    p.backend_options = R"({"cpu": {"simd": "scalar", "weights": "copy", "n_threads": 2}})";
    REQUIRE(rocmforge_model_load(path.c_str(), &p, &m) == ROCMFORGE_OK);
    REQUIRE(m != nullptr);
    REQUIRE(std::string(rocmforge_model_backend(m)) == "cpu");
    rocmforge_model_free(m);
}

TEST_CASE("API 0.3: the version, plugin folders, frequency and presence penalties", "[api][errors]") {
    REQUIRE(rocmforge_api_version() == ((ROCMFORGE_API_VERSION_MAJOR << 16) | ROCMFORGE_API_VERSION_MINOR));
    REQUIRE(ROCMFORGE_API_VERSION_MINOR >= 3);

    rocmforge_model *m = nullptr;
    rocmforge_model_params p = rocmforge_model_default_params();
    REQUIRE(p.plugin_dirs == nullptr);
    p.plugin_dirs = "/nonexistent/plugins";
    REQUIRE_FAILS(rocmforge_model_load(api_test::model_path().c_str(), &p, &m), ROCMFORGE_ERR_INVALID_ARGUMENT,
                  "params.plugin_dirs names '/nonexistent/plugins'");
    REQUIRE(m == nullptr);
    // Without $ROCMFORGE_PLUGIN_PATH (the way this test finds the CPU plugin otherwise) the
    // build folder's plugin is found through plugin_dirs alone.
    const char *build_root = std::getenv("ROCMFORGE_BUILD_ROOT");
    REQUIRE(build_root != nullptr);
    const char *env = std::getenv("ROCMFORGE_PLUGIN_PATH");
    const std::string saved = env ? env : "";
    unsetenv("ROCMFORGE_PLUGIN_PATH");
    const std::string dirs = std::string("/nonexistent-but-skipped-never:") + build_root + "/backends/cpu";
    p.plugin_dirs = dirs.c_str();
    const rocmforge_status bad = rocmforge_model_load(api_test::model_path().c_str(), &p, &m);
    const std::string good_dirs = std::string(build_root) + "/backends/cpu";
    p.plugin_dirs = good_dirs.c_str();
    p.backends = "cpu";
    const rocmforge_status st = rocmforge_model_load(api_test::model_path().c_str(), &p, &m);
    const std::string message = rocmforge_last_error();
    if (env) setenv("ROCMFORGE_PLUGIN_PATH", saved.c_str(), 1);
    REQUIRE(bad == ROCMFORGE_ERR_INVALID_ARGUMENT); // every folder named must exist
    INFO(message);
    REQUIRE(st == ROCMFORGE_OK);
    REQUIRE(std::string(rocmforge_model_backend(m)) == "cpu");
    rocmforge_model_free(m);

    rocmforge_sampler_params sp = rocmforge_sampler_default_params();
    REQUIRE(sp.frequency_penalty == 0.0f);
    REQUIRE(sp.presence_penalty == 0.0f);
    rocmforge_sampler *s = nullptr;
    sp.frequency_penalty = 2.5f;
    REQUIRE_FAILS(rocmforge_sampler_init(&sp, &s), ROCMFORGE_ERR_INVALID_ARGUMENT, "frequency_penalty must be in [-2, 2]");
    sp.frequency_penalty = 0;
    sp.presence_penalty = -3;
    REQUIRE_FAILS(rocmforge_sampler_init(&sp, &s), ROCMFORGE_ERR_INVALID_ARGUMENT, "presence_penalty must be in [-2, 2]");
    REQUIRE(s == nullptr);
}

TEST_CASE("API 0.3: the penalties change what is sampled after a repeated token", "[api]") {
    // Greedy on fixed logits: the argmax token, seen n times in the history, loses
    // n * frequency_penalty + presence_penalty and with that its place.
    Ctx c(1, 64);
    rocmforge_batch b = rocmforge_batch_init(1);
    b.n_tokens = 1;
    b.token[0] = 1;
    b.logits[0] = 1;
    REQUIRE(rocmforge_decode(c.ctx, &b) == ROCMFORGE_OK);
    rocmforge_batch_free(b);
    const float *logits = rocmforge_get_logits_ith(c.ctx, 0);
    REQUIRE(logits != nullptr);
    const int32_t n_vocab = rocmforge_model_n_vocab(model());
    int32_t best = 0, second = -1;
    for (int32_t i = 1; i < n_vocab; ++i)
        if (logits[i] > logits[best]) best = i;
    for (int32_t i = 0; i < n_vocab; ++i)
        if (i != best && (second < 0 || logits[i] > logits[second])) second = i;
    const float gap = logits[best] - logits[second];

    auto greedy = [&](float frequency, float presence, int times_seen) {
        rocmforge_sampler_params sp = rocmforge_sampler_greedy_params();
        sp.frequency_penalty = frequency;
        sp.presence_penalty = presence;
        rocmforge_sampler *s = nullptr;
        REQUIRE(rocmforge_sampler_init(&sp, &s) == ROCMFORGE_OK);
        for (int i = 0; i < times_seen; ++i) rocmforge_sampler_accept(s, best);
        rocmforge_token t = -1;
        REQUIRE(rocmforge_sampler_sample(s, c.ctx, 0, &t) == ROCMFORGE_OK);
        rocmforge_sampler_free(s);
        return t;
    };
    REQUIRE(greedy(0, 0, 50) == best);
    // 50 occurrences (within repeat_last_n = 64) at 2 each: far more than any logit gap.
    REQUIRE(greedy(2, 0, 50) != best);
    REQUIRE(greedy(-2, -2, 50) == best);
    INFO("gap between the two best logits: " << gap);
    if (gap < 1.9f) {
        REQUIRE(greedy(0, gap + 0.05f, 1) == second);
        REQUIRE(greedy(0, gap + 0.05f, 0) == best); // unseen: no penalty
    }
}
