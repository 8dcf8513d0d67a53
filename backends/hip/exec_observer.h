// What the HIP backend ran, reported to a set_observer observer (ABI 2.1) without changing how
// it runs: compute() adds an event record after each launch group (a node's kernels, or a fused
// group's) to the launch list, which stays eligible for graph replay (the records become event
// nodes beside the kernel chain, launch_queue.h); the events are read once the step is known
// complete (synchronize, download, the next compute) and their device times are reported,
// placed on the host's steady clock through an anchor event recorded while the stream was idle.
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
    ExecObserver() = default;
    ExecObserver(const ExecObserver &) = delete;
    ExecObserver &operator=(const ExecObserver &) = delete;

    bool on() const { return on_; }
    // Starts (observer) or stops (nullptr) observing; reports what is pending first. The stream
    // must be idle (set() synchronizes it to anchor the clocks).
    int set(hipStream_t s, const rf_exec_observer *observer, std::string &err);
    // compute() begins: counts the call, reports an unreported previous one (waiting for it:
    // the host queued two steps without a synchronize), queues the start mark.
    void begin_call(hipStream_t s, LaunchQueue &q, const rf_graph &g);
    // A compute() that failed before begin_call: counted, reports nothing.
    void skip_call() { if (on_) ++calls_; }
    // After the launches of nodes [first, first + used): one unit, its end mark queued.
    void unit(LaunchQueue &q, const rf_graph &g, int first, int used);
    // compute() ends: ok false drops the call's marks (a failed call reports nothing).
    void end_call(bool ok);
    // The stream is idle (after a synchronize or a synchronous copy): reads the marks, reports
    // them, re-anchors. No-op when nothing is pending.
    void deliver(hipStream_t s);
    // Frees the events (context current; the backend is shutting down). Pending marks are lost.
    void release();

private:
    struct Unit {
        std::string name;
        int first, used;
    };
    hipEvent_t event_at(size_t k);
    bool anchor(hipStream_t s);

    bool on_ = false;
    rf_exec_observer observer_{};
    uint64_t calls_ = 0;
    bool pending_ = false; // a successful call whose marks are not reported yet
    bool marking_ = false; // the call in progress has its marks so far (events were available)
    uint64_t pending_call_ = 0;
    // Of the call in progress / pending: units_[0, n_units_) (kept beyond, so that their names'
    // storage is reused step after step).
    std::vector<Unit> units_;
    size_t n_units_ = 0;
    std::vector<rf_exec_unit> report_; // deliver()'s output, reused
    std::vector<int32_t> node_index_; // 0..n_nodes-1: rf_exec_unit::nodes points into it
    std::vector<hipEvent_t> events_;  // events_[k] marks the end of unit k - 1 (0: the start)
    hipEvent_t anchor_ = nullptr;     // recorded on an idle stream at host time anchor_ns_
    uint64_t anchor_ns_ = 0;
};

} // namespace rf_hip
