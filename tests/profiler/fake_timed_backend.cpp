// See fake_timed_backend.h.
#include "fake_timed_backend.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

namespace fake_timed {
namespace {

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
} // namespace

rf_backend_vtable fake_vtable(bool with_events, Observe observe) {
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


} // namespace fake_timed
