#include "wrapped_backend.h"

#include <cstddef>
#include <cstdio>
#include <cstring>

#include "node_cost.h"
#include "slow_op.h"

namespace rfprof {
namespace {

// Resolve when this many events wait: bounds memory if the core never synchronizes.
constexpr size_t kMaxPendingEvents = 1 << 15;

const char *node_label(const rf_node &n) { return n.label ? n.label : op_name(n.op); }

void set_err(char *err, size_t len, const char *msg) {
    if (err && len) std::snprintf(err, len, "%s", msg);
}

} // namespace

bool WrappedBackend::has_slot(size_t offset) const {
    if (inner_->struct_size < offset + sizeof(void *)) return false;
    void *p = nullptr;
    std::memcpy(&p, reinterpret_cast<const char *>(inner_) + offset, sizeof p);
    return p != nullptr;
}

WrappedBackend::WrappedBackend(ProfilerState &state, const RangeMarker &ranges, const std::string &name,
                               const rf_backend_vtable *inner, void *inner_ctx, int sample_every)
    : state_(state), ranges_(ranges), inner_(inner), inner_ctx_(inner_ctx), observed_calls_(state),
      sampler_(sample_every), slow_op_(slow_op_from_env()) {
    // Optional slots stay NULL when the inner backend lacks them: the core's defaults then apply.
#define RF_FORWARD(slot) vt_.slot = has_slot(offsetof(rf_backend_vtable, slot)) ? s_##slot : nullptr
    vt_.struct_size = sizeof vt_;
    vt_.init = s_init;
    vt_.shutdown = s_shutdown;
    RF_FORWARD(device_info);
    RF_FORWARD(buffer_alloc);
    RF_FORWARD(buffer_free);
    RF_FORWARD(upload);
    RF_FORWARD(download);
    RF_FORWARD(supports_op);
    RF_FORWARD(compute);
    RF_FORWARD(synchronize);
    RF_FORWARD(event_create);
    RF_FORWARD(event_record);
    RF_FORWARD(event_elapsed_ms);
    RF_FORWARD(event_destroy);
    RF_FORWARD(buffer_from_host);
#undef RF_FORWARD
    // Observing is this wrapper's business: a decorator stacked on it sees no observer slot.
    vt_.set_observer = nullptr;
    // Queries without a ctx answer the same through the wrapper: the plugin's own functions.
    vt_.option_keys = RF_SLOT(inner_, rf_backend_vtable, option_keys);
    vt_.flags = RF_SLOT(inner_, rf_backend_vtable, flags);
    use_events_ = vt_.event_create && vt_.event_record && vt_.event_elapsed_ms && vt_.event_destroy;
    // A range tool (nsys, ncu, rocprof) attached: it wants one range per node, which only
    // timing from outside gives (one compute() per node), so the backend is not observed.
    if (!ranges_.active() && has_slot(offsetof(rf_backend_vtable, set_observer))) observed_ = observe();
    rf_device_info info{};
    if (vt_.device_info) inner_->device_info(inner_ctx_, &info);
    const char *timing = observed_ ? (use_events_ ? "device clock (events or kernel timestamps), reported by the backend per kernel or fused group "
                                                    "(graph replay and fusion on; a group's time on its first node)"
                                                  : "host clock, reported by the backend per node (its scheduling unchanged)")
                         : use_events_ ? "device events"
                                       : "host clock";
    backend_id_ = state_.add_backend(name, info, timing);
}

// ---- forwarding slots -------------------------------------------------------------------------

int WrappedBackend::s_init(const char *, void **, char *err, size_t len) {
    set_err(err, len, "profiler: a wrapped backend is already initialised");
    return RF_ERR_INVALID;
}
// The core shuts the plugin down through its own vtable; doing it here too would free twice.
void WrappedBackend::s_shutdown(void *) {}
int WrappedBackend::s_device_info(void *c, rf_device_info *o) { return self(c)->inner_->device_info(self(c)->inner_ctx_, o); }
int WrappedBackend::s_buffer_alloc(void *c, uint64_t n, rf_buffer_desc *o, char *e, size_t l) {
    return self(c)->inner_->buffer_alloc(self(c)->inner_ctx_, n, o, e, l);
}
void WrappedBackend::s_buffer_free(void *c, void *h) { self(c)->inner_->buffer_free(self(c)->inner_ctx_, h); }
int WrappedBackend::s_upload(void *c, void *d, const void *s, uint64_t n, char *e, size_t l) { return self(c)->upload(d, s, n, e, l); }
int WrappedBackend::s_download(void *c, void *d, const void *s, uint64_t n, char *e, size_t l) {
    return self(c)->download(d, s, n, e, l);
}
int WrappedBackend::s_supports_op(void *c, const rf_node *n) { return self(c)->inner_->supports_op(self(c)->inner_ctx_, n); }
int WrappedBackend::s_compute(void *c, const rf_graph *g, char *e, size_t l) { return self(c)->compute(g, e, l); }
int WrappedBackend::s_synchronize(void *c, char *e, size_t l) { return self(c)->synchronize(e, l); }
int WrappedBackend::s_event_create(void *c, void **ev) { return self(c)->inner_->event_create(self(c)->inner_ctx_, ev); }
int WrappedBackend::s_event_record(void *c, void *ev) { return self(c)->inner_->event_record(self(c)->inner_ctx_, ev); }
int WrappedBackend::s_event_elapsed_ms(void *c, void *a, void *b, float *ms) {
    return self(c)->inner_->event_elapsed_ms(self(c)->inner_ctx_, a, b, ms);
}
void WrappedBackend::s_event_destroy(void *c, void *ev) { self(c)->inner_->event_destroy(self(c)->inner_ctx_, ev); }
int WrappedBackend::s_buffer_from_host(void *c, void *p, uint64_t n, rf_buffer_desc *o, char *e, size_t l) {
    return self(c)->inner_->buffer_from_host(self(c)->inner_ctx_, p, n, o, e, l);
}
void WrappedBackend::s_chose(void *user, uint64_t call, const rf_unit_choice *choices, int32_t n_units) {
    self(user)->observed_calls_.chose(call, choices, n_units);
}

void WrappedBackend::s_ran(void *user, uint64_t call, const rf_exec_unit *units, int32_t n_units) {
    self(user)->observed_calls_.ran(call, units, n_units);
}

// ---- timing ----------------------------------------------------------------------------------

int WrappedBackend::compute(const rf_graph *graph, char *err, size_t err_len) {
    const int st = time_compute(graph, err, err_len);
    if (st == RF_OK && graph && slow_op_.active) apply_slow_op(slow_op_, *graph); // outside the node times
    return st;
}

int WrappedBackend::time_compute(const rf_graph *graph, char *err, size_t err_len) {
    if (observed_ && graph) return compute_observed(graph, err, err_len);
    if (!graph || graph->n_nodes <= 0) return inner_->compute(inner_ctx_, graph, err, err_len);
    const bool per_node = sampler_.per_node(graph->n_nodes);
    state_.count_call(backend_id_, per_node);
    return use_events_ ? compute_with_events(graph, per_node, err, err_len)
                       : compute_host_clock(graph, per_node, err, err_len);
}

int WrappedBackend::compute_host_clock(const rf_graph *graph, bool per_node, char *err, size_t err_len) {
    if (!per_node) return run_whole_host_clock(graph, err, err_len);
    const bool sync = vt_.synchronize != nullptr;
    for (int32_t i = 0; i < graph->n_nodes; ++i) {
        const rf_node *node = graph->nodes[i];
        const NodeSlot slot = state_.slot_for(*node, backend_id_);
        const rf_graph one = {1, &graph->nodes[i]};
        if (ranges_.active()) ranges_.push(node_label(*node));
        const double t0 = state_.now_us();
        int st = inner_->compute(inner_ctx_, &one, err, err_len);
        if (st == RF_OK && sync) st = inner_->synchronize(inner_ctx_, err, err_len);
        const double t1 = state_.now_us();
        if (ranges_.active()) ranges_.pop();
        if (st != RF_OK) return st;
        state_.record(slot, t0, float(t1 - t0));
    }
    return RF_OK;
}

// The whole graph in one inner compute(), as without the profiler: the backend reports what it
// ran to observed_calls_ (now or at a later synchronize). No NVTX/ROCTX ranges: with a range
// tool attached the backend is not observed (constructor).
int WrappedBackend::compute_observed(const rf_graph *graph, char *err, size_t err_len) {
    observed_calls_.begin();
    const int st = inner_->compute(inner_ctx_, graph, err, err_len);
    // Bookkeeping after the launch, while the device runs the graph.
    const bool per_node = graph->n_nodes > 0 && sampler_.per_node(graph->n_nodes);
    if (graph->n_nodes > 0) state_.count_call(backend_id_, per_node);
    observed_calls_.end(st, *graph, per_node, backend_id_);
    return st;
}

// The whole graph in one inner compute(), timed up to the backend's synchronize: one sample.
int WrappedBackend::run_whole_host_clock(const rf_graph *graph, char *err, size_t err_len) {
    const NodeSlot slot = state_.whole_graph_slot(graph->n_nodes, backend_id_);
    if (ranges_.active()) ranges_.push("(whole graph)");
    const double t0 = state_.now_us();
    int st = inner_->compute(inner_ctx_, graph, err, err_len);
    if (st == RF_OK && vt_.synchronize) st = inner_->synchronize(inner_ctx_, err, err_len);
    const double t1 = state_.now_us();
    if (ranges_.active()) ranges_.pop();
    if (st == RF_OK) state_.record(slot, t0, float(t1 - t0));
    return st;
}

void *WrappedBackend::take_event() {
    if (!free_events_.empty()) {
        void *e = free_events_.back();
        free_events_.pop_back();
        return e;
    }
    void *e = nullptr;
    return inner_->event_create(inner_ctx_, &e) == RF_OK ? e : nullptr;
}

bool WrappedBackend::ensure_anchor(char *err, size_t err_len) {
    if (anchor_) return true;
    // Once: an event recorded on an idle device marks a known host time; later event times are
    // placed on the host timeline relative to it.
    if (vt_.synchronize && inner_->synchronize(inner_ctx_, err, err_len) != RF_OK) return false;
    anchor_ = take_event();
    if (!anchor_ || inner_->event_record(inner_ctx_, anchor_) != RF_OK) return false;
    if (vt_.synchronize && inner_->synchronize(inner_ctx_, err, err_len) != RF_OK) return false;
    anchor_us_ = state_.now_us();
    return true;
}

int WrappedBackend::compute_with_events(const rf_graph *graph, bool per_node, char *err, size_t err_len) {
    if (!ensure_anchor(err, err_len)) {
        // Events unusable on this device: fall back to the host clock for good.
        use_events_ = false;
        return compute_host_clock(graph, per_node, err, err_len);
    }
    Batch b;
    b.anchor = anchor_;
    b.anchor_us = anchor_us_;
    void *first = take_event();
    if (!first || inner_->event_record(inner_ctx_, first) != RF_OK) {
        if (first) free_events_.push_back(first);
        use_events_ = false;
        return compute_host_clock(graph, per_node, err, err_len);
    }
    b.events.push_back(first);
    const int st = per_node ? run_nodes_with_events(graph, b, err, err_len) : run_whole_with_events(graph, b, err, err_len);
    pending_events_ += b.events.size();
    pending_.push_back(std::move(b));
    if (pending_events_ > kMaxPendingEvents) resolve_pending();
    return st;
}

// One inner compute() per node, an event after each: b.events[i]..[i+1] bracket node i.
int WrappedBackend::run_nodes_with_events(const rf_graph *graph, Batch &b, char *err, size_t err_len) {
    b.events.reserve(size_t(graph->n_nodes) + 1);
    b.slots.reserve(size_t(graph->n_nodes));
    int st = RF_OK;
    for (int32_t i = 0; i < graph->n_nodes && st == RF_OK; ++i) {
        const NodeSlot slot = state_.slot_for(*graph->nodes[i], backend_id_);
        const rf_graph one = {1, &graph->nodes[i]};
        if (ranges_.active()) ranges_.push(node_label(*graph->nodes[i]));
        st = inner_->compute(inner_ctx_, &one, err, err_len);
        if (ranges_.active()) ranges_.pop();
        if (st != RF_OK) break;
        void *e = take_event();
        if (!e || inner_->event_record(inner_ctx_, e) != RF_OK) {
            if (e) free_events_.push_back(e);
            // Keep running the graph untimed rather than failing the user's work.
            const rf_graph rest = {graph->n_nodes - i - 1, graph->nodes + i + 1};
            if (rest.n_nodes > 0) st = inner_->compute(inner_ctx_, &rest, err, err_len);
            break;
        }
        b.events.push_back(e);
        b.slots.push_back(slot);
    }
    return st;
}

// The whole graph in one inner compute() (the backend keeps its graph replay and fusion),
// bracketed by two events: one whole-graph sample.
int WrappedBackend::run_whole_with_events(const rf_graph *graph, Batch &b, char *err, size_t err_len) {
    const NodeSlot slot = state_.whole_graph_slot(graph->n_nodes, backend_id_);
    if (ranges_.active()) ranges_.push("(whole graph)");
    const int st = inner_->compute(inner_ctx_, graph, err, err_len);
    if (ranges_.active()) ranges_.pop();
    if (st != RF_OK) return st;
    void *e = take_event();
    if (!e || inner_->event_record(inner_ctx_, e) != RF_OK) {
        if (e) free_events_.push_back(e);
        return st; // ran, untimed
    }
    b.events.push_back(e);
    b.slots.push_back(slot);
    return st;
}

void WrappedBackend::resolve_batch(Batch &b) {
    float start_ms = 0;
    const bool placed = !b.events.empty() &&
                        inner_->event_elapsed_ms(inner_ctx_, b.anchor, b.events[0], &start_ms) == RF_OK;
    double ts = b.anchor_us + (placed ? double(start_ms) * 1000.0 : 0.0);
    for (size_t i = 0; i < b.slots.size(); ++i) {
        float ms = 0;
        if (inner_->event_elapsed_ms(inner_ctx_, b.events[i], b.events[i + 1], &ms) != RF_OK) {
            state_.add_dropped(1);
            continue;
        }
        state_.record(b.slots[i], ts, ms * 1000.0f);
        ts += double(ms) * 1000.0;
    }
    for (void *e : b.events) free_events_.push_back(e);
}

bool WrappedBackend::observe() {
    const rf_exec_observer obs = {sizeof(rf_exec_observer), this, s_ran, s_chose};
    char err[256] = {0};
    return inner_->set_observer(inner_ctx_, &obs, err, sizeof err) == RF_OK;
}

void WrappedBackend::resolve_pending() {
    if (observed_) {
        // A backend may report a call late (the HIP backend: during a later compute()); setting
        // the observer again makes it report everything pending before returning (ABI 2.1), and
        // numbers calls from 0 again.
        observed_ = observe();
        observed_calls_.restart();
    }
    for (auto &b : pending_) resolve_batch(b);
    pending_.clear();
    pending_events_ = 0;
}

void WrappedBackend::abandon_pending() {
    observed_calls_.abandon();
    uint64_t n = 0;
    for (auto &b : pending_) n += b.slots.size();
    if (n) state_.add_dropped(n);
    pending_.clear();
    pending_events_ = 0;
}

int WrappedBackend::synchronize(char *err, size_t err_len) {
    const int st = inner_->synchronize(inner_ctx_, err, err_len);
    if (st != RF_OK || !use_events_ || !anchor_) return st;
    resolve_pending();
    // The device is idle now: re-anchor so float millisecond offsets stay small.
    if (inner_->event_record(inner_ctx_, anchor_) == RF_OK) anchor_us_ = state_.now_us();
    return st;
}

// Copies complete on return, so the host clock around them is their time. The core copies
// only while the backend is idle (inputs before compute, results after its synchronize), so
// the interval holds no wait for earlier work.
int WrappedBackend::upload(void *dst, const void *src, uint64_t size, char *err, size_t err_len) {
    const double t0 = state_.now_us();
    const int st = inner_->upload(inner_ctx_, dst, src, size, err, err_len);
    if (st == RF_OK) state_.record(state_.transfer_slot(backend_id_, kUpload, size), t0, float(state_.now_us() - t0));
    return st;
}

int WrappedBackend::download(void *dst, const void *src, uint64_t size, char *err, size_t err_len) {
    const double t0 = state_.now_us();
    const int st = inner_->download(inner_ctx_, dst, src, size, err, err_len);
    if (st != RF_OK) return st;
    state_.record(state_.transfer_slot(backend_id_, kDownload, size), t0, float(state_.now_us() - t0));
    // A download is ordered after earlier compute and complete on return: the events are done.
    if (!pending_.empty()) resolve_pending();
    return st;
}

} // namespace rfprof
