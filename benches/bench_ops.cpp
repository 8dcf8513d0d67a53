// rocmforge-bench-ops: op micro-benchmarks through the backend ABI on every available backend
// (rocmforge-cpu.so, and rocmforge-hip.so when present and a GPU exists). Run by hand, never in
// CI. Example:
//   rocmforge-bench-ops --filter matmul --filter M=1 --save-baseline cpu.json
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "bench_hardware.h"
#include "bench_report.h"
#include "op_cases.h"
#include "rocmforge/error.h"
#include "rocmforge/log.h"
#include "runtime_args.h"

namespace {

const char *kUsage =
    "usage: rocmforge-bench-ops [--filter TEXT]... [--reps N] [--warmup N] [--list] [options]\n\n"
    "Times single ops through the backend ABI: matmul (f16, q8_0, q4_0, q4_K, q5_K, q6_K, mxfp4;\n"
    "TinyLlama and Llama-2-7B shapes; M=1 decode and M=512 prefill), dequantization (GET_ROWS\n"
    "of a 4096x4096 matrix to f32, all formats) and causal GQA attention (seq 128..8192).\n\n"
    "  --filter TEXT      run only cases whose key contains TEXT; several --filter must all match\n"
    "                     (keys look like matmul[K=4096,M=1,N=4096,type=q4_K]; --list prints them)\n"
    "  --reps N           timed repetitions per case (default 10)\n"
    "  --warmup N         untimed runs first (default 2)\n"
    "  --max-seconds S    stop repeating a case after S seconds (at least 3 reps; default 20)\n"
    "  --list             print the case keys and exit\n";

int parse_count(const std::string &opt, const char *v, int lo, int hi) {
    char *end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (!*v || *end || n < lo || n > hi)
        throw rf::UsageError(opt + " must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
    return int(n);
}

int run(int argc, char **argv) {
    rf::RuntimeArgs rt_args;
    rf::BenchReportArgs report;
    rfbench::TimerOptions timer;
    std::vector<std::string> filters;
    bool list = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> const char * {
            if (i + 1 >= argc) throw rf::UsageError("option " + a + " needs a value");
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            std::printf("%s\nruntime:\n%s\noutput:\n%s", kUsage, rf::RuntimeArgs::help(), rf::BenchReportArgs::help());
            return 0;
        }
        if (a == "--filter") filters.push_back(value());
        else if (a == "--reps") timer.reps = parse_count(a, value(), 1, 100000);
        else if (a == "--warmup") timer.warmup = parse_count(a, value(), 0, 1000);
        else if (a == "--max-seconds") timer.max_seconds = parse_count(a, value(), 1, 86400);
        else if (a == "--list") list = true;
        else if (rt_args.parse(argc, argv, i) || report.parse(argc, argv, i)) continue;
        else throw rf::UsageError("unknown option '" + a + "' (see --help)");
    }
    std::vector<rfbench::OpCase> cases;
    for (auto &c : rfbench::all_cases()) {
        const std::string key = c.proto.key();
        bool keep = true;
        for (const auto &f : filters) keep = keep && key.find(f) != std::string::npos;
        if (keep) cases.push_back(std::move(c));
    }
    if (list) {
        for (const auto &c : cases) std::printf("%s\n", c.proto.key().c_str());
        return 0;
    }
    if (cases.empty()) throw rf::UsageError("no benchmark case matches the filters (see --list)");

    auto runtime = rf::Runtime::create(rt_args.make_config());
    std::vector<rf::Backend *> backends;
    for (rf::Backend *b : runtime->backends())
        if (rt_args.backends.empty() || std::find(rt_args.backends.begin(), rt_args.backends.end(), b->name()) != rt_args.backends.end())
            backends.push_back(b);
    for (const rf::Backend *b : backends)
        std::fprintf(stderr, "backend %s: %s [%s]\n", b->name().c_str(), b->info().name, b->info().arch);

    std::vector<rf::bench::Result> results;
    rf::ProgressBar progress(cases.size() * backends.size());
    for (rf::Backend *b : backends) {
        for (auto &c : cases) {
            rf::bench::Result r = c.proto;
            r.params["backend"] = b->name();
            progress.step(r.key());
            if (!c.run(*b, timer, r)) {
                progress.done();
                std::fprintf(stderr, "skipped (unsupported on %s): %s\n", b->name().c_str(), r.key().c_str());
                continue;
            }
            results.push_back(std::move(r));
        }
    }
    progress.done();
    return rf::finish_bench_report(report, results, rf::bench::collect_hardware(runtime.get()));
}

} // namespace

int main(int argc, char **argv) {
    try {
        rf::init_logging(0);
        return run(argc, argv);
    } catch (const rf::Error &e) {
        std::fflush(stdout);
        std::fprintf(stderr, "error: %s\n", e.what());
        return e.exit_code();
    } catch (const std::exception &e) {
        std::fflush(stdout);
        std::fprintf(stderr, "error: %s\n", e.what());
        return rf::kExitData;
    }
}
