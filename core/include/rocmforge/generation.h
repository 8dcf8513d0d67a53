// The generation loop: prompts in one prefill batch, then one decode step per token holding a
// token of every live sequence, each sampled by its own sampler. `rocmforge generate` and
// rocmforge_generate() (the C API) both run it.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/grammar.h"
#include "rocmforge/inference.h"
#include "rocmforge/sampler.h"
#include "rocmforge/speculative.h"
#include "rocmforge/tokenizer.h"

namespace rf {

struct GenerationParams {
    SamplerParams sampling;  // sequence s samples with seed sampling.seed + s
    int64_t n_predict = 128; // tokens per sequence; -1: until end of generation or a full cache
    bool ignore_eos = false;
    // Where the logits are on a GPU and the sampler needs only the top-k (or the argmax), pick
    // those candidates there and read back only them (InferenceContext::set_output_top_k): the
    // same tokens, less to copy and scan per step. false: whole rows.
    bool device_candidates = true;
    // Every sequence's output follows this grammar (whole rows are sampled, the tokens it
    // refuses masked; a sequence ends when the grammar is complete). nullptr: none.
    std::shared_ptr<const grammar::TokenGrammar> grammar;
    // Speculative decoding (speculative.h): drafts verified by the target in one batch per step;
    // greedy output token for token as without it, sampled output of the same distribution.
    // Not with a grammar.
    SpeculativeParams speculative;
};

struct GenerationCallbacks {
    // Text of sequence `seq` as it becomes complete UTF-8 (the held-back tail comes at the end).
    std::function<void(int seq, const std::string &text)> on_text;
    // Asked before each decode step: true stops the generation ("interrupted").
    std::function<bool()> stop_requested;
    // Profiler phases: "tokenize", "prefill", "first token", "decode".
    std::function<void(const char *phase)> on_phase;
};

struct GenerationStats {
    size_t n_prompt_tokens = 0;
    double prompt_ms = 0;      // the prefill decode
    int64_t n_generated = 0;   // sampled tokens, all sequences (end-of-generation tokens included)
    double generation_ms = 0;  // from the first sample to the end
    std::string stop_note;     // why it stopped early ("context full: ...", "interrupted"), or ""
    SpeculativeStats speculative; // drafted and accepted tokens (speculative decoding only)
};

// Generates from prompts[s] on sequence s of `ctx` (s < ctx.params().n_seq_max), each prompt
// tokenized with special tokens parsed. Throws UsageError for a prompt without tokens.
GenerationStats generate(InferenceContext &ctx, const Tokenizer &tokenizer, const std::vector<std::string> &prompts,
                         const GenerationParams &params, const GenerationCallbacks &callbacks);

// The same loop with speculative decoding (speculative_generation.cpp); generate() runs it when
// params.speculative is enabled. Every sequence samples from whole rows of the target's logits.
GenerationStats generate_speculative(InferenceContext &ctx, const Tokenizer &tokenizer, const std::vector<std::string> &prompts,
                                     const GenerationParams &params, const GenerationCallbacks &callbacks);

} // namespace rf
