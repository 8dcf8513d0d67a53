// Token sampling in llama.cpp's default chain order:
// penalties -> top-k -> top-p -> min-p -> temperature -> random draw.
// temperature <= 0 is greedy (argmax after the penalties).
#pragma once
#include <cstdint>
#include <deque>
#include <random>
#include <utility>
#include <vector>

namespace rf {

struct SamplerParams {
    float temperature = 0.8f;
    int32_t top_k = 40;          // <= 0: off
    float top_p = 0.95f;         // >= 1: off
    float min_p = 0.05f;         // <= 0: off
    float repeat_penalty = 1.0f; // 1: off
    // OpenAI's penalties over the same recent tokens, as llama.cpp applies them: a token seen c
    // times there loses c * frequency_penalty + presence_penalty (0: off).
    float frequency_penalty = 0.0f;
    float presence_penalty = 0.0f;
    int32_t repeat_last_n = 64;  // the tokens the penalties look back: 0 = off, -1 = whole history
    uint32_t seed = 0;
    // Added to a token's logit after the penalties (OpenAI's logit_bias); -100 or less bans it.
    std::vector<std::pair<int32_t, float>> logit_bias;
};

struct TokenProb {
    int32_t id;
    float logit;
    float p;
};

// One draw from a distribution (the sampler's candidates with p normalized; one candidate:
// no random number used).
int32_t draw_token(const std::vector<TokenProb> &dist, std::mt19937 &rng);

// A sampler's candidates for each output row: the k largest logits, largest first (equal logits:
// the lower id first), chosen where the logits are computed (InferenceContext::set_output_top_k),
// so only k ids and logits per row come back to the host. Row r is [r * k, (r + 1) * k).
struct Candidates {
    int64_t k = 0;
    std::vector<int32_t> ids;
    std::vector<float> logits;
};

// How many candidates per row a sampler with these parameters needs to pick exactly what it
// picks from the whole row: 1 when greedy, top_k when it truncates to fewer than n_vocab; 0 when
// it needs the whole row (no top-k, or a penalty, which can lower a candidate below a token
// outside them).
int64_t candidates_needed(const SamplerParams &p, int64_t n_vocab);

class Sampler {
public:
    explicit Sampler(const SamplerParams &params);

    // Picks a token from one row of logits (n_vocab floats). Does not record it: call accept().
    int32_t sample(const float *logits, int64_t n_vocab);
    // sample() from a row's k best: ids and logits, largest first, equal logits by ascending id
    // (TOPK's order); the same token as sample() on the row when
    // 0 < candidates_needed(params(), n_vocab) <= k.
    int32_t sample_candidates(const int32_t *ids, const float *logits, int64_t k);
    // Row `row` of a decode's output: from `c` when the logits are empty and c.k > 0 (a context
    // with an output top-k), else from logits (n_vocab floats per row).
    int32_t sample_row(const std::vector<float> &logits, const Candidates &c, size_t row, int64_t n_vocab);
    // The tokens the following draws may pick (a grammar's mask: bit i of word i / 64), nullptr:
    // any. The others are removed before every other step; the draw needs whole rows then.
    void set_allowed(const uint64_t *allowed) { allowed_ = allowed; }
    // Adds a token to the penalty history (prompt tokens and sampled tokens).
    void accept(int32_t token);
    void reset();
    const SamplerParams &params() const { return params_; }

    // The candidates left after the filters, before the draw (for tests and diagnostics):
    // sorted by logit descending, p normalized over the survivors after temperature.
    std::vector<TokenProb> filtered(const float *logits, int64_t n_vocab);

private:
    // Whether a penalty applies (one is set and there is a history to look back on).
    bool penalizes() const;
    // The logits after the penalties: `logits` itself when none applies, else a penalized copy in
    // scratch_.
    const float *penalized(const float *logits, int64_t n_vocab);
    SamplerParams params_;
    std::mt19937 rng_;
    std::deque<int32_t> history_;
    std::vector<float> scratch_;
    std::vector<float> weights_; // sample_whole_vocabulary's exp((logit - max) / T) per token
    std::vector<double> blocks_; // and their sums per block (core/model/softmax_draw.h)
    std::vector<float> maxima_;  // top-k's group maxima (sampler.cpp top_k_of)
    int32_t sample_whole_vocabulary(const float *logits, int64_t n_vocab, float temperature);
    // top-p, min-p and temperature on the top-k survivors (sorted), then their softmax.
    void filter_top_k_survivors(std::vector<TokenProb> &c) const;
    // The inverse-CDF draw over filtered candidates.
    int32_t draw(const std::vector<TokenProb> &c);
    std::vector<TokenProb> candidates_; // sample_candidates' list
    std::vector<int32_t> penalty_ids_;
    const uint64_t *allowed_ = nullptr;
    bool is_allowed(int32_t id) const { return !allowed_ || ((allowed_[(size_t)id >> 6] >> (id & 63)) & 1); }
};

// Stand-alone steps on a candidate list (exposed for tests). Each keeps at least one candidate.
void sort_by_logit(std::vector<TokenProb> &c);
void softmax_candidates(std::vector<TokenProb> &c); // fills p from logit
void top_k_filter(std::vector<TokenProb> &c, int32_t k);
void top_p_filter(std::vector<TokenProb> &c, float p);
void min_p_filter(std::vector<TokenProb> &c, float min_p);

// A seed from the OS entropy source (for the default "random" seed, printed by the CLI).
uint32_t random_seed();

} // namespace rf
