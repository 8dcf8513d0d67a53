// The scheduler's record of one running sequence, shared by scheduler.cpp and
// scheduler_speculative.cpp (scheduler thread only).
#pragma once
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "scheduler.h"
#include "stop_matcher.h"

namespace rf::serve {

struct Scheduler::Active {
    GenerationRequest request;
    std::shared_ptr<RequestChannel> channel;
    Clock::time_point submitted, last_token;
    int seq = -1;
    size_t prefilled = 0; // prompt tokens already in the cache
    std::unique_ptr<Sampler> sampler;
    std::unique_ptr<StreamDecoder> decoder;
    std::unique_ptr<StopMatcher> stop;
    std::unique_ptr<grammar::GrammarMatcher> matcher; // structured output: where the output is in its grammar
    std::string grammar_error;                        // the matcher failed at this step's draw
    int64_t generated = 0; // sampled tokens, end-of-generation excluded
    int32_t next = -1;     // sampled, to be fed at the next step
    int row = -1;          // its logits row in this step's batch, -1: none
    bool done = false;
    // Logprobs (when asked for) wait here until the stop matcher releases the text their token
    // begins: {byte offset of the token in the generated text, entry}. A token that begins in a
    // stop string is never reported.
    std::deque<std::pair<int64_t, TokenLogprob>> pending;
    int64_t piece_bytes = 0, piece_chars = 0; // generated text so far, before the stop matcher
    int64_t emitted_bytes = 0;                // generated text released to the client
    // prompt_logprobs: {batch row, prompt position} of this step's prompt tokens, and the
    // prompt's entries gathered over the prefill chunks.
    std::vector<std::pair<int, size_t>> prompt_rows;
    std::vector<TokenLogprob> prompt_lp;
    bool prompt_lp_sent = false;
    // Speculative decoding (spec: set when the request allows it and the server drafts).
    struct Speculation {
        std::vector<int32_t> history; // prompt and generated tokens, the unverified one last
        std::vector<int32_t> draft;   // drafted after it, in this step's batch
        std::vector<std::vector<TokenProb>> q; // the draft model's distributions (prompt lookup: none)
        std::unique_ptr<Sampler> draft_sampler; // draft model: draft_sampling(request's)
        std::mt19937 rng;
        AdaptiveDraftLength length;
        int64_t drafted = 0, accepted = 0;
        Speculation(uint32_t seed, int draft_max) : rng(seed), length(draft_max) {}
    };
    std::unique_ptr<Speculation> spec;

    // Tokens it may still append to the cache: the rest of its prompt and of its generation.
    int64_t tokens_left() const {
        return (int64_t)(request.prompt.size() - prefilled) + request.max_tokens - generated;
    }
};

} // namespace rf::serve
