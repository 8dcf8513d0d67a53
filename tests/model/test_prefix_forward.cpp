// Prefix caching through the forward graph (CPU backend, tiny random models): a prompt whose
// leading pages come from the cache gives the tokens and logprobs of the same prompt computed
// from scratch, with several sequences sharing the pages at once, and after a cut inside a
// shared page (copy-on-write).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/inference.h"
#include "rocmforge/model.h"
#include "tiny_encoder.h"
#include "tiny_model.h"

using namespace rf;
using namespace rf_test;

namespace {

struct Loaded {
    std::unique_ptr<Runtime> rt;
    std::unique_ptr<Model> model;
};

Loaded load(const TinySpec &spec, const std::string &file) {
    Loaded l;
    const std::string path = temp_path(file);
    write_tiny_model(path, spec);
    l.rt = cpu_runtime();
    l.model = Model::load(path, *l.rt);
    return l;
}

ContextParams params(bool prefix_cache, int n_seq = 2) {
    ContextParams p;
    p.n_ctx = 256;
    p.n_batch = 64;
    p.n_seq_max = n_seq;
    p.page_size = 16;
    p.prefix_cache = prefix_cache;
    return p;
}

// The shared "system prompt" (three pages and a bit) and two different questions after it.
std::vector<int32_t> prompt_with(const std::vector<int32_t> &question) {
    std::vector<int32_t> p;
    for (int i = 0; i < 52; ++i) p.push_back((int32_t)((i * 37 + 11) % 97));
    p.insert(p.end(), question.begin(), question.end());
    return p;
}
const std::vector<int32_t> kQ1 = {5, 6, 7, 8, 9}, kQ2 = {40, 30, 20, 10};

struct Greedy {
    std::vector<int32_t> tokens;
    std::vector<double> logprobs; // of each drawn token
    std::vector<float> first_row; // logits of the last prompt token
};

double logprob(const float *row, int64_t n, int32_t token) {
    const float m = *std::max_element(row, row + n);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp((double)row[i] - m);
    return (double)row[token] - m - std::log(sum);
}

int32_t argmax(const float *row, int64_t n) { return (int32_t)(std::max_element(row, row + n) - row); }

// Prefills prompt[from..] of sequences `seqs` in one batch (each has `from` positions, cached
// or not), then decodes n tokens greedily for all of them together.
std::vector<Greedy> generate(InferenceContext &ctx, const std::vector<int32_t> &prompt, const std::vector<int> &seqs,
                             const std::vector<int64_t> &from, int n) {
    const int64_t V = ctx.model().hparams().n_vocab;
    std::vector<Greedy> out(seqs.size());
    Batch b;
    for (size_t k = 0; k < seqs.size(); ++k)
        for (size_t i = (size_t)from[k]; i < prompt.size(); ++i) b.add(prompt[i], seqs[k], i + 1 == prompt.size());
    std::vector<float> logits = ctx.decode(b);
    for (size_t k = 0; k < seqs.size(); ++k) out[k].first_row.assign(logits.begin() + (long)(k * V), logits.begin() + (long)((k + 1) * V));
    for (int step = 0; step < n; ++step) {
        Batch next;
        for (size_t k = 0; k < seqs.size(); ++k) {
            const float *row = logits.data() + k * (size_t)V;
            const int32_t t = argmax(row, V);
            out[k].tokens.push_back(t);
            out[k].logprobs.push_back(logprob(row, V, t));
            next.add(t, seqs[k], true);
        }
        logits = ctx.decode(next);
    }
    return out;
}

void check_same(const Greedy &cached, const Greedy &fresh, int64_t V) {
    CHECK(cached.tokens == fresh.tokens);
    CHECK(rel_diff(cached.first_row.data(), fresh.first_row.data(), V) < 1e-4);
    REQUIRE(cached.logprobs.size() == fresh.logprobs.size());
    for (size_t i = 0; i < fresh.logprobs.size(); ++i) {
        INFO("token " << i);
        CHECK(std::abs(cached.logprobs[i] - fresh.logprobs[i]) < 1e-4);
    }
}

void check_cached_equals_fresh(const TinySpec &spec, const std::string &file) {
    Loaded l = load(spec, file);
    const int64_t V = spec.n_vocab;
    const std::vector<int32_t> p1 = prompt_with(kQ1), p2 = prompt_with(kQ2);
    InferenceContext fresh(*l.model, *l.rt, params(false));
    const Greedy want = generate(fresh, p2, {0}, {0}, 12)[0];
    CHECK(fresh.map_cached_prefix(0, p2) == 0); // caching off: nothing mapped

    InferenceContext ctx(*l.model, *l.rt, params(true));
    REQUIRE(ctx.map_cached_prefix(0, p1) == 0); // empty cache
    generate(ctx, p1, {0}, {0}, 3);
    ctx.clear_sequence(0);
    // The second request shares the three whole pages of the system prompt.
    const int64_t mapped = ctx.map_cached_prefix(1, p2);
    REQUIRE(mapped == 48);
    CHECK(ctx.seq_length(1) == 48);
    check_same(generate(ctx, p2, {1}, {mapped}, 12)[0], want, V);
    const PrefixCacheStats &st = ctx.cache().pages().prefix_stats();
    CHECK(st.lookups == 2);
    CHECK(st.hits == 1);
    CHECK(st.cached_tokens == 48);
}

} // namespace

TEST_CASE("a cached prefix gives the tokens and logprobs of an uncached prompt", "[prefix]") {
    check_cached_equals_fresh(TinySpec{}, "prefix_llama.gguf");
    TinySpec gemma;
    gemma.arch = "gemma2";
    gemma.sliding_window = 20; // layer 0 local: the window reaches back into cached pages
    gemma.attn_softcap = 50.0f;
    gemma.final_softcap = 30.0f;
    check_cached_equals_fresh(gemma, "prefix_gemma2.gguf");
}

TEST_CASE("sequences share cached pages in one batch, and the whole prompt may be cached", "[prefix]") {
    Loaded l = load(TinySpec{}, "prefix_shared.gguf");
    const int64_t V = 97;
    const std::vector<int32_t> p = prompt_with({}); // 52 tokens
    InferenceContext fresh(*l.model, *l.rt, params(false, 1));
    const Greedy want = generate(fresh, p, {0}, {0}, 10)[0];

    InferenceContext ctx(*l.model, *l.rt, params(true, 3));
    generate(ctx, p, {0}, {0}, 1); // sequence 0 keeps running beside the others
    const int64_t m1 = ctx.map_cached_prefix(1, p), m2 = ctx.map_cached_prefix(2, p);
    REQUIRE(m1 == 48);
    REQUIRE(m2 == 48);
    CHECK(ctx.cache().pages().pages(1) == ctx.cache().pages().pages(2));
    const std::vector<Greedy> both = generate(ctx, p, {1, 2}, {m1, m2}, 10);
    check_same(both[0], want, V);
    check_same(both[1], want, V);
    // Three pages shared by three sequences, held once.
    const KvPoolStats st = ctx.cache().pages().stats();
    CHECK(st.slots_filled == st.tokens - 2 * 48);

    // A prompt of exactly three pages: the last token is computed (its logits are needed).
    const std::vector<int32_t> exact(p.begin(), p.begin() + 48);
    ctx.clear_sequence(1);
    CHECK(ctx.map_cached_prefix(1, exact) == 32);
    InferenceContext fresh2(*l.model, *l.rt, params(false, 1));
    check_same(generate(ctx, exact, {1}, {32}, 4)[0], generate(fresh2, exact, {0}, {0}, 4)[0], V);
}

TEST_CASE("cutting inside a shared cached page copies it first", "[prefix]") {
    Loaded l = load(TinySpec{}, "prefix_cut.gguf");
    const int64_t V = 97;
    const std::vector<int32_t> p = prompt_with(kQ1);
    InferenceContext ctx(*l.model, *l.rt, params(true));
    const Greedy first = generate(ctx, p, {0}, {0}, 0)[0];
    REQUIRE(ctx.map_cached_prefix(1, p) == 48);
    // Sequence 1 goes back to position 40 (inside the shared third page) and continues with
    // other tokens; sequence 0, which shares the page, must not see them.
    ctx.cache().truncate(1, 40);
    CHECK_FALSE(ctx.cache().pages().page_cached(1, 2));
    CHECK(ctx.cache().pages().pages(0)[2] != ctx.cache().pages().pages(1)[2]);
    std::vector<int32_t> other(p.begin(), p.begin() + 40);
    other.insert(other.end(), {3, 1, 4, 1, 5});
    InferenceContext fresh(*l.model, *l.rt, params(false, 1));
    check_same(generate(ctx, other, {1}, {40}, 6)[0], generate(fresh, other, {0}, {0}, 6)[0], V);
    // Sequence 0's next token still sees its own prompt.
    InferenceContext fresh0(*l.model, *l.rt, params(false, 1));
    const Greedy want0 = generate(fresh0, p, {0}, {0}, 1)[0];
    Batch b;
    b.add(want0.tokens[0], 0, true);
    const std::vector<float> &row = ctx.decode(b);
    InferenceContext fresh1(*l.model, *l.rt, params(false, 1));
    std::vector<int32_t> p_next = p;
    p_next.push_back(want0.tokens[0]);
    const Greedy want1 = generate(fresh1, p_next, {0}, {0}, 0)[0];
    CHECK(rel_diff(row.data(), want1.first_row.data(), V) < 1e-4);
    CHECK(rel_diff(first.first_row.data(), want0.first_row.data(), V) < 1e-4);
}

TEST_CASE("an encoder refuses prefix caching", "[prefix]") {
    // Bidirectional attention: a position's K/V depend on the tokens after it.
    const std::string path = temp_path("prefix_bert.gguf");
    write_tiny_encoder(path, TinyEncoderSpec{});
    std::unique_ptr<Runtime> rt = cpu_runtime();
    std::unique_ptr<Model> model = Model::load(path, *rt);
    CHECK_THROWS_WITH(InferenceContext(*model, *rt, params(true)), Catch::Contains("prefix caching needs a causal model"));
    CHECK_NOTHROW(InferenceContext(*model, *rt, params(false)));
}
