// The sampler's constraints: logit_bias (OpenAI's: added to the logit, -100 bans) and a token
// mask (a grammar's allowed tokens), under every chain: greedy, top-k, top-p, min-p, the whole
// vocabulary. A banned or masked token is never drawn, whatever the seed.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/sampler.h"

using namespace rf;

namespace {

const std::vector<float> kLogits = {0.5f, 2.0f, -1.0f, 3.5f, 3.0f, 0.0f, 1.0f, -2.0f};

std::vector<SamplerParams> chains() {
    std::vector<SamplerParams> out;
    SamplerParams greedy;
    greedy.temperature = 0;
    out.push_back(greedy);
    SamplerParams def; // top-k 40, top-p 0.95, min-p 0.05
    out.push_back(def);
    SamplerParams whole;
    whole.temperature = 1.5f, whole.top_k = 0, whole.top_p = 1.0f, whole.min_p = 0;
    out.push_back(whole);
    SamplerParams topk = whole;
    topk.top_k = 3;
    out.push_back(topk);
    SamplerParams topp = whole;
    topp.top_p = 0.5f;
    out.push_back(topp);
    SamplerParams pen = whole; // a penalty beside the constraint
    pen.repeat_penalty = 1.3f;
    out.push_back(pen);
    return out;
}

} // namespace

TEST_CASE("logit_bias: -100 bans a token under every chain and seed", "[sampler]") {
    for (SamplerParams p : chains()) {
        p.logit_bias = {{3, -100.0f}, {4, -100.0f}};
        for (uint32_t seed = 0; seed < 200; ++seed) {
            p.seed = seed;
            Sampler s(p);
            s.accept(1);
            const int32_t t = s.sample(kLogits.data(), (int64_t)kLogits.size());
            CHECK(t != 3);
            CHECK(t != 4);
        }
    }
}

TEST_CASE("logit_bias: a positive bias makes a token the greedy pick; ids beyond the row are ignored", "[sampler]") {
    SamplerParams p;
    p.temperature = 0;
    p.logit_bias = {{7, 6.0f}, {100, 50.0f}};
    Sampler s(p);
    CHECK(s.sample(kLogits.data(), (int64_t)kLogits.size()) == 7);
    p.logit_bias = {{7, 5.0f}}; // -2 + 5 = 3 < 3.5
    Sampler t(p);
    CHECK(t.sample(kLogits.data(), (int64_t)kLogits.size()) == 3);
}

TEST_CASE("logit_bias needs whole rows: no device candidates", "[sampler]") {
    SamplerParams p;
    p.temperature = 0;
    CHECK(candidates_needed(p, 8) == 1);
    p.logit_bias = {{1, 1.0f}};
    CHECK(candidates_needed(p, 8) == 0);
}

TEST_CASE("a token mask: only allowed tokens are drawn, even the least likely alone", "[sampler]") {
    const std::vector<std::vector<int32_t>> masks = {{7}, {2, 7}, {0, 1, 5}, {3, 4, 6}};
    for (SamplerParams p : chains())
        for (const auto &allowed : masks) {
            uint64_t bits = 0;
            for (int32_t id : allowed) bits |= 1ull << id;
            for (uint32_t seed = 0; seed < 100; ++seed) {
                p.seed = seed;
                Sampler s(p);
                s.accept(7);
                s.set_allowed(&bits);
                const int32_t t = s.sample(kLogits.data(), (int64_t)kLogits.size());
                CHECK(((bits >> t) & 1) == 1);
            }
        }
}

TEST_CASE("a token mask: greedy picks the best allowed token; the mask can be lifted", "[sampler]") {
    SamplerParams p;
    p.temperature = 0;
    Sampler s(p);
    const uint64_t bits = (1ull << 0) | (1ull << 6);
    s.set_allowed(&bits);
    CHECK(s.sample(kLogits.data(), (int64_t)kLogits.size()) == 6);
    s.set_allowed(nullptr);
    CHECK(s.sample(kLogits.data(), (int64_t)kLogits.size()) == 3);
}

TEST_CASE("a token mask refuses candidates-only rows", "[sampler]") {
    SamplerParams p;
    p.temperature = 0;
    Sampler s(p);
    const uint64_t bits = 1;
    s.set_allowed(&bits);
    Candidates c;
    c.k = 1;
    c.ids = {3};
    c.logits = {3.5f};
    CHECK_THROWS_AS(s.sample_row({}, c, 0, 8), Error);
}

TEST_CASE("a token mask over several words: whole words allowed, whole words refused, mixed", "[sampler]") {
    std::vector<float> logits(200);
    for (size_t i = 0; i < logits.size(); ++i) logits[i] = (float)((i * 37) % 11) * 0.3f;
    std::vector<uint64_t> bits(4, 0);
    bits[0] = 1ull << 5;   // mixed
    bits[1] = ~0ull;       // 64..127 all allowed
    bits[2] = 0;           // 128..191 none
    bits[3] = 1ull << 6;   // 198 (the last word is partial)
    for (SamplerParams p : chains())
        for (uint32_t seed = 0; seed < 100; ++seed) {
            p.seed = seed;
            Sampler s(p);
            s.set_allowed(bits.data());
            const int32_t t = s.sample(logits.data(), (int64_t)logits.size());
            CHECK((t == 5 || (t >= 64 && t < 128) || t == 198));
        }
}
