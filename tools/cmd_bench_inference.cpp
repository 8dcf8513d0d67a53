// rocmforge bench-inference: what a user of a serving engine waits for. Time to first token
// (TTFT) for prompts of 128/512/2048 tokens, and generation speed with 1/4/8 sequences decoded
// together (one graph per step, one sampled token per sequence). Unlike `bench` (llama-bench's
// pp/tg), the tokens here are sampled with the default sampler, so host-side sampling is paid
// as it would be in a real run.
#include "cmd_bench_inference.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench_report.h"
#include "common_args.h"
#include "rocmforge/error.h"
#include "rocmforge/inference.h"
#include "rocmforge/model.h"
#include "rocmforge/sampler.h"

namespace {

using Clock = std::chrono::steady_clock;

const char *kUsage =
    "usage: rocmforge bench-inference [-m MODEL] [--prompts LIST] [--batches LIST] [-n N] [-r N] [options]\n\n"
    "Time to first token and batched generation speed.\n\n"
    "  --prompts LIST     prompt lengths for TTFT (default 128,512,2048; 0 = skip). TTFT = submitting\n"
    "                     the prompt's token ids (random, fixed seed; no tokenization) to holding the\n"
    "                     first sampled token: prefill in batches of -b, then the sampler\n"
    "  --batches LIST     sequences decoded together (default 1,4,8; 0 = skip)\n"
    "  -n, --n-gen N      tokens generated per sequence in the batched test (default 64)\n"
    "  -r, --repetitions N  timed runs per test after one warm-up run (default 3)\n"
    "\n"
    "Generation reports tokens per second over all sequences (per sequence: divide by the batch).\n"
    "Each repetition starts from empty sequences primed with one token (untimed).\n\noutput:\n";

struct Workload {
    rf::InferenceContext &ctx;
    int32_t first_token; // BOS when the vocabulary adds one, else a fixed token
    int64_t n_vocab;
    std::mt19937 rng{1234};

    int32_t random_token() { return int32_t(rng() % uint64_t(n_vocab)); }

    // A fresh sequence 0 with n_prompt tokens, then the first token sampled. Returns TTFT in ms.
    double time_to_first_token(int64_t n_prompt, rf::Sampler &sampler) {
        ctx.clear_sequence(0);
        rf::Batch b;
        for (int64_t i = 0; i < n_prompt; ++i) b.add(i == 0 ? first_token : random_token(), 0, i + 1 == n_prompt);
        const auto t0 = Clock::now();
        const std::vector<float> &logits = ctx.decode(b);
        sampler.accept(sampler.sample(logits.data(), n_vocab));
        return rf::ms_since(t0);
    }

    // `batch` sequences primed with one token each (untimed), then n_gen steps that decode one
    // token of every sequence in one batch and sample each. Returns tokens/s over all sequences.
    double generation_tps(int batch, int64_t n_gen, std::vector<rf::Sampler> &samplers) {
        std::vector<int32_t> next(size_t(batch), first_token);
        auto step = [&] {
            rf::Batch b;
            for (int s = 0; s < batch; ++s) b.add(next[size_t(s)], s, true);
            const std::vector<float> &logits = ctx.decode(b);
            for (int s = 0; s < batch; ++s) {
                rf::Sampler &sm = samplers[size_t(s)];
                next[size_t(s)] = sm.sample(logits.data() + size_t(s) * size_t(n_vocab), n_vocab);
                sm.accept(next[size_t(s)]);
            }
        };
        for (int s = 0; s < batch; ++s) ctx.clear_sequence(s);
        step();
        const auto t0 = Clock::now();
        for (int64_t i = 0; i < n_gen; ++i) step();
        return double(batch) * double(n_gen) * 1000.0 / rf::ms_since(t0);
    }
};

} // namespace

int cmd_bench_inference(int argc, char **argv) {
    using namespace rf;
    ModelArgs margs;
    std::vector<int64_t> prompts = {128, 512, 2048}, batches = {1, 4, 8};
    int64_t n_gen = 64, reps = 3;
    BenchReportArgs report;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            print_model_command_help(kUsage, BenchReportArgs::help());
            return 0;
        }
        if (a == "--prompts") prompts = parse_int_list_arg(a, take_value(argc, argv, i), 0, 1 << 20);
        else if (a == "--batches") batches = parse_int_list_arg(a, take_value(argc, argv, i), 0, 256);
        else if (a == "-n" || a == "--n-gen") n_gen = parse_int_arg(a, take_value(argc, argv, i), 1, 1 << 20);
        else if (a == "-r" || a == "--repetitions") reps = parse_int_arg(a, take_value(argc, argv, i), 1, 1000);
        else if (report.parse(argc, argv, i)) continue;
        else if (margs.parse(argc, argv, i)) continue;
        else throw UsageError("bench-inference: unknown option '" + a + "' (see rocmforge bench-inference --help)");
    }
    prompts.erase(std::remove(prompts.begin(), prompts.end(), 0), prompts.end());
    batches.erase(std::remove(batches.begin(), batches.end(), 0), batches.end());
    if (prompts.empty() && batches.empty()) throw UsageError("bench-inference: --prompts and --batches are both empty");

    LoadedModel lm = load_model(margs);
    const int64_t max_prompt = prompts.empty() ? 0 : *std::max_element(prompts.begin(), prompts.end());
    const int max_batch = batches.empty() ? 1 : int(*std::max_element(batches.begin(), batches.end()));
    // Room for the longest prompt (+ its first token) and for every sequence of the largest batch.
    margs.n_ctx = std::max<int64_t>(max_prompt + 1, int64_t(max_batch) * (n_gen + 2));
    InferenceContext ctx(*lm.model, *lm.runtime, margs.context_params(max_batch));
    std::fprintf(stderr, "%s\n", ctx.cache().summary().c_str());
    const int64_t n_vocab = lm.model->hparams().n_vocab;
    const Tokenizer &tok = *lm.tokenizer;
    Workload w{ctx, tok.add_bos_default() && tok.bos() >= 0 ? tok.bos() : int32_t(n_vocab / 2), n_vocab};

    const std::string backends = backend_list(*lm.runtime);
    const int threads = cpu_threads(*lm.runtime);
    auto result = [&](const std::string &name, const std::string &unit, bool higher_is_better) {
        bench::Result r;
        r.name = name;
        r.unit = unit;
        r.higher_is_better = higher_is_better;
        r.params = {{"model", lm.model->description()}, {"backend", backends}, {"threads", std::to_string(threads)},
                    {"cache", margs.cache_type_k + "/" + margs.cache_type_v}};
        return r;
    };
    SamplerParams sp;
    sp.seed = 42;

    std::vector<bench::Result> results;
    ProgressBar progress((prompts.size() + batches.size()) * size_t(reps + 1));
    for (int64_t np : prompts) {
        lm.runtime->phase("prefill");
        bench::Result r = result("ttft", "ms", false);
        r.params["prompt"] = std::to_string(np);
        r.params["n_batch"] = std::to_string(margs.n_batch);
        for (int64_t k = 0; k <= reps; ++k) { // k == 0: warm-up
            progress.step("ttft prompt " + std::to_string(np));
            Sampler sampler(sp);
            const double ms = w.time_to_first_token(np, sampler);
            if (k > 0) r.samples.push_back(ms);
        }
        r.summarize();
        results.push_back(std::move(r));
    }
    for (int64_t nb : batches) {
        lm.runtime->phase("decode");
        bench::Result r = result("generation", "t/s", true);
        r.params["batch"] = std::to_string(nb);
        r.params["n_gen"] = std::to_string(n_gen);
        for (int64_t k = 0; k <= reps; ++k) {
            progress.step("generation batch " + std::to_string(nb));
            std::vector<Sampler> samplers;
            for (int64_t s = 0; s < nb; ++s) {
                SamplerParams p = sp;
                p.seed = uint32_t(sp.seed + s);
                samplers.emplace_back(p);
            }
            const double tps = w.generation_tps(int(nb), n_gen, samplers);
            if (k > 0) r.samples.push_back(tps);
        }
        r.summarize();
        results.push_back(std::move(r));
    }
    progress.done();
    return finish_bench_report(report, results, bench::collect_hardware(lm.runtime.get()));
}
