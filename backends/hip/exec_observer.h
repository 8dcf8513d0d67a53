// What the HIP backend ran, reported to a set_observer observer (ABI 2.1) without changing how
// it runs: the same kernels, fusions, graph replay and programmatic launches; the tokens are
// those of an unobserved run. A unit is a launch group (a node's kernels, or a fused group's).
//
// Two ways to time the units, chosen when the observer is set:
// - kernel timestamps (the default on NVIDIA; kernels/stamps.h): the base kernels write the
//   device clock themselves (rf_kernel_start, first thread of block 0, right after waiting for
//   the previous kernel) into a device ring, in launch order. A unit runs from the stamp of its
//   first launch to the stamp of the next unit's first launch. After a call's last launch the
//   observer queues its stamp kernel (rf_stamp_mark), whose stamp is the call's end and which
//   copies the call's stamps to mapped pinned host memory, and one event (the call is complete
//   when it is). A group whose first kernel writes no stamp (a kernel pack without the stamp
//   constant, e.g. examples/pack) gets the stamp kernel queued before it (its stamp is the
//   group's start). The stamps are checked (each tagged, indices consecutive from where the
//   host expects the call to start, times in order); a call that fails is not reported (the
//   profiler counts its nodes as lost, never as wrong times) and the counter is reset before the
//   next call. Per call: 2 graph nodes added instead of one event record per unit.
// - events (option observer_events on, the default on AMD, and wherever the base kernels lack
//   the stamp constant: an older pack): an event record after each launch group, which in a
//   replayed graph becomes an event-record node beside the kernel chain (launch_queue.h).
//
// Reading a call's times and reporting them is host work of its own; done after the step's
// synchronize it would delay the next step's launch. So the per-call resources (events, or the
// pinned copy of the stamps) come in sets that alternate between calls (each set's launch lists
// in a graph slot of their own, LaunchQueue::set_slot): call N+1 uses the other set while call
// N's times are read and reported at the end of compute(N+1), after its launch, when the device
// is busy with it. A call is reported once it is known complete (the stream was idle since:
// synchronize, a copy) or its last event says so; in call order; at the latest when
// set_observer() or shutdown comes (flush()), or when a new call needs its set (the host queued
// more calls than there are sets without a synchronize: then the host waits for the oldest).
// Device times are placed on the host's steady clock through an anchor taken while the stream
// was idle (events: an anchor event per set; stamps: a stamp kernel launched on the idle stream,
// taken again at an idle point once 0.5 s old).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_runtime.h"
#include "launch_queue.h"
#include "rocmforge/abi.h"
#include "stamp_times.h"

namespace rf_hip {

// What the loaded kernels offer for timestamps (KernelModule, kernel_pack.h).
struct StampSetup {
    std::vector<void *> ctls;     // device addresses of the modules' rf_stamp_ctl constants
    hipFunction_t mark = nullptr; // rf_stamp_mark; null: no timestamps
    double ns_per_tick = 1.0;
    bool by_default = false;      // used unless observer_events is on (else only where it is off)
};

class ExecObserver {
public:
    static constexpr int kSets = LaunchQueue::kSlots;
    static constexpr uint32_t kRingEntries = 1u << 16; // stamps a call may hold (1 MiB of device memory)

    ExecObserver() = default;
    ExecObserver(const ExecObserver &) = delete;
    ExecObserver &operator=(const ExecObserver &) = delete;

    void configure(const StampSetup &setup) { setup_ = setup; }
    // The option observer_events: 1 events, 0 timestamps where the kernels have them, -1 the
    // default (StampSetup::by_default). Read at set().
    void set_events(int choice) { events_choice_ = choice; }
    bool on() const { return on_; }
    bool stamping() const { return on_ && stamps_; }
    // Starts (observer) or stops (nullptr) observing; reports what is pending first, to the
    // observer set until now. Synchronizes the stream (to anchor the clocks).
    int set(hipStream_t s, LaunchQueue &q, const rf_exec_observer *observer, std::string &err);
    // compute() begins: counts the call, takes a free set (reporting the oldest pending call
    // first when none is free, waiting for it), queues the start mark (events). Returns the graph
    // slot for the call's launch list (LaunchQueue::set_slot).
    int begin_call(hipStream_t s, LaunchQueue &q, const rf_graph &g);
    // A compute() that failed before begin_call: counted, reports nothing.
    void skip_call() { if (on_) ++calls_; }
    // After the launches of nodes [first, first + used): one unit (events: its end mark queued).
    // `rule` (static storage or the backend's): the kernel-table row or fusion that chose them.
    void unit(LaunchQueue &q, const rf_graph &g, int first, int used, const char *rule);
    // After the call's last launch was queued, before the queue is submitted: the end of the
    // call (stamps: the stamp kernel that ends and copies it, and its event).
    void close_call(LaunchQueue &q);
    // compute() ends (after its launches were submitted): ok false drops the call's marks (a failed
    // call reports nothing). Then reports the earlier calls whose work is complete, while the
    // device runs this one.
    void end_call(bool ok);
    // The stream is idle (after a synchronize or a synchronous copy): every pending call is
    // complete (it is read by the next compute(), not here: that would delay the next launch).
    // Re-anchors the clocks once the anchor is old.
    void idle(hipStream_t s);
    // Reports every pending call, waiting for the device where needed (set_observer, shutdown).
    void flush();
    // Frees the events and buffers (context current; the backend is shutting down; flush() first
    // to report what is pending, and destroy graphs that use them before).
    void release();
    // Observed calls not reported because their stamps failed the check (option stats).
    uint64_t lost() const { return lost_; }
    // Why the last of them was lost ("" while none was).
    const std::string &last_loss() const { return last_loss_; }
    // "kernel timestamps", or "events" and why not timestamps (option stats).
    std::string mode() const { return stamps_ ? "kernel timestamps" : "events (" + why_events_ + ")"; }

private:
    struct Unit {
        std::string name;
        uint64_t ops_key; // the group's ops (see unit()): the name is rebuilt only when it changes
        int first, used;
        std::string kernels; // the launches' kernel names (rf_unit_choice)
        const char *rule = "";
    };
    enum class State { Free, Running, Pending };
    struct Set {
        State state = State::Free;
        bool done = false;  // Pending and known complete (the stream was idle since)
        uint64_t call = 0;
        // The call's units_[0, n_units) (kept beyond, so that their names' storage is reused).
        std::vector<Unit> units;
        size_t n_units = 0;
        // events: events[k] marks the end of unit k - 1 (0: the start)
        std::vector<hipEvent_t> events;
        hipEvent_t anchor = nullptr;    // recorded on an idle stream at host time anchor_ns
        uint64_t anchor_ns = 0;
        // stamps: unit k starts at the call's stamp marks.first[k]; the call's n_stamps stamps
        // (the last its end mark's) start at counter index base and are copied to `host`
        StampUnits marks;
        uint32_t base = 0, n_stamps = 0;
        bool stamped = false;           // the call queued its end mark: its stamps can be read
        hipEvent_t end = nullptr;       // after the end mark
        rf_stamp *host = nullptr;       // mapped pinned memory, `capacity` entries
        void *host_dev = nullptr;       // its device address
        uint32_t capacity = 0;
    };
    hipEvent_t event_at(Set &set, size_t k);
    bool anchor(hipStream_t s, Set &set);
    // The pending set with the lowest call number, or nullptr.
    Set *oldest_pending();
    // Reads a pending set's times (waiting for them if need be) and reports them; frees the set.
    void report(Set &set);
    void report_stamps(Set &set);
    // Counts a call whose stamps cannot be used (it goes unreported) and keeps why.
    void lose(const Set &set, const std::string &why);
    void name_unit(Set &set, const rf_graph &g, int first, int used);
    // The kernels queued since the previous unit, into u.kernels (observers with chose only).
    void list_kernels(const LaunchQueue &q, Unit &u);
    // Tells an observer with chose() what chose each of the set's units.
    void report_choices(const Set &set);

    // Timestamps.
    bool start_stamps(hipStream_t s, std::string &why);
    void stop_stamps(LaunchQueue &q);
    bool write_ctls(bool on);
    bool host_buffer(Set &set, uint32_t n);
    // The stamp kernel on the idle stream (n = 1: copies its stamp to anchor_host_).
    bool launch_anchor(hipStream_t s);

    bool on_ = false;
    bool stamps_ = false; // observing with timestamps (else events)
    rf_exec_observer observer_{};
    uint64_t calls_ = 0;
    Set sets_[kSets];
    Set *cur_ = nullptr;   // the set of the call in progress (Running)
    bool marking_ = false; // the call in progress has its marks so far (events were available)
    std::vector<rf_exec_unit> report_; // report()'s output, reused
    std::vector<rf_unit_choice> choices_; // report_choices()' output, reused
    size_t unit_from_ = 0;             // the queue index where the unit being walked begins
    std::vector<int32_t> node_index_;  // 0..n_nodes-1: rf_exec_unit::nodes points into it
    std::vector<uint64_t> start_ns_, end_ns_; // report_stamps()'s times, reused

    StampSetup setup_;
    void *ring_ = nullptr;          // device: kRingEntries rf_stamp, then the counter
    unsigned int *counter_ = nullptr;
    uint32_t next_ = 0;             // the counter index the next stamp takes (the host's count)
    bool resync_ = false;           // the host's count may be wrong: reset the counter first
    rf_stamp *anchor_host_ = nullptr; // mapped pinned: the anchor kernel's stamp
    void *anchor_dev_ = nullptr;
    StampClock clock_;              // in use
    uint64_t clock_set_ns_ = 0;     // host time of the anchor launch in use or pending
    bool anchor_pending_ = false;   // an anchor kernel launched, its stamp not read yet
    uint32_t anchor_idx_ = 0;       // its counter index
    uint64_t anchor_call_ = 0;      // calls begun before it: a call numbered from here ran after it
    uint64_t anchor_ns_ = 0;        // the host time it was launched at
    bool closed_ = false;           // close_call() ran for the call in progress
    uint64_t call_stamps_ = 0;      // the stamps its launches write (the end mark's included)
    uint64_t lost_ = 0;
    std::string last_loss_;
    std::string why_events_;        // why the observer set last uses events
    int events_choice_ = -1;        // set_events
};

} // namespace rf_hip
