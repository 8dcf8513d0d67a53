// Prompt-lookup drafting (Saxena 2023): text that copies from its input (code edits, summaries,
// quotes, repetitive output) continues as it did after the last time its latest words appeared.
#include <algorithm>

#include "rocmforge/speculative.h"

namespace rf {

std::vector<int32_t> ngram_draft(std::span<const int32_t> history, int max_n, int max_tokens) {
    const int64_t L = (int64_t)history.size();
    if (max_tokens <= 0) return {};
    for (int64_t n = std::min<int64_t>(max_n, L - 1); n >= 1; --n) {
        const int32_t *tail = history.data() + (L - n);
        // Latest first: recent text predicts the next tokens best.
        for (int64_t i = L - n - 1; i >= 0; --i) {
            if (!std::equal(tail, tail + n, history.data() + i)) continue;
            const int64_t from = i + n, to = std::min<int64_t>(L, from + max_tokens);
            return std::vector<int32_t>(history.begin() + from, history.begin() + to);
        }
    }
    return {};
}

} // namespace rf
