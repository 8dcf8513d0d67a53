// rocmforge-opcheck: every GPU op x dtype x shape against the CPU backend plugin, both loaded
// through the plugin ABI. --perf times each op with the backend's events (GB/s, TFLOP/s).
// Exit: 0 all passed, 1 a failure, 2 usage, 77 skipped (no GPU / no reference plugin).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "fusion_cases.h"
#include "graph_binding.h"
#include "copy_check.h"
#include "backend_config.h"
#include "observer_check.h"
#include "moe_cases.h"
#include "select_cases.h"
#include "op_cases.h"
#include "plugin_handle.h"

using namespace opcheck;

namespace {

struct Options {
    std::string gpu, ref, gpu_config = "{}", ref_config = "{}", filter;
    bool perf = false, list = false, verbose = false;
    unsigned seed = 0;
    int iters = 50;
};

std::string default_path(const char *rel) {
    if (const char *root = std::getenv("ROCMFORGE_BUILD_ROOT"); root && *root) return std::string(root) + "/" + rel;
    char buf[4096] = {0};
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    const std::filesystem::path exe = n > 0 ? std::filesystem::path(std::string(buf, n)) : std::filesystem::path(".");
    return (exe.parent_path() / "../.." / rel).lexically_normal().string();
}

void usage() {
    std::fprintf(stderr,
                 "usage: rocmforge-opcheck [--gpu PLUGIN.so] [--ref CPU_PLUGIN.so] [--gpu-config JSON] [--ref-config JSON]\n"
                 "                         [--option KEY=VALUE]... [--filter TEXT] [--seed N] [--perf [--iters N]] [--list] [--verbose]\n"
                 "--option: a GPU backend option set on top of --gpu-config (VALUE as JSON where it parses, else a string),\n"
                 "          e.g. --option mmqp_cols=64 (docs/OPTIONS.md)\n"
                 "--filter observer: only the observer checks (both timing modes), over every graph case\n");
}

// Device tensors for one case on one backend; rf_tensor views point into them.
struct Bound {
    std::vector<rf_tensor> t;
    std::vector<std::vector<void *>> copies; // per tensor: device copies (perf mode cycles them)
};

Bound bind(Plugin &p, const Case &c, bool poison_dst, int n_copies_cap) {
    Bound b;
    b.t.resize(c.tensors.size());
    b.copies.resize(c.tensors.size());
    for (size_t i = 0; i < c.tensors.size(); ++i) {
        if (!c.present[i]) continue;
        const HostTensor &h = c.tensors[i];
        rf_tensor &t = b.t[i];
        set_dense(t, h);
        std::vector<uint8_t> poison;
        const bool is_dst = i == 0 && poison_dst;
        if (is_dst) poison.assign(h.data.size(), 0xFF); // NaN / -1: unwritten outputs show
        const int n = std::max(1, std::min(h.copies, n_copies_cap));
        for (int k = 0; k < n; ++k) b.copies[i].push_back(p.alloc(h.data.size(), is_dst ? poison.data() : h.data.data()));
        t.data = b.copies[i][0];
    }
    return b;
}

rf_node make_node(const Case &c, Bound &b) {
    rf_node n{};
    n.op = c.op;
    n.dst = &b.t[0];
    for (size_t i = 1; i < c.tensors.size(); ++i) n.src[i - 1] = c.present[i] ? &b.t[i] : nullptr;
    std::memcpy(n.iparams, c.iparams, sizeof n.iparams);
    std::memcpy(n.fparams, c.fparams, sizeof n.fparams);
    n.label = c.name.c_str();
    return n;
}

std::vector<uint8_t> run_case(Plugin &p, const Case &c) {
    Bound b = bind(p, c, c.op != RF_OP_SET_ROWS, 1);
    rf_node n = make_node(c, b);
    p.run(n);
    std::vector<uint8_t> out(c.tensors[0].data.size());
    p.download(out.data(), b.t[0].data, out.size());
    p.free_all();
    return out;
}

// Normalized error sum((a-b)^2) / sum(b^2); NaN/inf anywhere -> +inf.
double nmse(const std::vector<double> &a, const std::vector<double> &ref) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (!std::isfinite(a[i]) || !std::isfinite(ref[i])) return INFINITY;
        num += (a[i] - ref[i]) * (a[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? num / den : num;
}

// ---- multi-node cases (fusion_cases.h) --------------------------------------------------------

// Empty when the backend supports every node, else the first refusal.
std::string graph_unsupported(Plugin &p, const GraphCase &c) {
    BoundGraph b = bind_graph(p, c);
    std::string why;
    for (size_t i = 0; i < b.nodes.size() && why.empty(); ++i)
        if (!p.vt().supports_op(p.ctx(), &b.nodes[i])) why = "node " + std::to_string(i) + " (op " + std::to_string(b.nodes[i].op) + ")";
    p.free_all();
    return why;
}

// Runs the graph as one compute() and returns every written tensor's values.
std::vector<std::vector<double>> run_graph(Plugin &p, const GraphCase &c) {
    BoundGraph b = bind_graph(p, c);
    rf_graph g{(int)b.ptrs.size(), b.ptrs.data()};
    char err[1024] = {0};
    if (p.vt().compute(p.ctx(), &g, err, sizeof err)) {
        p.free_all();
        throw std::runtime_error(err);
    }
    p.sync();
    std::vector<std::vector<double>> out;
    for (size_t i = 0; i < c.tensors.size(); ++i) {
        if (!c.tensors[i].written) continue;
        std::vector<uint8_t> bytes(c.tensors[i].host.data.size());
        p.download(bytes.data(), b.t[i].data, bytes.size());
        out.push_back(to_double(c.tensors[i].host, bytes));
    }
    p.free_all();
    return out;
}

void check_graphs(Plugin &gpu, Plugin &ref, const Options &o, std::mt19937 &rng, int &passed, int &failed, int &skipped) {
    std::vector<GraphCase> graphs = fusion_cases(rng);
    for (GraphCase &c : moe_graph_cases(rng)) graphs.push_back(std::move(c));
    std::mt19937 select_rng(o.seed + 2);
    for (GraphCase &c : select_graph_cases(select_rng)) graphs.push_back(std::move(c));
    std::vector<GraphCase> runnable; // for the observer check: every case the GPU runs
    // --filter observer: only the observer check, over every graph case
    const bool observer_only = o.filter == "observer";
    for (const GraphCase &c : graphs) {
        if (observer_only) {
            if (graph_unsupported(gpu, c).empty()) runnable.push_back(c);
            continue;
        }
        if (!wanted(c.name, o.filter)) continue;
        if (const std::string why = graph_unsupported(gpu, c); !why.empty()) {
            std::printf("FAIL  %-52s GPU backend does not support %s\n", c.name.c_str(), why.c_str());
            ++failed;
            continue;
        }
        runnable.push_back(c);
        if (const std::string why = graph_unsupported(ref, c); !why.empty()) {
            std::printf("SKIP  %-52s reference does not support %s\n", c.name.c_str(), why.c_str());
            ++skipped;
            continue;
        }
        try {
            const auto g = run_graph(gpu, c), r = run_graph(ref, c);
            double worst = 0;
            for (size_t k = 0; k < g.size(); ++k) worst = std::max(worst, nmse(g[k], r[k]));
            const bool ok = worst <= c.max_nmse;
            std::printf("%s  %-52s worst of %zu outputs nmse %.3e (max %.0e)\n", ok ? "ok  " : "FAIL", c.name.c_str(), g.size(), worst,
                        c.max_nmse);
            (ok ? passed : failed)++;
        } catch (const std::exception &e) {
            std::printf("FAIL  %-52s %s\n", c.name.c_str(), e.what());
            ++failed;
        }
        std::fflush(stdout);
    }
    if (!runnable.empty()) check_observer(o.gpu, o.gpu_config, runnable, passed, failed);
}

int check(Plugin &gpu, Plugin &ref, const Options &o) {
    std::mt19937 rng(o.seed);
    int failed = 0, passed = 0, skipped = 0;
    std::vector<Case> cases = correctness_cases(rng);
    for (Case &c : moe_cases(rng)) cases.push_back(std::move(c));
    std::mt19937 select_rng(o.seed + 1); // apart, so the cases above keep their data
    for (Case &c : select_cases(select_rng)) cases.push_back(std::move(c));
    for (Case &c : cases) {
        if (!wanted(c.name, o.filter)) continue;
        Bound probe_g = bind(gpu, c, false, 1);
        rf_node pn = make_node(c, probe_g);
        const bool gpu_ok = gpu.vt().supports_op(gpu.ctx(), &pn);
        gpu.free_all();
        Bound probe_r = bind(ref, c, false, 1);
        rf_node rn = make_node(c, probe_r);
        const bool ref_ok = ref.vt().supports_op(ref.ctx(), &rn);
        ref.free_all();
        if (!gpu_ok) { std::printf("FAIL  %-52s GPU backend does not support it\n", c.name.c_str()); ++failed; continue; }
        if (!ref_ok) { std::printf("SKIP  %-52s reference does not support it\n", c.name.c_str()); ++skipped; continue; }
        try {
            const auto g = to_double(c.tensors[0], run_case(gpu, c));
            const auto r = to_double(c.tensors[0], run_case(ref, c));
            bool ok;
            char detail[256];
            if (c.exact) {
                size_t bad = 0;
                for (size_t i = 0; i < g.size(); ++i) bad += g[i] != r[i];
                ok = bad == 0;
                std::snprintf(detail, sizeof detail, "%zu/%zu mismatches", bad, g.size());
            } else {
                const double e = nmse(g, r);
                ok = e <= c.max_nmse;
                std::snprintf(detail, sizeof detail, "nmse %.3e (max %.0e)", e, c.max_nmse);
                if (!ok && o.verbose) // the first differing elements, to locate a layout bug
                    for (size_t i = 0, shown = 0; i < g.size() && shown < 8; ++i)
                        if (std::fabs(g[i] - r[i]) > 1e-3 * (std::fabs(r[i]) + 1e-3) || !std::isfinite(g[i])) {
                            std::printf("      [%zu] gpu %.6g ref %.6g\n", i, g[i], r[i]);
                            ++shown;
                        }
            }
            if (c.op == RF_OP_SET_ROWS) { // also against the source rows themselves: says which side is off
                const HostTensor &rows = c.tensors[1], &slot_t = c.tensors[2];
                const auto src = to_double(rows, rows.data);
                const auto *slots = reinterpret_cast<const int32_t *>(slot_t.data.data());
                const int64_t R = rows.ne[0];
                std::vector<double> gs, rs, xs;
                for (int64_t t = 0; t < rows.ne[1]; ++t)
                    for (int64_t i = 0; i < R; ++i) {
                        gs.push_back(g[slots[t] * R + i]);
                        rs.push_back(r[slots[t] * R + i]);
                        xs.push_back(src[t * R + i]);
                    }
                const size_t at = std::strlen(detail);
                std::snprintf(detail + at, sizeof detail - at, "; vs source rows: gpu %.1e ref %.1e", nmse(gs, xs), nmse(rs, xs));
            }
            std::printf("%s  %-52s %s\n", ok ? "ok  " : "FAIL", c.name.c_str(), detail);
            (ok ? passed : failed)++;
        } catch (const std::exception &e) {
            std::printf("FAIL  %-52s %s\n", c.name.c_str(), e.what());
            ++failed;
        }
        std::fflush(stdout);
    }
    check_graphs(gpu, ref, o, rng, passed, failed, skipped);
    if (wanted("copies", o.filter)) check_copies(gpu, passed, failed);
    std::printf("\n%d passed, %d failed, %d skipped (seed %u)\n", passed, failed, skipped, o.seed);
    return failed ? 1 : 0;
}

int perf(Plugin &gpu, const Options &o) {
    std::mt19937 rng(o.seed);
    std::printf("%-52s %10s %9s %9s\n", "op", "us/op", "GB/s", "TFLOP/s");
    const auto &vt = gpu.vt();
    std::vector<Case> cases = perf_cases(rng, o.filter);
    for (Case &c : moe_perf_cases(rng, o.filter)) cases.push_back(std::move(c));
    for (Case &c : select_perf_cases(rng, o.filter)) cases.push_back(std::move(c));
    for (Case &c : cases) {
        try {
            Bound b = bind(gpu, c, false, 8);
            std::vector<rf_node> nodes(o.iters);
            std::vector<rf_node *> ptrs(o.iters);
            std::vector<std::vector<rf_tensor>> views(o.iters, b.t); // per iteration: rotate copies
            for (int it = 0; it < o.iters; ++it) {
                for (size_t i = 0; i < b.t.size(); ++i)
                    if (!b.copies[i].empty()) views[it][i].data = b.copies[i][it % b.copies[i].size()];
                rf_node n{};
                n.op = c.op;
                n.dst = &views[it][0];
                for (size_t i = 1; i < c.tensors.size(); ++i) n.src[i - 1] = c.present[i] ? &views[it][i] : nullptr;
                std::memcpy(n.iparams, c.iparams, sizeof n.iparams);
                std::memcpy(n.fparams, c.fparams, sizeof n.fparams);
                nodes[it] = n;
                ptrs[it] = &nodes[it];
            }
            rf_graph g{o.iters, ptrs.data()};
            char err[1024] = {0};
            for (int w = 0; w < 2; ++w)
                if (vt.compute(gpu.ctx(), &g, err, sizeof err)) throw std::runtime_error(err);
            gpu.sync();
            void *e0 = nullptr, *e1 = nullptr;
            vt.event_create(gpu.ctx(), &e0);
            vt.event_create(gpu.ctx(), &e1);
            float best = 1e30f;
            for (int rep = 0; rep < 3; ++rep) { // best of 3 batches of `iters` launches
                vt.event_record(gpu.ctx(), e0);
                if (vt.compute(gpu.ctx(), &g, err, sizeof err)) throw std::runtime_error(err);
                vt.event_record(gpu.ctx(), e1);
                float ms = 0;
                vt.event_elapsed_ms(gpu.ctx(), e0, e1, &ms);
                best = std::min(best, ms);
            }
            vt.event_destroy(gpu.ctx(), e0);
            vt.event_destroy(gpu.ctx(), e1);
            const double s = best / 1e3 / o.iters;
            std::printf("%-52s %10.2f %9.1f %9.2f\n", c.name.c_str(), s * 1e6, c.bytes / s / 1e9, c.flops / s / 1e12);
            gpu.free_all();
        } catch (const std::exception &e) {
            std::printf("%-52s ERROR %s\n", c.name.c_str(), e.what());
            gpu.free_all();
            return 1;
        }
        std::fflush(stdout);
    }
    return 0;
}

} // namespace

int main(int argc, char **argv) {
    Options o;
    std::vector<std::string> options; // --option KEY=VALUE, applied over --gpu-config in order
    o.gpu = default_path("backends/hip/rocmforge-hip.so");
    o.ref = default_path("backends/cpu/rocmforge-cpu.so");
    o.seed = (unsigned)std::chrono::steady_clock::now().time_since_epoch().count();
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) { usage(); std::exit(2); }
            return argv[++i];
        };
        if (a == "--gpu") o.gpu = next();
        else if (a == "--ref") o.ref = next();
        else if (a == "--gpu-config") o.gpu_config = next();
        else if (a == "--ref-config") o.ref_config = next();
        else if (a == "--option") options.push_back(next());
        else if (a == "--filter") o.filter = next();
        else if (a == "--seed") o.seed = (unsigned)std::strtoul(next().c_str(), nullptr, 10);
        else if (a == "--iters") o.iters = std::max(1, std::atoi(next().c_str()));
        else if (a == "--perf") o.perf = true;
        else if (a == "--list") o.list = true;
        else if (a == "--verbose") o.verbose = true;
        else { usage(); return 2; }
    }
    for (const std::string &kv : options) {
        std::string e;
        if (!set_config_option(o.gpu_config, kv, e)) { std::fprintf(stderr, "rocmforge-opcheck: %s\n", e.c_str()); return 2; }
    }
    if (o.list) {
        std::mt19937 rng(o.seed);
        for (const auto &c : correctness_cases(rng)) std::printf("%s\n", c.name.c_str());
        for (const auto &c : fusion_cases(rng)) std::printf("%s\n", c.name.c_str());
        for (const auto &c : moe_cases(rng)) std::printf("%s\n", c.name.c_str());
        for (const auto &c : moe_graph_cases(rng)) std::printf("%s\n", c.name.c_str());
        for (const auto &c : select_cases(rng)) std::printf("%s\n", c.name.c_str());
        for (const auto &c : select_graph_cases(rng)) std::printf("%s\n", c.name.c_str());
        return 0;
    }
    Plugin gpu(o.gpu, o.gpu_config);
    if (gpu.status() != RF_OK) {
        if (gpu.status() == RF_ERR_NO_DEVICE) { std::printf("SKIP: no GPU (%s)\n", gpu.message().c_str()); return 77; }
        std::printf("FAIL: GPU backend init: %s\n", gpu.message().c_str());
        return 1;
    }
    const rf_device_info info = gpu.info();
    std::printf("GPU: %s, arch %s, %.1f GiB free\n  %s\n", info.name, info.arch, info.free_memory / 1073741824.0, info.details);
    if (o.perf) return perf(gpu, o);
    Plugin ref(o.ref, o.ref_config);
    if (ref.status() != RF_OK) { std::printf("SKIP: reference CPU plugin unavailable: %s\n", ref.message().c_str()); return 77; }
    return check(gpu, ref, o);
}
