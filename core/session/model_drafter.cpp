// Drafting with a smaller model of the same vocabulary on a context of its own.
#include <algorithm>

#include "rocmforge/error.h"
#include "rocmforge/speculative.h"

namespace rf {

void check_same_vocabulary(const Tokenizer &target, const Tokenizer &draft, const std::string &draft_name) {
    if (target.n_vocab() != draft.n_vocab())
        throw UsageError("draft model " + draft_name + " has a vocabulary of " + std::to_string(draft.n_vocab()) +
                         " tokens but the target's has " + std::to_string(target.n_vocab()) +
                         " (speculative decoding needs the same vocabulary)");
    for (int32_t id = 0; id < target.n_vocab(); ++id)
        if (target.token_text(id) != draft.token_text(id))
            throw UsageError("draft model " + draft_name + ": token " + std::to_string(id) + " differs from the target's (\"" +
                             draft.token_text(id) + "\" vs \"" + target.token_text(id) +
                             "\"; speculative decoding needs the same vocabulary)");
}

ModelDrafter::ModelDrafter(InferenceContext &ctx, const SamplerParams &target_sampling)
    : ctx_(ctx), sampler_(draft_sampling(target_sampling)), held_((size_t)ctx.params().n_seq_max) {}

void ModelDrafter::clear(int seq) {
    ctx_.clear_sequence(seq);
    held_[(size_t)seq].clear();
}

void ModelDrafter::draft(std::vector<Request> &requests) {
    const int64_t n_vocab = ctx_.model().hparams().n_vocab;
    // First batch: each sequence's tokens its draft KV lacks (at least its newest one, whose
    // logits give the first draft).
    Batch batch;
    std::vector<Request *> live;
    for (Request &r : requests) {
        r.draft.clear();
        r.q.clear();
        if (r.n_draft <= 0 || r.tokens.empty()) continue;
        if (r.seq < 0 || r.seq >= (int)held_.size())
            throw Error("draft: sequence " + std::to_string(r.seq) + " outside the draft context's " + std::to_string(held_.size()));
        std::vector<int32_t> &held = held_[(size_t)r.seq];
        const size_t common = (size_t)(std::mismatch(held.begin(), held.end(), r.tokens.begin(), r.tokens.end()).first - held.begin());
        const size_t keep = std::min(common, r.tokens.size() - 1);
        ctx_.cache().truncate(r.seq, (int64_t)keep); // rejected drafts of the step before leave
        held.resize(keep);
        for (size_t i = keep; i < r.tokens.size(); ++i) batch.add(r.tokens[i], r.seq, i + 1 == r.tokens.size());
        live.push_back(&r);
    }
    if (live.empty()) return;
    const std::vector<float> *logits = &ctx_.decode(batch);
    for (Request *r : live) {
        std::vector<int32_t> &held = held_[(size_t)r->seq];
        held.insert(held.end(), r->tokens.begin() + (long)held.size(), r->tokens.end());
    }
    // Then one batch per drafted position: each sequence's newest draft, for the one after it.
    for (;;) {
        batch.clear();
        std::vector<Request *> next;
        for (size_t k = 0; k < live.size(); ++k) {
            Request &r = *live[k];
            Sampler &sampler = r.sampler ? *r.sampler : sampler_;
            std::vector<TokenProb> q = sampler.filtered(logits->data() + k * (size_t)n_vocab, n_vocab);
            r.draft.push_back(draw_token(q, *r.rng));
            r.q.push_back(std::move(q));
            if ((int)r.draft.size() < r.n_draft) {
                batch.add(r.draft.back(), r.seq, true);
                next.push_back(&r);
            }
        }
        if (next.empty()) return;
        try {
            logits = &ctx_.decode(batch);
        } catch (const ContextFullError &) {
            return; // the drafts so far stand; the draft cache is full for more
        }
        for (Request *r : next) held_[(size_t)r->seq].push_back(r->draft.back());
        live = std::move(next);
    }
}

} // namespace rf
