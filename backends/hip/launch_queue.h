// Kernel launches of one compute() call, collected and then submitted either directly or as a
// replayed graph. Decode steps submit the same list of kernels every step with a few changed
// arguments (context length, arena pointers after growth); replaying an instantiated graph and
// patching only the nodes whose arguments changed removes most per-launch CPU and GPU overhead.
// Graphs are kept per kernel sequence, several at once (kSlots, the least recently used
// replaced): a server alternates decode steps with steps that also take a prompt chunk, and the
// decode shape's graph must survive the chunk's (one slot rebuilt it after every chunk: launched
// directly once, built the next step, host time on most steps of a busy server). An observed
// backend alternates its timing events between sets
// (exec_observer.h): each set's lists have graphs of their own (set_slot), so both replay.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_runtime.h"
#include "kernel_args.h"
#include "rocmforge/abi.h"

namespace rf_hip {

struct LaunchRec {
    hipFunction_t f = nullptr;
    const char *kernel = nullptr; // its name (the module's or pack's storage), for the observer
    unsigned grid[3] = {1, 1, 1};
    unsigned threads = 0;
    unsigned smem = 0; // dynamic shared memory, bytes
    rf_kargs args{};
    hipEvent_t event = nullptr; // f == nullptr: not a launch but an event record (exec_observer.h)
    // A kernel that does not begin with rf_kernel_start (a pack without RF_PACK_KERNELS_WAIT):
    // chained to the previous one by a plain edge even when programmatic edges are on.
    bool plain_edge = false;
    // Its module writes timestamps (kernels/stamps.h): a base kernel, or one of a pack whose code
    // object has the stamp constant. Counted by LaunchQueue while stamping (exec_observer.h).
    bool stamps = true;
    // The observer's own kernel (rf_stamp_mark): not counted where observing must not change
    // what is graphed.
    bool mark = false;
    // Independent of the kernel queued before it (a claim's rf_fusion_launch.beside_previous,
    // nothing queued between): in a graph it depends on what that kernel depends on, so the two
    // run side by side, and the next kernel depends on both. Direct launches run in order.
    bool beside_prev = false;
};

// Launches one kernel on `s` (the argument block is copied by the driver at launch).
int launch_now(hipStream_t s, const LaunchRec &r, const char *what, std::string &err);

struct LaunchStats {
    uint64_t launches = 0, graph_builds = 0, graph_replays = 0, node_updates = 0, direct_flushes = 0;
};

class LaunchQueue {
public:
    LaunchQueue() = default;
    LaunchQueue(const LaunchQueue &) = delete;
    LaunchQueue &operator=(const LaunchQueue &) = delete;
    ~LaunchQueue() { drop_graphs(); }

    static constexpr int kSlots = 8; // graphs kept (kernel sequences x observer sets)
    static constexpr int kSets = 2;
    void set_graphs(bool on) { graphs_ = on; if (!on) drop_graphs(); }
    // Chain graph kernels with programmatic edges (Hopper+; kernels/compat.h rf_kernel_start).
    void set_programmatic(bool on) { programmatic_ = on; drop_graphs(); }
    // The observer set (0 <= set < kSets) whose graphs the next flush() compares with and replays.
    void set_slot(int set) { set_ = set >= 0 && set < kSets ? set : 0; }
    bool programmatic() const { return programmatic_; }
    // Graph kernels marked beside_prev run beside the one before them (off: chained; option beside).
    void set_beside(bool on) { beside_ = on; drop_graphs(); }
    bool graphs() const { return graphs_; }
    void begin() { cur_.clear(), has_events_ = false; }
    // Queues a list collected earlier (walk_cache.h) in place of begin()..add(); no event records.
    void repeat(const std::vector<LaunchRec> &list) { cur_ = list, has_events_ = false; }
    // While set, add() also appends each launch it queues to *sink as given (before any stamp
    // kernel it puts in front): what a later call may queue again (walk_cache.h).
    void record(std::vector<LaunchRec> *sink) { raw_ = sink; }
    // Queues a launch; one with an empty grid is dropped (it would do nothing, and never reaches
    // the device, so it writes no stamp).
    void add(const LaunchRec &r) {
        if (r.f && (!r.grid[0] || !r.grid[1] || !r.grid[2])) return;
        if (raw_) raw_->push_back(r);
        if (stamping_ && r.f) {
            // A launch group must start with a stamp: before one whose kernel writes none, the
            // observer's stamp kernel (its stamp is the group's start).
            if (unit_start_ && !r.stamps && mark_.f) {
                cur_.push_back(mark_);
                ++stamps_;
            }
            unit_start_ = false;
            stamps_ += r.stamps ? 1 : 0;
        }
        cur_.push_back(r);
    }
    // Timestamps (exec_observer.h): while on, add() counts the launches that write a stamp
    // (stamps(): a running count, never reset) and puts `mark` (a stamp kernel launch; f null:
    // none) before the first launch of a group when that launch writes no stamp. A group starts
    // at unit_start().
    void set_stamping(bool on, const LaunchRec &mark) { stamping_ = on, mark_ = mark, unit_start_ = true; }
    bool stamping() const { return stamping_; }
    void unit_start() { unit_start_ = true; }
    uint64_t stamps() const { return stamps_; }
    // What begin()..add() collected so far (tests).
    const std::vector<LaunchRec> &pending() const { return cur_; }
    // Records `e` once the launches added so far are done (exec_observer.h timing marks).
    void add_event(hipEvent_t e) {
        cur_.emplace_back().event = e; // built in place: a LaunchRec is ~600 bytes
        has_events_ = true;
    }
    // Submits what begin()..add() collected. A list whose kernel sequence equals a kept one of the
    // same set is replayed as a graph (built on the second sighting, patched afterwards). Event
    // records are part of the sequence: in a graph they are event-record nodes hanging off the
    // kernel before them (the kernel chain, programmatic edges included, is unchanged); a driver
    // without event-record nodes launches a list with events directly, graph state untouched.
    // `tag` (non-zero): the caller's name for this list (walk_cache.h), kept with the slot's list.
    int flush(hipStream_t s, std::string &err, uint64_t tag = 0);
    // Submits a kept graph of the current set again, unpatched, when it holds the list flushed
    // under `tag` (non-zero): done = true. Otherwise nothing happens (done = false) and the caller queues
    // the list and flushes. Returns RF_OK, or a device error (the graph is dropped).
    int replay_tagged(hipStream_t s, uint64_t tag, bool &done, std::string &err);
    const LaunchStats &stats() const { return stats_; }

private:
    int launch_all(hipStream_t s, std::string &err);
    bool same_kernels(const std::vector<LaunchRec> &a, const std::vector<LaunchRec> &b) const;
    // The kernels of a list (function, block, shared memory; event records left out), hashed.
    static uint64_t kernel_signature(const std::vector<LaunchRec> &list);
    bool build_graph(std::string &err);
    bool patch_graph(std::string &err);
    bool launch_graph(hipStream_t s, std::string &err);
    void drop_graph(); // the current slot's
    void drop_graphs();
    // The slot holding `cur_`'s kernel sequence for the current set, or -1.
    int find_slot(uint64_t sig) const;
    // A slot for a new sequence: an unused one, else the least recently used (its graph dropped).
    int take_slot();

    struct Slot {
        std::vector<LaunchRec> prev; // the list the graph (if any) currently holds
        uint64_t tag = 0;            // its flush() tag
        uint64_t sig = 0;            // kernel_signature(prev)
        int set = -1;                // the observer set; -1: unused
        uint64_t used = 0;           // when it was last flushed or replayed (use_clock_)
        bool have_graph = false;
#if defined(RF_HIP_NVIDIA)
        hipGraph_t graph = nullptr;
        hipGraphExec_t exec = nullptr;
        std::vector<hipGraphNode_t> nodes;
#endif
    };

    bool graphs_ = false;
    bool programmatic_ = false;
    bool beside_ = true;
    bool has_events_ = false;
    bool stamping_ = false, unit_start_ = false;
    LaunchRec mark_{};
    uint64_t stamps_ = 0;
    std::vector<LaunchRec> cur_;
    std::vector<LaunchRec> *raw_ = nullptr; // record()
    Slot slots_[kSlots];
    int slot_ = 0; // the slot of the list being flushed or replayed
    int set_ = 0;
    uint64_t use_clock_ = 0;
    LaunchStats stats_;
};

} // namespace rf_hip
