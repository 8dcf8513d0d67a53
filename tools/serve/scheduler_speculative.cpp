// Speculative decoding in the continuous-batching scheduler (serve --draft-model / --draft-ngram).
// A speculating sequence feeds its unverified token and the tokens drafted after it (prompt
// lookup on its history, or the draft model batched across sequences, run between two target
// batches while nothing is in flight); the step's one target batch scores every sequence's rows
// together, and verify() keeps the drafts the acceptance rule accepts plus one token the target
// draws, streaming them as it goes, then cuts the rejected drafts' K/V.
#include "rocmforge/error.h"
#include "rocmforge/kv_cache.h"
#include "scheduler_active.h"

namespace rf::serve {

// Logprobs (per drafted row, and echo's) and grammars (a mask per drafted position) are not
// written for drafts: those requests decode one token a step as without a drafter.
bool Scheduler::speculates(const GenerationRequest &r) const {
    return options_.speculative.enabled() && !r.grammar && r.top_logprobs < 0 && !r.prompt_logprobs && r.max_tokens > 0;
}

void Scheduler::start_speculation(Active &a) {
    a.spec = std::make_unique<Active::Speculation>(a.request.sampling.seed, options_.speculative.draft_max);
    a.spec->history = a.request.prompt;
    // The draft model drafts as this request samples (its temperature and truncation), so q is
    // close to p; greedy requests draft greedily.
    if (drafter_) a.spec->draft_sampler = std::make_unique<Sampler>(draft_sampling(a.request.sampling));
}

// Called once the batch holding a's rows has landed: a.row is its unverified token's (or its
// last prompt token's) batch row, its drafts' rows follow.
void Scheduler::verify(Active &a, const std::vector<float> &logits) {
    Active::Speculation &sp = *a.spec;
    const int64_t n_vocab = ctx_.model().hparams().n_vocab;
    const bool greedy = a.request.sampling.temperature <= 0;
    auto row = [&](size_t i) { return (size_t)flight_.out_row[(size_t)a.row + i]; };
    // The target's own draw at row i. Greedy: exactly the plain path's draw (candidates or whole
    // row, penalties included), so greedy output is the same with and without drafting.
    auto target_draw = [&](size_t i) {
        if (greedy) return a.sampler->sample_row(logits, ctx_.candidates(), row(i), n_vocab);
        return draw_token(a.sampler->filtered(logits.data() + row(i) * (size_t)n_vocab, n_vocab), sp.rng);
    };
    auto take = [&](int32_t t) {
        sp.history.push_back(t);
        on_token(a, t, nullptr); // speculating requests have no logprobs
        return !a.done;
    };
    static const std::vector<TokenProb> kPointMass; // prompt lookup's q
    const size_t n_draft = sp.draft.size();
    // Counted before take(), whose last token sends the Done event with these counters.
    sp.drafted += (int64_t)n_draft;
    metrics_.draft_tokens += (int64_t)n_draft;
    // Greedy decides by the plain path's draw; acceptances are counted before take().
    const size_t accepted = verify_drafts(
        n_draft,
        [&](size_t i) {
            DraftVerdict v;
            if (greedy) {
                v.token = target_draw(i);
                v.accepted = v.token == sp.draft[i];
            } else
                v = accept_or_resample(a.sampler->filtered(logits.data() + row(i) * (size_t)n_vocab, n_vocab),
                                       sp.q.empty() ? kPointMass : sp.q[i], sp.draft[i], sp.rng);
            if (v.accepted) {
                ++sp.accepted;
                ++metrics_.draft_accepted;
            }
            return v;
        },
        take, [&] { return target_draw(n_draft); });
    sp.length.update((int)n_draft, (int)accepted);
    if (a.done || accepted == n_draft) return; // an ended sequence's pages go at retire()
    try {
        ctx_.cache().truncate(a.seq, ctx_.seq_length(a.seq) - (int64_t)(n_draft - accepted)); // rejected drafts' K/V
    } catch (const std::exception &e) {
        fail(a, {500, std::string("speculative decoding: ") + e.what(), "server_error", ""});
    }
}

// Drafts for the speculating sequences that feed a token to the next batch. Lengths: the
// adaptive length, and never past max_tokens (so the pages admission reserved always hold the
// verification rows: the cache grows to at most prompt + max_tokens).
void Scheduler::draft(std::vector<Active> &running, const std::vector<char> &feeds) {
    std::vector<ModelDrafter::Request> requests;
    std::vector<Active *> owners;
    for (size_t k = 0; k < running.size(); ++k) {
        Active &a = running[k];
        if (!a.spec) continue;
        a.spec->draft.clear();
        a.spec->q.clear();
        if (!feeds[k] || a.done) continue;
        const int64_t n = std::min<int64_t>(a.spec->length.length(), a.request.max_tokens - a.generated - 1);
        if (n <= 0) continue;
        if (!drafter_) {
            a.spec->draft = ngram_draft(a.spec->history, options_.speculative.ngram, (int)n);
            continue;
        }
        ModelDrafter::Request r;
        r.seq = a.seq;
        r.tokens = a.spec->history;
        r.n_draft = (int)n;
        r.rng = &a.spec->rng;
        r.sampler = a.spec->draft_sampler.get();
        requests.push_back(std::move(r));
        owners.push_back(&a);
    }
    if (requests.empty()) return;
    try {
        drafter_->draft(requests);
    } catch (const ContextFullError &) {
        return; // the draft model's pool is full (it shares no prefix pages): plain steps this time
    } catch (const std::exception &e) {
        return fail_running(running, e); // a backend failure, as a failed target batch
    }
    for (size_t i = 0; i < requests.size(); ++i) {
        owners[i]->spec->draft = std::move(requests[i].draft);
        owners[i]->spec->q = std::move(requests[i].q);
    }
}

} // namespace rf::serve
