// Speculative decoding: a cheap drafter proposes the next few tokens of a sequence, the target
// model scores them all in one batch, and the standard acceptance rule keeps a prefix of them
// and draws one more token, so the output has the target's distribution (greedy: its tokens).
// Drafters: prompt lookup (the tokens that followed the latest earlier occurrence of the last
// n-gram, ngram_draft) and a smaller model of the same vocabulary (ModelDrafter).
#pragma once
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "rocmforge/inference.h"
#include "rocmforge/sampler.h"
#include "rocmforge/tokenizer.h"

namespace rf {

struct SpeculativeParams {
    enum class Drafter { none, ngram, model } drafter = Drafter::none;
    int ngram = 3;     // prompt lookup: the longest n-gram matched (then shorter ones, down to 1)
    int draft_max = 8; // most tokens drafted per step; the length adapts within [1, draft_max]
    // Drafter::model: the draft model's context (not owned), n_seq_max at least the target's
    // sequences; its vocabulary must be the target's (check_same_vocabulary).
    InferenceContext *draft_context = nullptr;
    bool enabled() const { return drafter != Drafter::none; }
};

// Drafted / accepted tokens and verification steps (one target batch each) since the start.
struct SpeculativeStats {
    int64_t drafted = 0, accepted = 0, steps = 0;
    double acceptance_rate() const { return drafted > 0 ? double(accepted) / double(drafted) : 0.0; }
    void add(const SpeculativeStats &o) { drafted += o.drafted, accepted += o.accepted, steps += o.steps; }
};

// A sequence's draft length: one more after a step whose drafts were all accepted, one less
// (not below 1) after a step that kept fewer than half of them; starts at half the maximum.
class AdaptiveDraftLength {
public:
    explicit AdaptiveDraftLength(int max_length);
    int length() const { return length_; }
    void update(int drafted, int accepted);

private:
    int length_, max_;
};

// Prompt lookup: for n from max_n down to 1, the latest earlier occurrence of history's last n
// tokens; returns up to max_tokens tokens that followed it (empty: no match).
std::vector<int32_t> ngram_draft(std::span<const int32_t> history, int max_n, int max_tokens);

// The speculative-sampling rule for one drafted token: p is the target's distribution at its
// position, q the distribution it was drawn from (empty: a point mass on it, as prompt lookup's
// drafts). Accepted with probability min(1, p(x) / q(x)); otherwise the token returned is drawn
// from max(0, p - q) normalized. Greedy p and q (one candidate each) use no random number.
struct DraftVerdict {
    bool accepted = false;
    int32_t token = -1; // the drafted token when accepted, else the resampled one
};
DraftVerdict accept_or_resample(const std::vector<TokenProb> &p, const std::vector<TokenProb> &q, int32_t drafted,
                                std::mt19937 &rng);

// One sequence's verification step: verdict(i) decides draft i, take(t) appends a token the
// target chose (false once the sequence ends with it); the drafts are taken up to the first
// rejection (whose resampled token is taken too), and when every draft is accepted bonus()
// draws one more token at the row after them. Returns how many drafts were accepted.
size_t verify_drafts(size_t n_draft, const std::function<DraftVerdict(size_t)> &verdict,
                     const std::function<bool(int32_t)> &take, const std::function<int32_t()> &bonus);

// Throws UsageError (one line) unless the draft tokenizer is the target's token for token (same
// size, same texts): drafts are token ids, so they mean the same only then.
void check_same_vocabulary(const Tokenizer &target, const Tokenizer &draft, const std::string &draft_name);

// The sampler parameters a drafter draws with: the target's truncation and temperature (so q is
// close to p), without penalties or logit biases (q then depends on the logits only; any q keeps
// the output's distribution, the closer the more is accepted).
SamplerParams draft_sampling(const SamplerParams &target);

// Drafts with a draft model on its own context, batched across sequences: one batch catches
// every sequence's draft KV up with its tokens, then one batch per drafted position. Keeps per
// sequence the tokens its draft KV holds and cuts back to the common prefix with the tokens it
// is given, so rejected drafts are dropped from the draft cache as from the target's.
class ModelDrafter {
public:
    ModelDrafter(InferenceContext &ctx, const SamplerParams &target_sampling);

    struct Request {
        int seq = 0;                     // sequence id in the draft context
        std::span<const int32_t> tokens; // the sequence so far, its newest (not yet verified) token last
        int n_draft = 0;                 // tokens wanted
        std::mt19937 *rng = nullptr;     // the sequence's generator (draws when sampling)
        // The draft distribution's sampler (draft_sampling of the sequence's own parameters,
        // history-free); nullptr: the drafter's, from the parameters it was made with. (A server
        // mixes requests of different temperatures: each drafts as it samples.)
        Sampler *sampler = nullptr;
        // Out: the drafted tokens and the distribution each was drawn from.
        std::vector<int32_t> draft;
        std::vector<std::vector<TokenProb>> q;
    };
    // Throws ContextFullError when the draft cache cannot hold the tokens (nothing drafted).
    void draft(std::vector<Request> &requests);
    // The sequence ended: its draft KV is dropped.
    void clear(int seq);

private:
    InferenceContext &ctx_;
    Sampler sampler_; // history-free (draft_sampling): one for every sequence
    std::vector<std::vector<int32_t>> held_; // per sequence: the tokens in the draft KV
};

} // namespace rf
