// bench's speculative-decoding row: greedy generation of n tokens from a real prompt, with and
// without the drafter, timed over repetitions: acceptance rate, tokens/s and the speedup.
#pragma once
#include <cstdint>
#include <string>

#include "common_args.h"
#include "draft_args.h"

namespace rf {

struct SpeculativeBenchResult {
    std::string drafter;           // "ngram 3", "model M"
    int64_t n_gen = 0;
    double acceptance = 0;         // accepted / drafted, all repetitions
    double tokens_per_step = 0;    // generated tokens per target step (after the first token)
    double ts = 0, ts_plain = 0;   // mean tokens/s with and without drafting
    bool same_tokens = true;       // the drafted run's text equals the plain one's (greedy)
};

// Runs reps (after a warm-up) of both; the model's context holds the prompt + n_gen.
SpeculativeBenchResult bench_speculative(LoadedModel &lm, const ModelArgs &margs, const DraftArgs &draft,
                                         const std::string &prompt, int64_t n_gen, int64_t reps);

// The markdown table of one result (stdout).
void print_speculative_md(const SpeculativeBenchResult &r);

} // namespace rf
