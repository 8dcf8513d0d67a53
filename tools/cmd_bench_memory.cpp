// rocmforge bench-memory: where the bytes go. KV cache bytes per token for each cache type,
// what each backend holds after loading (weights), and a serving workload on the paged KV pool:
// requests of random prompt and generation lengths arrive, at most --parallel decode together,
// finished ones free their pages for the next. Sampled after every step: pages in use and the
// pool's internal fragmentation (reserved slots that hold no token), and with --shared-prefix
// the prefix cache's share of the pool. At the end: peak host memory (VmHWM) and each
// backend's peak allocation (weights + KV pool + executor arenas).
#include "cmd_bench_memory.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bench_report.h"
#include "common_args.h"
#include "rocmforge/error.h"
#include "rocmforge/inference.h"
#include "rocmforge/kv_cache.h"
#include "rocmforge/model.h"
#include "rocmforge/sampler.h"
#include "rocmforge/types.h"

namespace {

const char *kUsage =
    "usage: rocmforge bench-memory [-m MODEL] [-c N] [--parallel P] [--requests R] [options]\n\n"
    "KV bytes per token, memory per backend instance (one device each: \"hip:0\", \"hip:1\"), and\n"
    "page-pool occupancy under a serving workload.\n\n"
    "  --parallel P       most sequences decoding together (default 8)\n"
    "  --requests R       requests served in the workload (default 24; 0 = no workload)\n"
    "  --prompt-range A:B prompt lengths, uniform in [A, B] (default 16:256)\n"
    "  --gen-range A:B    generated tokens per request, uniform in [A, B] (default 16:128)\n"
    "  --seed S           workload seed (default 1)\n"
    "  --shared-prefix N  every prompt begins with the same N tokens (below the shortest prompt)\n"
    "                     and the prefix cache is on: the pages it holds (kv_prefix_cache_*: peak\n"
    "                     pages, mean and peak share of the pool) and the prompt tokens it served\n"
    "                     (default 0: caching off)\n"
    "\n"
    "A request is admitted when a slot is free and the pool can hold its whole prompt + generation\n"
    "besides what the running ones may still need (no request is ever cut short); otherwise it\n"
    "waits (counted as deferred). -c sets the pool size, shared by all sequences (default 4096).\n\n"
    "output:\n";

std::pair<int64_t, int64_t> parse_range(const std::string &opt, const std::string &v) {
    const size_t colon = v.find(':');
    if (colon == std::string::npos) throw rf::UsageError("option " + opt + " needs A:B, got '" + v + "'");
    const int64_t a = rf::parse_int_arg(opt, v.substr(0, colon), 1, 1 << 20);
    const int64_t b = rf::parse_int_arg(opt, v.substr(colon + 1), 1, 1 << 20);
    if (a > b) throw rf::UsageError("option " + opt + ": " + std::to_string(a) + " > " + std::to_string(b));
    return {a, b};
}

// A "VmHWM:" style line of /proc/self/status in bytes; 0 where there is none.
uint64_t proc_status_bytes(const char *key) {
    std::ifstream f("/proc/self/status");
    std::string line;
    const std::string k = std::string(key) + ":";
    while (std::getline(f, line))
        if (line.compare(0, k.size(), k) == 0) return uint64_t(std::strtoull(line.c_str() + k.size(), nullptr, 10)) * 1024;
    return 0;
}

double mib(uint64_t bytes) { return double(bytes) / (1024.0 * 1024.0); }

struct Request {
    int64_t prompt = 0, gen = 0;
};

struct Running {
    int seq = -1;
    int64_t left = 0; // tokens still to generate
    int32_t next = 0; // token fed at the next step
};

struct PoolSampler {
    int64_t peak_pages = 0, peak_tokens = 0, samples = 0;
    double frag_sum = 0, frag_max = 0;
    // Prefix caching: pages the cache holds (in use or evictable), over every sample.
    int64_t peak_cached = 0, cache_samples = 0;
    double cached_share_sum = 0;
    void add(const rf::KvPoolStats &s) {
        peak_pages = std::max(peak_pages, s.pages_used);
        peak_tokens = std::max(peak_tokens, s.tokens);
        peak_cached = std::max(peak_cached, s.pages_cached);
        ++cache_samples;
        cached_share_sum += double(s.pages_cached) / double(s.pages_total);
        if (s.tokens == 0) return;
        ++samples;
        frag_sum += s.internal_fragmentation();
        frag_max = std::max(frag_max, s.internal_fragmentation());
    }
};

struct Workload {
    int64_t parallel = 8, requests = 24;
    std::pair<int64_t, int64_t> prompt{16, 256}, gen{16, 128}; // token counts, uniform in [a, b]
    uint32_t seed = 1;
    int64_t shared_prefix = 0; // tokens every prompt begins with (prefix cache on when > 0)
};

struct WorkloadResult {
    PoolSampler pool;
    int64_t deferred = 0, steps = 0, generated = 0;
};

// Serves w.requests requests of random prompt and generation lengths with at most w.parallel
// decoding together; the pool is sampled after every prefill and every decode step. A request
// is admitted when a sequence slot is free and the pool can hold its whole prompt + generation
// besides what the running ones may still need, so none is ever cut short.
WorkloadResult run_workload(rf::InferenceContext &ctx, const Workload &w) {
    using namespace rf;
    std::mt19937 rng{w.seed};
    auto uniform = [&](std::pair<int64_t, int64_t> r) { return std::uniform_int_distribution<int64_t>(r.first, r.second)(rng); };
    std::vector<Request> queue(static_cast<size_t>(w.requests));
    for (auto &q : queue) q = {uniform(w.prompt), uniform(w.gen)};
    const int64_t n_vocab = ctx.model().hparams().n_vocab;
    std::vector<int32_t> prefix((size_t)w.shared_prefix);
    for (int32_t &t : prefix) t = int32_t(rng() % uint64_t(n_vocab));
    KvPageTable &pages = ctx.cache().pages();
    const int64_t page = pages.page_size(), n_ctx = ctx.params().n_ctx;
    auto pages_for = [&](int64_t tokens) { return (tokens + page - 1) / page; };
    for (const Request &q : queue)
        if (pages_for(q.prompt + q.gen) > pages.n_pages() || q.prompt + q.gen > n_ctx)
            throw UsageError("bench-memory: a request of " + std::to_string(q.prompt + q.gen) +
                             " tokens does not fit the KV cache of " + std::to_string(n_ctx) +
                             " tokens; raise -c or lower --prompt-range/--gen-range");
    SamplerParams sp;
    sp.seed = w.seed;
    Sampler sampler{sp};
    WorkloadResult res;
    std::vector<Running> running;
    std::vector<int> free_seqs;
    for (int s = int(w.parallel) - 1; s >= 0; --s) free_seqs.push_back(s);
    size_t next_request = 0;
    bool waiting_counted = false;
    ProgressBar progress(queue.size());
    while (next_request < queue.size() || !running.empty()) {
        while (next_request < queue.size() && !free_seqs.empty()) {
            const Request &q = queue[next_request];
            int64_t committed_pages = 0, committed_tokens = pages.stats().tokens;
            for (const Running &r : running) {
                committed_pages += pages.pages_needed(r.seq, r.left);
                committed_tokens += r.left;
            }
            if (pages.free_pages() - committed_pages < pages_for(q.prompt + q.gen) ||
                committed_tokens + q.prompt + q.gen > n_ctx) {
                if (!waiting_counted) ++res.deferred, waiting_counted = true;
                break;
            }
            waiting_counted = false;
            progress.step("request " + std::to_string(next_request + 1));
            Running r;
            r.seq = free_seqs.back();
            free_seqs.pop_back();
            r.left = q.gen;
            std::vector<int32_t> prompt = prefix;
            while ((int64_t)prompt.size() < q.prompt) prompt.push_back(int32_t(rng() % uint64_t(n_vocab)));
            Batch b;
            for (int64_t i = ctx.map_cached_prefix(r.seq, prompt); i < q.prompt; ++i) b.add(prompt[(size_t)i], r.seq, i + 1 == q.prompt);
            r.next = sampler.sample(ctx.decode(b).data(), n_vocab);
            res.pool.add(pages.stats());
            running.push_back(r);
            ++next_request;
        }
        // An empty pool admits any request that fits it (checked above), so this is a bug.
        if (running.empty()) throw Error("bench-memory: no request could be admitted to an empty KV pool");
        Batch b;
        for (const Running &r : running) b.add(r.next, r.seq, true);
        const std::vector<float> &logits = ctx.decode(b);
        ++res.steps;
        res.pool.add(pages.stats());
        for (size_t k = 0; k < running.size(); ++k) {
            running[k].next = sampler.sample(logits.data() + k * size_t(n_vocab), n_vocab);
            --running[k].left;
            ++res.generated;
        }
        for (size_t k = running.size(); k-- > 0;)
            if (running[k].left == 0) {
                ctx.clear_sequence(running[k].seq);
                free_seqs.push_back(running[k].seq);
                running.erase(running.begin() + long(k));
            }
    }
    progress.done();
    return res;
}

} // namespace

int cmd_bench_memory(int argc, char **argv) {
    using namespace rf;
    ModelArgs margs;
    Workload w;
    BenchReportArgs report;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            print_model_command_help(kUsage, BenchReportArgs::help());
            return 0;
        }
        if (a == "--parallel") w.parallel = parse_int_arg(a, take_value(argc, argv, i), 1, 256);
        else if (a == "--requests") w.requests = parse_int_arg(a, take_value(argc, argv, i), 0, 1 << 20);
        else if (a == "--prompt-range") w.prompt = parse_range(a, take_value(argc, argv, i));
        else if (a == "--gen-range") w.gen = parse_range(a, take_value(argc, argv, i));
        else if (a == "--seed") w.seed = uint32_t(parse_int_arg(a, take_value(argc, argv, i), 0, UINT32_MAX));
        else if (a == "--shared-prefix") w.shared_prefix = parse_int_arg(a, take_value(argc, argv, i), 0, 1 << 20);
        else if (report.parse(argc, argv, i)) continue;
        else if (margs.parse(argc, argv, i)) continue;
        else throw UsageError("bench-memory: unknown option '" + a + "' (see rocmforge bench-memory --help)");
    }

    LoadedModel lm = load_model(margs);
    const ModelHparams &hp = lm.model->hparams();
    std::vector<bench::Result> results;
    auto add = [&](const std::string &name, std::map<std::string, std::string> params, const std::string &unit,
                   double value) {
        bench::Result r;
        r.name = name;
        r.params = std::move(params);
        r.params["model"] = lm.model->description();
        r.unit = unit;
        r.higher_is_better = false;
        r.samples = {value};
        r.summarize();
        results.push_back(std::move(r));
    };

    // KV bytes per token for each cache type this model's head size allows.
    for (const char *type : {"f16", "q8_0", "f32"}) {
        const int t = kv_cache_type_from_name(type);
        if (hp.head_dim % type_traits(t)->block_size != 0) continue;
        add("kv_bytes_per_token", {{"cache", std::string(type) + "/" + type}}, "bytes",
            double(KvCache::bytes_per_token(hp.n_layer_kv(), hp.n_embd_kv(), t, t, hp.is_mla())));
    }
    // Hybrid models: the recurrent layers' state, fixed per sequence (f32 rows beside the pages).
    if (hp.hybrid()) add("recurrent_state_bytes_per_sequence", {}, "bytes", double(RecurrentState::bytes_per_sequence(hp)));
    // After loading: the weights (and anything else the model allocated) per backend.
    for (const Backend *b : lm.runtime->backends()) {
        const Backend::MemoryUse &m = b->memory_use();
        if (m.allocated) add("loaded", {{"backend", b->name()}, {"memory", "allocated"}}, "MiB", mib(m.allocated));
        if (m.from_host) add("loaded", {{"backend", b->name()}, {"memory", "from host"}}, "MiB", mib(m.from_host));
    }

    if (w.shared_prefix >= w.prompt.first)
        throw UsageError("bench-memory: --shared-prefix " + std::to_string(w.shared_prefix) +
                         " must be below the shortest prompt (--prompt-range starts at " + std::to_string(w.prompt.first) + ")");
    ContextParams params = margs.context_params(int(w.parallel));
    params.prefix_cache = w.shared_prefix > 0;
    InferenceContext ctx(*lm.model, *lm.runtime, params);
    std::fprintf(stderr, "%s\n", ctx.cache().summary().c_str());
    if (w.requests > 0) {
        const WorkloadResult res = run_workload(ctx, w);
        std::fprintf(stderr,
                     "workload: %lld requests (prompt %lld..%lld, generation %lld..%lld tokens), %lld parallel, "
                     "%lld decode steps, %lld tokens generated\n",
                     (long long)w.requests, (long long)w.prompt.first, (long long)w.prompt.second,
                     (long long)w.gen.first, (long long)w.gen.second, (long long)w.parallel, (long long)res.steps,
                     (long long)res.generated);
        const KvPageTable &pages = ctx.cache().pages();
        const std::map<std::string, std::string> wl = {
            {"parallel", std::to_string(w.parallel)}, {"requests", std::to_string(w.requests)},
            {"page", std::to_string(pages.page_size())}, {"pool_pages", std::to_string(pages.n_pages())}};
        const PoolSampler &pool = res.pool;
        add("kv_pool_peak_pages", wl, "pages", double(pool.peak_pages));
        add("kv_pool_peak_tokens", wl, "tokens", double(pool.peak_tokens));
        add("kv_internal_fragmentation_mean", wl, "%", pool.samples ? 100.0 * pool.frag_sum / double(pool.samples) : 0.0);
        add("kv_internal_fragmentation_max", wl, "%", 100.0 * pool.frag_max);
        add("requests_deferred", wl, "requests", double(res.deferred));
        if (w.shared_prefix > 0) {
            std::map<std::string, std::string> sp = wl;
            sp["shared_prefix"] = std::to_string(w.shared_prefix);
            add("kv_prefix_cache_peak_pages", sp, "pages", double(pool.peak_cached));
            add("kv_prefix_cache_share_mean", sp, "%", pool.cache_samples ? 100.0 * pool.cached_share_sum / double(pool.cache_samples) : 0.0);
            add("kv_prefix_cache_share_peak", sp, "%", 100.0 * double(pool.peak_cached) / double(pages.n_pages()));
            add("prefix_cache_tokens_served", sp, "tokens", double(pages.prefix_stats().cached_tokens));
        }
    }

    // Peaks over the whole run: each backend's allocations (weights, KV pool, executor arenas)
    // and the process's resident set.
    for (const Backend *b : lm.runtime->backends()) {
        const Backend::MemoryUse &m = b->memory_use();
        if (m.peak_allocated) add("peak_allocated", {{"backend", b->name()}}, "MiB", mib(m.peak_allocated));
        // Each backend instance is one device (several of one plugin: "hip:0", "hip:1"), so these
        // are per device.
        const rf_device_info now = b->current_info();
        if (!b->host_memory() && now.total_memory >= now.free_memory && now.total_memory)
            std::fprintf(stderr, "%s: device %d (%s) reports %.1f MiB in use of %.1f MiB (all processes and the runtime)\n",
                         b->name().c_str(), b->device_index(), now.name, mib(now.total_memory - now.free_memory),
                         mib(now.total_memory));
    }
    if (const uint64_t hwm = proc_status_bytes("VmHWM")) add("peak_host_rss", {}, "MiB", mib(hwm));
    return finish_bench_report(report, results, bench::collect_hardware(lm.runtime.get()));
}
