// rocmforge generate: the options, then rf::generate (generation.h: prompt processing in
// batches, then decoding of 1..8 sequences at once), streaming text as it comes.
#include "cmd_generate.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <memory>
#include <cstdio>
#include <string>
#include <vector>

#include "common_args.h"
#include "draft_args.h"
#include "interrupt.h"
#include "text_file.h"
#include "rocmforge/error.h"
#include "rocmforge/generation.h"
#include "rocmforge/grammar.h"

namespace rf {
namespace {

const char *kUsage =
    "usage: rocmforge generate [-m MODEL] [-p PROMPT | -f FILE] [-n N] [options]\n\n"
    "Generates text. With no -m, uses the default model models/default.gguf: the 3.1M-parameter\n"
    "llama trained on the King James Bible that ships in models/trained (docs/DEFAULT_MODEL.md),\n"
    "copied there by the build; looked up next to the executable, in the repository, in the\n"
    "installed share/rocmforge/models, or named by $ROCMFORGE_DEFAULT_MODEL.\n\n"
    "  -p, --prompt TEXT  prompt (repeatable: one per parallel sequence, reused round-robin)\n"
    "  -f, --file FILE    read the prompt from FILE\n"
    "  -n, --n-predict N  tokens to generate per sequence (default 128; -1 = until EOG or full)\n"
    "  --parallel N       decode N sequences at once (1..8, default: number of prompts)\n"
    "  --ignore-eos       do not stop at end-of-generation tokens\n"
    "  --grammar-file F   the output follows the GBNF grammar in F (llama.cpp's syntax)\n"
    "  --json-schema F    the output is JSON valid under the JSON schema in F\n"
    "  --candidates on|off  on (default): where the logits are on a GPU and the sampler needs only\n"
    "                     its top-k (or the argmax), those are chosen there and only they are read\n"
    "                     back (the same tokens); off: whole logits rows\n"
    "speculative decoding (not with a grammar):\n";

struct Options {
    ModelArgs model;
    SamplingArgs sampling;
    DraftArgs draft;
    std::vector<std::string> prompts;
    int64_t n_predict = 128;
    int n_parallel = 0;
    bool ignore_eos = false;
    bool candidates = true;
    std::string grammar; // GBNF text, "" = none
};

Options parse(int argc, char **argv) {
    Options o;
    o.model.n_ctx = 4096;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::printf("%s%s\nmodel and context:\n%s\nsampling:\n%s\nruntime:\n%s", kUsage, DraftArgs::help(), ModelArgs::help(),
                        SamplingArgs::help(), RuntimeArgs::help());
            std::exit(0);
        }
        if (o.model.parse(argc, argv, i) || o.sampling.parse(argc, argv, i) || o.draft.parse(argc, argv, i)) continue;
        if (a == "-p" || a == "--prompt") o.prompts.push_back(take_value(argc, argv, i));
        else if (a == "-f" || a == "--file") o.prompts.push_back(read_text_file(take_value(argc, argv, i), a));
        else if (a == "-n" || a == "--n-predict") o.n_predict = parse_int_arg(a, take_value(argc, argv, i), -1, INT32_MAX);
        else if (a == "--parallel" || a == "-np") o.n_parallel = (int)parse_int_arg(a, take_value(argc, argv, i), 1, 8);
        else if (a == "--ignore-eos") o.ignore_eos = true;
        else if (a == "--candidates") o.candidates = parse_on_off_arg(a, take_value(argc, argv, i));
        else if (a == "--grammar-file" || a == "--json-schema") {
            if (!o.grammar.empty()) throw UsageError("generate: give one of --grammar-file and --json-schema, once");
            const std::string text = read_text_file(take_value(argc, argv, i), a);
            try {
                o.grammar = a == "--json-schema" ? grammar::json_schema_to_gbnf(text) : text;
                grammar::Grammar::parse(o.grammar);
            } catch (const Error &e) {
                throw UsageError(a + " " + argv[i] + ": " + e.what());
            }
            if (o.grammar.empty()) throw UsageError(a + ": the file is empty");
        }
        else throw UsageError("generate: unknown option '" + a + "' (see rocmforge generate --help)");
    }
    if (o.prompts.empty()) o.prompts.push_back("Once upon a time");
    if (o.n_parallel == 0) o.n_parallel = (int)std::min<size_t>(o.prompts.size(), 8);
    if (o.draft.enabled() && !o.grammar.empty())
        throw UsageError("generate: speculative decoding (--draft-model, --draft-ngram) does not combine with a grammar");
    return o;
}

} // namespace
} // namespace rf

int cmd_generate(int argc, char **argv) {
    using namespace rf;
    Options o = parse(argc, argv);
    LoadedModel lm = load_model(o.model);
    o.model.fit_context(lm.model->hparams());
    const Tokenizer &tok = *lm.tokenizer;

    const std::unique_ptr<InferenceContext> ctx = lm.new_context(o.model.context_params(o.n_parallel));
    std::fprintf(stderr, "%s\n", ctx->cache().summary().c_str());
    LoadedDraft draft = load_draft(o.draft, lm, o.model.context_params(o.n_parallel));
    if (o.draft.enabled()) std::fprintf(stderr, "%s\n", draft_summary(o.draft).c_str());
    const SamplerParams sp = o.sampling.resolved();
    std::fprintf(stderr, "sampling: seed %u, temp %.2f, top-k %d, top-p %.2f, min-p %.2f, repeat-penalty %.2f, "
                 "frequency-penalty %.2f, presence-penalty %.2f (last %d)\n",
                 sp.seed, sp.temperature, sp.top_k, sp.top_p, sp.min_p, sp.repeat_penalty, sp.frequency_penalty,
                 sp.presence_penalty, sp.repeat_last_n);

    const int n_seq = o.n_parallel;
    std::vector<std::string> prompts((size_t)n_seq);
    for (int s = 0; s < n_seq; ++s) prompts[(size_t)s] = o.prompts[(size_t)s % o.prompts.size()];
    GenerationParams gp;
    gp.sampling = sp;
    gp.n_predict = o.n_predict;
    gp.ignore_eos = o.ignore_eos;
    gp.device_candidates = o.candidates;
    gp.speculative = speculative_params(o.draft, draft);
    if (!o.grammar.empty())
        gp.grammar = std::make_shared<grammar::TokenGrammar>(grammar::Grammar::parse(o.grammar),
                                                             std::make_shared<grammar::TokenTrie>(tok));

    // One sequence streams to stdout (the prompt first, once it is processed); several are
    // printed whole at the end.
    const bool stream = n_seq == 1;
    std::vector<std::string> texts((size_t)n_seq);
    const InterruptGuard interrupt; // Ctrl-C: stop after the current step, print the statistics
    GenerationCallbacks cb;
    cb.on_phase = [&](const char *phase) {
        lm.runtime->phase(phase);
        if (stream && std::string(phase) == "first token") {
            std::fputs(prompts[0].c_str(), stdout);
            std::fflush(stdout);
        }
    };
    cb.on_text = [&](int seq, const std::string &text) {
        if (!stream) {
            texts[(size_t)seq] += text;
            return;
        }
        std::fputs(text.c_str(), stdout);
        std::fflush(stdout);
    };
    cb.stop_requested = [] { return InterruptGuard::requested(); };
    const GenerationStats st = generate(*ctx, tok, prompts, gp, cb);

    if (stream) {
        std::fputs("\n", stdout);
    } else {
        for (int s = 0; s < n_seq; ++s)
            std::printf("--- sequence %d ---\n%s%s\n", s, prompts[(size_t)s].c_str(), texts[(size_t)s].c_str());
    }
    std::fflush(stdout);
    if (!st.stop_note.empty())
        std::fprintf(stderr, "\nstopped: %s%s\n", st.stop_note.c_str(), InterruptGuard::requested() ? " (Ctrl-C)" : "");
    const double prompt_ms = st.prompt_ms, gen_ms = st.generation_ms;
    const size_t n_prompt_tokens = st.n_prompt_tokens;
    const int64_t n_gen_total = st.n_generated;

    std::fprintf(stderr, "\nload time:   %10.2f ms\n", lm.load_ms);
    std::fprintf(stderr, "prompt:      %10.2f ms / %5zu tokens (%8.2f tokens/s)\n", prompt_ms, n_prompt_tokens,
                 prompt_ms > 0 ? n_prompt_tokens * 1000.0 / prompt_ms : 0.0);
    std::fprintf(stderr, "generation:  %10.2f ms / %5lld tokens (%8.2f tokens/s)%s\n", gen_ms, (long long)n_gen_total,
                 gen_ms > 0 ? n_gen_total * 1000.0 / gen_ms : 0.0,
                 n_seq > 1 ? (", " + std::to_string(n_seq) + " sequences").c_str() : "");
    if (gp.speculative.enabled()) {
        const SpeculativeStats &sp_st = st.speculative;
        std::fprintf(stderr, "speculative: %lld drafted, %lld accepted (%.1f%%), %lld verification steps, %.2f tokens a step\n",
                     (long long)sp_st.drafted, (long long)sp_st.accepted, 100.0 * sp_st.acceptance_rate(), (long long)sp_st.steps,
                     sp_st.steps > 0 ? (double)(n_gen_total - n_seq) / (double)sp_st.steps : 0.0);
    }
    return InterruptGuard::requested() ? kExitInterrupted : 0;
}
