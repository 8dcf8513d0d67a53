// The C API used as intended on the default model: metadata, tokens, decode and sampling, the
// per-sequence KV operations, generation, logging.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "api_fixture.h"

using api_test::model;

namespace {

std::vector<rocmforge_token> tokenize(const std::string &text) {
    std::vector<rocmforge_token> t(64);
    size_t n = 0;
    REQUIRE(rocmforge_tokenize(model(), text.data(), text.size(), t.data(), t.size(), true, true, &n) == ROCMFORGE_OK);
    t.resize(n);
    return t;
}

std::vector<float> logits_row(rocmforge_context *ctx, int32_t i) {
    const float *l = rocmforge_get_logits_ith(ctx, i);
    REQUIRE(l != nullptr);
    return std::vector<float>(l, l + rocmforge_model_n_vocab(model()));
}

// Decodes `tokens` on `seq`, asking for the last token's logits.
void decode(rocmforge_context *ctx, const std::vector<rocmforge_token> &tokens, int seq) {
    rocmforge_batch b = rocmforge_batch_init((int32_t)tokens.size());
    for (size_t i = 0; i < tokens.size(); ++i) b.token[i] = tokens[i], b.seq_id[i] = seq, b.logits[i] = i + 1 == tokens.size();
    b.n_tokens = (int32_t)tokens.size();
    const rocmforge_status st = rocmforge_decode(ctx, &b);
    rocmforge_batch_free(b);
    INFO(rocmforge_last_error());
    REQUIRE(st == ROCMFORGE_OK);
}

rocmforge_context *new_context(uint32_t n_seq) {
    rocmforge_context_params p = rocmforge_context_default_params();
    p.n_seq_max = n_seq;
    rocmforge_context *c = nullptr;
    REQUIRE(rocmforge_context_init(model(), &p, &c) == ROCMFORGE_OK);
    return c;
}

} // namespace

TEST_CASE("model metadata", "[api]") {
    REQUIRE(rocmforge_model_n_vocab(model()) == 4096);
    REQUIRE(rocmforge_model_n_layer(model()) == 4);
    REQUIRE(rocmforge_model_n_ctx_train(model()) == 512);
    REQUIRE(rocmforge_model_n_params(model()) > 3000000);
    REQUIRE(std::string(rocmforge_model_backend(model())) == "cpu");
    char buf[128];
    size_t len = 0;
    REQUIRE(rocmforge_model_meta_val_str(model(), "general.architecture", buf, sizeof buf, &len) == ROCMFORGE_OK);
    REQUIRE(std::string(buf) == "llama");
    REQUIRE(len == 5);
    REQUIRE(rocmforge_model_desc(model(), buf, sizeof buf, &len) == ROCMFORGE_OK);
    REQUIRE(std::string(buf).rfind("llama", 0) == 0);
    REQUIRE(rocmforge_token_bos(model()) >= 0);
    REQUIRE(rocmforge_token_is_eog(model(), rocmforge_token_eos(model())));
    REQUIRE(std::string(rocmforge_version()) == "0.1.0");
}

TEST_CASE("tokenize and detokenize round trip", "[api]") {
    const std::string text = "And God said, Let there be light";
    const auto t = tokenize(text);
    REQUIRE(t.front() == rocmforge_token_bos(model()));
    char buf[256];
    size_t len = 0;
    REQUIRE(rocmforge_detokenize(model(), t.data(), t.size(), buf, sizeof buf, true, false, &len) == ROCMFORGE_OK);
    REQUIRE(std::string(buf, len) == text);
}

TEST_CASE("greedy decode by hand equals rocmforge_generate", "[api]") {
    const std::string prompt = "In the beginning";
    rocmforge_context *ctx = new_context(1);
    rocmforge_sampler_params sp = rocmforge_sampler_greedy_params();
    rocmforge_sampler *s = nullptr;
    REQUIRE(rocmforge_sampler_init(&sp, &s) == ROCMFORGE_OK);
    std::string by_hand;
    std::vector<rocmforge_token> next = tokenize(prompt);
    for (int i = 0; i < 12; ++i) {
        decode(ctx, next, 0);
        rocmforge_token t = -1;
        REQUIRE(rocmforge_sampler_sample(s, ctx, -1, &t) == ROCMFORGE_OK);
        rocmforge_sampler_accept(s, t);
        char piece[64];
        size_t len = 0;
        REQUIRE(rocmforge_token_to_piece(model(), t, piece, sizeof piece, false, &len) == ROCMFORGE_OK);
        by_hand.append(piece, len);
        next = {t};
    }
    rocmforge_sampler_free(s);
    rocmforge_context_free(ctx);

    ctx = new_context(1);
    std::string streamed;
    int32_t n = 0;
    auto collect = [](const char *text, size_t len, void *user) {
        static_cast<std::string *>(user)->append(text, len);
        return true;
    };
    REQUIRE(rocmforge_generate(ctx, prompt.c_str(), &sp, 12, collect, &streamed, &n) == ROCMFORGE_OK);
    rocmforge_context_free(ctx);
    REQUIRE(n == 12);
    REQUIRE(!by_hand.empty());
    REQUIRE(streamed == by_hand);
}

TEST_CASE("a copied prefix and a removed tail give the logits of the original", "[api]") {
    rocmforge_context *ctx = new_context(2);
    const auto prompt = tokenize("The LORD is my shepherd");
    decode(ctx, prompt, 0); // 7 tokens: the copy spans a partial page
    const std::vector<rocmforge_token> next = {prompt[2]};
    decode(ctx, next, 0);
    const std::vector<float> after_next = logits_row(ctx, -1);

    // Sequence 1 = the prompt part of sequence 0, then the same token.
    REQUIRE(rocmforge_kv_seq_cp(ctx, 0, 1, (int32_t)prompt.size()) == ROCMFORGE_OK);
    REQUIRE(rocmforge_kv_seq_length(ctx, 1) == (int32_t)prompt.size());
    decode(ctx, next, 1);
    REQUIRE(logits_row(ctx, -1) == after_next);

    // Sequence 0 without its last token, then the token again.
    REQUIRE(rocmforge_kv_seq_rm(ctx, 0, (int32_t)prompt.size(), -1) == ROCMFORGE_OK);
    REQUIRE(rocmforge_kv_seq_length(ctx, 0) == (int32_t)prompt.size());
    decode(ctx, next, 0);
    REQUIRE(logits_row(ctx, -1) == after_next);

    REQUIRE(rocmforge_kv_seq_clear(ctx, 1) == ROCMFORGE_OK);
    REQUIRE(rocmforge_kv_seq_length(ctx, 1) == 0);
    rocmforge_context_free(ctx);
}

TEST_CASE("weights copied instead of mapped give the same logits", "[api]") {
    rocmforge_model_params p = rocmforge_model_default_params();
    p.use_mmap = false;
    float last_progress = 0;
    p.progress_callback = [](float progress, void *user) {
        *static_cast<float *>(user) = progress;
        return true;
    };
    p.progress_callback_user_data = &last_progress;
    rocmforge_model *copied = nullptr;
    REQUIRE(rocmforge_model_load(api_test::model_path().c_str(), &p, &copied) == ROCMFORGE_OK);
    REQUIRE(last_progress == 1.0f);
    const auto prompt = tokenize("Blessed are the meek");
    rocmforge_context *a = new_context(1), *b = nullptr;
    REQUIRE(rocmforge_context_init(copied, nullptr, &b) == ROCMFORGE_OK);
    decode(a, prompt, 0);
    decode(b, prompt, 0);
    REQUIRE(logits_row(a, -1) == logits_row(b, -1));
    rocmforge_context_free(a);
    rocmforge_context_free(b);
    rocmforge_model_free(copied);
}

TEST_CASE("library messages go to the log callback, never to stdout", "[api]") {
    std::vector<std::string> messages;
    rocmforge_log_set([](rocmforge_log_level, const char *text, void *user) { static_cast<std::vector<std::string> *>(user)->push_back(text); },
                      &messages);
    rocmforge_log_set_level(ROCMFORGE_LOG_DEBUG);
    // stdout to a file while a model loads with every message enabled.
    const std::string out = api_test::temp_file("stdout.txt");
    std::fflush(stdout);
    const int saved = ::dup(1);
    FILE *f = std::fopen(out.c_str(), "w");
    ::dup2(fileno(f), 1);
    rocmforge_model *m = nullptr;
    const rocmforge_status st = rocmforge_model_load(api_test::model_path().c_str(), nullptr, &m);
    std::fflush(stdout);
    ::dup2(saved, 1);
    ::close(saved);
    std::fclose(f);
    rocmforge_log_set(nullptr, nullptr);
    rocmforge_log_set_level(ROCMFORGE_LOG_WARN);
    rocmforge_model_free(m);
    REQUIRE(st == ROCMFORGE_OK);
    bool ready = false;
    for (const auto &msg : messages) ready = ready || msg.find("backend 'cpu' ready") != std::string::npos;
    REQUIRE(ready);
    FILE *r = std::fopen(out.c_str(), "r");
    std::fseek(r, 0, SEEK_END);
    REQUIRE(std::ftell(r) == 0);
    std::fclose(r);
}
