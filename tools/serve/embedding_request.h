// The body of POST /v1/embeddings checked and turned into token lists: `input` as a string, a
// list of strings, a token array or a list of token arrays; `encoding_format` float | base64;
// `dimensions` (only the model's width: decoder states cannot be truncated); `model`, `user`;
// and `pooling` (mean | cls | last, this server's addition). Every bad field is a 400 naming it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rocmforge/pooling.h"
#include "rocmforge/tokenizer.h"

namespace rf::serve {

struct EmbeddingRequest {
    std::string model;                        // "" when absent
    std::vector<std::vector<int32_t>> inputs; // each input's tokens (text: BOS added as the vocabulary asks)
    bool base64 = false;                      // encoding_format
    std::optional<Pooling> pooling;           // absent: the model's default
    int64_t prompt_tokens = 0;                // all inputs together
};

struct EmbeddingLimits {
    int64_t n_embd = 0;        // the model's width: the only `dimensions` accepted
    int64_t n_vocab = 0;       // token ids must be below it
    int64_t max_tokens = 0;    // most tokens of one input (the embedding context)
    size_t max_inputs = 2048;  // as OpenAI
};

// Throws ApiError (400) for malformed JSON, a missing or empty input, wrong types, a token id
// outside the vocabulary, an input longer than max_tokens, a bad encoding_format / dimensions /
// pooling, or an unknown field.
EmbeddingRequest parse_embedding_request(std::string_view body, const Tokenizer &tok, const EmbeddingLimits &limits);

} // namespace rf::serve
