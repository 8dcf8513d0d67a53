// Perplexity exactly as llama.cpp's tools/perplexity computes it (perplexity(), process_logits(),
// log_softmax()): chunks of n_ctx tokens, the first token of each replaced by BOS when the vocab
// adds one, only the second half scored; logits in float, the softmax sum in double.
#pragma once
#include <cstdint>
#include <vector>

#include "rocmforge/inference.h"

namespace rf {

// -log p(token) for one row of logits: max in float, sum of expf(l - max) in double.
double token_nll(const float *logits, int64_t n_vocab, int32_t token);

struct PerplexityAccumulator {
    double nll = 0, nll2 = 0;
    int64_t count = 0;

    void add(double v) { nll += v, nll2 += v * v, ++count; }
    double ppl() const; // exp(mean nll)
    // llama.cpp's "+/-": ppl * sqrt((mean(v^2) - mean(v)^2) / (count - 1)); negative when the
    // variance estimate is not positive (llama.cpp then prints "Unexpected negative ...").
    double ppl_error() const;
};

// Runs chunk `chunk` (tokens [chunk*n_ctx, (chunk+1)*n_ctx)) on sequence 0 of a cleared cache
// and adds its n_ctx - 1 - n_ctx/2 scored tokens. bos < 0: the first token is kept as is.
void score_perplexity_chunk(InferenceContext &ctx, const std::vector<int32_t> &tokens, int64_t chunk,
                            int64_t n_ctx, int32_t bos, PerplexityAccumulator &acc);

} // namespace rf
