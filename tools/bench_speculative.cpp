#include "bench_speculative.h"

#include <cstdio>

#include "rocmforge/generation.h"

namespace rf {

SpeculativeBenchResult bench_speculative(LoadedModel &lm, const ModelArgs &margs, const DraftArgs &draft_args,
                                         const std::string &prompt, int64_t n_gen, int64_t reps) {
    ModelArgs m = margs;
    m.n_ctx = (int64_t)lm.tokenizer->encode(prompt, true, true).size() + n_gen + 64;
    const ContextParams cp = m.context_params(1);
    const auto ctx = lm.new_context(cp);
    LoadedDraft draft = load_draft(draft_args, lm, cp);
    SpeculativeBenchResult r;
    r.drafter = draft_args.ngram > 0 ? "ngram " + std::to_string(draft_args.ngram) : "model " + draft_args.model_path;
    r.drafter += ", max " + std::to_string(draft_args.draft_max);
    r.n_gen = n_gen;
    GenerationParams gp;
    gp.sampling.temperature = 0.0f; // greedy: both runs make the same tokens
    gp.n_predict = n_gen;
    gp.ignore_eos = true;
    SpeculativeStats total;
    double sum_ts[2] = {0, 0};
    std::string text[2];
    for (int64_t rep = -1; rep < reps; ++rep) // rep -1: the warm-up
        for (int spec = 0; spec < 2; ++spec) {
            ctx->clear_sequence(0);
            gp.speculative = spec ? speculative_params(draft_args, draft) : SpeculativeParams{};
            std::string out;
            GenerationCallbacks cb;
            cb.on_text = [&](int, const std::string &t) { out += t; };
            const GenerationStats st = generate(*ctx, *lm.tokenizer, {prompt}, gp, cb);
            if (rep < 0) continue;
            sum_ts[spec] += st.generation_ms > 0 ? (double)st.n_generated * 1000.0 / st.generation_ms : 0.0;
            text[spec] = out;
            if (spec) total.add(st.speculative);
        }
    r.acceptance = total.acceptance_rate();
    r.tokens_per_step = total.steps > 0 ? (double)(reps * (n_gen - 1)) / (double)total.steps : 0.0;
    r.ts_plain = sum_ts[0] / (double)reps;
    r.ts = sum_ts[1] / (double)reps;
    r.same_tokens = text[0] == text[1];
    return r;
}

void print_speculative_md(const SpeculativeBenchResult &r) {
    std::printf("\n| test | drafter | accepted | tokens/step | t/s | t/s no draft | speedup | same tokens |\n");
    std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
    std::printf("| spec tg%lld | %s | %.1f%% | %.2f | %.2f | %.2f | %.2fx | %s |\n", (long long)r.n_gen, r.drafter.c_str(),
                100.0 * r.acceptance, r.tokens_per_step, r.ts, r.ts_plain, r.ts_plain > 0 ? r.ts / r.ts_plain : 0.0,
                r.same_tokens ? "yes" : "NO");
}

} // namespace rf
