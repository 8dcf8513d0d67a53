// A fake backend with timing events and an execution observer, in front of which the profiler
// plugin runs (tests/profiler/test_profiler_events.cpp, test_profiler_observer.cpp). The fake
// keeps a device clock that each node advances by node->iparams[0] ms; its events complete only
// when the host synchronizes or downloads, and reading an incomplete event counts as a stall.
// In realtime mode the device clock is the host's steady clock and a node sleeps its time, so
// the events line up with the profiler's phase marks (for the wall-time accounting).
// With an observer mode the fake also has set_observer (ABI 2.1) and reports what it ran: at
// once (Observe::Sync, as the CPU backend), at the next synchronize/download/compute
// (Observe::Deferred), or late as the HIP backend (Observe::Late): a call is reported at the end
// of a later compute() once a synchronize or download has completed it, never by the
// synchronize itself, with at most two calls' reports held (a third call reports the oldest
// first, waiting for it) and everything pending reported when set_observer() is called (which
// also numbers the calls from 0 again); a node with iparams[1] != 0 fails, and a node with
// iparams[2] = 1 is fused with the next one into one reported unit.
#pragma once
#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "profiler_test_util.h"
#include "rocmforge/abi.h"

namespace fake_timed {

// "n3": the label of node 3 of a Chain. Appended, not `"n" + std::to_string(i)`, which trips
// GCC 12's false -Wrestrict.
inline std::string node_label(int i) { return std::string("n").append(std::to_string(i)); }

struct FakeEvent {
    double t_ms = 0;
    bool complete = false;
};

inline double steady_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

enum class Observe { None, Sync, Deferred, Late };

inline uint64_t steady_ns() {
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// A report the fake has not delivered yet (Observe::Deferred).
struct FakeReport {
    uint64_t call;
    bool complete = false; // Observe::Late: a synchronize or download came after it
    std::vector<std::string> names;
    std::vector<int32_t> index; // node indices; unit u covers index[first[u]] .. + count[u]
    std::vector<int32_t> first, count;
    std::vector<uint64_t> start_ns, end_ns;
};

struct FakeDevice {
    bool realtime = false;
    double clock_ms = 0;
    int computes = 0, max_nodes_per_compute = 0, syncs = 0, downloads = 0, stalls = 0, reports = 0;
    int waits = 0; // Observe::Late: a report the host had to wait for (a third call queued)
    std::vector<int> compute_sizes; // nodes in each inner compute() call, in order
    std::vector<std::unique_ptr<FakeEvent>> events;
    // set_observer
    Observe observe = Observe::None;
    bool refuse_observer = false;  // set_observer answers RF_ERR_UNSUPPORTED
    int32_t bad_node_index = -1;   // >= 0: the first unit claims this node index instead
    bool choose = false;           // also reports what chose each unit (rf_exec_observer.chose, ABI 2.11)
    rf_exec_observer observer{};
    bool observing = false;
    uint64_t observed_calls = 0;
    std::vector<FakeReport> pending;
    double now_ms() const { return realtime ? steady_ms() : clock_ms; }
    void complete_all() {
        for (auto &e : events) e->complete = true;
        for (auto &r : pending) r.complete = true;
    }
    void report(const FakeReport &r) {
        std::vector<rf_exec_unit> units;
        for (size_t u = 0; u < r.first.size(); ++u)
            units.push_back({r.names[u].c_str(), r.index.data() + r.first[u], r.count[u], r.start_ns[u], r.end_ns[u]});
        ++reports;
        if (choose && observer.chose) { // unit u: kernels "fk_<name> fk_tail", rule "rule of <name>"
            std::vector<std::string> text;
            for (size_t u = 0; u < r.first.size(); ++u)
                text.push_back("fk_" + r.names[u] + " fk_tail"), text.push_back("rule of " + r.names[u]);
            std::vector<rf_unit_choice> choices;
            for (size_t u = 0; u < r.first.size(); ++u) choices.push_back({text[2 * u].c_str(), text[2 * u + 1].c_str()});
            observer.chose(observer.user, r.call, choices.data(), int32_t(choices.size()));
        }
        observer.ran(observer.user, r.call, units.data(), int32_t(units.size()));
    }
    void deliver() {
        for (auto &r : pending) report(r);
        pending.clear();
    }
    // Observe::Late, end of a compute(): the complete reports, oldest first, but for the call
    // just made (the newest, when it succeeded).
    void deliver_complete(bool newest_is_current) {
        const size_t older = pending.size() - (newest_is_current && !pending.empty() ? 1 : 0);
        size_t n = 0;
        while (n < older && pending[n].complete) report(pending[n++]);
        pending.erase(pending.begin(), pending.begin() + std::ptrdiff_t(n));
    }
    // A synchronize or download: Observe::Late only marks the calls complete.
    void on_idle() {
        complete_all();
        if (observe != Observe::Late) deliver();
    }
};

// The fake's backend vtable: events where `with_events`, set_observer unless Observe::None.
rf_backend_vtable fake_vtable(bool with_events, Observe observe = Observe::None);
// The profiler plugin named by $RF_PROFILER.
const rf_profiler_vtable *profiler_vtable();

// A chain of nodes labelled n0..n{count-1}; node i takes i+1 ms on the fake device.
struct Chain {
    rf_tensor t{};
    std::vector<rf_node> nodes;
    std::vector<rf_node *> ptrs;
    std::vector<std::string> labels;
    explicit Chain(int count) {
        t.type = RF_TYPE_F32;
        for (int d = 0; d < 4; ++d) t.ne[d] = d == 0 ? 8 : 1;
        t.nb[0] = 4;
        nodes.resize(size_t(count));
        labels.resize(size_t(count));
        for (int i = 0; i < count; ++i) {
            labels[size_t(i)] = node_label(i);
            rf_node &n = nodes[size_t(i)];
            n.op = RF_OP_SCALE;
            n.dst = &t;
            n.src[0] = &t;
            n.iparams[0] = i + 1;
            n.label = labels[size_t(i)].c_str();
            ptrs.push_back(&n);
        }
    }
    rf_graph graph() const { return {int32_t(ptrs.size()), ptrs.data()}; }
};

// A profiler (config `cfg`) with one fake backend wrapped in it.
struct Session {
    const rf_profiler_vtable *pv = profiler_vtable();
    void *prof = nullptr;
    FakeDevice device;
    rf_backend_vtable inner;
    const rf_backend_vtable *vt = nullptr;
    void *ctx = nullptr;
    char err[512] = {0};
    // `setup` runs on the device before wrap() (which sets the observer).
    template <class Setup = void (*)(FakeDevice &)>
    Session(const std::string &cfg, bool with_events, const char *name, Observe observe = Observe::None,
            Setup setup = [](FakeDevice &) {})
        : inner(fake_vtable(with_events, observe)) {
        INFO(cfg);
        device.observe = observe;
        setup(device);
        REQUIRE(pv->init(cfg.c_str(), &prof, err, sizeof err) == RF_OK);
        REQUIRE(pv->wrap(prof, name, &inner, &device, &vt, &ctx) == RF_OK);
    }
    ~Session() {
        proftest::capture_stderr([&] { pv->shutdown(prof); });
    }
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;
    void compute(const Chain &c) {
        const rf_graph g = c.graph();
        REQUIRE(vt->compute(ctx, &g, err, sizeof err) == RF_OK);
    }
    std::string report() {
        float host = 0;
        REQUIRE(vt->download(ctx, &host, &host, sizeof host, err, sizeof err) == RF_OK);
        return proftest::capture_stderr([&] { REQUIRE(pv->report(prof, err, sizeof err) == RF_OK); });
    }
};

// The inner compute() sizes for calls timed node by node (1) or whole (0), graph of n nodes.
inline std::vector<int> expected_sizes(const std::vector<int> &per_node, int n) {
    std::vector<int> out;
    for (int p : per_node) {
        if (p) out.insert(out.end(), size_t(n), 1);
        else out.push_back(n);
    }
    return out;
}
struct PhaseRow {
    double wall_ms, node_ms, outside_ms, accounted_pct;
    unsigned long nodes;
};

inline PhaseRow phase_row(const std::string &report, const std::string &phase) {
    std::smatch m;
    const std::regex row("\n" + phase + R"( +([0-9.]+) +[0-9.]+ +(\d+) +([0-9.]+) +([0-9.]+) +([0-9.]+)%)");
    REQUIRE(std::regex_search(report, m, row));
    return {std::stod(m[1]), std::stod(m[3]), std::stod(m[4]), std::stod(m[5]), std::stoul(m[2])};
}

// Realtime fake device: 5 rounds of 4 ms idle (the host "sampling") then the 3-node graph of
// 1+2+3 ms in phase "decode" (each round followed by a download where `download`); the report.
inline std::string decode_rounds(Session &s, bool download) {
    s.device.realtime = true;
    Chain chain(3);
    s.pv->phase(s.prof, "decode");
    for (int round = 0; round < 5; ++round) {
        std::this_thread::sleep_for(std::chrono::milliseconds(4));
        s.compute(chain);
        float host = 0;
        if (download) REQUIRE(s.vt->download(s.ctx, &host, &host, sizeof host, s.err, sizeof s.err) == RF_OK);
    }
    const std::string report = s.report();
    INFO(report);
    return report;
}

} // namespace fake_timed
