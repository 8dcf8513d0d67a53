#include "exec_observer.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <cstdlib>

namespace rf_hip {
namespace {

// A free set's anchor is recorded again at an idle point once it is this old, so that the float
// millisecond offsets from it stay small (float: ~0.1 us resolution at 1 s).
constexpr uint64_t kReanchorNs = 500'000'000;
// How far a stamp may lie before the one of the launch before it (check_stamps: the
// multiprocessors' clocks a tick apart at times): far below this bound, and the units it could
// hide are far longer than the bound.
constexpr double kStampSkewNs = 1000.0;

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

// ---- timestamps ----------------------------------------------------------------------------

bool ExecObserver::write_ctls(bool on) {
    const rf_stamp_ctl c = {static_cast<rf_stamp *>(ring_), counter_, kRingEntries - 1, on ? 1u : 0u};
    bool ok = true;
    for (void *ctl : setup_.ctls) ok = hipMemcpy(ctl, &c, sizeof c, hipMemcpyHostToDevice) == hipSuccess && ok;
    return ok;
}

bool ExecObserver::host_buffer(Set &set, uint32_t n) {
    if (set.capacity >= n) return true;
    uint32_t cap = 1024;
    while (cap < n) cap *= 2;
    if (set.host) hipHostFree(set.host); // its last call was reported: nothing writes it
    set.host = nullptr;
    set.host_dev = nullptr;
    set.capacity = 0;
    void *p = nullptr, *d = nullptr;
    if (hipHostMalloc(&p, size_t(cap) * sizeof(rf_stamp), hipHostMallocMapped) != hipSuccess || !p) return false;
    if (hipHostGetDevicePointer(&d, p, 0) != hipSuccess || !d) {
        hipHostFree(p);
        return false;
    }
    set.host = static_cast<rf_stamp *>(p);
    set.host_dev = d;
    set.capacity = cap;
    return true;
}

bool ExecObserver::launch_anchor(hipStream_t s) {
    LaunchRec r;
    r.f = setup_.mark;
    r.threads = 32;
    r.args.dst.data = anchor_dev_;
    r.args.stamp.n_stamps = 1;
    static_cast<volatile rf_stamp *>(anchor_host_)->tag = 0;
    std::string e;
    if (launch_now(s, r, "stamp kernel", e) != RF_OK) return false;
    // The stream was idle: the kernel stamps right after it is launched, at about this host time.
    anchor_ns_ = steady_ns();
    anchor_idx_ = next_++;
    anchor_call_ = calls_;
    anchor_pending_ = true;
    return true;
}

bool ExecObserver::start_stamps(hipStream_t s, std::string &why) {
    constexpr size_t kRingBytes = size_t(kRingEntries) * sizeof(rf_stamp);
    if (!ring_) {
        void *p = nullptr;
        if (hipMalloc(&p, kRingBytes + 256) != hipSuccess || !p) return why = "no device memory for the stamp ring", false;
        ring_ = p;
        counter_ = reinterpret_cast<unsigned int *>(static_cast<char *>(p) + kRingBytes);
    }
    if (!anchor_host_) {
        void *p = nullptr, *d = nullptr;
        if (hipHostMalloc(&p, sizeof(rf_stamp), hipHostMallocMapped) != hipSuccess || !p) return why = "no mapped host memory", false;
        if (hipHostGetDevicePointer(&d, p, 0) != hipSuccess || !d) {
            hipHostFree(p);
            return why = "no device address for mapped host memory", false;
        }
        anchor_host_ = static_cast<rf_stamp *>(p);
        anchor_dev_ = d;
    }
    // A clear ring (no entry tagged) and counter, then the constants on, then the anchor.
    if (hipMemsetAsync(ring_, 0, kRingBytes + 256, s) != hipSuccess || hipStreamSynchronize(s) != hipSuccess)
        return why = "cannot clear the stamp ring", false;
    next_ = 0;
    resync_ = false;
    if (!write_ctls(true)) {
        write_ctls(false);
        return why = "cannot write the stamp constants", false;
    }
    const volatile rf_stamp *a = anchor_host_; // written by the device
    if (!launch_anchor(s) || hipStreamSynchronize(s) != hipSuccess || a->tag != RF_STAMP_TAG || a->idx != anchor_idx_) {
        write_ctls(false);
        anchor_pending_ = false;
        return why = "the stamp kernel wrote no stamp", false;
    }
    clock_ = {a->t, anchor_ns_, setup_.ns_per_tick};
    clock_set_ns_ = anchor_ns_;
    anchor_pending_ = false;
    return true;
}

void ExecObserver::stop_stamps(LaunchQueue &q) {
    if (stamps_) write_ctls(false); // the stream is idle (set() synchronized)
    q.set_stamping(false, LaunchRec{});
    stamps_ = false;
}

// ---- observing -----------------------------------------------------------------------------

int ExecObserver::set(hipStream_t s, LaunchQueue &q, const rf_exec_observer *observer, std::string &err) {
    // A 2.10 observer ends before chose.
    if (observer && (observer->struct_size < offsetof(rf_exec_observer, chose) || !observer->ran)) {
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
    stop_stamps(q);
    on_ = observer != nullptr;
    if (!on_) return RF_OK;
    observer_ = {};
    std::memcpy(&observer_, observer, std::min<size_t>(observer->struct_size, sizeof observer_));
    calls_ = 0;
    // Timestamps where the kernels write them, unless the option observer_events says otherwise
    // (on: events; off: timestamps also where they are not the default).
    const bool want = setup_.mark && !setup_.ctls.empty() && (events_choice_ >= 0 ? events_choice_ == 0 : setup_.by_default);
    why_events_ = !setup_.mark || setup_.ctls.empty() ? "the base kernels have no stamp constant"
                  : events_choice_ >= 0 ? std::string("observer_events ") + (events_choice_ ? "on" : "off")
                                        : "the default on this device";
    if (want && start_stamps(s, why_events_)) {
        stamps_ = true;
        LaunchRec mark;
        mark.f = setup_.mark;
        mark.threads = 32;
        mark.mark = true; // stamp.n_stamps = 0: a stamp only
        q.set_stamping(true, mark);
        return RF_OK;
    }
    for (Set &set : sets_)
        if (!anchor(s, set)) {
            on_ = false;
            err = "hip backend: cannot create or record a timing event";
            return RF_ERR_DEVICE;
        }
    return RF_OK;
}

int ExecObserver::begin_call(hipStream_t s, LaunchQueue &q, const rf_graph &g) {
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
    unit_from_ = 0;
    if (node_index_.size() < size_t(g.n_nodes)) {
        for (int32_t i = int32_t(node_index_.size()); i < g.n_nodes; ++i) node_index_.push_back(i);
    }
    if (stamps_) {
        if (resync_) { // stream-ordered: the calls before it have copied their stamps out
            resync_ = hipMemsetAsync(counter_, 0, sizeof(unsigned int), s) != hipSuccess;
            if (!resync_) next_ = 0;
        }
        set->marks.begin(q.stamps());
        set->base = next_;
        set->n_stamps = 0;
        set->stamped = false;
        closed_ = false;
        call_stamps_ = 0;
        q.unit_start();
        // No end event: the call runs unreported (its stamps are still counted), never fails.
        marking_ = !resync_ && (set->end || hipEventCreate(&set->end) == hipSuccess);
        if (!marking_) set->end = nullptr;
        return int(set - sets_);
    }
    hipEvent_t start = set->anchor ? event_at(*set, 0) : nullptr;
    marking_ = start != nullptr; // no start mark: the call runs unreported, never fails
    if (marking_) q.add_event(start);
    return int(set - sets_);
}

void ExecObserver::name_unit(Set &set, const rf_graph &g, int first, int used) {
    if (set.units.size() <= set.n_units) set.units.emplace_back();
    Unit &u = set.units[set.n_units++];
    // A decode step has the same groups step after step: their names are built once.
    const uint64_t key = ops_key(g, first, used);
    if (key == 0 || key != u.ops_key || u.name.empty()) group_name(g, first, used, u.name);
    u.ops_key = key;
    u.first = first;
    u.used = used;
}

void ExecObserver::list_kernels(const LaunchQueue &q, Unit &u) {
    u.kernels.clear();
    const std::vector<LaunchRec> &list = q.pending();
    for (size_t k = unit_from_; k < list.size(); ++k) {
        const LaunchRec &r = list[k];
        if (!r.f || r.mark) continue; // an event record or the observer's own stamp kernel
        if (!u.kernels.empty()) u.kernels += ' ';
        u.kernels += r.kernel ? r.kernel : "?";
    }
    unit_from_ = list.size();
}

void ExecObserver::unit(LaunchQueue &q, const rf_graph &g, int first, int used, const char *rule) {
    if (!cur_) return;
    Set &set = *cur_;
    if (stamps_) {
        // The unit's first stamp: the first taken after the previous unit's (add() queued the
        // stamp kernel first where its first launch writes none).
        set.marks.end_unit(q.stamps());
        q.unit_start();
        name_unit(set, g, first, used);
        set.units[set.n_units - 1].rule = rule;
        if (observer_.chose) list_kernels(q, set.units[set.n_units - 1]);
        return;
    }
    if (!marking_) return;
    hipEvent_t e = event_at(set, set.n_units + 1);
    if (!e) { // out of events: the rest of the call goes unreported, never fails
        marking_ = false;
        return;
    }
    name_unit(set, g, first, used);
    set.units[set.n_units - 1].rule = rule;
    if (observer_.chose) list_kernels(q, set.units[set.n_units - 1]);
    q.add_event(e);
    unit_from_ = q.pending().size();
}

void ExecObserver::close_call(LaunchQueue &q) {
    if (!stamps_ || !cur_) return;
    Set &set = *cur_;
    const uint64_t n = set.marks.count(q.stamps()) + 1; // with the end mark's
    if (marking_ && set.n_units > 0 && n <= kRingEntries && host_buffer(set, uint32_t(n))) {
        LaunchRec m;
        m.f = setup_.mark;
        m.threads = 128;
        m.mark = true;
        m.args.dst.data = set.host_dev; // the same for every call of this set (graph slot): no patch
        m.args.stamp.n_stamps = int(n);
        q.add(m);
        q.add_event(set.end);
        set.n_stamps = uint32_t(n);
        set.stamped = true;
    }
    call_stamps_ = set.marks.count(q.stamps());
    closed_ = true;
}

void ExecObserver::end_call(bool ok) {
    Set *ended = cur_;
    cur_ = nullptr;
    if (stamps_) {
        // The host's count of the device counter: exact when the call's launches all went out.
        if (ended && ok && closed_) next_ += uint32_t(call_stamps_);
        else if (ended) resync_ = true;
    }
    if (ended) {
        const bool reportable = ok && ended->n_units > 0 && (!stamps_ || ended->stamped);
        ended->state = reportable ? State::Pending : State::Free;
    }
    // Earlier calls whose work is complete: read and reported now, while the device runs this
    // one (its launches are submitted). In call order; this call waits for a later point.
    while (Set *o = oldest_pending()) {
        if (o == ended) break;
        if (!o->done) {
            if (hipEventQuery(stamps_ ? o->end : o->events[o->n_units]) != hipSuccess) break; // still running
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
        if (stamps_ || set.state != State::Free) continue;
        if (!now) now = steady_ns();
        if (now - set.anchor_ns > kReanchorNs) anchor(s, set);
    }
    // Timestamps: one clock; a new anchor is read once a call begun after it is reported.
    if (stamps_ && !anchor_pending_ && !resync_ && steady_ns() - clock_set_ns_ > kReanchorNs && launch_anchor(s))
        clock_set_ns_ = anchor_ns_;
}

void ExecObserver::flush() {
    while (Set *o = oldest_pending()) report(*o);
}

void ExecObserver::report(Set &set) {
    if (stamps_) {
        report_stamps(set);
        return;
    }
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
    report_choices(set);
    observer_.ran(observer_.user, set.call, out.data(), int32_t(n));
}

void ExecObserver::report_stamps(Set &set) {
    set.state = State::Free;
    if (!set.done && hipEventSynchronize(set.end) != hipSuccess) {
        lose(set, "its end event failed");
        resync_ = true;
        return;
    }
    set.done = false;
    // A newer anchor, launched before this call began: complete now.
    if (anchor_pending_ && set.call >= anchor_call_) {
        const volatile rf_stamp *a = anchor_host_; // written by the device
        if (a->tag == RF_STAMP_TAG && a->idx == anchor_idx_) clock_ = {a->t, anchor_ns_, setup_.ns_per_tick};
        anchor_pending_ = false;
    }
    const size_t n = set.n_units;
    // Not reported (the profiler counts the nodes as lost) rather than reported wrong.
    if (std::string why = check_stamps(set.host, set.n_stamps, set.base, uint64_t(kStampSkewNs / setup_.ns_per_tick)); !why.empty()) {
        lose(set, why);
        resync_ = true;
        return;
    }
    start_ns_.resize(n);
    end_ns_.resize(n);
    if (!unit_times(set.host, set.n_stamps, set.marks.first.data(), n, clock_, start_ns_.data(), end_ns_.data())) {
        lose(set, "its units do not fit its stamps");
        return;
    }
    std::vector<rf_exec_unit> &out = report_;
    out.resize(n);
    for (size_t u = 0; u < n; ++u) {
        const Unit &x = set.units[u];
        out[u] = {x.name.c_str(), node_index_.data() + x.first, x.used, start_ns_[u], end_ns_[u]};
    }
    report_choices(set);
    observer_.ran(observer_.user, set.call, out.data(), int32_t(n));
}

void ExecObserver::report_choices(const Set &set) {
    if (!observer_.chose) return;
    choices_.resize(set.n_units);
    for (size_t u = 0; u < set.n_units; ++u)
        choices_[u] = {set.units[u].kernels.c_str(), set.units[u].rule ? set.units[u].rule : ""};
    observer_.chose(observer_.user, set.call, choices_.data(), int32_t(set.n_units));
}

void ExecObserver::lose(const Set &set, const std::string &why) {
    ++lost_;
    last_loss_ = "call " + std::to_string(set.call) + ": " + why;
}

void ExecObserver::release() {
    for (Set &set : sets_) {
        for (hipEvent_t e : set.events) hipEventDestroy(e);
        set.events.clear();
        if (set.anchor) hipEventDestroy(set.anchor);
        set.anchor = nullptr;
        set.anchor_ns = 0;
        if (set.end) hipEventDestroy(set.end);
        set.end = nullptr;
        if (set.host) hipHostFree(set.host);
        set.host = nullptr;
        set.host_dev = nullptr;
        set.capacity = 0;
        set.state = State::Free;
        set.done = false;
    }
    if (stamps_) write_ctls(false);
    stamps_ = false;
    if (ring_) hipFree(ring_);
    ring_ = nullptr;
    counter_ = nullptr;
    if (anchor_host_) hipHostFree(anchor_host_);
    anchor_host_ = nullptr;
    anchor_dev_ = nullptr;
    anchor_pending_ = false;
    cur_ = nullptr;
    on_ = false;
}

} // namespace rf_hip
