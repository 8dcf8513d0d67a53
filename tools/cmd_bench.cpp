// rocmforge bench: prompt processing (pp) and text generation (tg) speed the way llama-bench
// measures them: each repetition starts from an empty context, prefills -d depth tokens untimed
// (in batches of -b), then times the test: pp runs n_prompt random tokens (BOS first when the
// vocab adds it and the context is empty) in batches of -b; tg decodes n_gen tokens one at a
// time. A warm-up run precedes the -r timed repetitions; t/s is averaged over repetitions (Welford).
#include "cmd_bench.h"
#include "bench_report.h"
#include "bench_hardware.h"
#include "bench_stats.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_speculative.h"
#include "common_args.h"
#include "draft_args.h"
#include "text_file.h"
#include "rocmforge/error.h"

namespace rf {
namespace {

const char *kUsage =
    "usage: rocmforge bench [-m MODEL] [-p N,...] [-n N,...] [-d N,...] [-r N] [-o md|json|csv] [options]\n\n"
    "Prompt-processing and generation speed as llama-bench measures it.\n\n"
    "  -p, --n-prompt N[,N...]  prompt tokens of each pp test (default 512; 0 = skip)\n"
    "  -n, --n-gen N[,N...]     generated tokens of each tg test (default 128; 0 = skip)\n"
    "  -d, --n-depth N[,N...]   tokens already in the context when each test starts (default 0),\n"
    "                           prefilled untimed in batches of -b before every run; such tests\n"
    "                           print as \"pp512 @ d2048\". Order as llama-bench: for each depth,\n"
    "                           the pp tests, then the tg tests\n"
    "  -r, --repetitions N      timed runs per test (default 5)\n"
    "  -o, --output F           md (default), json or csv (json and csv carry n_depth)\n"
    "  --save-baseline FILE     save pp/tg results with hardware metadata (JSON)\n"
    "  --compare-baseline FILE  compare with a saved baseline; exit 1 on a regression. Results\n"
    "                           match by test name, so \"pp512\" compares with older baselines\n"
    "  --threshold P            regression threshold (default 10%)\n"
    "  --force                  compare against a baseline from other hardware\n"
    "speculative decoding (one more table: greedy generation of the first -n value from a real\n"
    "prompt, -r runs with and without drafting; -o md only):\n"
    "  --draft-model M | --draft-ngram N, --draft-max N   as in rocmforge generate\n"
    "  --draft-prompt TEXT      the prompt (default: \"And God said\")\n"
    "  --draft-prompt-file F    the prompt from a file (an input-copying task for --draft-ngram)\n\n"
    "The context holds the largest depth + test (as llama-bench); a larger -c is kept.\n";

constexpr int64_t kMaxTokens = 1 << 20; // per -p, -n or -d value

struct BenchOptions {
    ModelArgs margs;
    std::vector<int64_t> n_prompt = {512}, n_gen = {128}, n_depth = {0};
    int64_t reps = 5;
    std::string output = "md";
    BenchReportArgs report;
    DraftArgs draft;
    std::string draft_prompt = "And God said";
    bool help = false;      // -h: print the usage and run nothing
};

struct TestResult {
    std::string name; // "pp512", "tg128 @ d2048"
    int64_t n_prompt = 0, n_gen = 0, n_depth = 0;
    std::vector<double> samples_ns;
    bench::Welford ns, ts;

    // Timed tokens of one run: the depth prefill is not part of the test.
    int64_t n_tokens() const { return n_prompt + n_gen; }
};

struct Bench {
    InferenceContext &ctx;
    const Tokenizer &tok;
    int64_t n_vocab;

    int32_t random_token() { return (int32_t)(std::rand() % n_vocab); }
    int32_t first_token() { return tok.add_bos_default() && tok.bos() >= 0 ? tok.bos() : random_token(); }

    // Appends n_prompt tokens to sequence 0; BOS (when the vocab adds it) only on an empty one.
    void prompt(int64_t n_prompt) {
        // Like llama_batch_get_one per -b chunk: only each chunk's last token gives logits.
        const int64_t n_batch = ctx.params().n_batch;
        const bool empty = ctx.seq_length(0) == 0;
        Batch b;
        for (int64_t i = 0; i < n_prompt; ++i) {
            const bool last_of_chunk = (i + 1) % n_batch == 0 || i + 1 == n_prompt;
            b.add(i == 0 && empty ? first_token() : random_token(), 0, last_of_chunk);
        }
        ctx.decode(b); // splits at n_batch; reading the logits waits for the device
    }
    // Decodes n_gen tokens one at a time after what sequence 0 holds.
    void gen(int64_t n_gen) {
        int32_t t = first_token();
        for (int64_t i = 0; i < n_gen; ++i) {
            Batch b;
            b.add(t, 0, true);
            ctx.decode(b);
            t = random_token();
        }
    }
    // An empty sequence 0 holding n_depth tokens: the context a test starts from.
    void start_at_depth(int64_t n_depth) {
        ctx.clear_sequence(0);
        if (n_depth > 0) prompt(n_depth);
    }
};

std::string human_size(uint64_t bytes) {
    char buf[32];
    if (bytes >= (1ull << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
    else std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1024.0 * 1024.0));
    return buf;
}

std::string json_escape(const std::string &s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\', o += c;
        else if ((unsigned char)c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            o += buf;
        } else o += c;
    }
    return o;
}

std::string csv_field(const std::string &s) {
    std::string o = "\"";
    for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
    return o + "\"";
}

BenchOptions parse_options(int argc, char **argv) {
    BenchOptions o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            o.help = true;
            return o;
        }
        if (a == "-p" || a == "--n-prompt") o.n_prompt = parse_int_list_arg(a, take_value(argc, argv, i), 0, kMaxTokens);
        else if (a == "-n" || a == "--n-gen") o.n_gen = parse_int_list_arg(a, take_value(argc, argv, i), 0, kMaxTokens);
        else if (a == "-d" || a == "--n-depth") o.n_depth = parse_int_list_arg(a, take_value(argc, argv, i), 0, kMaxTokens);
        else if (a == "-r" || a == "--repetitions") o.reps = parse_int_arg(a, take_value(argc, argv, i), 1, 1000);
        else if (a == "-o" || a == "--output") o.output = take_value(argc, argv, i);
        else if (o.report.parse(argc, argv, i)) continue;
        else if (o.draft.parse(argc, argv, i)) continue;
        else if (a == "--draft-prompt") o.draft_prompt = take_value(argc, argv, i);
        else if (a == "--draft-prompt-file") o.draft_prompt = read_text_file(take_value(argc, argv, i), a);
        else if (o.margs.parse(argc, argv, i)) continue;
        else throw UsageError("bench: unknown option '" + a + "' (see rocmforge bench --help)");
    }
    if (o.output != "md" && o.output != "json" && o.output != "csv")
        throw UsageError("bench: -o must be md, json or csv, got '" + o.output + "'");
    if (o.draft.enabled() && o.output != "md") throw UsageError("bench: the speculative-decoding table is -o md only");
    if (o.draft.enabled() && (o.n_gen.empty() || o.n_gen.front() < 2))
        throw UsageError("bench: speculative decoding needs -n of at least 2 (its first value is the test)");
    if (o.draft_prompt.empty()) throw UsageError("bench: --draft-prompt is empty");
    return o;
}

// llama-bench's name: "pp512" / "tg128", with " @ d2048" when the test starts at a depth.
std::string test_name(int64_t n_prompt, int64_t n_gen, int64_t n_depth) {
    std::string name = n_prompt > 0 ? "pp" + std::to_string(n_prompt) : "tg" + std::to_string(n_gen);
    if (n_depth > 0) name += " @ d" + std::to_string(n_depth);
    return name;
}

// llama-bench's order: for each depth, the pp tests, then the tg tests; 0 values are skipped.
std::vector<TestResult> plan_tests(const BenchOptions &o) {
    std::vector<TestResult> tests;
    auto add = [&](int64_t np, int64_t ng, int64_t nd) {
        TestResult t;
        t.name = test_name(np, ng, nd);
        t.n_prompt = np, t.n_gen = ng, t.n_depth = nd;
        tests.push_back(std::move(t));
    };
    for (int64_t nd : o.n_depth) {
        for (int64_t np : o.n_prompt)
            if (np > 0) add(np, 0, nd);
        for (int64_t ng : o.n_gen)
            if (ng > 0) add(0, ng, nd);
    }
    if (tests.empty()) throw UsageError("bench: -p and -n are both 0: nothing to measure");
    return tests;
}

// Tokens in one context above which a test warns before it starts: attention cost grows with
// the square of the context (pp8192 took 29 s on a 2-core CPU with the 3M default model, so
// pp100000 would run for hours).
constexpr int64_t kLongContext = 16384;

void warn_long_tests(const std::vector<TestResult> &tests, int64_t reps) {
    for (const auto &t : tests)
        if (t.n_depth + t.n_tokens() > kLongContext)
            std::fprintf(stderr,
                         "warning: bench: %s runs %lld tokens in one context %lld times (warm-up + -r %lld); the "
                         "cost grows with the square of the context, so this can take very long\n",
                         t.name.c_str(), (long long)(t.n_depth + t.n_tokens()), (long long)reps + 1, (long long)reps);
}

// As llama-bench: room for the largest depth + test only, unless -c asked for more.
int64_t context_size(const BenchOptions &o, const std::vector<TestResult> &tests) {
    int64_t need = 1;
    for (const auto &t : tests) need = std::max(need, t.n_depth + t.n_tokens());
    return o.margs.ctx_given ? std::max(o.margs.n_ctx, need) : need;
}

// One warm-up run, then the timed repetitions; each run starts from a fresh context at the
// test's depth. The warm-up starts at the depth too, so first-use costs of the longer
// attention (plans, captured graphs) stay out of the first timed run.
void run_test(Bench &bench, Runtime &rt, int64_t reps, TestResult &r) {
    const char *phase = r.n_prompt > 0 ? "prefill" : "decode";
    std::fprintf(stderr, "bench: %s warm-up\n", r.name.c_str());
    auto start = [&] {
        rt.phase("depth"); // the untimed prefill shows apart from the test in a profile
        bench.start_at_depth(r.n_depth);
        rt.phase(phase);
    };
    start();
    if (r.n_prompt > 0) bench.prompt(r.n_prompt);
    if (r.n_gen > 0) bench.gen(1);
    for (int64_t k = 0; k < reps; ++k) {
        start();
        const auto t0 = std::chrono::steady_clock::now();
        if (r.n_prompt > 0) bench.prompt(r.n_prompt);
        if (r.n_gen > 0) bench.gen(r.n_gen);
        const double ns = (double)std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - t0).count();
        r.samples_ns.push_back(ns);
        r.ns.add(ns);
        r.ts.add((double)r.n_tokens() * 1e9 / ns);
    }
}

// What the md/json/csv rows say about the model and the run besides the test.
struct RunInfo {
    std::string model_desc, size, params, backends, hardware;
    uint64_t model_bytes = 0, model_n_params = 0;
    int threads = 0;
    int64_t n_batch = 0;
    std::string type_k, type_v;
};

RunInfo describe_run(const LoadedModel &lm, const ModelArgs &margs) {
    RunInfo info;
    info.model_desc = lm.model->description();
    info.model_bytes = lm.model->weight_bytes();
    info.model_n_params = lm.model->n_params();
    info.size = human_size(info.model_bytes);
    char params[32];
    const double n_params = (double)info.model_n_params;
    if (n_params >= 1e9) std::snprintf(params, sizeof params, "%.2f B", n_params / 1e9);
    else std::snprintf(params, sizeof params, "%.2f M", n_params / 1e6);
    info.params = params;
    info.backends = backend_list(*lm.runtime);
    info.threads = cpu_threads(*lm.runtime);
    info.hardware = lm.model->backend().info().name;
    info.n_batch = margs.n_batch;
    info.type_k = margs.cache_type_k;
    info.type_v = margs.cache_type_v;
    return info;
}

void print_md(const RunInfo &in, const std::vector<TestResult> &results) {
    // Columns widen to their longest entry ("pp512 @ d16384", long CPU names).
    int test_w = 15;
    for (const auto &r : results) test_w = std::max(test_w, (int)r.name.size());
    const int hw_w = std::max(24, (int)in.hardware.size());
    std::printf("| %-30s | %10s | %10s | %-10s | %7s | %-*s | %*s | %20s |\n", "model", "size", "params", "backend",
                "threads", hw_w, "hardware", test_w, "test", "t/s");
    std::printf("| %s | ---------: | ---------: | ---------- | ------: | %s | %s: | -------------------: |\n",
                std::string(30, '-').c_str(), std::string(size_t(hw_w), '-').c_str(),
                std::string(size_t(test_w - 1), '-').c_str());
    for (const auto &r : results) {
        char ts[64];
        std::snprintf(ts, sizeof ts, "%.2f ± %.2f", r.ts.mean(), r.ts.stddev());
        std::printf("| %-30s | %10s | %10s | %-10s | %7d | %-*s | %*s | %21s |\n", in.model_desc.c_str(), in.size.c_str(),
                    in.params.c_str(), in.backends.c_str(), in.threads, hw_w, in.hardware.c_str(), test_w,
                    r.name.c_str(), ts);
    }
}

void print_json(const RunInfo &in, const std::vector<TestResult> &results) {
    std::printf("[\n");
    for (size_t i = 0; i < results.size(); ++i) {
        const auto &r = results[i];
        std::string samples_ns, samples_ts;
        for (double ns : r.samples_ns) {
            samples_ns += (samples_ns.empty() ? "" : ", ") + std::to_string((int64_t)ns);
            char b[32];
            std::snprintf(b, sizeof b, "%.6f", (double)r.n_tokens() * 1e9 / ns);
            samples_ts += (samples_ts.empty() ? "" : ", ") + std::string(b);
        }
        std::printf("  {\n    \"model_type\": \"%s\",\n    \"model_size\": %llu,\n    \"model_n_params\": %llu,\n"
                    "    \"backends\": \"%s\",\n    \"hardware\": \"%s\",\n    \"n_threads\": %d,\n"
                    "    \"n_batch\": %lld,\n    \"type_k\": \"%s\",\n    \"type_v\": \"%s\",\n"
                    "    \"n_prompt\": %lld,\n    \"n_gen\": %lld,\n    \"n_depth\": %lld,\n    \"test\": \"%s\",\n"
                    "    \"avg_ns\": %.0f,\n    \"stddev_ns\": %.0f,\n    \"avg_ts\": %.6f,\n    \"stddev_ts\": %.6f,\n"
                    "    \"samples_ns\": [ %s ],\n    \"samples_ts\": [ %s ]\n  }%s\n",
                    json_escape(in.model_desc).c_str(), (unsigned long long)in.model_bytes,
                    (unsigned long long)in.model_n_params, json_escape(in.backends).c_str(),
                    json_escape(in.hardware).c_str(), in.threads, (long long)in.n_batch, in.type_k.c_str(),
                    in.type_v.c_str(), (long long)r.n_prompt, (long long)r.n_gen, (long long)r.n_depth,
                    json_escape(r.name).c_str(), r.ns.mean(), r.ns.stddev(), r.ts.mean(), r.ts.stddev(),
                    samples_ns.c_str(), samples_ts.c_str(), i + 1 < results.size() ? "," : "");
    }
    std::printf("]\n");
}

void print_csv(const RunInfo &in, const std::vector<TestResult> &results) {
    std::printf("model_type,model_size,model_n_params,backends,hardware,n_threads,n_batch,type_k,type_v,"
                "n_prompt,n_gen,n_depth,test,avg_ns,stddev_ns,avg_ts,stddev_ts\n");
    for (const auto &r : results)
        std::printf("%s,%llu,%llu,%s,%s,%d,%lld,%s,%s,%lld,%lld,%lld,%s,%.0f,%.0f,%.6f,%.6f\n",
                    csv_field(in.model_desc).c_str(), (unsigned long long)in.model_bytes,
                    (unsigned long long)in.model_n_params, csv_field(in.backends).c_str(),
                    csv_field(in.hardware).c_str(), in.threads, (long long)in.n_batch, in.type_k.c_str(),
                    in.type_v.c_str(), (long long)r.n_prompt, (long long)r.n_gen, (long long)r.n_depth,
                    csv_field(r.name).c_str(), r.ns.mean(), r.ns.stddev(), r.ts.mean(), r.ts.stddev());
}

// One baseline result per test, samples in t/s (higher is better). The depth lives in the test
// name only ("pp512 @ d2048"), so depth-0 results keep the keys of older baselines ("pp512").
std::vector<bench::Result> baseline_results(const RunInfo &in, const std::vector<TestResult> &results) {
    std::vector<bench::Result> out;
    for (const auto &r : results) {
        bench::Result br;
        br.name = r.name;
        br.params = {{"model", in.model_desc}, {"backend", in.backends}, {"threads", std::to_string(in.threads)},
                     {"n_batch", std::to_string(in.n_batch)}, {"cache", in.type_k + "/" + in.type_v}};
        br.unit = "t/s";
        br.higher_is_better = true;
        for (double ns : r.samples_ns) br.samples.push_back((double)r.n_tokens() * 1e9 / ns);
        br.summarize();
        out.push_back(std::move(br));
    }
    return out;
}

} // namespace
} // namespace rf

int cmd_bench(int argc, char **argv) {
    using namespace rf;
    BenchOptions opts = parse_options(argc, argv);
    if (opts.help) {
        print_model_command_help(kUsage);
        return 0;
    }
    std::vector<TestResult> results = plan_tests(opts);
    warn_long_tests(results, opts.reps);

    LoadedModel lm = load_model(opts.margs);
    opts.margs.n_ctx = context_size(opts, results);
    InferenceContext ctx(*lm.model, *lm.runtime, opts.margs.context_params(1));
    std::fprintf(stderr, "%s\n", ctx.cache().summary().c_str());
    Bench bench{ctx, *lm.tokenizer, lm.model->hparams().n_vocab};
    std::srand(1234);
    for (auto &r : results) run_test(bench, *lm.runtime, opts.reps, r);

    const RunInfo info = describe_run(lm, opts.margs);
    if (opts.output == "md") print_md(info, results);
    else if (opts.output == "json") print_json(info, results);
    else print_csv(info, results);
    if (opts.draft.enabled())
        print_speculative_md(bench_speculative(lm, opts.margs, opts.draft, opts.draft_prompt, opts.n_gen.front(), opts.reps));
    std::fflush(stdout);

    const BenchReportArgs &report = opts.report;
    if (report.save_baseline.empty() && report.compare_baseline.empty()) return 0;
    const std::vector<bench::Result> baseline = baseline_results(info, results);
    const bench::HardwareInfo hw = bench::collect_hardware(lm.runtime.get());
    int rc = 0;
    if (!report.compare_baseline.empty())
        rc = bench::compare_baseline(report.compare_baseline, baseline, hw, report.threshold, report.force, stderr);
    if (!report.save_baseline.empty()) {
        bench::save_baseline(report.save_baseline, baseline, hw);
        std::fprintf(stderr, "baseline saved to %s\n", report.save_baseline.c_str());
    }
    return rc;
}
