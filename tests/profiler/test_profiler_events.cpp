// The profiler's ABI used directly, in front of a fake backend that has timing events. The fake
// keeps a device clock that each node advances by node->iparams[0] ms; its events complete only
// when the host synchronizes or downloads, and reading an incomplete event counts as a stall.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "profiler_test_util.h"
#include "rocmforge/abi.h"

namespace {

struct FakeEvent {
    double t_ms = 0;
    bool complete = false;
};

struct FakeDevice {
    double clock_ms = 0;
    int computes = 0, max_nodes_per_compute = 0, syncs = 0, downloads = 0, stalls = 0;
    std::vector<std::unique_ptr<FakeEvent>> events;
    void complete_all() {
        for (auto &e : events) e->complete = true;
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
    dev(c)->complete_all();
    return RF_OK;
}
int f_supports(void *, const rf_node *) { return 1; }
int f_compute(void *c, const rf_graph *g, char *err, size_t n) {
    FakeDevice *d = dev(c);
    d->computes++;
    d->max_nodes_per_compute = std::max(d->max_nodes_per_compute, int(g->n_nodes));
    for (int i = 0; i < g->n_nodes; ++i) {
        if (g->nodes[i]->iparams[1]) {
            std::snprintf(err, n, "fake device fault at %s", g->nodes[i]->label);
            return RF_ERR_DEVICE;
        }
        d->clock_ms += g->nodes[i]->iparams[0];
    }
    return RF_OK;
}
int f_sync(void *c, char *, size_t) {
    dev(c)->syncs++;
    dev(c)->complete_all();
    return RF_OK;
}
int f_ev_create(void *c, void **e) {
    dev(c)->events.push_back(std::make_unique<FakeEvent>());
    *e = dev(c)->events.back().get();
    return RF_OK;
}
int f_ev_record(void *c, void *e) {
    static_cast<FakeEvent *>(e)->t_ms = dev(c)->clock_ms;
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

rf_backend_vtable fake_vtable(bool with_events) {
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
            labels[size_t(i)] = "n" + std::to_string(i);
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
        CHECK(events[i].name == "n" + std::to_string(k));
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

TEST_CASE("profiler config: bad values are refused with the key named") {
    const rf_profiler_vtable *pv = profiler_vtable();
    const std::map<std::string, std::string> cases = {
        {"{\"ceilings\": {\"cpu\": {\"gbps\": -1, \"tflops\": 1}}}", "profiler.ceilings.cpu"},
        {"{\"ceilings\": 3}", "profiler.ceilings"},
        {"{\"trace\": 5}", "profiler.trace"},
        {"{\"tarce\": \"x\"}", "unknown profiler config key \"tarce\""},
        {"{oops", "not valid JSON"},
    };
    for (const auto &[json, message] : cases) {
        INFO(json);
        void *prof = nullptr;
        char err[512] = {0};
        CHECK(pv->init(json.c_str(), &prof, err, sizeof err) == RF_ERR_INVALID);
        CHECK_THAT(std::string(err), Catch::Contains(message));
    }
}
