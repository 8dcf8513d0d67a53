#include "report_text.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "call_sampler.h"
#include "node_cost.h"
#include "phase_timeline.h"

namespace rfprof {

int label_layer(const std::string &label) {
    if (label.rfind("blk.", 0) != 0) return -1;
    size_t i = 4, n = 0;
    int v = 0;
    while (i < label.size() && label[i] >= '0' && label[i] <= '9' && n < 9) v = v * 10 + (label[i++] - '0'), ++n;
    return (n > 0 && i < label.size() && label[i] == '.') ? v : -1;
}

const char *label_part(const std::string &label) {
    std::string s = label;
    if (label_layer(label) >= 0) s = label.substr(label.find('.', 4) + 1);
    auto starts = [&](const char *p) { return s.rfind(p, 0) == 0; };
    if (starts("attn_") || starts("rope") || starts("cache_") || starts("kv_append") || s == "attention")
        return "attention";
    if (starts("ffn_")) return "mlp";
    if (s.find("norm") != std::string::npos) return "norm";
    if (starts("output") || s == "argmax" || s == "select_output_rows") return "output";
    if (starts("token_embd")) return "embedding";
    return "other";
}

namespace {

double percentile(std::vector<float> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t k = size_t(std::ceil(p * double(v.size()))); // nearest rank
    return v[std::min(v.size() - 1, k ? k - 1 : 0)];
}

std::string fit(const std::string &s, size_t w) { return s.size() <= w ? s : s.substr(0, w - 1) + "~"; }

struct Sum {
    double us = 0;
    uint64_t n = 0;
};

// Phases: wall time between the core's marks (a TTFT breakdown when the core marks load,
// tokenize, upload, prefill, first token), the node time recorded in each, and the rest of the
// wall time, when no node ran (phase_timeline.h), so the columns add up to the wall time.
std::string format_phases(const ProfilerState &st, double end_us) {
    const auto &marks = st.phase_marks();
    if (marks.empty()) return "";
    const std::vector<PhaseTime> times = phase_times(marks, st.events(), st.phase_names().size(), end_us);
    std::vector<uint64_t> nodes(st.phase_names().size(), 0);
    for (const auto &e : st.events()) {
        const OpGroup &g = st.groups()[size_t(e.group)];
        nodes[size_t(e.phase)] += g.whole_graph_nodes > 0 ? uint64_t(g.whole_graph_nodes) : g.transfer ? 0 : 1;
    }
    std::vector<int> seen_order;
    for (const PhaseMark &m : marks)
        if (std::find(seen_order.begin(), seen_order.end(), m.phase) == seen_order.end()) seen_order.push_back(m.phase);

    std::string out = fmt::format("\nphases (wall time between marks, in order of first mark; last ends at the report)\n"
                                  "{:<14} {:>12} {:>12} {:>8} {:>12} {:>15} {:>10}\n",
                                  "phase", "wall ms", "cumul ms", "nodes", "op ms", "outside ops ms", "accounted");
    double cumul = 0, node_sum = 0, outside_sum = 0, overlap_sum = 0;
    for (int p : seen_order) {
        const PhaseTime &t = times[size_t(p)];
        cumul += t.wall_us;
        node_sum += t.node_us, outside_sum += t.outside_us(), overlap_sum += t.overlap_us();
        out += fmt::format("{:<14} {:>12.3f} {:>12.3f} {:>8} {:>12.3f} {:>15.3f} {:>9.1f}%\n", fit(st.phase_names()[size_t(p)], 14),
                           t.wall_us / 1000.0, cumul / 1000.0, nodes[size_t(p)], t.node_us / 1000.0,
                           t.outside_us() / 1000.0, 100.0 * t.accounted());
    }
    if (nodes[0])
        out += fmt::format("{:<14} {:>12} {:>12} {:>8} {:>12.3f} {:>15} {:>10}\n", "(before marks)", "-", "-", nodes[0],
                           times[0].node_us / 1000.0, "-", "-");
    // Time to first token: from the first mark to the end of the first "first token" segment.
    for (size_t i = 0; i < marks.size(); ++i)
        if (st.phase_names()[size_t(marks[i].phase)] == "first token") {
            const double end = i + 1 < marks.size() ? marks[i + 1].t_us : end_us;
            out += fmt::format("time to first token: {:.3f} ms (first mark to the end of 'first token')\n",
                               (end - marks[0].t_us) / 1000.0);
            break;
        }
    out += fmt::format("total: op time {:.3f} ms + outside ops {:.3f} ms = {:.3f} ms of {:.3f} ms wall ({:.1f}%)\n",
                       node_sum / 1000.0, outside_sum / 1000.0, (node_sum + outside_sum) / 1000.0, cumul / 1000.0,
                       cumul > 0 ? 100.0 * (node_sum + outside_sum) / cumul : 0.0);
    out += "op ms: time in nodes and in host<->backend transfers (uploads, downloads)\n"
           "outside ops: time in the phase when neither ran on any backend: host work the device waited for\n"
           "  (sampling, graph build, kernel launches, the profiler's own bookkeeping)\n";
    if (overlap_sum > 0.01 * cumul)
        out += fmt::format("note: {:.3f} ms of op time ran while another backend's node ran too; op time counts it for "
                           "each backend, outside ops counts only time when none ran\n", overlap_sum / 1000.0);
    if (st.events_not_stored())
        out += fmt::format("note: partial: the phase rollup sees only the first {} stored samples (max_events); the "
                           "time of the {} later ones counts as outside ops\n", st.events().size(), st.events_not_stored());
    if (st.dropped())
        out += fmt::format("note: partial: {} unread device timings are missing; their time counts as outside ops\n",
                           st.dropped());
    return out;
}

// Which kernels ran each op and shape and why, where the backend said (rf_exec_observer.chose):
// two lines per entry, by total time.
std::string format_choices(const ProfilerState &st, int top) {
    struct Row {
        const OpGroup *g;
        const OpGroup::Choice *c;
    };
    std::vector<Row> rows;
    for (const OpGroup &g : st.groups())
        for (const OpGroup::Choice &c : g.choices) rows.push_back({&g, &c});
    if (rows.empty()) return "";
    std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) { return a.c->total_us > b.c->total_us; });
    std::string out = fmt::format("\nkernels per op and shape (top {} of {} by total time; a fused unit under its first node)\n"
                                  "{:<13} {:<30} {:<13} {:>7} {:>10}  unit: kernels\n{:<13} rule\n",
                                  std::min<size_t>(size_t(top), rows.size()), rows.size(), "op", "shapes", "dtype", "calls",
                                  "total ms", "");
    for (size_t r = 0; r < rows.size() && r < size_t(top); ++r) {
        const OpGroup &g = *rows[r].g;
        const OpGroup::Choice &c = *rows[r].c;
        out += fmt::format("{:<13} {:<30} {:<13} {:>7} {:>10.3f}  {}: {}\n{:<13} {}\n", group_op_name(g), fit(g.shapes, 30),
                           fit(g.dtypes, 13), c.calls, c.total_us / 1000.0, c.unit, c.kernels.empty() ? "(none)" : c.kernels,
                           "", c.rule);
    }
    return out;
}

// The per-op table's header line on sampling: how many compute() calls were timed per node.
std::string format_call_counts(const ProfilerState &st, int sample_every) {
    std::string out = sample_every <= 1
                          ? std::string("compute() calls (sample_every 1: every call timed node by node)\n")
                          : fmt::format("compute() calls (sample_every {}: the first {} and every {}th call of each graph "
                                        "size timed node by node, the others whole)\n",
                                        sample_every, CallSampler::kFirstTimed, sample_every);
    for (const auto &b : st.backends())
        if (b.calls_per_node + b.calls_whole > 0)
            out += fmt::format("  {:<8} {} timed node by node, {} whole\n", b.name, b.calls_per_node, b.calls_whole);
    return out;
}

} // namespace

std::string format_report(const ProfilerState &st, const ReportOptions &opt, double end_us) {
    std::string out = "\n== ROCmForge profile ==\n";
    const auto &groups = st.groups();
    const auto &backends = st.backends();
    double total_us = 0, all_us = 0; // nodes and whole graphs; and transfers too
    uint64_t node_samples = 0, whole_samples = 0, whole_nodes = 0;
    Sum transfers[3];  // by direction
    double transfer_bytes[3] = {0, 0, 0};
    for (const auto &g : groups) {
        all_us += g.total_us;
        if (g.transfer) {
            transfers[g.transfer].us += g.total_us, transfers[g.transfer].n += g.samples_us.size();
            transfer_bytes[g.transfer] += g.bytes;
            continue;
        }
        total_us += g.total_us;
        if (g.whole_graph_nodes > 0) whole_samples += g.samples_us.size(), whole_nodes += g.samples_us.size() * uint64_t(g.whole_graph_nodes);
        else node_samples += g.samples_us.size();
    }

    for (const auto &b : backends)
        out += fmt::format("backend {:<6} {} [{}], timing: {}; ceilings {:.0f} GB/s, {:.2f} TFLOP/s ({})\n", b.name,
                           b.info.name, b.info.arch, b.timing, b.ceiling.gbps, b.ceiling.tflops, b.ceiling.source);
    if (whole_samples == 0) out += fmt::format("timed {} nodes, {:.3f} ms in total\n", node_samples, total_us / 1000.0);
    else
        out += fmt::format("timed {} nodes one at a time and {} whole graphs ({} nodes), {:.3f} ms in total\n",
                           node_samples, whole_samples, whole_nodes, total_us / 1000.0);
    if (transfers[kUpload].n + transfers[kDownload].n)
        out += fmt::format("transfers (host clock around each copy): {} uploads, {:.2f} MiB in {:.3f} ms; {} downloads, "
                           "{:.2f} MiB in {:.3f} ms\n",
                           transfers[kUpload].n, transfer_bytes[kUpload] / (1024.0 * 1024.0), transfers[kUpload].us / 1000.0,
                           transfers[kDownload].n, transfer_bytes[kDownload] / (1024.0 * 1024.0),
                           transfers[kDownload].us / 1000.0);
    if (st.dropped()) out += fmt::format("warning: {} device timings could not be read (backend shut down first)\n", st.dropped());
    if (st.events_not_stored())
        out += fmt::format("note: trace holds the first {} nodes; {} more are in the tables only\n", st.events().size(),
                           st.events_not_stored());
    if (node_samples + whole_samples == 0) {
        out += "(no nodes ran while the profiler was active)\n";
    }

    // Per op/shape/type/backend, by total time.
    std::vector<size_t> order; // groups whose nodes were all lost (unread events) are left out
    for (size_t i = 0; i < groups.size(); ++i)
        if (!groups[i].samples_us.empty()) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups[a].total_us > groups[b].total_us; });
    if (!order.empty()) {
        out += fmt::format("\nper op and shape (top {} of {} by total time; GB/s and TFLOP/s over all calls)\n",
                           std::min<size_t>(size_t(opt.top), order.size()), order.size());
        out += format_call_counts(st, opt.sample_every);
        out += fmt::format("{:<13} {:<30} {:<13} {:<8} {:>7} {:>10} {:>9} {:>9} {:>9} {:>8} {:>8} {:>5} {:>5}\n", "op",
                           "shapes", "dtype", "backend", "calls", "total ms", "mean us", "p50 us", "p95 us", "GB/s",
                           "TFLOP/s", "%BW", "%FLOP");
        for (size_t r = 0; r < order.size() && r < size_t(opt.top); ++r) {
            const OpGroup &g = groups[order[r]];
            const BackendEntry &b = backends[size_t(g.backend)];
            const double mean_us = g.samples_us.empty() ? 0 : g.total_us / double(g.samples_us.size());
            const double gbps = g.total_us > 0 ? g.bytes / (g.total_us * 1e3) : 0;
            const double tflops = g.total_us > 0 ? g.flops / (g.total_us * 1e6) : 0;
            out += fmt::format("{:<13} {:<30} {:<13} {:<8} {:>7} {:>10.3f} {:>9.1f} {:>9.1f} {:>9.1f} ", group_op_name(g),
                               fit(g.shapes, 30), g.whole_graph_nodes > 0 ? "-" : fit(g.dtypes, 13), fit(b.name, 8), g.samples_us.size(),
                               g.total_us / 1000.0, mean_us, percentile(g.samples_us, 0.5), percentile(g.samples_us, 0.95));
            // Whole-graph samples carry no bytes or FLOPs (see ProfilerState::whole_graph_slot);
            // transfers have bytes, but the backend's memory ceiling is not theirs (PCIe).
            if (g.whole_graph_nodes > 0) out += fmt::format("{:>8} {:>8} {:>5} {:>5}\n", "-", "-", "-", "-");
            else if (g.transfer) out += fmt::format("{:>8.1f} {:>8} {:>5} {:>5}\n", gbps, "-", "-", "-");
            else
                out += fmt::format("{:>8.1f} {:>8.3f} {:>4.0f}% {:>4.0f}%\n", gbps, tflops,
                                   b.ceiling.gbps > 0 ? 100.0 * gbps / b.ceiling.gbps : 0.0,
                                   b.ceiling.tflops > 0 ? 100.0 * tflops / b.ceiling.tflops : 0.0);
        }
    }

    out += format_choices(st, opt.top);

    // Per op name and backend, all shapes together.
    std::map<std::pair<std::string, std::string>, Sum> by_op;
    for (const auto &g : groups) {
        if (g.samples_us.empty()) continue;
        Sum &s = by_op[{group_op_name(g), backends[size_t(g.backend)].name}];
        s.us += g.total_us;
        s.n += g.samples_us.size();
    }
    if (!by_op.empty()) {
        out += fmt::format("\nper op (all shapes)\n{:<13} {:<8} {:>8} {:>11} {:>6}\n", "op", "backend", "calls", "total ms", "%");
        std::vector<std::pair<std::pair<std::string, std::string>, Sum>> v(by_op.begin(), by_op.end());
        std::sort(v.begin(), v.end(), [](const auto &a, const auto &b) { return a.second.us > b.second.us; });
        for (const auto &[k, s] : v)
            out += fmt::format("{:<13} {:<8} {:>8} {:>11.3f} {:>5.1f}%\n", k.first, k.second, s.n, s.us / 1000.0,
                               all_us > 0 ? 100.0 * s.us / all_us : 0.0);
    }

    // Rollups by label: layer and part. Built from the stored events; whole-graph samples and
    // transfers have no layer or part and are left out.
    std::map<int, Sum> by_layer;
    std::map<std::string, Sum> by_part;
    const auto &labels = st.labels();
    for (const auto &e : st.events()) {
        if (!is_node_group(groups[size_t(e.group)])) continue;
        const std::string &label = labels[size_t(e.label)];
        const int layer = label_layer(label);
        if (layer >= 0) by_layer[layer].us += e.dur_us, by_layer[layer].n++;
        Sum &p = by_part[label_part(label)];
        p.us += e.dur_us, p.n++;
    }
    const char *sampled_note = whole_samples ? " (node-timed calls only; % of their time)" : "";
    double node_us = total_us; // what the layer and part percentages are of
    for (const auto &g : groups)
        if (g.whole_graph_nodes > 0) node_us -= g.total_us;  // total_us holds no transfers
    if (!by_layer.empty()) {
        out += fmt::format("\nper layer (labels blk.N.*){}\n{:<6} {:>8} {:>11} {:>6}\n", sampled_note, "layer", "nodes", "total ms", "%");
        for (const auto &[l, s] : by_layer)
            out += fmt::format("{:<6} {:>8} {:>11.3f} {:>5.1f}%\n", l, s.n, s.us / 1000.0, node_us > 0 ? 100.0 * s.us / node_us : 0.0);
    }
    if (!by_part.empty()) {
        out += fmt::format("\nper part (attention: attn_*/rope/kv append/attention; mlp: ffn_*){}\n{:<10} {:>8} {:>11} {:>6}\n",
                           sampled_note, "part", "nodes", "total ms", "%");
        for (const auto &[name, s] : by_part)
            out += fmt::format("{:<10} {:>8} {:>11.3f} {:>5.1f}%\n", name, s.n, s.us / 1000.0, node_us > 0 ? 100.0 * s.us / node_us : 0.0);
    }

    out += format_phases(st, end_us);
    if (!opt.trace_path.empty()) out += fmt::format("\ntrace: {} (open in https://ui.perfetto.dev or chrome://tracing)\n", opt.trace_path);
    return out;
}

} // namespace rfprof
