// rocmforge ab -m MODEL (--config a.json --config b.json | --backend x --backend y |
//                        --backend-option-a O --backend-option-b O) [-p N -n N -r R]
//
// Both sides live in this process (two Runtimes, two model instances). Repetitions alternate
// the order (A B, B A, ...) so drift hits both alike. Each repetition: prefill of a fixed random
// prompt, then greedy decoding; the speed ratio B/A comes with a 95% bootstrap interval over
// the per-repetition ratios. Outputs must agree: the greedy tokens and the largest logit
// difference are compared. Finally each side runs once more with the profiler for the per-op
// comparison, which is also drawn as an SVG bar chart.
#include "cmd_ab.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <rapidjson/document.h>

#include "backend_option_arg.h"
#include "bench_report.h"
#include "common_args.h"
#include "rocmforge/error.h"
#include "rocmforge/inference.h"
#include "rocmforge/model.h"
#include "rocmforge/profiler_host.h"

namespace {

using Clock = std::chrono::steady_clock;

const char *kUsage =
    "usage: rocmforge ab -m MODEL (--config A.json --config B.json | --backend X --backend Y |\n"
    "                    --backend-option-a B.K=V --backend-option-b B.K=V)\n"
    "                    [-p N] [-n N] [-r R] [--svg FILE] [-t N] [--no-profile]\n\n"
    "Runs the model on two configs (or backends, or backend options) interleaved in one process\n"
    "and reports the speed ratio B/A with a 95% confidence interval, whether the outputs agree,\n"
    "and per-op times from a profiled run of each side (table + SVG chart).\n\n"
    "  -m, --model FILE   GGUF model (required)\n"
    "  --config FILE      side A, then side B (JSON configs); given once: both sides\n"
    "  --backend NAME     side A, then side B; given once: both sides\n"
    "  --backend-option BACKEND.KEY=VALUE    a backend option for both sides (repeatable)\n"
    "  --backend-option-a BACKEND.KEY=VALUE  one for side A only (repeatable; over the above)\n"
    "  --backend-option-b BACKEND.KEY=VALUE  one for side B only (repeatable)\n"
    "  -p, --n-prompt N   prompt tokens (random ids, fixed seed; default 128)\n"
    "  -n, --n-gen N      generated tokens, greedy (default 32)\n"
    "  -r, --repetitions N  timed repetitions per side (default 5)\n"
    "  -t, --threads N    CPU threads for both sides\n"
    "  --svg FILE         where the per-op chart is written (default: ab.svg in the current folder)\n"
    "  --no-profile       skip the profiled per-op pass\n";

struct Side {
    std::string label; // "A: --backend hip"
    rf::RuntimeArgs args;
    std::unique_ptr<rf::Runtime> runtime;
    std::unique_ptr<rf::Model> model;
    std::vector<double> pp_tps, tg_tps;
    std::vector<int32_t> tokens;             // greedy output of the first repetition
    std::vector<std::vector<float>> logits;  // logits of each step of the first repetition
    std::map<std::string, double> op_ms;     // profiled pass: op -> total ms
};

int32_t argmax(const float *v, int64_t n) {
    return int32_t(std::max_element(v, v + n) - v);
}

// One repetition: prefill `prompt`, then n greedy steps. Returns {prefill s, decode s}.
std::pair<double, double> run_once(Side &s, const std::vector<int32_t> &prompt, int64_t n_gen, bool keep_outputs) {
    rf::ContextParams cp;
    cp.n_ctx = int64_t(prompt.size()) + n_gen + 16;
    cp.n_batch = std::max<int64_t>(512, int64_t(prompt.size()));
    rf::InferenceContext ctx(*s.model, *s.runtime, cp);
    const int64_t n_vocab = s.model->hparams().n_vocab;
    rf::Batch batch;
    for (size_t i = 0; i < prompt.size(); ++i) batch.add(prompt[i], 0, i + 1 == prompt.size());
    s.runtime->phase("prefill");
    const auto t0 = Clock::now();
    const std::vector<float> *logits = &ctx.decode(batch);
    const auto t1 = Clock::now();
    if (keep_outputs) s.tokens.clear(), s.logits.clear();
    int32_t tok = argmax(logits->data(), n_vocab);
    if (keep_outputs) s.tokens.push_back(tok), s.logits.emplace_back(logits->begin(), logits->begin() + n_vocab);
    s.runtime->phase("decode");
    const auto t2 = Clock::now();
    for (int64_t i = 0; i < n_gen; ++i) {
        batch.clear();
        batch.add(tok, 0, true);
        logits = &ctx.decode(batch);
        tok = argmax(logits->data(), n_vocab);
        if (keep_outputs) s.tokens.push_back(tok), s.logits.emplace_back(logits->begin(), logits->begin() + n_vocab);
    }
    const auto t3 = Clock::now();
    return {std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t3 - t2).count()};
}

void load_side(Side &s, const std::string &model_path, bool profile, const std::string &trace) {
    rf::Config cfg = s.args.make_config();
    cfg.profiler_enabled = profile;
    cfg.profiler_trace = profile ? trace : "";
    s.runtime = rf::Runtime::create(cfg);
    s.runtime->phase("load");
    s.model = rf::Model::load(model_path, *s.runtime);
}

void unload_side(Side &s) {
    s.model.reset();
    s.runtime.reset();
}

// Removes the file at scope exit, also when reading it throws.
struct TempFile {
    std::string path;
    ~TempFile() {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
};

// Per-op totals (ms) from the profiler's Chrome trace.
std::map<std::string, double> op_totals_from_trace(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw rf::Error("ab: the profiler wrote no trace at " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    rapidjson::Document d;
    d.Parse(ss.str().c_str());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("traceEvents") || !d["traceEvents"].IsArray())
        throw rf::Error("ab: the profiler's trace " + path + " is not a trace file");
    std::map<std::string, double> ms;
    for (const auto &e : d["traceEvents"].GetArray()) {
        if (!e.IsObject() || !e.HasMember("ph") || std::string(e["ph"].GetString()) != "X") continue;
        const std::string cat = e["cat"].GetString();
        if (cat != "phase") ms[cat] += e["dur"].GetDouble() / 1000.0;
    }
    return ms;
}

struct Ratio {
    std::vector<double> per_rep;
    rf::bench::Interval ci;
};

Ratio ratios(const std::vector<double> &a, const std::vector<double> &b) {
    Ratio r;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i)
        if (a[i] > 0) r.per_rep.push_back(b[i] / a[i]);
    r.ci = rf::bench::bootstrap_mean_ci(r.per_rep);
    return r;
}

double median(std::vector<double> v) { return rf::bench::percentile(std::move(v), 0.5); }

} // namespace

int cmd_ab(int argc, char **argv) {
    std::string model_path, svg = "ab.svg";
    std::vector<std::string> configs, backends;
    std::vector<rf::BackendOptionFlag> both_options, side_options[2];
    int64_t n_prompt = 128, n_gen = 32;
    int reps = 5, threads = 0;
    bool profile = true;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::printf("%s", kUsage);
            return 0;
        }
        if (a == "-m" || a == "--model") model_path = rf::take_value(argc, argv, i);
        else if (a == "--config") configs.push_back(rf::take_value(argc, argv, i));
        else if (a == "--backend") backends.push_back(rf::take_value(argc, argv, i));
        else if (a == "--backend-option" || a == "--backend-option-a" || a == "--backend-option-b") {
            auto &to = a == "--backend-option" ? both_options : side_options[a == "--backend-option-a" ? 0 : 1];
            to.push_back({a, rf::take_value(argc, argv, i)});
            rf::parse_backend_option_arg(a, to.back().text);
        }
        else if (a == "-p" || a == "--n-prompt") n_prompt = rf::parse_int_arg(a, rf::take_value(argc, argv, i), 1, 1 << 20);
        else if (a == "-n" || a == "--n-gen") n_gen = rf::parse_int_arg(a, rf::take_value(argc, argv, i), 1, 1 << 20);
        else if (a == "-r" || a == "--repetitions") reps = int(rf::parse_int_arg(a, rf::take_value(argc, argv, i), 1, 10000));
        else if (a == "-t" || a == "--threads") threads = int(rf::parse_int_arg(a, rf::take_value(argc, argv, i), 1, 1024));
        else if (a == "--svg") svg = rf::take_value(argc, argv, i);
        else if (a == "--no-profile") profile = false;
        else throw rf::UsageError("ab: unknown option '" + a + "' (see rocmforge ab --help)");
    }
    if (model_path.empty()) throw rf::UsageError("ab: -m MODEL is required");
    if (configs.size() > 2 || backends.size() > 2)
        throw rf::UsageError("ab: give --config and --backend at most twice each (once: both sides; twice: side A, then B)");
    const auto texts = [](const std::vector<rf::BackendOptionFlag> &flags) {
        std::vector<std::string> out;
        for (const auto &f : flags) out.push_back(f.text);
        return out;
    };
    if (configs.size() < 2 && backends.size() < 2 && texts(side_options[0]) == texts(side_options[1]))
        throw rf::UsageError("ab: the two sides are the same: give two --config files, two --backend names, or "
                             "--backend-option-a / --backend-option-b");

    Side sides[2];
    for (int k = 0; k < 2; ++k) {
        Side &s = sides[k];
        s.label = k == 0 ? "A:" : "B:";
        if (!configs.empty()) {
            s.args.config_path = configs[std::min(size_t(k), configs.size() - 1)];
            s.label += " --config " + s.args.config_path;
        }
        if (!backends.empty()) {
            s.args.backends = {backends[std::min(size_t(k), backends.size() - 1)]};
            s.label += " --backend " + s.args.backends[0];
        }
        s.args.backend_options = both_options;
        for (const auto &o : side_options[k]) {
            s.args.backend_options.push_back(o);
            s.label += " " + o.text;
        }
        if (configs.empty() && backends.empty() && side_options[k].empty()) s.label += " (defaults)";
        s.args.n_threads = threads;
        load_side(s, model_path, false, "");
    }
    if (sides[0].model->hparams().n_vocab != sides[1].model->hparams().n_vocab)
        throw rf::Error("ab: the two sides loaded different vocabularies");
    const int64_t n_vocab = sides[0].model->hparams().n_vocab;
    std::mt19937 rng(20240601);
    std::uniform_int_distribution<int32_t> tok(1, int32_t(std::min<int64_t>(n_vocab - 1, 1 << 30)));
    std::vector<int32_t> prompt(static_cast<size_t>(n_prompt));
    for (auto &t : prompt) t = tok(rng);

    for (auto &s : sides) run_once(s, prompt, std::min<int64_t>(n_gen, 4), false); // warm-up
    rf::ProgressBar progress(size_t(reps) * 2);
    for (int r = 0; r < reps; ++r) {
        for (int j = 0; j < 2; ++j) {
            Side &s = sides[(r % 2) ^ j]; // A B, B A, ...
            progress.step(s.label + " rep " + std::to_string(r + 1));
            const auto [pp_s, tg_s] = run_once(s, prompt, n_gen, r == 0);
            s.pp_tps.push_back(double(n_prompt) / pp_s);
            s.tg_tps.push_back(double(n_gen) / tg_s);
        }
    }
    progress.done();

    std::printf("A/B on %s (%s), prompt %lld tokens, %lld generated, %d repetitions, interleaved\n",
                model_path.c_str(), sides[0].model->description().c_str(), (long long)n_prompt, (long long)n_gen, reps);
    for (const auto &s : sides) {
        std::string bk;
        for (const auto *b : s.runtime->backends()) bk += (bk.empty() ? "" : ", ") + b->name() + " (" + b->info().name + ")";
        std::printf("  %s -> %s\n", s.label.c_str(), bk.c_str());
    }
    const Ratio pp = ratios(sides[0].pp_tps, sides[1].pp_tps), tg = ratios(sides[0].tg_tps, sides[1].tg_tps);
    std::printf("\n| test | A t/s (median) | B t/s (median) | B/A (mean of per-rep ratios) | 95%% CI (bootstrap) |\n| --- | ---: | ---: | ---: | --- |\n");
    std::printf("| pp%lld | %.2f | %.2f | %.3f | [%.3f, %.3f] |\n", (long long)n_prompt, median(sides[0].pp_tps),
                median(sides[1].pp_tps), pp.ci.mean, pp.ci.low, pp.ci.high);
    std::printf("| tg%lld | %.2f | %.2f | %.3f | [%.3f, %.3f] |\n", (long long)n_gen, median(sides[0].tg_tps),
                median(sides[1].tg_tps), tg.ci.mean, tg.ci.low, tg.ci.high);

    // Output agreement (first repetition of each side).
    size_t same = 0, first_diff = sides[0].tokens.size();
    for (size_t i = 0; i < sides[0].tokens.size() && i < sides[1].tokens.size(); ++i) {
        if (sides[0].tokens[i] == sides[1].tokens[i]) ++same;
        else if (first_diff == sides[0].tokens.size()) first_diff = i;
    }
    double max_diff = 0;
    // Logits are comparable while both sides saw the same tokens.
    for (size_t i = 0; i < sides[0].logits.size() && i < sides[1].logits.size() && i <= first_diff; ++i)
        for (int64_t v = 0; v < n_vocab; ++v)
            max_diff = std::max(max_diff, double(std::fabs(sides[0].logits[i][size_t(v)] - sides[1].logits[i][size_t(v)])));
    const bool identical = same == sides[0].tokens.size() && sides[0].tokens.size() == sides[1].tokens.size();
    std::printf("\noutputs: greedy tokens %s (%zu/%zu equal%s); max |logit difference| %.4g over %zu steps\n",
                identical ? "identical" : "DIFFER", same, sides[0].tokens.size(),
                identical ? "" : (", first difference at step " + std::to_string(first_diff)).c_str(), max_diff,
                std::min(sides[0].logits.size(), first_diff + 1));

    if (profile) {
        for (int k = 0; k < 2; ++k) {
            Side &s = sides[k];
            unload_side(s); // free the device before loading the profiled instance
            const std::string trace = (std::filesystem::temp_directory_path() /
                                       ("rocmforge-ab-" + std::to_string(::getpid()) + "-" + std::to_string(k) + ".json")).string();
            std::fprintf(stderr, "\n== profile of side %s ==\n", s.label.c_str());
            const TempFile trace_file{trace};
            load_side(s, model_path, true, trace);
            run_once(s, prompt, n_gen, false);
            unload_side(s); // the runtime reports once as it closes and writes the trace
            s.op_ms = op_totals_from_trace(trace);
        }
        std::vector<std::string> ops;
        for (const auto &s : sides)
            for (const auto &[op, ms] : s.op_ms)
                if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
        std::sort(ops.begin(), ops.end(), [&](const std::string &x, const std::string &y) {
            return sides[0].op_ms[x] + sides[1].op_ms[x] > sides[0].op_ms[y] + sides[1].op_ms[y];
        });
        std::printf("\nper op, one profiled prefill + decode per side (ms)\n| op | A ms | B ms | B/A |\n| --- | ---: | ---: | ---: |\n");
        rf::BarSeries a{sides[0].label, {}}, b{sides[1].label, {}};
        for (const auto &op : ops) {
            const double x = sides[0].op_ms[op], y = sides[1].op_ms[op];
            std::printf("| %s | %.3f | %.3f | %s |\n", op.c_str(), x, y, x > 0 ? std::to_string(y / x).substr(0, 5).c_str() : "-");
            a.values.push_back(x), b.values.push_back(y);
        }
        rf::write_bar_chart_svg(svg, "rocmforge ab: time per op (one prefill + decode)", "ms", ops, {a, b});
        std::printf("\nchart: %s\n", svg.c_str());
    }
    return 0;
}
