#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "rocmforge/sampler.h"

using namespace rf;

namespace {

std::vector<TokenProb> from_probs(const std::vector<float> &p) {
    std::vector<TokenProb> c;
    for (size_t i = 0; i < p.size(); ++i) c.push_back({(int32_t)i, std::log(p[i]), 0.0f});
    return c;
}

std::set<int32_t> ids(const std::vector<TokenProb> &c) {
    std::set<int32_t> s;
    for (const auto &t : c) s.insert(t.id);
    return s;
}

const std::vector<float> kLogits = {0.5f, 2.0f, -1.0f, 3.5f, 3.0f, 0.0f, 1.0f, -2.0f};

// Sampling at `temperature` over the whole vocabulary: no top-k, top-p or min-p cut.
SamplerParams whole_vocabulary(float temperature) {
    SamplerParams p;
    p.temperature = temperature;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    return p;
}

} // namespace

TEST_CASE("greedy sampling is the argmax", "[sampler]") {
    SamplerParams p;
    p.temperature = 0.0f;
    Sampler s(p);
    CHECK(s.sample(kLogits.data(), (int64_t)kLogits.size()) == 3);
    std::vector<float> ties = {1.0f, 5.0f, 5.0f};
    CHECK(s.sample(ties.data(), 3) == 1); // first index on ties
}

TEST_CASE("top-k = 1 equals greedy whatever the seed", "[sampler]") {
    for (uint32_t seed : {1u, 2u, 3u, 99u}) {
        SamplerParams p;
        p.temperature = 1.5f;
        p.top_k = 1;
        p.seed = seed;
        Sampler s(p);
        for (int i = 0; i < 10; ++i) CHECK(s.sample(kLogits.data(), (int64_t)kLogits.size()) == 3);
    }
}

TEST_CASE("same seed gives the same tokens, another seed differs", "[sampler]") {
    SamplerParams p = whole_vocabulary(1.0f);
    std::vector<float> flat(50, 0.0f); // uniform: any token possible
    auto run = [&](uint32_t seed) {
        p.seed = seed;
        Sampler s(p);
        std::vector<int32_t> out;
        for (int i = 0; i < 40; ++i) out.push_back(s.sample(flat.data(), 50));
        return out;
    };
    CHECK(run(42) == run(42));
    CHECK(run(42) != run(43));
    std::set<int32_t> distinct;
    for (auto t : run(7)) distinct.insert(t);
    CHECK(distinct.size() > 10); // really random over a flat distribution
}

TEST_CASE("top-p keeps the smallest prefix reaching p", "[sampler]") {
    auto c = from_probs({0.1f, 0.4f, 0.05f, 0.3f, 0.15f});
    top_p_filter(c, 0.7f); // 0.4 + 0.3 = 0.7
    CHECK(ids(c) == std::set<int32_t>{1, 3});
    c = from_probs({0.1f, 0.4f, 0.05f, 0.3f, 0.15f});
    top_p_filter(c, 0.71f); // needs the 0.15 too
    CHECK(ids(c) == std::set<int32_t>{1, 3, 4});
    c = from_probs({0.1f, 0.4f, 0.05f, 0.3f, 0.15f});
    top_p_filter(c, 0.1f); // never empty
    CHECK(ids(c) == std::set<int32_t>{1});
    c = from_probs({0.1f, 0.4f, 0.05f, 0.3f, 0.15f});
    top_p_filter(c, 1.0f); // off
    CHECK(c.size() == 5);
}

TEST_CASE("min-p keeps tokens with p >= min_p * p_max", "[sampler]") {
    auto c = from_probs({0.1f, 0.4f, 0.05f, 0.3f, 0.15f});
    min_p_filter(c, 0.3f); // threshold 0.12
    CHECK(ids(c) == std::set<int32_t>{1, 3, 4});
    c = from_probs({0.1f, 0.4f, 0.05f, 0.3f, 0.15f});
    min_p_filter(c, 0.2f); // threshold 0.08
    CHECK(ids(c) == std::set<int32_t>{0, 1, 3, 4});
}

TEST_CASE("top-k keeps the k largest logits", "[sampler]") {
    std::vector<TokenProb> c;
    for (size_t i = 0; i < kLogits.size(); ++i) c.push_back({(int32_t)i, kLogits[i], 0});
    top_k_filter(c, 3);
    CHECK(ids(c) == std::set<int32_t>{1, 3, 4});
}

TEST_CASE("chain: filters then temperature, probabilities renormalized", "[sampler]") {
    SamplerParams p = whole_vocabulary(0.5f);
    p.top_k = 3;
    Sampler s(p);
    auto c = s.filtered(kLogits.data(), (int64_t)kLogits.size());
    REQUIRE(c.size() == 3);
    CHECK(c[0].id == 3);
    // p ∝ exp(logit / T) over {3.5, 3.0, 2.0}
    const double z = std::exp(3.5 / 0.5) + std::exp(3.0 / 0.5) + std::exp(2.0 / 0.5);
    CHECK(c[0].p == Approx(std::exp(3.5 / 0.5) / z).epsilon(1e-5));
    CHECK(c[2].p == Approx(std::exp(2.0 / 0.5) / z).epsilon(1e-5));
    // The draws follow the distribution: token 3 dominates.
    int n3 = 0;
    for (int i = 0; i < 2000; ++i) n3 += s.sample(kLogits.data(), (int64_t)kLogits.size()) == 3;
    CHECK(n3 > 1300);
    CHECK(n3 < 1900);
}

TEST_CASE("repetition penalty pushes recent tokens down as llama.cpp", "[sampler]") {
    SamplerParams p;
    p.temperature = 0.0f;
    p.repeat_penalty = 2.0f;
    p.repeat_last_n = 2;
    Sampler s(p);
    s.accept(3); // 3.5 -> 1.75
    CHECK(s.sample(kLogits.data(), (int64_t)kLogits.size()) == 4);
    s.accept(4); // 3.0 -> 1.5; now 2.0 (token 1) wins
    CHECK(s.sample(kLogits.data(), (int64_t)kLogits.size()) == 1);
    s.accept(5); // 3 leaves the window of 2
    CHECK(s.sample(kLogits.data(), (int64_t)kLogits.size()) == 3);
    // Negative logits are multiplied: -1 becomes -2.
    std::vector<float> neg = {-1.0f, -1.5f};
    Sampler s2(p);
    s2.accept(0);
    CHECK(s2.sample(neg.data(), 2) == 1);
}

TEST_CASE("frequency and presence penalties subtract per occurrence and once, after the repetition penalty", "[sampler]") {
    // kLogits = {0.5, 2.0, -1.0, 3.5, 3.0, 0.0, 1.0, -2.0}
    SamplerParams p = whole_vocabulary(1.0f);
    p.repeat_penalty = 2.0f;
    p.frequency_penalty = 0.25f;
    p.presence_penalty = 0.5f;
    p.repeat_last_n = 4;
    Sampler s(p);
    for (int32_t t : {3, 3, 2, 7, 3}) s.accept(t); // the last 4: 3, 2, 7, 3
    const std::vector<TokenProb> c = s.filtered(kLogits.data(), (int64_t)kLogits.size());
    auto logit_of = [&](int32_t id) {
        for (const TokenProb &t : c)
            if (t.id == id) return (double)t.logit;
        FAIL("token " << id << " missing");
        return 0.0;
    };
    CHECK(logit_of(3) == Approx(3.5 / 2 - 2 * 0.25 - 0.5)); // seen twice in the window
    CHECK(logit_of(2) == Approx(-1.0 * 2 - 0.25 - 0.5));
    CHECK(logit_of(7) == Approx(-2.0 * 2 - 0.25 - 0.5));
    CHECK(logit_of(4) == Approx(3.0)); // not in the window
    CHECK(logit_of(0) == Approx(0.5));
    // Greedy with only the presence penalty: 3.5 - 1 < 3.0.
    SamplerParams g;
    g.temperature = 0.0f;
    g.presence_penalty = 1.0f;
    Sampler sg(g);
    CHECK(sg.sample(kLogits.data(), (int64_t)kLogits.size()) == 3); // no history: no penalty
    sg.accept(3);
    CHECK(sg.sample(kLogits.data(), (int64_t)kLogits.size()) == 4);
    CHECK(candidates_needed(g, 8) == 0);
    g.repeat_last_n = 0;
    CHECK(candidates_needed(g, 8) == 1);
}

TEST_CASE("whole-vocabulary draws (no top-k, top-p, min-p) follow softmax(logits / T)", "[sampler]") {
    SamplerParams p = whole_vocabulary(0.5f);
    p.seed = 11;
    Sampler s(p);
    // p(1) / p(0) = exp((ln 3 / 2) / 0.5) = 3; token 2 can never be drawn.
    const std::vector<float> logits = {0.0f, 0.5f * std::log(3.0f), -INFINITY};
    int n1 = 0;
    for (int i = 0; i < 4000; ++i) {
        const int32_t t = s.sample(logits.data(), 3);
        REQUIRE(t != 2);
        n1 += t == 1;
    }
    CHECK(n1 > 2850);
    CHECK(n1 < 3150);
}

TEST_CASE("top-k of the whole vocabulary equals a partial sort of it, ties and all", "[sampler]") {
    // The reference: every logit a candidate, the k best by (logit descending, id ascending).
    auto reference = [](const std::vector<float> &l, int32_t k) {
        std::vector<TokenProb> c;
        for (size_t i = 0; i < l.size(); ++i) c.push_back({(int32_t)i, l[i], 0.0f});
        top_k_filter(c, k);
        std::sort(c.begin(), c.end(), [](const TokenProb &a, const TokenProb &b) {
            return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
        });
        return c;
    };
    std::mt19937 g(7);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::uniform_int_distribution<int> level(0, 9);
    const float inf = std::numeric_limits<float>::infinity();
    for (int64_t n : {32000, 1000, 1031, 40 * 32, 300, 45}) {
        for (int shape = 0; shape < 6; ++shape) {
            std::vector<float> l((size_t)n);
            for (int64_t i = 0; i < n; ++i) {
                switch (shape) {
                case 0: l[(size_t)i] = normal(g); break;                 // random
                case 1: l[(size_t)i] = (float)level(g); break;           // ten values: ties everywhere
                case 2: l[(size_t)i] = (float)i * 1e-3f; break;          // ascending: every logit a new leader
                case 3: l[(size_t)i] = -(float)i; break;                 // descending
                case 4: l[(size_t)i] = i % 7 == 0 ? normal(g) : -inf; break; // masked tokens
                default: l[(size_t)i] = 1.0f; break;                     // all equal
                }
            }
            for (int32_t k : {1, 40, 97}) {
                if (k >= n) continue;
                SamplerParams p = whole_vocabulary(1.0f);
                p.top_k = k;
                Sampler s(p);
                const std::vector<TokenProb> got = s.filtered(l.data(), n), want = reference(l, k);
                INFO("n " << n << " shape " << shape << " k " << k);
                REQUIRE(got.size() == want.size());
                for (size_t i = 0; i < got.size(); ++i) {
                    CHECK(got[i].id == want[i].id);
                    CHECK(got[i].logit == want[i].logit);
                }
            }
        }
    }
}

TEST_CASE("candidates: sample_candidates on a row's k best draws what sample() draws on the row", "[sampler]") {
    // The k best as TOPK returns them: logit descending, equal logits by ascending id.
    auto best = [](const std::vector<float> &l, int64_t k, std::vector<int32_t> &ids, std::vector<float> &vals) {
        std::vector<int32_t> order(l.size());
        for (size_t i = 0; i < l.size(); ++i) order[i] = (int32_t)i;
        std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return l[(size_t)a] > l[(size_t)b]; });
        ids.assign(order.begin(), order.begin() + k);
        vals.clear();
        for (int32_t id : ids) vals.push_back(l[(size_t)id]);
    };
    std::mt19937 g(11);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::uniform_int_distribution<int> level(0, 5);
    const int64_t n = 5000;
    struct Chain { float temp; int32_t top_k; float top_p, min_p; };
    const Chain chains[] = {{0.0f, 40, 0.95f, 0.05f}, {0.8f, 40, 0.95f, 0.05f}, {1.0f, 1, 1.0f, 0.0f},
                            {1.5f, 64, 1.0f, 0.0f},  {0.7f, 20, 0.5f, 0.2f},   {0.0f, 0, 1.0f, 0.0f}};
    for (const Chain &ch : chains)
        for (int shape = 0; shape < 2; ++shape) {
            SamplerParams p;
            p.temperature = ch.temp, p.top_k = ch.top_k, p.top_p = ch.top_p, p.min_p = ch.min_p, p.seed = 5;
            const int64_t need = candidates_needed(p, n);
            REQUIRE(need == (ch.temp <= 0.0f ? 1 : ch.top_k));
            const int64_t k = need + 3; // the context may return more than this sampler needs
            Sampler whole(p), cands(p);
            std::vector<int32_t> ids;
            std::vector<float> vals;
            for (int step = 0; step < 200; ++step) {
                std::vector<float> l((size_t)n);
                for (float &f : l) f = shape == 0 ? normal(g) : (float)level(g); // shape 1: ties
                best(l, k, ids, vals);
                INFO("temp " << ch.temp << " top_k " << ch.top_k << " shape " << shape << " step " << step);
                REQUIRE(cands.sample_candidates(ids.data(), vals.data(), k) == whole.sample(l.data(), n));
            }
        }
}

TEST_CASE("candidates: chains that need the whole row ask for it", "[sampler]") {
    SamplerParams p;
    CHECK(candidates_needed(p, 32000) == 40); // the default chain
    p.repeat_penalty = 1.1f;
    CHECK(candidates_needed(p, 32000) == 0); // a penalty can move tokens outside the k in
    p.repeat_last_n = 0;
    CHECK(candidates_needed(p, 32000) == 40); // ... unless it has no history to act on
    p = whole_vocabulary(0.8f);
    CHECK(candidates_needed(p, 32000) == 0);
    p.top_k = 32000;
    CHECK(candidates_needed(p, 32000) == 0); // top-k of the whole vocabulary: no truncation
    p.temperature = 0.0f;
    CHECK(candidates_needed(p, 32000) == 1);
}
