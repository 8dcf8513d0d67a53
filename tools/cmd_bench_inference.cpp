// rocmforge bench-inference: what a user of a serving engine waits for. Time to first token
// (TTFT) for prompts of 128/512/2048 tokens, and generation speed with 1/4/8 sequences decoded
// together (one graph per step, one sampled token per sequence), reported with the columns of
// llama-batched-bench. Unlike `bench` (llama-bench's pp/tg), the tokens here are sampled with
// the default sampler, so host-side sampling is paid as it would be in a real run.
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
#include "rocmforge/parallel_for.h"
#include "rocmforge/sampler.h"

namespace {

using Clock = std::chrono::steady_clock;

const char *kUsage =
    "usage: rocmforge bench-inference [-m MODEL] [--prompts LIST] [--batches LIST] [--prompt-len N] [-n N] [-r N]\n"
    "                                 [options]\n\n"
    "Time to first token and batched generation speed.\n\n"
    "  --prompts LIST     prompt lengths for TTFT (default 128,512,2048; 0 = skip). TTFT = submitting\n"
    "                     the prompt's token ids (random, fixed seed; no tokenization) to holding the\n"
    "                     first sampled token: prefill in batches of -b, then the sampler\n"
    "  --batches LIST     sequences decoded together (default 1,4,8; 0 = skip)\n"
    "  --prompt-len N     prompt tokens per sequence in the batched test (default 0: each sequence\n"
    "                     is primed with one token, neither timed nor counted; PP is 0). With N > 0\n"
    "                     all sequences' prompts are prefilled in one batch (split at -b), timed as T_PP\n"
    "  -n, --n-gen N      tokens generated per sequence in the batched test (default 64)\n"
    "  -r, --repetitions N  timed runs per test after one warm-up run (default 3)\n"
    "  --shared-prefix P:Q TTFT of a P-token prefix an earlier request had (a shared system prompt)\n"
    "                     followed by Q new tokens (a question), with the prefix cache off and on:\n"
    "                     results ttft_shared_prefix with prefix_cache off / on, on fresh contexts of\n"
    "                     P+Q+1 tokens; on maps the prefix's cached pages and prefills the rest\n"
    "                     (default: not run; issue 55 measures 2000:50)\n"
    "  --candidates on|off  on (default): where the logits are on a GPU, each row's top-k candidates\n"
    "                     are chosen there and only they are read back (the same tokens); off: the\n"
    "                     whole rows are read back and the sampler scans them\n"
    "\n"
    "Batched rows as llama-batched-bench -npp PP -ntg TG -npl B: N_KV = B*(PP+TG); S_PP = B*PP/T_PP;\n"
    "S_TG = B*TG/T_TG; T = T_PP+T_TG; S = N_KV/T. S_TG is the generation result (tokens/s over\n"
    "all sequences, median of the -r runs), S_PP the batched_prefill result added with\n"
    "--prompt-len > 0 (which also adds a prompt_len param); T_PP, T_TG are those median runs'\n"
    "times. In md output that table comes first; json carries the row on each generation result\n"
    "(pp, tg, pl, n_kv, t_pp, speed_pp, t_tg, speed_tg, t, speed). Each repetition starts from\n"
    "empty sequences.\n\noutput:\n";

constexpr int64_t kMaxTokens = 1 << 20;

// One repetition of the batched test, in milliseconds.
struct BatchedTimes {
    double pp_ms = 0, tg_ms = 0;
};

struct Workload {
    rf::InferenceContext &ctx;
    rf::Runtime &rt;     // phase marks: prefill and decode apart in a profile
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
        sampler.accept(sampler.sample_row(logits, ctx.candidates(), 0, n_vocab));
        return rf::ms_since(t0);
    }

    // Every sequence's prompt in one batch (decode splits it at -b, as llama-batched-bench
    // does): n_prompt tokens each, or the single priming token when n_prompt is 0. Returns the
    // logits of each sequence's last token, row s for sequence s.
    const std::vector<float> &prefill(int batch, int64_t n_prompt) {
        const int64_t len = std::max<int64_t>(n_prompt, 1);
        rf::Batch b;
        for (int s = 0; s < batch; ++s) {
            ctx.clear_sequence(s);
            for (int64_t i = 0; i < len; ++i) b.add(i == 0 ? first_token : random_token(), s, i + 1 == len);
        }
        return ctx.decode(b);
    }

    // Draws each sequence's next token from its row of the logits (or its candidates) with its
    // own sampler (on several threads from 4 sequences on when each scans a row, as the server
    // and generate do).
    void sample_each(const std::vector<float> &logits, std::vector<rf::Sampler> &samplers, std::vector<int32_t> &next) {
        const size_t threads = ctx.output_top_k() > 0 ? 1 : rf::draw_threads(next.size());
        rf::parallel_for(next.size(), threads, [&](size_t s) {
            next[s] = samplers[s].sample_row(logits, ctx.candidates(), s, n_vocab);
            samplers[s].accept(next[s]);
        });
    }

    // llama-batched-bench's PP and TG phases for `batch` sequences: the prefill (timed only
    // when there is a prompt; its first tokens' sampling is not), then n_gen steps that decode
    // one token of every sequence in one batch and sample each.
    BatchedTimes batched(int batch, int64_t n_prompt, int64_t n_gen, std::vector<rf::Sampler> &samplers) {
        BatchedTimes t;
        std::vector<int32_t> next(static_cast<size_t>(batch));
        rt.phase("prefill");
        const auto t_pp = Clock::now();
        const std::vector<float> &prompt_logits = prefill(batch, n_prompt);
        if (n_prompt > 0) t.pp_ms = rf::ms_since(t_pp);
        sample_each(prompt_logits, samplers, next);
        rt.phase("decode");
        const auto t_tg = Clock::now();
        for (int64_t i = 0; i < n_gen; ++i) {
            rf::Batch b;
            for (int s = 0; s < batch; ++s) b.add(next[size_t(s)], s, true);
            sample_each(ctx.decode(b), samplers, next);
        }
        t.tg_ms = rf::ms_since(t_tg);
        return t;
    }
};

// TTFT of prefix + n_question random tokens on sequence 0 of `ctx`: the cached pages the prompt
// begins with mapped (none when ctx caches no prefixes), the rest prefilled, the first token
// sampled. The sequence is cleared after, so its full pages stay cached for the next call.
double time_shared_prefix(rf::InferenceContext &ctx, const std::vector<int32_t> &prefix, int64_t n_question, Workload &w,
                          rf::Sampler &sampler) {
    std::vector<int32_t> prompt = prefix;
    for (int64_t i = 0; i < n_question; ++i) prompt.push_back(w.random_token());
    const auto t0 = Clock::now();
    const int64_t from = ctx.map_cached_prefix(0, prompt);
    rf::Batch b;
    for (size_t i = (size_t)from; i < prompt.size(); ++i) b.add(prompt[i], 0, i + 1 == prompt.size());
    const std::vector<float> &logits = ctx.decode(b);
    sampler.accept(sampler.sample_row(logits, ctx.candidates(), 0, w.n_vocab));
    const double ms = rf::ms_since(t0);
    ctx.clear_sequence(0);
    return ms;
}

// One row of llama-batched-bench's table.
struct BatchedRow {
    int64_t pp = 0, tg = 0, b = 0;
    double t_pp = 0, t_tg = 0; // seconds

    int64_t n_kv() const { return b * (pp + tg); }
    double t() const { return t_pp + t_tg; }
    double speed_pp() const { return t_pp > 0 ? double(b * pp) / t_pp : 0; }
    double speed_tg() const { return t_tg > 0 ? double(b * tg) / t_tg : 0; }
    double speed() const { return t() > 0 ? double(n_kv()) / t() : 0; }
};

// The row from the median rates of the runs (the batched_prefill and generation results), so
// the table and the results agree; T_PP and T_TG are the times of those median runs.
BatchedRow batched_row(int64_t pp, int64_t tg, int64_t b, double median_speed_pp, double median_speed_tg) {
    BatchedRow row;
    row.pp = pp, row.tg = tg, row.b = b;
    row.t_pp = pp > 0 && median_speed_pp > 0 ? double(b * pp) / median_speed_pp : 0;
    row.t_tg = median_speed_tg > 0 ? double(b * tg) / median_speed_tg : 0;
    return row;
}

// The row on the generation result, under llama-batched-bench's JSONL field names.
void add_batched_metrics(rf::bench::Result &r, const BatchedRow &row) {
    r.metrics = {{"pp", double(row.pp)}, {"tg", double(row.tg)}, {"pl", double(row.b)}, {"n_kv", double(row.n_kv())},
                 {"t_pp", row.t_pp}, {"speed_pp", row.speed_pp()}, {"t_tg", row.t_tg}, {"speed_tg", row.speed_tg()},
                 {"t", row.t()}, {"speed", row.speed()}};
}

// llama-batched-bench's table layout, so the two tools' output lines up; S_PP is "-" when no
// prompt was timed (--prompt-len 0).
void print_batched_table(std::FILE *out, const std::vector<BatchedRow> &rows, int64_t n_kv_max, int64_t n_batch,
                         int threads, int64_t reps) {
    std::fprintf(out, "batched generation: n_kv_max = %lld, n_batch = %lld, n_threads = %d; median of %lld run%s\n\n",
                 (long long)n_kv_max, (long long)n_batch, threads, (long long)reps, reps == 1 ? "" : "s");
    std::fprintf(out, "|%6s | %6s | %4s | %6s | %8s | %8s | %8s | %8s | %8s | %8s |\n", "PP", "TG", "B", "N_KV", "T_PP s",
                 "S_PP t/s", "T_TG s", "S_TG t/s", "T s", "S t/s");
    std::fprintf(out, "|%6s-|-%6s-|-%4s-|-%6s-|-%8s-|-%8s-|-%8s-|-%8s-|-%8s-|-%8s-|\n", "------", "------", "----",
                 "------", "--------", "--------", "--------", "--------", "--------", "--------");
    for (const BatchedRow &r : rows) {
        char s_pp[32] = "-";
        if (r.pp > 0) std::snprintf(s_pp, sizeof s_pp, "%.2f", r.speed_pp());
        std::fprintf(out, "|%6lld | %6lld | %4lld | %6lld | %8.3f | %8s | %8.3f | %8.2f | %8.3f | %8.2f |\n",
                     (long long)r.pp, (long long)r.tg, (long long)r.b, (long long)r.n_kv(), r.t_pp, s_pp, r.t_tg,
                     r.speed_tg(), r.t(), r.speed());
    }
    std::fprintf(out, "\n");
}

} // namespace

int cmd_bench_inference(int argc, char **argv) {
    using namespace rf;
    ModelArgs margs;
    std::vector<int64_t> prompts = {128, 512, 2048}, batches = {1, 4, 8};
    int64_t n_gen = 64, reps = 3, prompt_len = 0;
    int64_t shared_prefix = 0, question = 0; // --shared-prefix P:Q (0: not run)
    bool candidates = true;
    BenchReportArgs report;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            print_model_command_help(kUsage, BenchReportArgs::help());
            return 0;
        }
        if (a == "--prompts") prompts = parse_int_list_arg(a, take_value(argc, argv, i), 0, kMaxTokens);
        else if (a == "--batches") batches = parse_int_list_arg(a, take_value(argc, argv, i), 0, 256);
        else if (a == "--prompt-len") prompt_len = parse_int_arg(a, take_value(argc, argv, i), 0, kMaxTokens);
        else if (a == "-n" || a == "--n-gen") n_gen = parse_int_arg(a, take_value(argc, argv, i), 1, kMaxTokens);
        else if (a == "-r" || a == "--repetitions") reps = parse_int_arg(a, take_value(argc, argv, i), 1, 1000);
        else if (a == "--candidates") candidates = parse_on_off_arg(a, take_value(argc, argv, i));
        else if (a == "--shared-prefix") {
            const std::string v = take_value(argc, argv, i);
            const size_t colon = v.find(':');
            if (colon == std::string::npos) throw UsageError("option " + a + " needs P:Q (prefix and question tokens), got '" + v + "'");
            shared_prefix = parse_int_arg(a, v.substr(0, colon), 1, kMaxTokens);
            question = parse_int_arg(a, v.substr(colon + 1), 1, kMaxTokens);
        } else if (report.parse(argc, argv, i)) continue;
        else if (margs.parse(argc, argv, i)) continue;
        else throw UsageError("bench-inference: unknown option '" + a + "' (see rocmforge bench-inference --help)");
    }
    prompts.erase(std::remove(prompts.begin(), prompts.end(), 0), prompts.end());
    batches.erase(std::remove(batches.begin(), batches.end(), 0), batches.end());
    if (prompts.empty() && batches.empty() && shared_prefix == 0)
        throw UsageError("bench-inference: --prompts and --batches are both empty (and no --shared-prefix)");

    LoadedModel lm = load_model(margs);
    const int64_t max_prompt = prompts.empty() ? 0 : *std::max_element(prompts.begin(), prompts.end());
    const int max_batch = batches.empty() ? 1 : int(*std::max_element(batches.begin(), batches.end()));
    // Room for the longest prompt (+ its first token) and for every sequence of the largest
    // batch: its prompt (or priming token), the generated tokens and one spare.
    margs.n_ctx = std::max<int64_t>(max_prompt + 1, int64_t(max_batch) * (prompt_len + n_gen + 2));
    InferenceContext ctx(*lm.model, *lm.runtime, margs.context_params(max_batch));
    std::fprintf(stderr, "%s\n", ctx.cache().summary().c_str());
    const int64_t n_vocab = lm.model->hparams().n_vocab;
    const Tokenizer &tok = *lm.tokenizer;
    Workload w{ctx, *lm.runtime, tok.add_bos_default() && tok.bos() >= 0 ? tok.bos() : int32_t(n_vocab / 2), n_vocab};

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
    const int64_t k = candidates_needed(sp, n_vocab);
    const ScopedOutputTopK top_k(ctx, candidates && ctx.candidates_pay_off(k) ? k : 0);

    std::vector<bench::Result> results;
    std::vector<BatchedRow> batched_rows;
    ProgressBar progress((prompts.size() + batches.size() + (shared_prefix > 0 ? 2 : 0)) * size_t(reps + 1));
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
    if (shared_prefix > 0) {
        // The same prefix for every run; each run a new question. With the cache on, the
        // warm-up run is the one that fills it.
        std::vector<int32_t> prefix{w.first_token};
        while ((int64_t)prefix.size() < shared_prefix) prefix.push_back(w.random_token());
        std::vector<double> medians;
        for (bool cache_on : {false, true}) {
            ContextParams p = margs.context_params(1);
            p.n_ctx = shared_prefix + question + 1;
            p.prefix_cache = cache_on;
            InferenceContext pctx(*lm.model, *lm.runtime, p);
            const ScopedOutputTopK pctx_top_k(pctx, candidates && pctx.candidates_pay_off(k) ? k : 0);
            bench::Result r = result("ttft_shared_prefix", "ms", false);
            r.params["prompt"] = std::to_string(shared_prefix);
            r.params["question"] = std::to_string(question);
            r.params["prefix_cache"] = cache_on ? "on" : "off";
            r.params["n_batch"] = std::to_string(margs.n_batch);
            lm.runtime->phase(cache_on ? "prefill cached prefix" : "prefill");
            for (int64_t rep = 0; rep <= reps; ++rep) {
                progress.step(std::string("ttft shared prefix, cache ") + (cache_on ? "on" : "off"));
                Sampler sampler(sp);
                const double ms = time_shared_prefix(pctx, prefix, question, w, sampler);
                if (rep > 0) r.samples.push_back(ms);
            }
            if (cache_on) r.metrics["cached_tokens_per_run"] = double(pctx.cache().pages().prefix_stats().cached_tokens) / double(reps);
            r.summarize();
            medians.push_back(r.median);
            results.push_back(std::move(r));
        }
        bench::Result &cached = results.back();
        cached.metrics["speedup"] = medians[1] > 0 ? medians[0] / medians[1] : 0;
        std::fprintf(stderr, "shared prefix %lld + %lld tokens: TTFT %.2f ms uncached, %.2f ms cached (%.1fx; %.0f tokens a run from the cache)\n",
                     (long long)shared_prefix, (long long)question, medians[0], medians[1], cached.metrics["speedup"],
                     cached.metrics["cached_tokens_per_run"]);
    }
    for (int64_t nb : batches) {
        // Without a prompt the params stay those of older baselines, which then still compare.
        bench::Result gen = result("generation", "t/s", true);
        gen.params["batch"] = std::to_string(nb);
        gen.params["n_gen"] = std::to_string(n_gen);
        if (prompt_len > 0) gen.params["prompt_len"] = std::to_string(prompt_len);
        bench::Result pre = result("batched_prefill", "t/s", true);
        pre.params["batch"] = std::to_string(nb);
        pre.params["prompt_len"] = std::to_string(prompt_len);
        pre.params["n_batch"] = std::to_string(margs.n_batch);
        for (int64_t k = 0; k <= reps; ++k) {
            progress.step("generation batch " + std::to_string(nb));
            std::vector<Sampler> samplers;
            for (int64_t s = 0; s < nb; ++s) {
                SamplerParams p = sp;
                p.seed = uint32_t(sp.seed + s);
                samplers.emplace_back(p);
            }
            const BatchedTimes t = w.batched(int(nb), prompt_len, n_gen, samplers);
            if (k == 0) continue; // warm-up
            gen.samples.push_back(double(nb) * double(n_gen) * 1000.0 / t.tg_ms);
            if (prompt_len > 0) pre.samples.push_back(double(nb) * double(prompt_len) * 1000.0 / t.pp_ms);
        }
        gen.summarize();
        pre.summarize();
        const BatchedRow row = batched_row(prompt_len, n_gen, nb, pre.median, gen.median);
        batched_rows.push_back(row);
        add_batched_metrics(gen, row);
        results.push_back(std::move(gen));
        if (prompt_len > 0) results.push_back(std::move(pre));
    }
    progress.done();
    if (report.format == "md" && !batched_rows.empty())
        print_batched_table(stdout, batched_rows, margs.n_ctx, margs.n_batch, threads, reps);
    return finish_bench_report(report, results, bench::collect_hardware(lm.runtime.get()));
}
