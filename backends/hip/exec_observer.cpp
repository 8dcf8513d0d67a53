#include "exec_observer.h"

#include <chrono>

namespace rf_hip {
namespace {

uint64_t steady_ns() {
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// "rms_norm+mul": the ops of a fused group, in graph order (into `name`, reusing its storage).
void group_name(const rf_graph &g, int first, int used, std::string &name) {
    name.assign(rf_op_name(g.nodes[first]->op));
    for (int k = first + 1; k < first + used; ++k) name.append("+").append(rf_op_name(g.nodes[k]->op));
}

} // namespace

// Events with timing (default flags): event nodes of a replayed graph record timestamps too.
hipEvent_t ExecObserver::event_at(size_t k) {
    while (events_.size() <= k) {
        hipEvent_t e = nullptr;
        if (hipEventCreate(&e) != hipSuccess) return nullptr;
        events_.push_back(e);
    }
    return events_[k];
}

bool ExecObserver::anchor(hipStream_t s) {
    if (!anchor_ && hipEventCreate(&anchor_) != hipSuccess) return false;
    // The stream is idle: the record completes at once, at about this host time.
    if (hipEventRecord(anchor_, s) != hipSuccess) return false;
    anchor_ns_ = steady_ns();
    return true;
}

int ExecObserver::set(hipStream_t s, const rf_exec_observer *observer, std::string &err) {
    if (observer && (observer->struct_size < sizeof(rf_exec_observer) || !observer->ran)) {
        err = "hip backend: set_observer needs an rf_exec_observer with ran()";
        return RF_ERR_INVALID;
    }
    if (hipError_t e = hipStreamSynchronize(s)) {
        err = gpu_error("kernel execution", e);
        return RF_ERR_DEVICE;
    }
    deliver(s);
    on_ = observer != nullptr;
    if (!on_) return RF_OK;
    observer_ = *observer;
    calls_ = 0;
    if (!anchor(s)) {
        on_ = false;
        err = "hip backend: cannot create or record a timing event";
        return RF_ERR_DEVICE;
    }
    return RF_OK;
}

void ExecObserver::begin_call(hipStream_t s, LaunchQueue &q, const rf_graph &g) {
    if (pending_) {
        // Two steps queued without a synchronize: wait for the first before reusing its events.
        if (!events_.empty()) hipEventSynchronize(events_[n_units_]);
        deliver(s);
    }
    pending_call_ = calls_++;
    n_units_ = 0;
    if (node_index_.size() < size_t(g.n_nodes)) {
        for (int32_t i = int32_t(node_index_.size()); i < g.n_nodes; ++i) node_index_.push_back(i);
    }
    hipEvent_t start = event_at(0);
    marking_ = start != nullptr; // no start mark: the call runs unreported, never fails
    if (marking_) q.add_event(start);
}

void ExecObserver::unit(LaunchQueue &q, const rf_graph &g, int first, int used) {
    hipEvent_t e = marking_ ? event_at(n_units_ + 1) : nullptr;
    if (!e) { // out of events: the rest of the call goes unreported, never fails
        marking_ = false;
        return;
    }
    q.add_event(e);
    if (units_.size() <= n_units_) units_.emplace_back();
    Unit &u = units_[n_units_++];
    group_name(g, first, used, u.name);
    u.first = first;
    u.used = used;
}

void ExecObserver::end_call(bool ok) { pending_ = ok && n_units_ > 0; }

void ExecObserver::deliver(hipStream_t s) {
    if (!pending_) return;
    pending_ = false;
    const size_t n = n_units_;
    // Complete once the stream was synchronized; waits otherwise.
    if (hipEventSynchronize(events_[n]) != hipSuccess) return;
    float start_ms = 0;
    if (hipEventElapsedTime(&start_ms, anchor_, events_[0]) != hipSuccess) start_ms = 0;
    std::vector<rf_exec_unit> &out = report_;
    out.resize(n);
    uint64_t t = anchor_ns_ + uint64_t(start_ms > 0 ? double(start_ms) * 1e6 : 0.0);
    for (size_t u = 0; u < n; ++u) {
        float ms = 0;
        if (hipEventElapsedTime(&ms, events_[u], events_[u + 1]) != hipSuccess || ms < 0) ms = 0;
        const uint64_t end = t + uint64_t(double(ms) * 1e6);
        out[u] = {units_[u].name.c_str(), node_index_.data() + units_[u].first, units_[u].used, t, end};
        t = end;
    }
    observer_.ran(observer_.user, pending_call_, out.data(), int32_t(n));
    // Re-anchor on the idle stream so the float millisecond offsets stay small.
    anchor(s);
}

void ExecObserver::release() {
    for (hipEvent_t e : events_) hipEventDestroy(e);
    events_.clear();
    if (anchor_) hipEventDestroy(anchor_);
    anchor_ = nullptr;
    on_ = pending_ = false;
}

} // namespace rf_hip
