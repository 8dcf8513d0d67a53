// One loop for every caller: the order of sampler calls and seeds is what makes a generation
// reproducible, so it lives in one place.
#include "rocmforge/generation.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "rocmforge/error.h"
#include "rocmforge/kv_cache.h"
#include "rocmforge/parallel_for.h"

namespace rf {
namespace {

struct Sequence {
    std::unique_ptr<Sampler> sampler;
    std::unique_ptr<StreamDecoder> decoder;
    std::unique_ptr<grammar::GrammarMatcher> matcher;
    int64_t n_generated = 0;
    bool done = false;
};

double ms_between(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

GenerationStats generate(InferenceContext &ctx, const Tokenizer &tok, const std::vector<std::string> &prompts,
                         const GenerationParams &params, const GenerationCallbacks &cb) {
    if (params.speculative.enabled()) {
        if (params.grammar) throw UsageError("generate: speculative decoding (--draft-model, --draft-ngram) does not combine with a grammar");
        return generate_speculative(ctx, tok, prompts, params, cb);
    }
    auto phase = [&](const char *name) {
        if (cb.on_phase) cb.on_phase(name);
    };
    auto emit = [&](int seq, const std::string &text) {
        if (cb.on_text && !text.empty()) cb.on_text(seq, text);
    };
    const int n_seq = (int)prompts.size();
    if (n_seq > ctx.params().n_seq_max)
        throw UsageError("generate: " + std::to_string(n_seq) + " prompts but the context holds " +
                         std::to_string(ctx.params().n_seq_max) + " sequences");
    const int64_t n_vocab = ctx.model().hparams().n_vocab;
    GenerationStats stats;
    std::vector<Sequence> seqs((size_t)n_seq);
    Batch batch;
    phase("tokenize");
    for (int s = 0; s < n_seq; ++s) {
        Sequence &q = seqs[(size_t)s];
        const std::vector<int32_t> prompt = tok.encode(prompts[(size_t)s], /*add_special=*/true, /*parse_special=*/true);
        if (prompt.empty()) throw UsageError("generate: the prompt of sequence " + std::to_string(s) + " has no tokens");
        SamplerParams p = params.sampling;
        p.seed = params.sampling.seed + (uint32_t)s; // independent streams, reproducible from the one seed
        q.sampler = std::make_unique<Sampler>(p);
        q.decoder = std::make_unique<StreamDecoder>(tok);
        if (params.grammar) q.matcher = std::make_unique<grammar::GrammarMatcher>(params.grammar);
        for (size_t i = 0; i < prompt.size(); ++i) {
            q.sampler->accept(prompt[i]);
            batch.add(prompt[i], s, i + 1 == prompt.size());
        }
    }
    // Each row's candidates instead of the row where the sampler needs no more and the logits
    // are on a GPU (the same tokens; a few hundred bytes per row read back).
    const int64_t k = candidates_needed(params.sampling, n_vocab);
    const ScopedOutputTopK top_k(ctx, params.device_candidates && !params.grammar && ctx.candidates_pay_off(k) ? k : 0);
    const bool whole_rows = ctx.output_top_k() == 0;
    // Prompt processing: all prompts in one batch (split into graphs of n_batch tokens).
    phase("prefill");
    const auto t_prompt = std::chrono::steady_clock::now();
    const std::vector<float> *logits = &ctx.decode(batch);
    stats.prompt_ms = ms_between(t_prompt);
    stats.n_prompt_tokens = batch.size();

    // TTFT ends when the first tokens are sampled and handed on: "first token" covers that,
    // then "decode" the rest.
    phase("first token");
    const auto t_gen = std::chrono::steady_clock::now();
    std::vector<int> rows((size_t)n_seq); // row of each live sequence in *logits
    for (int s = 0; s < n_seq; ++s) rows[(size_t)s] = s;
    std::vector<int32_t> drawn((size_t)n_seq, -1);
    for (bool first = true;; first = false) {
        batch.clear();
        size_t live = 0;
        for (Sequence &q : seqs) {
            if (!q.done && params.n_predict >= 0 && q.n_generated >= params.n_predict) q.done = true;
            live += !q.done;
        }
        // The draws first (each sequence has its own sampler: several threads from 4 sequences
        // on when each scans a row), then the tokens are handed on in sequence order.
        std::vector<std::string> grammar_errors((size_t)n_seq);
        parallel_for((size_t)n_seq, whole_rows ? draw_threads(live) : 1, [&](size_t s) {
            Sequence &q = seqs[s];
            if (q.done) return;
            if (!q.matcher) {
                drawn[s] = q.sampler->sample_row(*logits, ctx.candidates(), (size_t)rows[s], n_vocab);
                q.sampler->accept(drawn[s]);
                return;
            }
            try { // the grammar's mask on the draw, then the grammar moves past the token
                const grammar::TokenMask &mask = q.matcher->allowed();
                if (std::all_of(mask.begin(), mask.end(), [](uint64_t w) { return w == 0; }))
                    throw Error("no token of the vocabulary can continue the grammar");
                q.sampler->set_allowed(mask.data());
                drawn[s] = q.sampler->sample_row(*logits, ctx.candidates(), (size_t)rows[s], n_vocab);
                q.sampler->set_allowed(nullptr);
                if (!q.matcher->accept(drawn[s])) throw Error("the sampler drew a token the grammar refuses");
                q.sampler->accept(drawn[s]);
            } catch (const std::exception &e) {
                grammar_errors[s] = e.what();
            }
        });
        for (int s = 0; s < n_seq; ++s)
            if (!grammar_errors[(size_t)s].empty())
                throw Error("generate: sequence " + std::to_string(s) + ": grammar: " + grammar_errors[(size_t)s]);
        for (int s = 0; s < n_seq; ++s) {
            Sequence &q = seqs[(size_t)s];
            if (q.done) continue;
            const int32_t t = drawn[(size_t)s];
            ++q.n_generated;
            ++stats.n_generated;
            if ((!params.ignore_eos || q.matcher) && tok.is_eog(t)) { // a grammar's end is an end
                q.done = true;
                continue;
            }
            emit(s, q.decoder->push(t));
            if (q.matcher && q.matcher->finished()) {
                q.done = true; // the grammar is complete: only the end could follow
                continue;
            }
            if (params.n_predict >= 0 && q.n_generated >= params.n_predict) {
                q.done = true; // its last token needs no forward pass
                continue;
            }
            rows[(size_t)s] = (int)batch.size();
            batch.add(t, s, true);
        }
        if (first) phase("decode");
        if (batch.size() == 0) break;
        if (cb.stop_requested && cb.stop_requested()) {
            stats.stop_note = "interrupted";
            break;
        }
        try {
            logits = &ctx.decode(batch);
        } catch (const ContextFullError &e) {
            stats.stop_note = e.what();
            break;
        }
    }
    stats.generation_ms = ms_between(t_gen);
    for (int s = 0; s < n_seq; ++s) emit(s, seqs[(size_t)s].decoder->flush());
    return stats;
}

} // namespace rf
