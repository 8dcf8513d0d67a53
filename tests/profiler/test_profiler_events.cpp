// The profiler's ABI used directly, in front of a fake backend that has timing events. The fake
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
// also numbers the calls from 0 again); a node with iparams[2] = 1 is fused with the next one
// into one reported unit.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "profiler_test_util.h"
#include "rocmforge/abi.h"

namespace {

// "n3": the label of node 3 of a Chain. Appended, not `"n" + std::to_string(i)`, which trips
// GCC 12's false -Wrestrict.
std::string node_label(int i) { return std::string("n").append(std::to_string(i)); }

struct FakeEvent {
    double t_ms = 0;
    bool complete = false;
};

double steady_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

enum class Observe { None, Sync, Deferred, Late };

uint64_t steady_ns() {
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

FakeDevice *dev(void *c) { return static_cast<FakeDevice *>(c); }

int f_info(void *, rf_device_info *o) {
    std::memset(o, 0, sizeof *o);
    std::strcpy(o->name, "fake event device");
    std::strcpy(o->arch, "fake");
    o->kind = RF_DEVICE_GPU;
    return RF_OK;
}
int f_alloc(void *, uint64_t, rf_buffer_desc *, char *, size_t) { return RF_ERR_UNSUPPORTED; }
int f_upload(void *, void *, const void *, uint64_t, char *, size_t) { return RF_OK; }
int f_download(void *c, void *, const void *, uint64_t, char *, size_t) {
    dev(c)->downloads++;
    dev(c)->on_idle();
    return RF_OK;
}
int f_supports(void *, const rf_node *) { return 1; }
// The nodes of one graph, no observer involved.
int run_nodes(FakeDevice *d, const rf_graph *g, char *err, size_t n) {
    for (int i = 0; i < g->n_nodes; ++i) {
        if (g->nodes[i]->iparams[1]) {
            std::snprintf(err, n, "fake device fault at %s", g->nodes[i]->label);
            return RF_ERR_DEVICE;
        }
        if (d->realtime) std::this_thread::sleep_for(std::chrono::milliseconds(g->nodes[i]->iparams[0]));
        else d->clock_ms += g->nodes[i]->iparams[0];
    }
    return RF_OK;
}

// Runs the graph as f_compute does and reports it: units of one node, or two where a node has
// iparams[2] = 1 (fused with the next); times on the host steady clock (device clock offsets).
int run_observed(FakeDevice *d, const rf_graph *g, char *err, size_t n) {
    FakeReport r;
    r.call = d->observed_calls++;
    const uint64_t base = steady_ns();
    const double t0 = d->now_ms();
    auto at = [&] { return d->realtime ? steady_ns() : base + uint64_t((d->now_ms() - t0) * 1e6); };
    for (int i = 0; i < g->n_nodes; ++i) {
        const int used = g->nodes[i]->iparams[2] && i + 1 < g->n_nodes ? 2 : 1;
        const uint64_t start = at();
        const rf_graph part = {used, &g->nodes[i]};
        if (int st = run_nodes(d, &part, err, n)) return st; // a failed call reports nothing
        r.names.push_back(used == 2 ? "scale+scale" : "scale");
        r.first.push_back(int32_t(r.index.size()));
        r.count.push_back(used);
        for (int k = i; k < i + used; ++k) r.index.push_back(k);
        r.start_ns.push_back(start);
        r.end_ns.push_back(at());
        i += used - 1;
    }
    if (d->bad_node_index >= 0 && !r.index.empty()) r.index[0] = d->bad_node_index;
    d->pending.push_back(std::move(r));
    if (d->observe == Observe::Sync) d->deliver();
    return RF_OK;
}

int f_compute(void *c, const rf_graph *g, char *err, size_t n) {
    FakeDevice *d = dev(c);
    const bool late = d->observe == Observe::Late;
    if (!late) d->deliver(); // Deferred: the previous call is reported no later than the next compute()
    if (late && d->pending.size() >= 2) { // both event sets held: the oldest is waited for
        ++d->waits;
        d->report(d->pending.front());
        d->pending.erase(d->pending.begin());
    }
    d->computes++;
    d->compute_sizes.push_back(int(g->n_nodes));
    d->max_nodes_per_compute = std::max(d->max_nodes_per_compute, int(g->n_nodes));
    const int st = d->observing ? run_observed(d, g, err, n) : run_nodes(d, g, err, n);
    if (late && d->observing) d->deliver_complete(st == RF_OK); // after the launch: earlier complete calls
    return st;
}
int f_sync(void *c, char *, size_t) {
    dev(c)->syncs++;
    dev(c)->on_idle();
    return RF_OK;
}
int f_set_observer(void *c, const rf_exec_observer *obs, char *err, size_t n) {
    FakeDevice *d = dev(c);
    if (d->refuse_observer) {
        std::snprintf(err, n, "fake: no observing today");
        return RF_ERR_UNSUPPORTED;
    }
    d->deliver();
    d->observing = obs != nullptr;
    if (obs) d->observer = *obs;
    d->observed_calls = 0;
    return RF_OK;
}
int f_ev_create(void *c, void **e) {
    dev(c)->events.push_back(std::make_unique<FakeEvent>());
    *e = dev(c)->events.back().get();
    return RF_OK;
}
int f_ev_record(void *c, void *e) {
    static_cast<FakeEvent *>(e)->t_ms = dev(c)->now_ms();
    static_cast<FakeEvent *>(e)->complete = false;
    return RF_OK;
}
int f_ev_elapsed(void *c, void *a, void *b, float *ms) {
    auto *ea = static_cast<FakeEvent *>(a), *eb = static_cast<FakeEvent *>(b);
    if (!ea->complete || !eb->complete) {
        dev(c)->stalls++; // a real device would block the host here
        dev(c)->complete_all();
    }
    *ms = float(eb->t_ms - ea->t_ms);
    return RF_OK;
}
void f_ev_destroy(void *, void *) {}
rf_backend_vtable fake_vtable(bool with_events, Observe observe = Observe::None) {
    rf_backend_vtable v{};
    v.struct_size = sizeof v;
    v.device_info = f_info;
    v.buffer_alloc = f_alloc;
    v.upload = f_upload;
    v.download = f_download;
    v.supports_op = f_supports;
    v.compute = f_compute;
    v.synchronize = f_sync;
    if (with_events) {
        v.event_create = f_ev_create;
        v.event_record = f_ev_record;
        v.event_elapsed_ms = f_ev_elapsed;
        v.event_destroy = f_ev_destroy;
    }
    if (observe != Observe::None) v.set_observer = f_set_observer;
    return v;
}

const rf_profiler_vtable *profiler_vtable() {
    const char *path = std::getenv("RF_PROFILER");
    REQUIRE(path != nullptr);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    INFO(dlerror());
    REQUIRE(h != nullptr);
    auto entry = reinterpret_cast<rf_plugin_entry_fn>(dlsym(h, RF_PLUGIN_ENTRY_SYMBOL));
    REQUIRE(entry != nullptr);
    const rf_plugin_info *info = entry();
    REQUIRE(info->abi_major == RF_ABI_MAJOR);
    REQUIRE(info->kind == RF_PLUGIN_PROFILER);
    return static_cast<const rf_profiler_vtable *>(info->vtable);
}

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
std::vector<int> expected_sizes(const std::vector<int> &per_node, int n) {
    std::vector<int> out;
    for (int p : per_node) {
        if (p) out.insert(out.end(), size_t(n), 1);
        else out.push_back(n);
    }
    return out;
}

} // namespace

TEST_CASE("profiler events: device timings are read in batches, never per node") {
    const rf_profiler_vtable *pv = profiler_vtable();
    const std::string trace = proftest::temp_path("events.json");
    void *prof = nullptr;
    char err[512] = {0};
    const std::string cfg = "{\"trace\": \"" + trace + "\", \"ceilings\": {\"fakeev\": {\"gbps\": 123, \"tflops\": 4.5}}}";
    REQUIRE(pv->init(cfg.c_str(), &prof, err, sizeof err) == RF_OK);

    FakeDevice device;
    const rf_backend_vtable inner = fake_vtable(true);
    const rf_backend_vtable *wrapped = nullptr;
    void *wctx = nullptr;
    REQUIRE(pv->wrap(prof, "fakeev", &inner, &device, &wrapped, &wctx) == RF_OK);
    REQUIRE(wrapped->event_create != nullptr);
    REQUIRE(wrapped->buffer_free == nullptr); // absent in the inner vtable: stays absent

    Chain chain(5);
    const rf_graph g = chain.graph();
    pv->phase(prof, "decode");
    for (int rep = 0; rep < 4; ++rep) REQUIRE(wrapped->compute(wctx, &g, err, sizeof err) == RF_OK);
    // Nodes ran one at a time; the only synchronizations were the one-time anchor's.
    CHECK(device.max_nodes_per_compute == 1);
    CHECK(device.computes == 4 * 5);
    CHECK(device.syncs <= 2);
    const int syncs_before = device.syncs;
    float host = 0;
    REQUIRE(wrapped->download(wctx, &host, &host, sizeof host, err, sizeof err) == RF_OK);
    CHECK(device.syncs == syncs_before);
    CHECK(device.stalls == 0);

    const std::string report = proftest::capture_stderr([&] { REQUIRE(pv->report(prof, err, sizeof err) == RF_OK); });
    INFO(report);
    CHECK(device.stalls == 0);
    CHECK(report.find("123 GB/s, 4.50 TFLOP/s (config)") != std::string::npos);
    CHECK(report.find("timing: device events") != std::string::npos);

    auto events = proftest::load_trace_nodes(trace);
    REQUIRE(events.size() == 4 * 5);
    for (size_t i = 0; i < events.size(); ++i) {
        const int k = int(i % 5);
        CHECK(events[i].name == node_label(k));
        CHECK(events[i].cat == "scale");
        CHECK(events[i].dur == Approx((k + 1) * 1000.0)); // device time, microseconds
        if (k > 0) CHECK(events[i].ts == Approx(events[i - 1].ts + events[i - 1].dur).margin(1.0));
    }
    pv->shutdown(prof);
    std::filesystem::remove(trace);
}

TEST_CASE("profiler events: a failing node returns the backend's status and message") {
    const rf_profiler_vtable *pv = profiler_vtable();
    void *prof = nullptr;
    char err[512] = {0};
    REQUIRE(pv->init("{}", &prof, err, sizeof err) == RF_OK);
    for (bool with_events : {true, false}) {
        FakeDevice device;
        const rf_backend_vtable inner = fake_vtable(with_events);
        const rf_backend_vtable *wrapped = nullptr;
        void *wctx = nullptr;
        REQUIRE(pv->wrap(prof, with_events ? "ev" : "clock", &inner, &device, &wrapped, &wctx) == RF_OK);
        Chain chain(3);
        chain.nodes[1].iparams[1] = 1; // fault
        const rf_graph g = chain.graph();
        err[0] = 0;
        CHECK(wrapped->compute(wctx, &g, err, sizeof err) == RF_ERR_DEVICE);
        CHECK(std::string(err) == "fake device fault at n1");
        CHECK(device.computes == 2); // stopped at the failing node
        // The host-clock path synchronizes after every node; the event path never does.
        if (!with_events) CHECK(device.syncs == 1);
    }
    proftest::capture_stderr([&] { pv->shutdown(prof); });
}

TEST_CASE("profiler observer: each graph runs whole, as without the profiler, and every node is timed") {
    for (Observe mode : {Observe::Sync, Observe::Deferred, Observe::Late}) {
        for (bool with_events : {true, false}) {
            const bool deferred = mode == Observe::Deferred, late = mode == Observe::Late;
            INFO((late ? "late reports" : deferred ? "deferred reports" : "reports in compute()") << (with_events ? ", events" : ", host clock"));
            const std::string trace = proftest::temp_path("observed.json");
            Session s("{\"trace\": \"" + trace + "\"}", with_events, "fakeob", mode);
            Chain chain(5);
            chain.nodes[2].iparams[2] = 1; // n2 and n3 run as one fused unit: 3 + 4 ms
            s.pv->phase(s.prof, "decode");
            for (int rep = 0; rep < 3; ++rep) s.compute(chain);
            // One inner call per graph with every node; the profiler added no synchronize and
            // recorded no event of its own.
            CHECK(s.device.compute_sizes == std::vector<int>{5, 5, 5});
            CHECK(s.device.syncs == 0);
            CHECK(s.device.events.empty());
            // deferred: the last waits for a sync; late: with no sync between the calls, only the
            // one the third call had to wait for (its event set was needed again).
            CHECK(s.device.reports == (late ? 1 : deferred ? 2 : 3));
            CHECK(s.device.waits == (late ? 1 : 0));
            const std::string report = s.report();
            INFO(report);
            CHECK(s.device.reports == 3);
            CHECK_THAT(report, Catch::Contains(with_events ? "timing: device clock (events or kernel timestamps), reported by the backend per kernel or fused group"
                                                           : "timing: host clock, reported by the backend per node"));
            CHECK_THAT(report, Catch::Contains("  fakeob   3 timed node by node, 0 whole\n"));
            CHECK_THAT(report, Catch::Contains("timed 15 nodes, 45.000 ms in total"));
            const auto events = proftest::load_trace_nodes(trace);
            REQUIRE(events.size() == 3 * 5);
            const double want[5] = {1000, 2000, 7000, 0, 5000}; // the fused unit's time on its first node
            for (size_t i = 0; i < events.size(); ++i) {
                const int k = int(i % 5);
                CHECK(events[i].name == node_label(k));
                CHECK(events[i].dur == Approx(want[k]).margin(1.0));
                if (k > 0) CHECK(events[i].ts == Approx(events[i - 1].ts + events[i - 1].dur).margin(1.0));
            }
            std::filesystem::remove(trace);
        }
    }
}

TEST_CASE("profiler observer: a failing call returns the backend's message; later calls are still matched") {
  for (Observe mode : {Observe::Deferred, Observe::Late}) {
    INFO((mode == Observe::Late ? "late reports" : "deferred reports"));
    Session s("{}", true, "fakeob", mode);
    Chain good(3), bad(3);
    bad.nodes[1].iparams[1] = 1; // fault
    s.compute(good);
    const rf_graph g = bad.graph();
    CHECK(s.vt->compute(s.ctx, &g, s.err, sizeof s.err) == RF_ERR_DEVICE);
    CHECK(std::string(s.err) == "fake device fault at n1");
    s.compute(good);
    CHECK(s.device.compute_sizes == std::vector<int>{3, 3, 3});
    const std::string report = s.report();
    INFO(report);
    // Calls 0 and 2 reported and recorded, the failed call 1 counted but not timed.
    CHECK_THAT(report, Catch::Contains("timed 6 nodes, 12.000 ms in total"));
    CHECK(report.find("dropped") == std::string::npos);
  }
}

TEST_CASE("profiler observer: units naming nodes outside their graph are dropped, never recorded") {
    Session s("{}", true, "fakeob", Observe::Sync, [](FakeDevice &d) { d.bad_node_index = 99; });
    Chain chain(3);
    s.compute(chain);
    const std::string report = s.report();
    INFO(report);
    CHECK_THAT(report, Catch::Contains("timed 2 nodes, 5.000 ms in total")); // n1 and n2; n0's unit dropped
}

TEST_CASE("profiler observer: a backend refusing the observer is timed from outside, node by node") {
    Session s("{}", true, "fakeob", Observe::Sync, [](FakeDevice &d) { d.refuse_observer = true; });
    Chain chain(3);
    s.compute(chain);
    CHECK(s.device.compute_sizes == std::vector<int>{1, 1, 1});
    CHECK(s.device.reports == 0);
    const std::string report = s.report();
    CHECK_THAT(report, Catch::Contains("timing: device events;"));
}

TEST_CASE("profiler observer: a 2.0 backend (vtable ending before set_observer) is timed from outside") {
    // Its struct_size stops before the slot; what lies beyond is not a slot and must not be called.
    FakeDevice device;
    rf_backend_vtable inner = fake_vtable(true, Observe::Sync);
    inner.struct_size = uint32_t(offsetof(rf_backend_vtable, set_observer));
    inner.set_observer = reinterpret_cast<decltype(inner.set_observer)>(uintptr_t(0xdead));
    const rf_profiler_vtable *pv = profiler_vtable();
    void *prof = nullptr;
    char err[512] = {0};
    REQUIRE(pv->init("{}", &prof, err, sizeof err) == RF_OK);
    const rf_backend_vtable *vt = nullptr;
    void *ctx = nullptr;
    REQUIRE(pv->wrap(prof, "fakeold", &inner, &device, &vt, &ctx) == RF_OK);
    CHECK(vt->set_observer == nullptr); // the wrapper never offers one itself
    Chain chain(3);
    const rf_graph g = chain.graph();
    REQUIRE(vt->compute(ctx, &g, err, sizeof err) == RF_OK);
    CHECK(device.compute_sizes == std::vector<int>{1, 1, 1});
    CHECK(device.reports == 0);
    proftest::capture_stderr([&] { pv->shutdown(prof); });
}

TEST_CASE("profiler observer: sample_every makes the calls not picked whole-graph samples, still one inner call each") {
  for (Observe mode : {Observe::Deferred, Observe::Late}) {
    INFO((mode == Observe::Late ? "late reports" : "deferred reports"));
    const std::string trace = proftest::temp_path("observed-sampled.json");
    Session s("{\"sample_every\": 4, \"trace\": \"" + trace + "\"}", true, "fakeob", mode);
    Chain chain(5); // 15 ms per graph
    s.pv->phase(s.prof, "decode");
    for (int call = 0; call < 10; ++call) s.compute(chain);
    CHECK(s.device.compute_sizes == std::vector<int>(10, 5));
    const std::string report = s.report();
    INFO(report);
    CHECK_THAT(report, Catch::Contains("  fakeob   4 timed node by node, 6 whole\n"));
    CHECK_THAT(report, Catch::Contains("timed 20 nodes one at a time and 6 whole graphs (30 nodes)"));
    const auto events = proftest::load_trace_nodes(trace);
    REQUIRE(events.size() == 4 * 5 + 6);
    int whole = 0;
    for (const auto &e : events)
        if (e.name == "(whole graph)") {
            ++whole;
            CHECK(e.dur == Approx(15000.0).margin(1.0));
        }
    CHECK(whole == 6);
    std::filesystem::remove(trace);
  }
}

namespace {

struct PhaseRow {
    double wall_ms, node_ms, outside_ms, accounted_pct;
    unsigned long nodes;
};

PhaseRow phase_row(const std::string &report, const std::string &phase) {
    std::smatch m;
    const std::regex row("\n" + phase + R"( +([0-9.]+) +[0-9.]+ +(\d+) +([0-9.]+) +([0-9.]+) +([0-9.]+)%)");
    REQUIRE(std::regex_search(report, m, row));
    return {std::stod(m[1]), std::stod(m[3]), std::stod(m[4]), std::stod(m[5]), std::stoul(m[2])};
}

// Realtime fake device: 5 rounds of 4 ms idle (the host "sampling") then the 3-node graph of
// 1+2+3 ms in phase "decode" (each round followed by a download where `download`); the report.
std::string decode_rounds(Session &s, bool download) {
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

} // namespace

TEST_CASE("profiler observer: node time and outside-ops time add up to the wall time") {
    for (Observe mode : {Observe::Deferred, Observe::Late}) {
        INFO((mode == Observe::Late ? "late reports" : "deferred reports"));
        Session s("{}", true, "fakeob", mode);
        const PhaseRow r = phase_row(decode_rounds(s, true), "decode");
        CHECK(r.nodes == 15);
        CHECK(r.node_ms >= 30.0);
        CHECK(r.accounted_pct == Approx(100.0).margin(1.0));
    }
}

TEST_CASE("profiler config: bad values are refused with the key named") {
    const rf_profiler_vtable *pv = profiler_vtable();
    const std::map<std::string, std::string> cases = {
        {"{\"ceilings\": {\"cpu\": {\"gbps\": -1, \"tflops\": 1}}}", "profiler.ceilings.cpu"},
        {"{\"ceilings\": 3}", "profiler.ceilings"},
        {"{\"trace\": 5}", "profiler.trace"},
        {"{\"tarce\": \"x\"}", "unknown profiler config key \"tarce\""},
        {"{oops", "not valid JSON"},
        {"{\"sample_every\": 0}", "profiler.sample_every must be an integer >= 1"},
        {"{\"sample_every\": -2}", "profiler.sample_every must be an integer >= 1"},
        {"{\"sample_every\": 2.5}", "profiler.sample_every must be an integer >= 1"},
        {"{\"sample_every\": \"4\"}", "profiler.sample_every must be an integer >= 1"},
        {"{\"device_node_marks\": true}", "profiler.device_node_marks was removed"},
    };
    for (const auto &[json, message] : cases) {
        INFO(json);
        void *prof = nullptr;
        char err[512] = {0};
        CHECK(pv->init(json.c_str(), &prof, err, sizeof err) == RF_ERR_INVALID);
        CHECK_THAT(std::string(err), Catch::Contains(message));
    }
}

TEST_CASE("profiler sampling: sample_every 4 times calls 0, 1, 4, 8 of 10 node by node, the rest whole") {
    for (bool with_events : {true, false}) {
        INFO((with_events ? "device events" : "host clock"));
        const std::string trace = proftest::temp_path("sampled.json");
        Session s("{\"sample_every\": 4, \"trace\": \"" + trace + "\"}", with_events, "fakeev");
        Chain chain(5); // 1+2+3+4+5 = 15 ms per graph on the fake device clock
        s.pv->phase(s.prof, "decode");
        for (int call = 0; call < 10; ++call) s.compute(chain);
        // Unsampled calls hand the inner backend the whole graph in one compute().
        CHECK(s.device.compute_sizes == expected_sizes({1, 1, 0, 0, 1, 0, 0, 0, 1, 0}, 5));
        if (with_events) CHECK(s.device.syncs <= 2); // the one-time anchor only
        else CHECK(s.device.syncs == 4 * 5 + 6);     // after every node, and after every whole graph

        const std::string report = s.report();
        INFO(report);
        CHECK(s.device.stalls == 0);
        CHECK_THAT(report, Catch::Contains("sample_every 4: the first 2 and every 4th call"));
        CHECK_THAT(report, Catch::Contains("  fakeev   4 timed node by node, 6 whole\n"));
        CHECK_THAT(report, Catch::Contains("timed 20 nodes one at a time and 6 whole graphs (30 nodes)"));
        CHECK(std::regex_search(report, std::regex(R"(\(whole graph\) +5 nodes +- +fakeev +6 )")));
        // The phases table counts the whole graphs' nodes.
        CHECK(std::regex_search(report, std::regex(R"(\ndecode +[0-9.]+ +[0-9.]+ +50 )")));

        const auto events = proftest::load_trace_nodes(trace);
        REQUIRE(events.size() == 4 * 5 + 6);
        int whole = 0;
        for (const auto &e : events) {
            if (e.name != "(whole graph)") continue;
            ++whole;
            CHECK(e.cat == "(whole graph)");
            if (with_events) CHECK(e.dur == Approx(15000.0)); // the whole graph's device time, us
        }
        CHECK(whole == 6);
        std::filesystem::remove(trace);
    }
}

TEST_CASE("profiler sampling: graphs of different sizes are sampled separately") {
    Session s("{\"sample_every\": 3}", true, "fakeev");
    Chain a(2), b(3);
    for (int call = 0; call < 7; ++call) s.compute(a), s.compute(b);
    // Counted per size, so each graph is timed node by node on its calls 0, 1, 3, 6 (a single
    // counter would have landed every third call on alternating graphs only by chance).
    std::vector<int> expected;
    const std::vector<int> per_node = {1, 1, 0, 1, 0, 0, 1};
    for (int p : per_node) {
        const auto sa = expected_sizes({p}, 2), sb = expected_sizes({p}, 3);
        expected.insert(expected.end(), sa.begin(), sa.end());
        expected.insert(expected.end(), sb.begin(), sb.end());
    }
    CHECK(s.device.compute_sizes == expected);
    const std::string report = s.report();
    INFO(report);
    CHECK_THAT(report, Catch::Contains("  fakeev   8 timed node by node, 6 whole\n"));
}

TEST_CASE("profiler sampling: sample_every 1 times every call node by node") {
    Session s("{\"sample_every\": 1}", true, "fakeev");
    Chain chain(4);
    for (int call = 0; call < 5; ++call) s.compute(chain);
    CHECK(s.device.max_nodes_per_compute == 1);
    CHECK(s.device.computes == 5 * 4);
    const std::string report = s.report();
    CHECK_THAT(report, Catch::Contains("  fakeev   5 timed node by node, 0 whole\n"));
    CHECK_THAT(report, Catch::Contains("timed 20 nodes, "));
}

TEST_CASE("profiler phases: node time and outside-ops time add up to the wall time") {
    // Node time >= 30 ms, outside ops >= 20 ms, and together they are the wall time (decode_rounds).
    for (int every : {1, 3}) {
        INFO("sample_every " << every);
        Session s("{\"sample_every\": " + std::to_string(every) + "}", true, "fakeev");
        const std::string report = decode_rounds(s, false);
        const PhaseRow r = phase_row(report, "decode");
        CHECK(r.nodes == 15);
        CHECK(r.node_ms >= 30.0);
        CHECK(r.outside_ms >= 20.0);
        CHECK(r.node_ms + r.outside_ms == Approx(r.wall_ms).epsilon(0.01));
        CHECK(r.accounted_pct == Approx(100.0).margin(1.0));
        std::smatch m;
        REQUIRE(std::regex_search(report, m, std::regex(R"(total: op time ([0-9.]+) ms \+ outside ops ([0-9.]+) ms = ([0-9.]+) ms of ([0-9.]+) ms wall \(([0-9.]+)%\))")));
        CHECK(std::stod(m[1]) == Approx(r.node_ms).margin(0.002));
        CHECK(std::stod(m[4]) == Approx(r.wall_ms).margin(0.002));
        CHECK(std::stod(m[5]) == Approx(100.0).margin(1.0));
        CHECK(report.find("partial") == std::string::npos);
    }
}

TEST_CASE("profiler phases: a capped event store makes the rollup partial") {
    Session s("{\"max_events\": 3}", true, "fakeev");
    Chain chain(5);
    s.pv->phase(s.prof, "decode");
    s.compute(chain);
    const std::string report = s.report();
    INFO(report);
    // 5 nodes and the download of report(): 3 samples stored, 3 not.
    CHECK_THAT(report, Catch::Contains("note: partial: the phase rollup sees only the first 3 stored samples (max_events); "
                                       "the time of the 3 later ones counts as outside ops"));
    // The per-op tables still have every node.
    CHECK_THAT(report, Catch::Contains("timed 5 nodes, 15.000 ms in total"));
}

TEST_CASE("profiler sampling: a failing whole-graph call returns the backend's status and message") {
    for (bool with_events : {true, false}) {
        Session s("{\"sample_every\": 4}", with_events, "fakeev");
        Chain good(3), bad(3);
        bad.nodes[2].iparams[1] = 1; // fault
        s.compute(good), s.compute(good); // the first two calls: node by node
        const rf_graph g = bad.graph();
        s.err[0] = 0;
        CHECK(s.vt->compute(s.ctx, &g, s.err, sizeof s.err) == RF_ERR_DEVICE); // call 2: whole
        CHECK(std::string(s.err) == "fake device fault at n2");
        CHECK(s.device.compute_sizes == expected_sizes({1, 1, 0}, 3));
    }
}

TEST_CASE("profiler phases: time to first token ends with the 'first token' phase; transfers are op time") {
    Session s("{}", true, "fakeev");
    s.device.realtime = true;
    Chain chain(2); // 1 + 2 ms
    s.pv->phase(s.prof, "load");
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    s.pv->phase(s.prof, "prefill");
    s.compute(chain);
    float host[4] = {0};
    REQUIRE(s.vt->download(s.ctx, host, host, sizeof host, s.err, sizeof s.err) == RF_OK);
    s.pv->phase(s.prof, "first token");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    s.pv->phase(s.prof, "decode");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    s.compute(chain);
    const std::string report = s.report();
    INFO(report);
    std::smatch m;
    REQUIRE(std::regex_search(report, m, std::regex(R"(time to first token: ([0-9.]+) ms)")));
    const double ttft = std::stod(m[1]);
    CHECK(ttft >= 3.0 + 3.0 + 2.0); // load sleep + prefill nodes + first-token sleep
    // The phases before decode, back to back from the first mark.
    CHECK(ttft == Approx(phase_row(report, "load").wall_ms + phase_row(report, "prefill").wall_ms +
                         phase_row(report, "first token").wall_ms).margin(0.01));
    CHECK(phase_row(report, "decode").wall_ms >= 5.0);
    // The prefill's download is a transfer: in the per-op table and in the phase's op time, not a node.
    CHECK(std::regex_search(report, std::regex(R"(\ndownload +fakeev -> host +- +fakeev +2 )"))); // prefill's and report()'s
    CHECK(phase_row(report, "prefill").nodes == 2);
    CHECK_THAT(report, Catch::Contains("transfers (host clock around each copy): 0 uploads"));
}

TEST_CASE("profiler observer: late reports (a call reported during the next compute) are matched, in their own phase; report() collects the last") {
    const std::string trace = proftest::temp_path("observed-late.json");
    Session s("{\"trace\": \"" + trace + "\"}", true, "fakeob", Observe::Late);
    Chain chain(5); // 15 ms per graph
    float host = 0;
    auto step = [&] {
        s.compute(chain);
        REQUIRE(s.vt->download(s.ctx, &host, &host, sizeof host, s.err, sizeof s.err) == RF_OK);
    };
    s.pv->phase(s.prof, "prefill");
    step();
    CHECK(s.device.reports == 0); // complete after the download, read by the next compute()
    s.pv->phase(s.prof, "decode");
    for (int k = 1; k <= 3; ++k) {
        step();
        CHECK(s.device.reports == k); // call k-1, at the end of compute k: one call late
    }
    CHECK(s.device.waits == 0);
    CHECK(s.device.syncs == 0); // the profiler never synchronizes to get them
    std::string report = s.report(); // sets the observer again: call 3 comes then
    INFO(report);
    CHECK(s.device.reports == 4);
    CHECK_THAT(report, Catch::Contains("timed 20 nodes, 60.000 ms in total"));
    CHECK(report.find("dropped") == std::string::npos);
    // Each call in the phase it ran in, though reported during the next one.
    CHECK(phase_row(report, "prefill").nodes == 5);
    CHECK(phase_row(report, "decode").nodes == 15);
    // The observer set again numbers calls from 0: later calls still match, none lost.
    for (int k = 0; k < 2; ++k) step();
    CHECK(s.device.reports == 5);
    report = s.report();
    CHECK(s.device.reports == 6);
    CHECK_THAT(report, Catch::Contains("timed 30 nodes, 90.000 ms in total"));
    CHECK(report.find("dropped") == std::string::npos);
    const auto events = proftest::load_trace_nodes(trace);
    REQUIRE(events.size() == 6 * 5);
    for (size_t i = 0; i < events.size(); ++i) {
        CHECK(events[i].name == node_label(int(i % 5)));
        CHECK(events[i].dur == Approx(1000.0 * double(i % 5 + 1)).margin(1.0));
    }
    std::filesystem::remove(trace);
}

TEST_CASE("profiler observer: late reports of several calls per step (two compute() calls between downloads) are all matched") {
    Session s("{}", true, "fakeob", Observe::Late);
    Chain a(2), b(3); // 3 ms and 6 ms: two segments of a step
    float host = 0;
    for (int step = 0; step < 4; ++step) {
        s.compute(a);
        s.compute(b);
        REQUIRE(s.vt->download(s.ctx, &host, &host, sizeof host, s.err, sizeof s.err) == RF_OK);
    }
    const std::string report = s.report();
    INFO(report);
    CHECK(s.device.reports == 8);
    CHECK_THAT(report, Catch::Contains("timed 20 nodes, 36.000 ms in total"));
    CHECK(report.find("dropped") == std::string::npos);
}

// Not run by default (hidden tag): the profiler's host time per reported unit on the observed
// path, HIP-style late reports, a 400-node graph (about a decode step): the wrapper's
// compute() + download() against the fake's own, called directly with an observer that does
// nothing. `test-profiler "[.bench]"`.
TEST_CASE("profiler observer: host cost per unit (bench)", "[.bench]") {
    constexpr int kNodes = 400, kCalls = 2000;
    Chain chain(kNodes);
    for (int i = 0; i < kNodes; i += 7) chain.nodes[size_t(i)].iparams[2] = 1; // some fused pairs
    auto time_ns = [&](auto &&step) {
        for (int k = 0; k < 50; ++k) step(); // warm up
        const uint64_t t0 = steady_ns();
        for (int k = 0; k < kCalls; ++k) step();
        return double(steady_ns() - t0) / double(kCalls);
    };
    float host = 0;
    double bare = 0;
    {
        FakeDevice d;
        d.observe = Observe::Late;
        const rf_backend_vtable v = fake_vtable(true, Observe::Late);
        const rf_exec_observer obs = {sizeof(rf_exec_observer), nullptr, [](void *, uint64_t, const rf_exec_unit *, int32_t) {}};
        char err[256] = {0};
        REQUIRE(v.set_observer(&d, &obs, err, sizeof err) == RF_OK);
        const rf_graph g = chain.graph();
        bare = time_ns([&] {
            REQUIRE(v.compute(&d, &g, err, sizeof err) == RF_OK);
            REQUIRE(v.download(&d, &host, &host, sizeof host, err, sizeof err) == RF_OK);
        });
    }
    Session s("{}", true, "fakeob", Observe::Late);
    s.pv->phase(s.prof, "decode");
    const double wrapped = time_ns([&] {
        s.compute(chain);
        REQUIRE(s.vt->download(s.ctx, &host, &host, sizeof host, s.err, sizeof s.err) == RF_OK);
    });
    std::printf("observed path, %d nodes per call: fake alone %.1f us/call, through the profiler %.1f us/call: "
                "profiler %.1f us/call, %.0f ns per node\n",
                kNodes, bare / 1e3, wrapped / 1e3, (wrapped - bare) / 1e3, (wrapped - bare) / kNodes);
    s.report();
}
