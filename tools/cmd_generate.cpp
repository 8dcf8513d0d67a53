// rocmforge generate: prompt processing in batches, then decoding of 1..8 sequences at once
// (one graph per step holding a token of every live sequence), streaming text as it comes.
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
#include "interrupt.h"
#include "text_file.h"
#include "rocmforge/error.h"

namespace rf {
namespace {

const char *kUsage =
    "usage: rocmforge generate [-m MODEL] [-p PROMPT | -f FILE] [-n N] [options]\n\n"
    "Generates text. With no -m, uses the default model models/default.gguf: the 3.1M-parameter\n"
    "llama trained on the King James Bible that ships in models/trained (docs/DEFAULT_MODEL.md),\n"
    "copied there by the build; looked up next to the executable, in the repository, or named\n"
    "by $ROCMFORGE_DEFAULT_MODEL.\n\n"
    "  -p, --prompt TEXT  prompt (repeatable: one per parallel sequence, reused round-robin)\n"
    "  -f, --file FILE    read the prompt from FILE\n"
    "  -n, --n-predict N  tokens to generate per sequence (default 128; -1 = until EOG or full)\n"
    "  --parallel N       decode N sequences at once (1..8, default: number of prompts)\n"
    "  --ignore-eos       do not stop at end-of-generation tokens\n";

struct Options {
    ModelArgs model;
    SamplingArgs sampling;
    std::vector<std::string> prompts;
    int64_t n_predict = 128;
    int n_parallel = 0;
    bool ignore_eos = false;
};

Options parse(int argc, char **argv) {
    Options o;
    o.model.n_ctx = 4096;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::printf("%s\nmodel and context:\n%s\nsampling:\n%s\nruntime:\n%s", kUsage, ModelArgs::help(),
                        SamplingArgs::help(), RuntimeArgs::help());
            std::exit(0);
        }
        if (o.model.parse(argc, argv, i) || o.sampling.parse(argc, argv, i)) continue;
        if (a == "-p" || a == "--prompt") o.prompts.push_back(take_value(argc, argv, i));
        else if (a == "-f" || a == "--file") o.prompts.push_back(read_text_file(take_value(argc, argv, i), a));
        else if (a == "-n" || a == "--n-predict") o.n_predict = parse_int_arg(a, take_value(argc, argv, i), -1, INT32_MAX);
        else if (a == "--parallel" || a == "-np") o.n_parallel = (int)parse_int_arg(a, take_value(argc, argv, i), 1, 8);
        else if (a == "--ignore-eos") o.ignore_eos = true;
        else throw UsageError("generate: unknown option '" + a + "' (see rocmforge generate --help)");
    }
    if (o.prompts.empty()) o.prompts.push_back("Once upon a time");
    if (o.n_parallel == 0) o.n_parallel = (int)std::min<size_t>(o.prompts.size(), 8);
    return o;
}

struct Sequence {
    std::vector<int32_t> prompt;
    std::unique_ptr<Sampler> sampler;
    std::unique_ptr<StreamDecoder> decoder;
    std::string text; // generated text (kept for --parallel > 1)
    int32_t last = 0;
    int64_t n_generated = 0;
    bool done = false;
};

} // namespace
} // namespace rf

int cmd_generate(int argc, char **argv) {
    using namespace rf;
    Options o = parse(argc, argv);
    LoadedModel lm = load_model(o.model);
    o.model.fit_context(lm.model->hparams());
    const Tokenizer &tok = *lm.tokenizer;
    const int64_t n_vocab = lm.model->hparams().n_vocab;

    InferenceContext ctx(*lm.model, *lm.runtime, o.model.context_params(o.n_parallel));
    std::fprintf(stderr, "%s\n", ctx.cache().summary().c_str());
    const SamplerParams sp = o.sampling.resolved();
    std::fprintf(stderr, "sampling: seed %u, temp %.2f, top-k %d, top-p %.2f, min-p %.2f, repeat-penalty %.2f (last %d)\n",
                 sp.seed, sp.temperature, sp.top_k, sp.top_p, sp.min_p, sp.repeat_penalty, sp.repeat_last_n);

    const int n_seq = o.n_parallel;
    std::vector<Sequence> seqs((size_t)n_seq);
    const InterruptGuard interrupt; // Ctrl-C: stop after the current step, print the statistics
    Batch batch;
    lm.runtime->phase("tokenize");
    for (int s = 0; s < n_seq; ++s) {
        Sequence &q = seqs[(size_t)s];
        const std::string &text = o.prompts[(size_t)s % o.prompts.size()];
        q.prompt = tok.encode(text, /*add_special=*/true, /*parse_special=*/true);
        if (q.prompt.empty()) throw UsageError("generate: the prompt of sequence " + std::to_string(s) + " has no tokens");
        SamplerParams p = sp;
        p.seed = sp.seed + (uint32_t)s; // independent streams, reproducible from the one seed
        q.sampler = std::make_unique<Sampler>(p);
        q.decoder = std::make_unique<StreamDecoder>(tok);
        for (size_t i = 0; i < q.prompt.size(); ++i) {
            q.sampler->accept(q.prompt[i]);
            batch.add(q.prompt[i], s, i + 1 == q.prompt.size());
        }
    }
    // Prompt processing: all prompts in one batch (split into graphs of -b tokens).
    lm.runtime->phase("prefill");
    const auto t_prompt = std::chrono::steady_clock::now();
    const std::vector<float> *logits = &ctx.decode(batch);
    const double prompt_ms = ms_since(t_prompt);
    const size_t n_prompt_tokens = batch.size();

    const bool stream = n_seq == 1;
    if (stream) {
        std::fputs(o.prompts[0].c_str(), stdout);
        std::fflush(stdout);
    }

    // TTFT ends when the first tokens are sampled and printed: "first token" covers that, then
    // "decode" the rest.
    lm.runtime->phase("first token");
    const auto t_gen = std::chrono::steady_clock::now();
    int64_t n_gen_total = 0;
    std::string stop_note;
    std::vector<int> rows(n_seq); // row of each live sequence in *logits
    for (int s = 0; s < n_seq; ++s) rows[(size_t)s] = s;
    for (bool first = true;; first = false) {
        batch.clear();
        for (int s = 0; s < n_seq; ++s) {
            Sequence &q = seqs[(size_t)s];
            if (q.done) continue;
            if (o.n_predict >= 0 && q.n_generated >= o.n_predict) {
                q.done = true;
                continue;
            }
            const int32_t t = q.sampler->sample(logits->data() + (size_t)rows[(size_t)s] * (size_t)n_vocab, n_vocab);
            q.sampler->accept(t);
            ++q.n_generated;
            ++n_gen_total;
            if (!o.ignore_eos && tok.is_eog(t)) {
                q.done = true;
                continue;
            }
            const std::string piece = q.decoder->push(t);
            if (stream) {
                std::fputs(piece.c_str(), stdout);
                std::fflush(stdout);
            } else {
                q.text += piece;
            }
            if (o.n_predict >= 0 && q.n_generated >= o.n_predict) {
                q.done = true; // its last token needs no forward pass
                continue;
            }
            rows[(size_t)s] = (int)batch.size();
            batch.add(t, s, true);
        }
        if (first) lm.runtime->phase("decode");
        if (batch.size() == 0) break;
        if (InterruptGuard::requested()) {
            stop_note = "interrupted (Ctrl-C)";
            break;
        }
        try {
            logits = &ctx.decode(batch);
        } catch (const ContextFullError &e) {
            stop_note = e.what();
            break;
        }
    }
    const double gen_ms = ms_since(t_gen);

    for (auto &q : seqs) {
        const std::string rest = q.decoder->flush();
        if (stream) std::fputs(rest.c_str(), stdout);
        else q.text += rest;
    }
    if (stream) {
        std::fputs("\n", stdout);
    } else {
        for (int s = 0; s < n_seq; ++s) {
            std::printf("--- sequence %d ---\n%s%s\n", s, o.prompts[(size_t)s % o.prompts.size()].c_str(),
                        seqs[(size_t)s].text.c_str());
        }
    }
    std::fflush(stdout);
    if (!stop_note.empty()) std::fprintf(stderr, "\nstopped: %s\n", stop_note.c_str());

    std::fprintf(stderr, "\nload time:   %10.2f ms\n", lm.load_ms);
    std::fprintf(stderr, "prompt:      %10.2f ms / %5zu tokens (%8.2f tokens/s)\n", prompt_ms, n_prompt_tokens,
                 prompt_ms > 0 ? n_prompt_tokens * 1000.0 / prompt_ms : 0.0);
    std::fprintf(stderr, "generation:  %10.2f ms / %5lld tokens (%8.2f tokens/s)%s\n", gen_ms, (long long)n_gen_total,
                 gen_ms > 0 ? n_gen_total * 1000.0 / gen_ms : 0.0,
                 n_seq > 1 ? (", " + std::to_string(n_seq) + " sequences").c_str() : "");
    return InterruptGuard::requested() ? kExitInterrupted : 0;
}
