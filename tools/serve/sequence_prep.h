// From a parsed request to the sequences the scheduler decodes: each prompt tokenized (chat:
// through the chat template) or its token ids checked against the vocabulary, the context
// limits applied (400 naming the field), and n sequences per prompt, choice k = prompt i x n + j
// as OpenAI numbers them, seeded seed + k so every choice is reproducible on its own.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "request_parse.h"
#include "rocmforge/chat_template.h"
#include "rocmforge/tokenizer.h"
#include "scheduler.h"

namespace rf::serve {

struct SequenceLimits {
    ChatTemplate chat_template = ChatTemplate::builtin(ChatFormat::ChatML);
    int64_t n_ctx_request = 512;      // prompt + max_tokens of one sequence at most
    int64_t default_max_tokens = 256; // when the request has no max_tokens
};

struct PreparedSequences {
    std::vector<GenerationRequest> sequences; // in choice order
    std::vector<std::string> echo;            // per choice: its prompt's text when `echo`, else ""
    // Per choice, with echo and logprobs: where each prompt token begins in its echo text
    // (characters); else empty.
    std::vector<std::vector<int64_t>> prompt_offsets;
    int64_t prompt_tokens = 0;                // usage: each prompt counted once, whatever n is
};

// Where each of `tokens` begins in `echo`, in characters: the tokens' pieces laid end to end,
// aligned at the end of the echo text (a SentencePiece prompt's first piece carries a space its
// text lacks), clamped to it.
std::vector<int64_t> prompt_text_offsets(const std::vector<int32_t> &tokens, const std::string &echo, const Tokenizer &tok);

// The chat prompt's tokens. A template that writes the BOS token's text itself (Llama 3's
// {{ bos_token }}) is not given a second one by the tokenizer. Throws ApiError (400 with the
// template's message when it raises).
std::vector<int32_t> chat_prompt_tokens(const CompletionRequest &r, const ChatTemplate &tmpl, const Tokenizer &tok, std::string &text);

// Throws ApiError. `seed` is the request's or a random one; `deadline` goes to every sequence.
PreparedSequences prepare_sequences(const CompletionRequest &r, const SequenceLimits &limits, const Tokenizer &tok,
                                    uint32_t seed, Clock::time_point deadline);

} // namespace rf::serve
