// The generation loop with speculative decoding. Each step drafts a few tokens for every live
// sequence (prompt lookup, or the draft model batched across sequences), runs the target once on
// every sequence's unverified token and its drafts (one batch, each row's logits returned), keeps
// the drafts the acceptance rule accepts plus one token drawn by the target, and cuts the
// rejected drafts' K/V from the cache. Sequence s draws from its own generator (seed + s).
#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

#include "rocmforge/error.h"
#include "rocmforge/generation.h"
#include "rocmforge/kv_cache.h"

namespace rf {
namespace {

struct SpecSequence {
    std::unique_ptr<Sampler> sampler; // the target's distribution (its penalties see the history)
    std::unique_ptr<StreamDecoder> decoder;
    std::vector<int32_t> tokens; // prompt and generated; the newest is not in the cache yet
    std::mt19937 rng;
    AdaptiveDraftLength length;
    int64_t n_generated = 0;
    bool done = false;
    std::vector<int32_t> draft;
    std::vector<std::vector<TokenProb>> q; // empty: prompt lookup's point masses
    size_t row = 0;                        // its unverified token's row in the step's logits
    SpecSequence(uint32_t seed, int draft_max) : rng(seed), length(draft_max) {}
};

double ms_between(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

GenerationStats generate_speculative(InferenceContext &ctx, const Tokenizer &tok, const std::vector<std::string> &prompts,
                                     const GenerationParams &params, const GenerationCallbacks &cb) {
    auto phase = [&](const char *name) {
        if (cb.on_phase) cb.on_phase(name);
    };
    const SpeculativeParams &sp = params.speculative;
    const int n_seq = (int)prompts.size();
    if (n_seq > ctx.params().n_seq_max)
        throw UsageError("generate: " + std::to_string(n_seq) + " prompts but the context holds " +
                         std::to_string(ctx.params().n_seq_max) + " sequences");
    if (sp.draft_max < 1) throw UsageError("speculative decoding: the draft length must be at least 1");
    if (sp.drafter == SpeculativeParams::Drafter::ngram && sp.ngram < 1)
        throw UsageError("speculative decoding: the n-gram size must be at least 1");
    std::optional<ModelDrafter> drafter;
    if (sp.drafter == SpeculativeParams::Drafter::model) {
        if (!sp.draft_context) throw UsageError("speculative decoding: no draft model context");
        if (sp.draft_context->params().n_seq_max < n_seq)
            throw UsageError("speculative decoding: the draft context holds fewer sequences than the prompts");
        if (sp.draft_context->model().hparams().n_vocab != ctx.model().hparams().n_vocab)
            throw UsageError("speculative decoding: the draft model's vocabulary differs from the target's");
        for (int s = 0; s < n_seq; ++s) sp.draft_context->clear_sequence(s);
        drafter.emplace(*sp.draft_context, params.sampling);
    }
    const int64_t n_vocab = ctx.model().hparams().n_vocab;
    const ScopedOutputTopK whole_rows(ctx, 0); // the acceptance rule needs p over every token
    GenerationStats stats;
    std::vector<SpecSequence> seqs;
    seqs.reserve((size_t)n_seq);
    Batch batch;
    phase("tokenize");
    for (int s = 0; s < n_seq; ++s) {
        seqs.emplace_back(params.sampling.seed + (uint32_t)s, sp.draft_max);
        SpecSequence &q = seqs.back();
        q.tokens = tok.encode(prompts[(size_t)s], /*add_special=*/true, /*parse_special=*/true);
        if (q.tokens.empty()) throw UsageError("generate: the prompt of sequence " + std::to_string(s) + " has no tokens");
        SamplerParams p = params.sampling;
        p.seed = params.sampling.seed + (uint32_t)s;
        q.sampler = std::make_unique<Sampler>(p);
        q.decoder = std::make_unique<StreamDecoder>(tok);
        for (size_t i = 0; i < q.tokens.size(); ++i) {
            q.sampler->accept(q.tokens[i]);
            batch.add(q.tokens[i], s, i + 1 == q.tokens.size());
        }
        q.row = (size_t)s;
    }
    phase("prefill");
    const auto t_prompt = std::chrono::steady_clock::now();
    const std::vector<float> *logits = &ctx.decode(batch);
    stats.prompt_ms = ms_between(t_prompt);
    stats.n_prompt_tokens = batch.size();

    // Appends a token the target chose; false when the sequence ends with it.
    auto take = [&](int s, int32_t t) {
        SpecSequence &q = seqs[(size_t)s];
        q.tokens.push_back(t);
        q.sampler->accept(t);
        ++q.n_generated;
        ++stats.n_generated;
        if (!params.ignore_eos && tok.is_eog(t)) return !(q.done = true);
        const std::string text = q.decoder->push(t);
        if (cb.on_text && !text.empty()) cb.on_text(s, text);
        if (params.n_predict >= 0 && q.n_generated >= params.n_predict) return !(q.done = true);
        return true;
    };
    auto target_dist = [&](SpecSequence &q, size_t row) { return q.sampler->filtered(logits->data() + row * (size_t)n_vocab, n_vocab); };

    phase("first token");
    const auto t_gen = std::chrono::steady_clock::now();
    for (int s = 0; s < n_seq; ++s) {
        SpecSequence &q = seqs[(size_t)s];
        if (params.n_predict == 0) {
            q.done = true;
            continue;
        }
        take(s, draw_token(target_dist(q, q.row), q.rng));
    }
    phase("decode");
    for (;;) {
        std::vector<int> live;
        for (int s = 0; s < n_seq; ++s)
            if (!seqs[(size_t)s].done) live.push_back(s);
        if (live.empty()) break;
        if (cb.stop_requested && cb.stop_requested()) {
            stats.stop_note = "interrupted";
            break;
        }
        // Draft lengths: the adaptive length, within what n_predict and the context leave.
        int64_t held = 0;
        for (int s = 0; s < ctx.params().n_seq_max; ++s) held += ctx.seq_length(s);
        int64_t spare = ctx.params().n_ctx - held - (int64_t)live.size();
        std::vector<ModelDrafter::Request> requests;
        for (int s : live) {
            SpecSequence &q = seqs[(size_t)s];
            int64_t k = q.length.length();
            if (params.n_predict >= 0) k = std::min<int64_t>(k, params.n_predict - q.n_generated - 1);
            k = std::max<int64_t>(0, std::min(k, spare));
            spare -= k;
            q.draft.clear();
            q.q.clear();
            if (k == 0) continue;
            if (drafter) {
                ModelDrafter::Request r;
                r.seq = s;
                r.tokens = q.tokens;
                r.n_draft = (int)k;
                r.rng = &q.rng;
                requests.push_back(std::move(r));
            } else
                q.draft = ngram_draft(q.tokens, sp.ngram, (int)k);
        }
        if (drafter && !requests.empty()) {
            try {
                drafter->draft(requests);
            } catch (const ContextFullError &) {
                for (ModelDrafter::Request &r : requests) r.draft.clear(), r.q.clear(); // plain steps then
            }
            for (ModelDrafter::Request &r : requests) {
                seqs[(size_t)r.seq].draft = std::move(r.draft);
                seqs[(size_t)r.seq].q = std::move(r.q);
            }
        }
        // Verification: the unverified token and the drafts of every live sequence, all rows out.
        batch.clear();
        for (int s : live) {
            SpecSequence &q = seqs[(size_t)s];
            q.row = batch.size();
            batch.add(q.tokens.back(), s, true);
            for (int32_t d : q.draft) batch.add(d, s, true);
        }
        try {
            logits = &ctx.decode(batch);
        } catch (const ContextFullError &e) {
            stats.stop_note = e.what();
            break;
        }
        ++stats.speculative.steps;
        for (int s : live) {
            SpecSequence &q = seqs[(size_t)s];
            const int64_t verified = (int64_t)q.tokens.size(); // in the cache after this step: these
            static const std::vector<TokenProb> kPointMass; // prompt lookup's q
            const size_t accepted = verify_drafts(
                q.draft.size(),
                [&](size_t i) { return accept_or_resample(target_dist(q, q.row + i), q.q.empty() ? kPointMass : q.q[i], q.draft[i], q.rng); },
                [&](int32_t t) { return take(s, t); },
                [&] { return draw_token(target_dist(q, q.row + q.draft.size()), q.rng); });
            stats.speculative.drafted += (int64_t)q.draft.size();
            stats.speculative.accepted += (int64_t)accepted;
            q.length.update((int)q.draft.size(), (int)accepted);
            ctx.cache().truncate(s, verified + (int64_t)accepted); // the rejected drafts' K/V leave
        }
    }
    stats.generation_ms = ms_between(t_gen);
    for (int s = 0; s < n_seq; ++s) {
        const std::string text = seqs[(size_t)s].decoder->flush();
        if (cb.on_text && !text.empty()) cb.on_text(s, text);
    }
    return stats;
}

} // namespace rf
