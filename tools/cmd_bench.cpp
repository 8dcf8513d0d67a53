// rocmforge bench: prompt processing (pp) and text generation (tg) speed the way llama-bench
// measures them: each test starts from an empty context; pp runs n_prompt random tokens (BOS
// first when the vocab adds it) in batches of -b; tg decodes n_gen tokens one at a time. A
// warm-up run precedes the -r timed repetitions; t/s is averaged over repetitions (Welford).
#include "cmd_bench.h"
#include "bench_report.h"
#include "bench_hardware.h"
#include "bench_stats.h"

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common_args.h"
#include "rocmforge/error.h"

namespace rf {
namespace {

const char *kUsage =
    "usage: rocmforge bench [-m MODEL] [-p N] [-n N] [-r N] [-o md|json|csv] [options]\n\n"
    "Prompt-processing and generation speed as llama-bench measures it.\n\n"
    "  -p, --n-prompt N   prompt tokens for the pp test (default 512; 0 = skip)\n"
    "  -n, --n-gen N      generated tokens for the tg test (default 128; 0 = skip)\n"
    "  -r, --repetitions N timed runs per test (default 5)\n"
    "  -o, --output F     md (default), json or csv\n"
    "  --save-baseline FILE       save pp/tg results with hardware metadata (JSON)\n"
    "  --compare-baseline FILE    compare with a saved baseline; exit 1 on a regression\n"
    "  --threshold P      regression threshold (default 10%%)\n"
    "  --force            compare against a baseline from other hardware\n";


struct TestResult {
    std::string name; // "pp512", "tg128"
    int64_t n_prompt = 0, n_gen = 0;
    std::vector<double> samples_ns;
    bench::Welford ns, ts;
};

struct Bench {
    InferenceContext &ctx;
    const Tokenizer &tok;
    int64_t n_vocab;

    int32_t random_token() { return (int32_t)(std::rand() % n_vocab); }
    int32_t first_token() { return tok.add_bos_default() && tok.bos() >= 0 ? tok.bos() : random_token(); }

    void prompt(int64_t n_prompt) {
        ctx.clear_sequence(0);
        // Like llama_batch_get_one per -b chunk: only each chunk's last token gives logits.
        const int64_t n_batch = ctx.params().n_batch;
        Batch b;
        for (int64_t i = 0; i < n_prompt; ++i) {
            const bool last_of_chunk = (i + 1) % n_batch == 0 || i + 1 == n_prompt;
            b.add(i == 0 ? first_token() : random_token(), 0, last_of_chunk);
        }
        ctx.decode(b); // splits at n_batch; reading the logits waits for the device
    }
    void gen(int64_t n_gen) {
        ctx.clear_sequence(0);
        int32_t t = first_token();
        for (int64_t i = 0; i < n_gen; ++i) {
            Batch b;
            b.add(t, 0, true);
            ctx.decode(b);
            t = random_token();
        }
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

} // namespace
} // namespace rf

int cmd_bench(int argc, char **argv) {
    using namespace rf;
    ModelArgs margs;
    int64_t n_prompt = 512, n_gen = 128, reps = 5;
    std::string output = "md";
    BenchReportArgs report;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            print_model_command_help(kUsage);
            return 0;
        }
        if (a == "-p" || a == "--n-prompt") n_prompt = parse_int_arg(a, take_value(argc, argv, i), 0, 1 << 20);
        else if (a == "-n" || a == "--n-gen") n_gen = parse_int_arg(a, take_value(argc, argv, i), 0, 1 << 20);
        else if (a == "-r" || a == "--repetitions") reps = parse_int_arg(a, take_value(argc, argv, i), 1, 1000);
        else if (a == "-o" || a == "--output") output = take_value(argc, argv, i);
        else if (report.parse(argc, argv, i)) continue;
        else if (margs.parse(argc, argv, i)) continue;
        else throw UsageError("bench: unknown option '" + a + "' (see rocmforge bench --help)");
    }
    if (output != "md" && output != "json" && output != "csv")
        throw UsageError("bench: -o must be md, json or csv, got '" + output + "'");
    if (n_prompt == 0 && n_gen == 0) throw UsageError("bench: -p and -n are both 0: nothing to measure");

    LoadedModel lm = load_model(margs);
    margs.n_ctx = std::max<int64_t>(n_prompt + n_gen, 1); // as llama-bench: room for the test only
    InferenceContext ctx(*lm.model, *lm.runtime, margs.context_params(1));
    std::fprintf(stderr, "%s\n", ctx.cache().summary().c_str());
    Bench bench{ctx, *lm.tokenizer, lm.model->hparams().n_vocab};
    std::srand(1234);

    std::vector<TestResult> results;
    auto run_test = [&](const std::string &name, int64_t np, int64_t ng) {
        TestResult r;
        r.name = name;
        r.n_prompt = np;
        r.n_gen = ng;
        std::fprintf(stderr, "bench: %s warm-up\n", name.c_str());
        if (np > 0) bench.prompt(np);
        if (ng > 0) bench.gen(1);
        for (int64_t k = 0; k < reps; ++k) {
            const auto t0 = std::chrono::steady_clock::now();
            if (np > 0) bench.prompt(np);
            if (ng > 0) bench.gen(ng);
            const double ns = (double)std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - t0).count();
            r.samples_ns.push_back(ns);
            r.ns.add(ns);
            r.ts.add((double)(np + ng) * 1e9 / ns);
        }
        results.push_back(r);
    };
    if (n_prompt > 0) {
        lm.runtime->phase("prefill");
        run_test("pp" + std::to_string(n_prompt), n_prompt, 0);
    }
    if (n_gen > 0) {
        lm.runtime->phase("decode");
        run_test("tg" + std::to_string(n_gen), 0, n_gen);
    }

    const std::string model_desc = lm.model->description();
    const std::string size = human_size(lm.model->weight_bytes());
    char params[32];
    const double n_params = (double)lm.model->n_params();
    if (n_params >= 1e9) std::snprintf(params, sizeof params, "%.2f B", n_params / 1e9);
    else std::snprintf(params, sizeof params, "%.2f M", n_params / 1e6);
    const std::string backends = backend_list(*lm.runtime);
    const int threads = cpu_threads(*lm.runtime);
    const std::string hardware = lm.model->backend().info().name;

    if (output == "md") {
        std::printf("| %-30s | %10s | %10s | %-10s | %7s | %-24s | %15s | %20s |\n", "model", "size", "params", "backend",
                    "threads", "hardware", "test", "t/s");
        std::printf("| %s | ---------: | ---------: | ---------- | ------: | %s | --------------: | -------------------: |\n",
                    std::string(30, '-').c_str(), std::string(24, '-').c_str());
        for (const auto &r : results) {
            char ts[64];
            std::snprintf(ts, sizeof ts, "%.2f ± %.2f", r.ts.mean(), r.ts.stddev());
            std::printf("| %-30s | %10s | %10s | %-10s | %7d | %-24s | %15s | %21s |\n", model_desc.c_str(), size.c_str(),
                        params, backends.c_str(), threads, hardware.c_str(), r.name.c_str(), ts);
        }
    } else if (output == "json") {
        std::printf("[\n");
        for (size_t i = 0; i < results.size(); ++i) {
            const auto &r = results[i];
            std::string samples_ns, samples_ts;
            for (double ns : r.samples_ns) {
                samples_ns += (samples_ns.empty() ? "" : ", ") + std::to_string((int64_t)ns);
                char b[32];
                std::snprintf(b, sizeof b, "%.6f", (double)(r.n_prompt + r.n_gen) * 1e9 / ns);
                samples_ts += (samples_ts.empty() ? "" : ", ") + std::string(b);
            }
            std::printf("  {\n    \"model_type\": \"%s\",\n    \"model_size\": %llu,\n    \"model_n_params\": %llu,\n"
                        "    \"backends\": \"%s\",\n    \"hardware\": \"%s\",\n    \"n_threads\": %d,\n"
                        "    \"n_batch\": %lld,\n    \"type_k\": \"%s\",\n    \"type_v\": \"%s\",\n"
                        "    \"n_prompt\": %lld,\n    \"n_gen\": %lld,\n    \"test\": \"%s\",\n"
                        "    \"avg_ns\": %.0f,\n    \"stddev_ns\": %.0f,\n    \"avg_ts\": %.6f,\n    \"stddev_ts\": %.6f,\n"
                        "    \"samples_ns\": [ %s ],\n    \"samples_ts\": [ %s ]\n  }%s\n",
                        json_escape(model_desc).c_str(), (unsigned long long)lm.model->weight_bytes(),
                        (unsigned long long)lm.model->n_params(), json_escape(backends).c_str(),
                        json_escape(hardware).c_str(), threads, (long long)margs.n_batch, margs.cache_type_k.c_str(),
                        margs.cache_type_v.c_str(), (long long)r.n_prompt, (long long)r.n_gen, r.name.c_str(), r.ns.mean(),
                        r.ns.stddev(), r.ts.mean(), r.ts.stddev(), samples_ns.c_str(), samples_ts.c_str(),
                        i + 1 < results.size() ? "," : "");
        }
        std::printf("]\n");
    } else {
        std::printf("model_type,model_size,model_n_params,backends,hardware,n_threads,n_batch,type_k,type_v,"
                    "n_prompt,n_gen,test,avg_ns,stddev_ns,avg_ts,stddev_ts\n");
        for (const auto &r : results)
            std::printf("%s,%llu,%llu,%s,%s,%d,%lld,%s,%s,%lld,%lld,%s,%.0f,%.0f,%.6f,%.6f\n", csv_field(model_desc).c_str(),
                        (unsigned long long)lm.model->weight_bytes(), (unsigned long long)lm.model->n_params(),
                        csv_field(backends).c_str(), csv_field(hardware).c_str(), threads, (long long)margs.n_batch,
                        margs.cache_type_k.c_str(), margs.cache_type_v.c_str(), (long long)r.n_prompt,
                        (long long)r.n_gen, r.name.c_str(), r.ns.mean(), r.ns.stddev(), r.ts.mean(), r.ts.stddev());
    }
    std::fflush(stdout);

    // Baselines: one result per test, samples in t/s (higher is better).
    if (report.save_baseline.empty() && report.compare_baseline.empty()) return 0;
    std::vector<bench::Result> baseline_results;
    for (const auto &r : results) {
        bench::Result br;
        br.name = r.name;
        br.params = {{"model", model_desc}, {"backend", backends}, {"threads", std::to_string(threads)},
                     {"n_batch", std::to_string(margs.n_batch)}, {"cache", margs.cache_type_k + "/" + margs.cache_type_v}};
        br.unit = "t/s";
        br.higher_is_better = true;
        for (double ns : r.samples_ns) br.samples.push_back((double)(r.n_prompt + r.n_gen) * 1e9 / ns);
        br.summarize();
        baseline_results.push_back(std::move(br));
    }
    const bench::HardwareInfo hw = bench::collect_hardware(lm.runtime.get());
    int rc = 0;
    if (!report.compare_baseline.empty())
        rc = bench::compare_baseline(report.compare_baseline, baseline_results, hw, report.threshold, report.force, stderr);
    if (!report.save_baseline.empty()) {
        bench::save_baseline(report.save_baseline, baseline_results, hw);
        std::fprintf(stderr, "baseline saved to %s\n", report.save_baseline.c_str());
    }
    return rc;
}
