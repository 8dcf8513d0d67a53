// Log probabilities of sampled tokens for the `logprobs` fields: the log-softmax of the model's
// logits row (before temperature and top-p, as OpenAI and vLLM report them), the sampled token's
// value and the N most likely tokens.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "rocmforge/tokenizer.h"
#include "utf8_text.h" // utf8_chars: what text_offset counts

namespace rf::serve {

struct TokenLogprob {
    std::string token; // the token's bytes (control tokens written out); may be part of a character
    float logprob = 0;
    std::vector<std::pair<std::string, float>> top; // the N most likely, most likely first
    int64_t text_offset = 0; // characters of text before this token (see where it is made)
    bool no_logprob = false; // the prompt's first token (echo): nothing predicted it, so null
};

// The entry of token `chosen` from one row of n_vocab logits, with `top_n` alternatives (ties:
// the lower id first). Non-finite logits count as impossible tokens.
TokenLogprob token_logprob(const float *logits, int64_t n_vocab, int32_t chosen, int top_n, const Tokenizer &tok);

} // namespace rf::serve
