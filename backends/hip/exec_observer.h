// What the HIP backend ran, reported to a set_observer observer (ABI 2.1) without changing how
// it runs: compute() adds an event record after each launch group (a node's kernels, or a fused
// group's) to the launch list, which stays eligible for graph replay (the records become event
// nodes beside the kernel chain, launch_queue.h).
//
// Reading ~400-600 events and reporting them is host work of its own; done after the step's
// synchronize it would delay the next step's launch. So the events come in sets that alternate
// between calls (each set's launch lists in a graph slot of their own, LaunchQueue::set_slot):
// call N+1 records into the other set while call N's times are read and reported at the end of
// compute(N+1), after its launch, when the device is busy with it. A call is reported once it is
// known complete (the stream was idle since: synchronize, a copy) or its last event says so; in
// call order; at the latest when set_observer() or shutdown comes (flush()), or when a new call
// needs its set (the host queued more calls than there are sets without a synchronize: then the
// host waits for the oldest). Device times are placed on the host's steady clock through an
// anchor event per set, recorded while the stream was idle.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_runtime.h"
#include "launch_queue.h"
#include "rocmforge/abi.h"

namespace rf_hip {

class ExecObserver {
public:
    static constexpr int kSets = LaunchQueue::kSlots;

    ExecObserver() = default;
    ExecObserver(const ExecObserver &) = delete;
    ExecObserver &operator=(const ExecObserver &) = delete;

    bool on() const { return on_; }
    // Starts (observer) or stops (nullptr) observing; reports what is pending first, to the
    // observer set until now. Synchronizes the stream (to anchor the clocks).
    int set(hipStream_t s, const rf_exec_observer *observer, std::string &err);
    // compute() begins: counts the call, takes a free set of events (reporting the oldest pending
    // call first when none is free, waiting for it), queues the start mark. Returns the graph
    // slot for the call's launch list (LaunchQueue::set_slot).
    int begin_call(hipStream_t s, LaunchQueue &q, const rf_graph &g);
    // A compute() that failed before begin_call: counted, reports nothing.
    void skip_call() { if (on_) ++calls_; }
    // After the launches of nodes [first, first + used): one unit, its end mark queued.
    void unit(LaunchQueue &q, const rf_graph &g, int first, int used);
    // compute() ends (after its launches were submitted): ok false drops the call's marks (a failed
    // call reports nothing). Then reports the earlier calls whose work is complete, while the
    // device runs this one.
    void end_call(bool ok);
    // The stream is idle (after a synchronize or a synchronous copy): every pending call is
    // complete (it is read by the next compute(), not here: that would delay the next launch).
    // Re-anchors the free sets whose anchor is old.
    void idle(hipStream_t s);
    // Reports every pending call, waiting for the device where needed (set_observer, shutdown).
    void flush();
    // Frees the events (context current; the backend is shutting down; flush() first to report
    // what is pending, and destroy graphs that record into the events before).
    void release();

private:
    struct Unit {
        std::string name;
        uint64_t ops_key; // the group's ops (see unit()): the name is rebuilt only when it changes
        int first, used;
    };
    enum class State { Free, Running, Pending };
    struct Set {
        State state = State::Free;
        bool done = false;  // Pending and known complete (the stream was idle since)
        uint64_t call = 0;
        // The call's units_[0, n_units) (kept beyond, so that their names' storage is reused).
        std::vector<Unit> units;
        size_t n_units = 0;
        std::vector<hipEvent_t> events; // events[k] marks the end of unit k - 1 (0: the start)
        hipEvent_t anchor = nullptr;    // recorded on an idle stream at host time anchor_ns
        uint64_t anchor_ns = 0;
    };
    hipEvent_t event_at(Set &set, size_t k);
    bool anchor(hipStream_t s, Set &set);
    // The pending set with the lowest call number, or nullptr.
    Set *oldest_pending();
    // Reads a pending set's events (waiting for them if need be) and reports them; frees the set.
    void report(Set &set);

    bool on_ = false;
    rf_exec_observer observer_{};
    uint64_t calls_ = 0;
    Set sets_[kSets];
    Set *cur_ = nullptr;   // the set of the call in progress (Running)
    bool marking_ = false; // the call in progress has its marks so far (events were available)
    std::vector<rf_exec_unit> report_; // report()'s output, reused
    std::vector<int32_t> node_index_;  // 0..n_nodes-1: rf_exec_unit::nodes points into it
};

} // namespace rf_hip
