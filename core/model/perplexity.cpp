#include "rocmforge/perplexity.h"

#include <algorithm>
#include <cmath>

#include "rocmforge/error.h"

namespace rf {

double token_nll(const float *logits, int64_t n_vocab, int32_t token) {
    if (token < 0 || token >= n_vocab) throw Error("perplexity: token id " + std::to_string(token) + " outside the vocabulary");
    float max_logit = logits[0];
    for (int64_t i = 1; i < n_vocab; ++i) max_logit = std::max(max_logit, logits[i]);
    double sum_exp = 0.0;
    for (int64_t i = 0; i < n_vocab; ++i) sum_exp += std::exp(logits[i] - max_logit); // float exp, as expf
    return -(logits[token] - max_logit - std::log(sum_exp));
}

double PerplexityAccumulator::ppl() const { return std::exp(nll / (double)count); }

double PerplexityAccumulator::ppl_error() const {
    const double mean = nll / (double)count;
    const double var = nll2 / (double)count - mean * mean;
    if (!(var > 0) || count < 2) return -1.0;
    return std::sqrt(var / (double)(count - 1)) * std::exp(mean);
}

void score_perplexity_chunk(InferenceContext &ctx, const std::vector<int32_t> &tokens, int64_t chunk,
                            int64_t n_ctx, int32_t bos, PerplexityAccumulator &acc) {
    const int64_t start = chunk * n_ctx;
    if (n_ctx < 2 || start < 0 || start + n_ctx > (int64_t)tokens.size())
        throw Error("perplexity: chunk " + std::to_string(chunk) + " of " + std::to_string(n_ctx) +
                    " tokens lies outside the " + std::to_string(tokens.size()) + " tokens");
    const int64_t first = n_ctx / 2;
    const int64_t n_vocab = ctx.model().hparams().n_vocab;
    ctx.clear_sequence(0);
    Batch batch;
    for (int64_t j = 0; j < n_ctx; ++j) {
        const int32_t t = (j == 0 && bos >= 0) ? bos : tokens[(size_t)(start + j)];
        // Rows first .. n_ctx-2 predict the scored tokens first+1 .. n_ctx-1.
        batch.add(t, 0, j >= first && j < n_ctx - 1);
    }
    const std::vector<float> &logits = ctx.decode(batch);
    for (int64_t i = 0; i < n_ctx - 1 - first; ++i)
        acc.add(token_nll(logits.data() + (size_t)i * (size_t)n_vocab, n_vocab, tokens[(size_t)(start + first + i + 1)]));
}

} // namespace rf
