// Decode helpers the model tests share: a prompt as one batch or token by token, and the
// row-by-row comparison of two logit blocks.
#pragma once
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "rocmforge/inference.h"
#include "tiny_model.h"

namespace rf_test {

// Logits of every token of `tokens` decoded as one batch of sequence `seq`.
inline std::vector<float> prefill(rf::InferenceContext &ctx, const std::vector<int32_t> &tokens, int seq = 0) {
    rf::Batch b;
    for (int32_t t : tokens) b.add(t, seq, true);
    return ctx.decode(b);
}

// The same, one token a batch: the logits of each step, concatenated.
inline std::vector<float> one_by_one(rf::InferenceContext &ctx, const std::vector<int32_t> &tokens, int seq = 0) {
    std::vector<float> all;
    for (int32_t t : tokens) {
        rf::Batch b;
        b.add(t, seq, true);
        const auto &l = ctx.decode(b);
        all.insert(all.end(), l.begin(), l.end());
    }
    return all;
}

// Each row of n_vocab logits of a within tol (rel_diff) of b's.
inline void check_rows_close(const std::vector<float> &a, const std::vector<float> &b, int64_t n_vocab, double tol) {
    REQUIRE(a.size() == b.size());
    for (size_t r = 0; r < a.size() / (size_t)n_vocab; ++r) {
        INFO("row " << r);
        CHECK(rel_diff(a.data() + r * n_vocab, b.data() + r * n_vocab, n_vocab) < tol);
    }
}

} // namespace rf_test
