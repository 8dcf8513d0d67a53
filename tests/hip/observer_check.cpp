#include "observer_check.h"

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "backend_config.h"
#include "graph_binding.h"

namespace opcheck {
namespace {

struct Report {
    uint64_t call;
    std::vector<int32_t> nodes; // the units' nodes, concatenated in report order
    std::vector<std::string> names;
    bool times_ok = true;       // every unit start <= end (a time >= 0), units in time order
    double total_ms = 0;        // the units' times summed
    double span_ms = 0;         // first unit's start to last unit's end
};

void on_ran(void *user, uint64_t call, const rf_exec_unit *units, int32_t n) {
    auto &out = *static_cast<std::vector<Report> *>(user);
    Report r{call, {}, {}, true, 0, 0};
    for (int32_t u = 0; u < n; ++u) {
        const rf_exec_unit &x = units[u];
        for (int32_t k = 0; k < x.n_nodes; ++k) r.nodes.push_back(x.nodes[k]);
        r.names.emplace_back(x.name ? x.name : "(null)");
        if (x.end_ns < x.start_ns || (u > 0 && x.start_ns < units[u - 1].end_ns)) r.times_ok = false;
        if (x.end_ns >= x.start_ns) r.total_ms += double(x.end_ns - x.start_ns) / 1e6;
    }
    if (n > 0 && units[n - 1].end_ns >= units[0].start_ns) r.span_ms = double(units[n - 1].end_ns - units[0].start_ns) / 1e6;
    out.push_back(std::move(r));
}

// rf_exec_observer.chose (ABI 2.11): per call, each unit's kernels and rule.
struct Choices {
    uint64_t call;
    std::vector<std::string> kernels, rules;
};
std::vector<Choices> g_choices;
void on_chose(void *, uint64_t call, const rf_unit_choice *c, int32_t n) {
    Choices x{call, {}, {}};
    for (int32_t u = 0; u < n; ++u) x.kernels.emplace_back(c[u].kernels ? c[u].kernels : ""), x.rules.emplace_back(c[u].rule ? c[u].rule : "");
    g_choices.push_back(std::move(x));
}

// Every report has its choices (same call, same unit count), each unit naming a kernel and a rule.
bool choices_ok(const std::vector<Report> &reports, std::string &what) {
    if (g_choices.size() != reports.size()) {
        what = "; " + std::to_string(g_choices.size()) + " choice reports for " + std::to_string(reports.size()) + " calls";
        return false;
    }
    for (size_t i = 0; i < reports.size(); ++i) {
        const Choices &c = g_choices[i];
        if (c.call != reports[i].call || c.kernels.size() != reports[i].names.size()) {
            what = "; call " + std::to_string(reports[i].call) + ": choices for call " + std::to_string(c.call) + ", " +
                   std::to_string(c.kernels.size()) + " units (want " + std::to_string(reports[i].names.size()) + ")";
            return false;
        }
        for (size_t u = 0; u < c.kernels.size(); ++u)
            if (c.kernels[u].empty() || c.rules[u].empty()) {
                what = "; call " + std::to_string(c.call) + " unit " + std::to_string(u) + " (" + reports[i].names[u] +
                       "): kernels '" + c.kernels[u] + "', rule '" + c.rules[u] + "'";
                return false;
            }
    }
    return true;
}

// The units' times sum to about the step's span: the backend reports back-to-back units (each
// ends where the next starts), so the gaps are rounding only (1% or 1 us).
bool sums_to_span(const Report &r) { return std::fabs(r.total_ms - r.span_ms) <= 0.01 * r.span_ms + 1e-3; }

// Every written tensor's bytes, case after case.
std::vector<uint8_t> written_bytes(Plugin &p, const std::vector<GraphCase> &cases, const std::vector<BoundGraph> &bound) {
    std::vector<uint8_t> all;
    for (size_t c = 0; c < cases.size(); ++c)
        for (size_t i = 0; i < cases[c].tensors.size(); ++i) {
            if (!cases[c].tensors[i].written) continue;
            std::vector<uint8_t> bytes(cases[c].tensors[i].host.data.size());
            p.download(bytes.data(), bound[c].t[i].data, bytes.size());
            all.insert(all.end(), bytes.begin(), bytes.end());
        }
    return all;
}

void run(Plugin &p, const rf_graph &g, bool sync = true) {
    char err[1024] = {0};
    if (p.vt().compute(p.ctx(), &g, err, sizeof err)) throw std::runtime_error(err);
    if (sync) p.sync();
}

// Reports [from, to) exist, number their calls 0..to-from-1, each covering the graph's nodes once in
// order, with times; `what` says what failed.
bool reports_ok(const std::vector<Report> &reports, size_t from, size_t to, int32_t n_nodes, std::string &what) {
    bool calls_ok = reports.size() >= to, cover_ok = true, times_ok = true, span_ok = true;
    for (size_t r = from; r < reports.size() && r < to; ++r) {
        calls_ok = calls_ok && reports[r].call == r - from;
        bool cover = int32_t(reports[r].nodes.size()) == n_nodes;
        for (size_t k = 0; cover && k < reports[r].nodes.size(); ++k) cover = reports[r].nodes[k] == int32_t(k);
        cover_ok = cover_ok && cover;
        times_ok = times_ok && reports[r].times_ok && reports[r].total_ms > 0;
        span_ok = span_ok && sums_to_span(reports[r]);
    }
    what = (calls_ok ? "" : "; calls not numbered 0.." + std::to_string(to - from - 1)) + (cover_ok ? "" : "; nodes not covered once in order") +
           (times_ok ? "" : "; times negative, out of order or zero") + (span_ok ? "" : "; unit times do not sum to the step's span");
    return calls_ok && cover_ok && times_ok && span_ok;
}

std::string mode_label; // " (timestamps)" / " (events)": the timing mode under check

void result(bool ok, const char *what, const std::string &detail, int &passed, int &failed) {
    std::printf("%s  %-52s %s\n", ok ? "ok  " : "FAIL", (what + mode_label).c_str(), detail.c_str());
    (ok ? passed : failed)++;
    std::fflush(stdout);
}

// One timing mode; returns the span of the last observed call (ms, 0: none).
double check_mode(Plugin &gpu, const std::vector<GraphCase> &cases, int &passed, int &failed);

} // namespace

// Both timing modes of the HIP backend (exec_observer.h): kernel timestamps (option
// observer_events off: where the kernels have them) and events (on), one backend instance each.
void check_observer(const std::string &gpu_path, const std::string &gpu_config, const std::vector<GraphCase> &cases, int &passed,
                    int &failed) {
    double span_ms[2] = {0, 0};
    for (int events = 0; events < 2; ++events) {
        mode_label = events ? " (events)" : " (timestamps)";
        std::string config = gpu_config, err;
        if (!set_config_option(config, "observer_events", events ? "on" : "off", err)) {
            result(false, "observer: config", err, passed, failed);
            continue;
        }
        Plugin gpu(gpu_path, config);
        if (gpu.status() != RF_OK) {
            result(false, "observer: backend init", gpu.message(), passed, failed);
            continue;
        }
        span_ms[events] = check_mode(gpu, cases, passed, failed);
    }
    mode_label.clear();
    const double stamps_ms = span_ms[0], events_ms = span_ms[1];
    // Not a check (the two runs differ by the events' own cost and by noise): both spans side
    // by side, for the eye.
    std::printf("info  observer: last call's span, timestamps %.3f ms, events %.3f ms\n", stamps_ms, events_ms);
}

namespace {
double check_mode(Plugin &gpu, const std::vector<GraphCase> &cases, int &passed, int &failed) {
    double last_span = 0;
    const auto set_observer = RF_SLOT(&gpu.vt(), rf_backend_vtable, set_observer);
    if (!set_observer) {
        result(false, "observer: set_observer", "the GPU plugin has no set_observer slot", passed, failed);
        return 0;
    }
    std::vector<BoundGraph> bound;
    bound.reserve(cases.size());
    std::vector<rf_node *> ptrs;
    for (const GraphCase &c : cases) {
        bound.push_back(bind_graph(gpu, c));
        ptrs.insert(ptrs.end(), bound.back().ptrs.begin(), bound.back().ptrs.end());
    }
    const rf_graph g{int32_t(ptrs.size()), ptrs.data()};
    std::vector<Report> reports;
    char err[1024] = {0};
    try {
        for (int i = 0; i < 3; ++i) run(gpu, g); // the 2nd builds the replay graph, the 3rd replays it
        const std::vector<uint8_t> plain = written_bytes(gpu, cases, bound);
        const rf_exec_observer obs = {sizeof(rf_exec_observer), &reports, on_ran, on_chose};
        g_choices.clear();
        if (int st = set_observer(gpu.ctx(), &obs, err, sizeof err)) throw std::runtime_error("set_observer: " + std::string(err) + " (" + std::to_string(st) + ")");
        std::vector<size_t> seen; // reports after each observed call (a call is reported during a later compute())
        for (int i = 0; i < 3; ++i) {
            run(gpu, g);
            seen.push_back(reports.size());
        }
        const std::vector<uint8_t> observed = written_bytes(gpu, cases, bound);
        if (int st = set_observer(gpu.ctx(), nullptr, err, sizeof err)) throw std::runtime_error("set_observer(NULL): " + std::string(err) + " (" + std::to_string(st) + ")");
        const size_t after_unset = reports.size();
        run(gpu, g);
        const std::vector<uint8_t> after = written_bytes(gpu, cases, bound);

        result(plain == observed && plain == after, "observer: same bytes observed and not",
               std::to_string(plain.size()) + " written bytes over " + std::to_string(g.n_nodes) + " nodes", passed, failed);
        std::string why;
        const bool all_ok = reports_ok(reports, 0, 3, g.n_nodes, why);
        std::string detail = std::to_string(reports.size()) + " reports";
        if (!reports.empty()) {
            const Report &last = reports.back();
            size_t groups = 0;
            for (const auto &n : last.names) groups += n.find('+') != std::string::npos;
            char buf[160];
            std::snprintf(buf, sizeof buf, "; last: %zu units (%zu fused groups), %.3f ms of a %.3f ms span", last.names.size(), groups,
                          last.total_ms, last.span_ms);
            detail += buf;
            last_span = last.span_ms;
        }
        result(all_ok && after_unset == 3, "observer: every call reported, every node once", detail + why, passed, failed);
        std::string why_choices;
        const bool chose_ok = choices_ok(reports, why_choices);
        result(chose_ok, "observer: each unit's kernels and rule reported (ABI 2.11)",
               std::to_string(g_choices.size()) + " choice reports" +
                   (g_choices.empty() || g_choices.back().kernels.empty() ? "" : "; first unit: " + g_choices.back().kernels[0] + " (" + g_choices.back().rules[0] + ")") +
                   why_choices,
               passed, failed);
        // Each call's events are read during the next compute(), after its launch (the reading
        // overlaps the device); the last comes when the observer is removed.
        const bool late_ok = seen == std::vector<size_t>{0, 1, 2} && after_unset == 3;
        result(late_ok, "observer: a call reported by the next compute()",
               "reports after calls 1..3: " + std::to_string(seen[0]) + ", " + std::to_string(seen[1]) + ", " + std::to_string(seen[2]) +
                   " (want 0, 1, 2); after set_observer(NULL): " + std::to_string(after_unset) + " (want 3)",
               passed, failed);

        // Calls queued without a synchronize (more than there are event sets: the oldest is
        // waited for and reported first), then the same observer set again, which reports what
        // is pending and numbers calls from 0 again.
        reports.clear();
        // A 2.10 observer (ending before chose) is served and told nothing more.
        rf_exec_observer old_obs = obs;
        old_obs.struct_size = offsetof(rf_exec_observer, chose);
        old_obs.chose = nullptr;
        g_choices.clear();
        if (int st = set_observer(gpu.ctx(), &old_obs, err, sizeof err)) throw std::runtime_error("set_observer: " + std::string(err) + " (" + std::to_string(st) + ")");
        for (int i = 0; i < 4; ++i) run(gpu, g, false);
        gpu.sync();
        const std::vector<uint8_t> queued = written_bytes(gpu, cases, bound);
        if (int st = set_observer(gpu.ctx(), &old_obs, err, sizeof err)) throw std::runtime_error("set_observer again: " + std::string(err) + " (" + std::to_string(st) + ")");
        const size_t after_reset = reports.size();
        run(gpu, g);
        run(gpu, g);
        if (int st = set_observer(gpu.ctx(), nullptr, err, sizeof err)) throw std::runtime_error("set_observer(NULL): " + std::string(err) + " (" + std::to_string(st) + ")");
        std::string why1, why2;
        const bool q_ok = reports_ok(reports, 0, 4, g.n_nodes, why1);
        const bool r_ok = reports_ok(reports, 4, 6, g.n_nodes, why2);
        result(g_choices.empty(), "observer: a 2.10 observer (no chose) is served", std::to_string(g_choices.size()) + " choice reports (want 0)",
               passed, failed);
        result(queued == plain && after_reset == 4 && q_ok && r_ok, "observer: queued calls, observer set again",
               std::to_string(reports.size()) + " reports (want 6), " + std::to_string(after_reset) + " when set again (want 4)" +
                   (queued == plain ? "" : "; bytes differ") + why1 + why2,
               passed, failed);
    } catch (const std::exception &e) {
        set_observer(gpu.ctx(), nullptr, err, sizeof err);
        result(false, "observer", e.what(), passed, failed);
    }
    gpu.free_all();
    return last_span;
}
} // namespace

} // namespace opcheck
