// Embeddings of a decoder model: the hidden states after the final norm of every token of one
// input, pooled (pooling.h) and L2-normalised by default. Each input runs as its own sequence of
// the context, which is empty before and freed afterwards: the KV cache keeps nothing of it.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "rocmforge/inference.h"
#include "rocmforge/pooling.h"

namespace rf {

// The pooling a GGUF asks for in `<arch>.pooling_type` (llama.cpp's numbering: 1 mean, 2 cls,
// 3 last); nullopt when the key is absent or names none of those (none, rank).
std::optional<Pooling> model_pooling(const Model &model);
// model_pooling(), else mean: decoder models carry no such key, and the mean of every token's
// state is the choice that does not hinge on one position.
Pooling default_pooling(const Model &model);

struct EmbedOptions {
    Pooling pooling = Pooling::Mean;
    bool normalize = true;
};

// The embedding of `tokens` (n_embd floats), run as sequence `seq` of ctx. Throws rf::Error for
// no tokens, a sequence that is not empty, or more tokens than the context holds (-c); the
// decode's own errors (bad token id) otherwise. The sequence is empty again afterwards, also
// when it throws.
std::vector<float> embed_tokens(InferenceContext &ctx, const std::vector<int32_t> &tokens, int seq,
                                const EmbedOptions &options);

// The embeddings of several inputs, in order: as many inputs per graph as fit the context's
// batch size (n_batch tokens; a longer input runs alone), its sequences and its cache, each
// input its own sequence. Each vector is embed_tokens() of its input alone, up to the kernels'
// rounding for another batch shape. Every sequence of ctx must be empty and is empty again
// afterwards, also when it throws (embed_tokens' errors, naming the input's index).
std::vector<std::vector<float>> embed_batch(InferenceContext &ctx, const std::vector<std::vector<int32_t>> &inputs,
                                            const EmbedOptions &options);

} // namespace rf
