#include "exec_observer.h"

#include <chrono>

namespace rf_hip {
namespace {

// A free set's anchor is recorded again at an idle point once it is this old, so that the float
// millisecond offsets from it stay small (float: ~0.1 us resolution at 1 s).
constexpr uint64_t kReanchorNs = 500'000'000;

uint64_t steady_ns() {
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// "rms_norm+mul": the ops of a fused group, in graph order (into `name`, reusing its storage).
void group_name(const rf_graph &g, int first, int used, std::string &name) {
    name.assign(rf_op_name(g.nodes[first]->op));
    for (int k = first + 1; k < first + used; ++k) name.append("+").append(rf_op_name(g.nodes[k]->op));
}

// The ops of a group of up to 7 nodes packed with its size (0: too large to pack; never equal).
uint64_t ops_key(const rf_graph &g, int first, int used) {
    if (used < 1 || used > 7) return 0;
    uint64_t key = uint64_t(used);
    for (int k = 0; k < used; ++k) {
        const int op = g.nodes[first + k]->op;
        if (op < 0 || op > 255) return 0;
        key |= uint64_t(op) << (8 * (k + 1));
    }
    return key;
}

} // namespace

// Events with timing (default flags): event nodes of a replayed graph record timestamps too.
hipEvent_t ExecObserver::event_at(Set &set, size_t k) {
    while (set.events.size() <= k) {
        hipEvent_t e = nullptr;
        if (hipEventCreate(&e) != hipSuccess) return nullptr;
        set.events.push_back(e);
    }
    return set.events[k];
}

bool ExecObserver::anchor(hipStream_t s, Set &set) {
    if (!set.anchor && hipEventCreate(&set.anchor) != hipSuccess) {
        set.anchor = nullptr;
        return false;
    }
    // The stream is idle: the record completes at once, at about this host time.
    if (hipEventRecord(set.anchor, s) != hipSuccess) return false;
    set.anchor_ns = steady_ns();
    return true;
}

ExecObserver::Set *ExecObserver::oldest_pending() {
    Set *oldest = nullptr;
    for (Set &set : sets_)
        if (set.state == State::Pending && (!oldest || set.call < oldest->call)) oldest = &set;
    return oldest;
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
    // Everything pending goes to the observer it was observed for.
    for (Set &set : sets_)
        if (set.state == State::Pending) set.done = true;
    flush();
    on_ = observer != nullptr;
    if (!on_) return RF_OK;
    observer_ = *observer;
    calls_ = 0;
    for (Set &set : sets_)
        if (!anchor(s, set)) {
            on_ = false;
            err = "hip backend: cannot create or record a timing event";
            return RF_ERR_DEVICE;
        }
    return RF_OK;
}

int ExecObserver::begin_call(hipStream_t, LaunchQueue &q, const rf_graph &g) {
    Set *set = nullptr;
    for (Set &x : sets_)
        if (x.state == State::Free) {
            set = &x;
            break;
        }
    if (!set) {
        // More calls queued than there are sets, without a synchronize: the oldest is reported
        // first (waiting for the device to get through it) and its set reused.
        set = oldest_pending();
        if (!set) set = &sets_[0]; // unreachable: a Running set is ended by end_call()
        else report(*set);
        set->state = State::Free;
    }
    set->state = State::Running;
    set->done = false;
    set->call = calls_++;
    set->n_units = 0;
    cur_ = set;
    if (node_index_.size() < size_t(g.n_nodes)) {
        for (int32_t i = int32_t(node_index_.size()); i < g.n_nodes; ++i) node_index_.push_back(i);
    }
    hipEvent_t start = set->anchor ? event_at(*set, 0) : nullptr;
    marking_ = start != nullptr; // no start mark: the call runs unreported, never fails
    if (marking_) q.add_event(start);
    return int(set - sets_);
}

void ExecObserver::unit(LaunchQueue &q, const rf_graph &g, int first, int used) {
    if (!marking_ || !cur_) return;
    Set &set = *cur_;
    hipEvent_t e = event_at(set, set.n_units + 1);
    if (!e) { // out of events: the rest of the call goes unreported, never fails
        marking_ = false;
        return;
    }
    q.add_event(e);
    if (set.units.size() <= set.n_units) set.units.emplace_back();
    Unit &u = set.units[set.n_units++];
    // A decode step has the same groups step after step: their names are built once.
    const uint64_t key = ops_key(g, first, used);
    if (key == 0 || key != u.ops_key || u.name.empty()) group_name(g, first, used, u.name);
    u.ops_key = key;
    u.first = first;
    u.used = used;
}

void ExecObserver::end_call(bool ok) {
    Set *ended = cur_;
    cur_ = nullptr;
    if (ended) ended->state = ok && ended->n_units > 0 ? State::Pending : State::Free;
    // Earlier calls whose work is complete: read and reported now, while the device runs this
    // one (its launches are submitted). In call order; this call waits for a later point.
    while (Set *o = oldest_pending()) {
        if (o == ended) break;
        if (!o->done) {
            if (hipEventQuery(o->events[o->n_units]) != hipSuccess) break; // still running
            o->done = true;
        }
        report(*o);
    }
}

void ExecObserver::idle(hipStream_t s) {
    if (!on_) return;
    uint64_t now = 0;
    for (Set &set : sets_) {
        if (set.state == State::Pending) set.done = true;
        if (set.state != State::Free) continue;
        if (!now) now = steady_ns();
        if (now - set.anchor_ns > kReanchorNs) anchor(s, set);
    }
}

void ExecObserver::flush() {
    while (Set *o = oldest_pending()) report(*o);
}

void ExecObserver::report(Set &set) {
    set.state = State::Free;
    const size_t n = set.n_units;
    // Complete when known done; waits otherwise.
    if (!set.done && hipEventSynchronize(set.events[n]) != hipSuccess) return;
    set.done = false;
    float start_ms = 0;
    if (hipEventElapsedTime(&start_ms, set.anchor, set.events[0]) != hipSuccess) start_ms = 0;
    std::vector<rf_exec_unit> &out = report_;
    out.resize(n);
    uint64_t t = set.anchor_ns + uint64_t(start_ms > 0 ? double(start_ms) * 1e6 : 0.0);
    for (size_t u = 0; u < n; ++u) {
        float ms = 0;
        if (hipEventElapsedTime(&ms, set.events[u], set.events[u + 1]) != hipSuccess || ms < 0) ms = 0;
        const uint64_t end = t + uint64_t(double(ms) * 1e6);
        const Unit &x = set.units[u];
        out[u] = {x.name.c_str(), node_index_.data() + x.first, x.used, t, end};
        t = end;
    }
    observer_.ran(observer_.user, set.call, out.data(), int32_t(n));
}

void ExecObserver::release() {
    for (Set &set : sets_) {
        for (hipEvent_t e : set.events) hipEventDestroy(e);
        set.events.clear();
        if (set.anchor) hipEventDestroy(set.anchor);
        set.anchor = nullptr;
        set.anchor_ns = 0;
        set.state = State::Free;
        set.done = false;
    }
    cur_ = nullptr;
    on_ = false;
}

} // namespace rf_hip
