#include "token_logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rf::serve {

TokenLogprob token_logprob(const float *logits, int64_t n_vocab, int32_t chosen, int top_n, const Tokenizer &tok) {
    const auto finite = [&](int64_t i) { return std::isfinite(logits[i]); };
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n_vocab; ++i)
        if (finite(i)) max = std::max(max, logits[i]);
    double sum = 0;
    for (int64_t i = 0; i < n_vocab; ++i)
        if (finite(i)) sum += std::exp((double)logits[i] - max);
    const double lse = (double)max + std::log(sum);
    const auto logprob = [&](int64_t i) {
        return finite(i) ? (float)((double)logits[i] - lse) : -std::numeric_limits<float>::infinity();
    };

    // The top_n ids by logit, kept sorted (top_n is small: at most 20).
    std::vector<int32_t> best;
    const auto before = [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
    for (int64_t i = 0; i < n_vocab && top_n > 0; ++i) {
        if (!finite(i)) continue;
        if ((int)best.size() == top_n && !before((int32_t)i, best.back())) continue;
        best.insert(std::upper_bound(best.begin(), best.end(), (int32_t)i, before), (int32_t)i);
        if ((int)best.size() > top_n) best.pop_back();
    }
    TokenLogprob out;
    out.token = tok.token_to_piece(chosen, /*special=*/true);
    out.logprob = logprob(chosen);
    for (int32_t id : best) out.top.emplace_back(tok.token_to_piece(id, true), logprob(id));
    return out;
}

} // namespace rf::serve
