// Speculative decoding (core/session/speculative*.cpp) on the CPU backend with the trained
// default model as the target: greedy output with a draft model (the target itself: every draft
// accepted; a random-weight model of the same vocabulary: few accepted) and with prompt lookup is
// the output without drafting, token for token, for several sequences at once; the acceptance
// rule gives the target's distribution (checked exactly from constructed p and q); a draft model
// of another vocabulary is refused.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/generation.h"
#include "rocmforge/model_writer.h"
#include "rocmforge/runtime.h"
#include "rocmforge/session.h"
#include "rocmforge/speculative.h"
#include "tiny_model.h"

using namespace rf;

namespace {

Config cpu_config() {
    Config c;
    c.backends = {"cpu"};
    c.backends_explicit = true;
    if (const char *root = std::getenv("ROCMFORGE_BUILD_ROOT")) c.plugin_dirs.push_back(std::string(root) + "/backends/cpu");
    c.n_threads = 2;
    return c;
}

const char *default_model_path() {
    const char *p = std::getenv("RF_TEST_MODEL");
    REQUIRE(p);
    return p;
}

Session &target() {
    static Session s = Session::load(default_model_path(), cpu_config());
    return s;
}

// A random-weight llama ("tiny" shape) with the default model's vocabulary, or another one.
std::string random_model(const std::string &name, const std::string &vocab, uint64_t seed) {
    const std::string path = rf_test::temp_path(name);
    MakeModelOptions o;
    o.shape = "tiny";
    o.mix = QuantMix::F16;
    o.vocab_path = vocab;
    o.output_path = path;
    o.seed = seed;
    o.n_threads = 2;
    o.n_ctx = 512;
    make_model(o);
    return path;
}

ContextParams context(int n_seq) {
    ContextParams cp;
    cp.n_ctx = 512 * n_seq;
    cp.n_seq_max = n_seq;
    return cp;
}

struct Run {
    std::vector<std::string> text;
    GenerationStats stats;
};

Run run(const std::vector<std::string> &prompts, const GenerationParams &gp) {
    Session &s = target();
    const auto ctx = s.new_context(context((int)prompts.size()));
    Run r;
    r.text.resize(prompts.size());
    GenerationCallbacks cb;
    cb.on_text = [&](int seq, const std::string &t) { r.text[(size_t)seq] += t; };
    r.stats = generate(*ctx, *s.tokenizer, prompts, gp, cb);
    return r;
}

GenerationParams greedy(int64_t n) {
    GenerationParams gp;
    gp.sampling.temperature = 0.0f;
    gp.n_predict = n;
    gp.ignore_eos = true;
    return gp;
}

const std::vector<std::string> kPrompts = {"And God said", "In the beginning", "The LORD is my shepherd; I shall not want."};

} // namespace

TEST_CASE("speculative: a draft model gives the greedy tokens of decoding without it", "[speculative]") {
    const Run plain = run(kPrompts, greedy(48));
    for (const std::string &t : plain.text) REQUIRE(!t.empty());

    SECTION("the target as its own draft: every draft accepted") {
        Session &s = target();
        const auto draft_ctx = s.new_context(context((int)kPrompts.size()));
        GenerationParams gp = greedy(48);
        gp.speculative.drafter = SpeculativeParams::Drafter::model;
        gp.speculative.draft_context = draft_ctx.get();
        gp.speculative.draft_max = 6;
        const Run spec = run(kPrompts, gp);
        CHECK(spec.text == plain.text);
        CHECK(spec.stats.n_generated == plain.stats.n_generated);
        CHECK(spec.stats.speculative.drafted > 0);
        CHECK(spec.stats.speculative.accepted == spec.stats.speculative.drafted);
        // Full acceptance grows the length: far fewer target steps than tokens.
        CHECK(spec.stats.speculative.steps * 3 < plain.stats.n_generated);
    }
    SECTION("a random-weight draft of the same vocabulary: few accepted, the same tokens") {
        std::unique_ptr<Model> m = Model::load(random_model("spec_draft_random.gguf", default_model_path(), 99), *target().runtime);
        InferenceContext draft_ctx(*m, *target().runtime, context((int)kPrompts.size()));
        GenerationParams gp = greedy(48);
        gp.speculative.drafter = SpeculativeParams::Drafter::model;
        gp.speculative.draft_context = &draft_ctx;
        const Run spec = run(kPrompts, gp);
        CHECK(spec.text == plain.text);
        CHECK(spec.stats.speculative.drafted > 0);
        CHECK(spec.stats.speculative.acceptance_rate() < 0.5);
    }
}

TEST_CASE("speculative: prompt lookup on a repetitive prompt, same greedy tokens", "[speculative]") {
    // Greedy decoding of the default model loops ("and my God, and my God, ..."): prompt lookup
    // drafts the loop and has most of it accepted.
    const std::vector<std::string> prompts = {"And God said unto him, Thou art my God, and my God, and my God,", "And God said"};
    const Run plain = run(prompts, greedy(64));
    GenerationParams gp = greedy(64);
    gp.speculative.drafter = SpeculativeParams::Drafter::ngram;
    gp.speculative.ngram = 3;
    gp.speculative.draft_max = 8;
    const Run spec = run(prompts, gp);
    CHECK(spec.text == plain.text);
    CHECK(spec.stats.speculative.acceptance_rate() > 0.6);
    CHECK(spec.stats.speculative.steps < 64);
}

TEST_CASE("speculative: a draft model of another vocabulary is refused", "[speculative]") {
    const char *data = std::getenv("RF_TEST_DATA");
    REQUIRE(data);
    const std::string other = random_model("spec_draft_spm.gguf", std::string(data) + "/vocab/ggml-vocab-llama-spm.gguf", 5);
    std::unique_ptr<Model> m = Model::load(other, *target().runtime);
    const std::unique_ptr<Tokenizer> tok = Tokenizer::from_gguf(m->file());
    CHECK_THROWS_AS(check_same_vocabulary(*target().tokenizer, *tok, other), UsageError);
    CHECK_THROWS_WITH(check_same_vocabulary(*target().tokenizer, *tok, other), Catch::Contains("vocabulary"));
    CHECK_NOTHROW(check_same_vocabulary(*target().tokenizer, *target().tokenizer, "self"));
}

TEST_CASE("speculative: a grammar does not combine with drafting", "[speculative]") {
    GenerationParams gp = greedy(4);
    gp.speculative.drafter = SpeculativeParams::Drafter::ngram;
    gp.grammar = std::make_shared<grammar::TokenGrammar>(grammar::Grammar::parse("root ::= \"a\""),
                                                         std::make_shared<grammar::TokenTrie>(*target().tokenizer));
    CHECK_THROWS_AS(run({"x"}, gp), UsageError);
}

namespace {

std::vector<TokenProb> dist(const std::vector<std::pair<int32_t, double>> &v) {
    std::vector<TokenProb> d;
    for (auto [id, p] : v) d.push_back({id, 0.0f, (float)p});
    return d;
}

// The distribution of the token a speculative step emits first, from n trials: the draft drawn
// from q (or the point mass `point`), then accepted or resampled against p.
std::map<int32_t, double> emitted(const std::vector<TokenProb> &p, const std::vector<TokenProb> &q, int32_t point, int n) {
    std::mt19937 rng(7);
    std::map<int32_t, double> f;
    for (int i = 0; i < n; ++i) {
        const int32_t x = q.empty() ? point : draw_token(q, rng);
        f[accept_or_resample(p, q, x, rng).token] += 1.0 / n;
    }
    return f;
}

// Largest |frequency - probability| over p's support; and nothing outside it.
double worst_gap(const std::map<int32_t, double> &f, const std::vector<TokenProb> &p) {
    double worst = 0, in_support = 0;
    for (const TokenProb &t : p) {
        const auto it = f.find(t.id);
        const double got = it == f.end() ? 0.0 : it->second;
        in_support += got;
        worst = std::max(worst, std::abs(got - t.p));
    }
    return std::max(worst, std::abs(1.0 - in_support));
}

} // namespace

TEST_CASE("speculative: the acceptance rule keeps the target's distribution", "[speculative]") {
    const int n = 200000; // a frequency's standard error is below 0.0012: 0.006 is five of them
    const std::vector<TokenProb> p = dist({{3, 0.5}, {1, 0.3}, {8, 0.15}, {2, 0.05}});
    SECTION("a draft distribution that differs from p, with tokens p does not have") {
        const std::vector<TokenProb> q = dist({{1, 0.6}, {3, 0.1}, {5, 0.2}, {2, 0.1}});
        CHECK(worst_gap(emitted(p, q, -1, n), p) < 0.006);
    }
    SECTION("q = p: every draft accepted") {
        std::mt19937 rng(1);
        for (int i = 0; i < 1000; ++i) {
            const int32_t x = draw_token(p, rng);
            CHECK(accept_or_resample(p, p, x, rng).accepted);
        }
        CHECK(worst_gap(emitted(p, p, -1, n), p) < 0.006);
    }
    SECTION("prompt lookup's point mass: accepted with probability p(x)") {
        std::mt19937 rng(3);
        int accepted = 0;
        for (int i = 0; i < n; ++i) accepted += accept_or_resample(p, {}, 1, rng).accepted;
        CHECK(std::abs(accepted / (double)n - 0.3) < 0.006);
        CHECK(worst_gap(emitted(p, {}, 1, n), p) < 0.006);
        CHECK(worst_gap(emitted(p, {}, 42, n), p) < 0.006); // a draft outside p: always resampled
    }
    SECTION("greedy: the argmax, without a random number") {
        std::mt19937 rng(5), untouched(5);
        const std::vector<TokenProb> g = dist({{4, 1.0}});
        CHECK(accept_or_resample(g, dist({{4, 1.0}}), 4, rng).accepted);
        const DraftVerdict v = accept_or_resample(g, dist({{6, 1.0}}), 6, rng);
        CHECK_FALSE(v.accepted);
        CHECK(v.token == 4);
        CHECK(rng() == untouched());
    }
}

TEST_CASE("speculative: prompt lookup drafts what followed the latest n-gram", "[speculative]") {
    const std::vector<int32_t> h = {1, 2, 3, 9, 9, 1, 2, 3, 7, 8, 5, 1, 2, 3};
    CHECK(ngram_draft(h, 3, 4) == std::vector<int32_t>{7, 8, 5, 1}); // the latest "1 2 3", not the first
    CHECK(ngram_draft(h, 3, 1) == std::vector<int32_t>{7});
    const std::vector<int32_t> h2 = {4, 5, 6, 7, 6};
    CHECK(ngram_draft(h2, 3, 4) == std::vector<int32_t>{7, 6}); // "7 6" unseen: the 1-gram "6"
    CHECK(ngram_draft(std::vector<int32_t>{1, 2, 3}, 3, 4).empty());
    CHECK(ngram_draft(h, 3, 0).empty());
}

TEST_CASE("speculative: the draft length adapts within [1, max]", "[speculative]") {
    AdaptiveDraftLength a(8);
    CHECK(a.length() == 4);
    for (int i = 0; i < 10; ++i) a.update(a.length(), a.length());
    CHECK(a.length() == 8);
    a.update(8, 2);
    CHECK(a.length() == 7);
    a.update(7, 5); // more than half kept: unchanged
    CHECK(a.length() == 7);
    for (int i = 0; i < 20; ++i) a.update(a.length(), 0);
    CHECK(a.length() == 1);
    a.update(1, 1);
    CHECK(a.length() == 2);
}

TEST_CASE("speculative: verification takes drafts to the first rejection, a bonus after all", "[speculative]") {
    // Drafts 10, 11, 12; the verdicts accept those whose token the target "agrees" with.
    const std::vector<int32_t> draft = {10, 11, 12};
    auto run = [&](const std::vector<int32_t> &target, size_t stop_after) {
        std::vector<int32_t> taken;
        const size_t accepted = verify_drafts(
            draft.size(), [&](size_t i) { return DraftVerdict{target[i] == draft[i], target[i]}; },
            [&](int32_t t) {
                taken.push_back(t);
                return taken.size() < stop_after;
            },
            [&] { return target[draft.size()]; });
        return std::make_pair(accepted, taken);
    };
    const size_t never = 99;
    CHECK(run({10, 11, 12, 13}, never) == std::make_pair(size_t{3}, std::vector<int32_t>{10, 11, 12, 13}));
    CHECK(run({10, 7, 12, 13}, never) == std::make_pair(size_t{1}, std::vector<int32_t>{10, 7}));
    CHECK(run({5, 11, 12, 13}, never) == std::make_pair(size_t{0}, std::vector<int32_t>{5}));
    // The sequence ends at its second token: nothing after it, no bonus.
    CHECK(run({10, 11, 12, 13}, 2) == std::make_pair(size_t{2}, std::vector<int32_t>{10, 11}));
    // Nothing drafted: the bonus is the step's one token.
    std::vector<int32_t> taken;
    CHECK(verify_drafts(0, [](size_t) { return DraftVerdict{}; }, [&](int32_t t) { taken.push_back(t); return true; },
                        [] { return 42; }) == 0);
    CHECK(taken == std::vector<int32_t>{42});
}
