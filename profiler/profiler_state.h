// Everything the profiler records, shared by all wrapped backends: the op groups (one per
// op/shape/type/backend combination, holding per-call samples), one event per timed node for
// the trace, interned labels, phase marks. Thread-safe; the hot path takes the lock briefly.
#pragma once
#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ceilings.h"
#include "rocmforge/abi.h"

namespace rfprof {

struct OpGroup {
    int op = 0;
    int backend = 0;
    int whole_graph_nodes = 0;      // > 0: a pseudo-group of whole-graph samples (sample_every > 1)
    int transfer = 0;               // a pseudo-group of host<->backend copies: kUpload or kDownload
    std::string shapes, dtypes;
    double bytes = 0, flops = 0;    // summed over calls (attention's cost varies with the context)
    double total_us = 0;
    std::vector<float> samples_us;  // every call, for percentiles
    // What an observed backend ran for the units that began at this group's nodes, and why
    // (rf_exec_observer.chose): usually one entry; more where the choice changed.
    struct Choice {
        std::string unit, kernels, rule; // unit: the op or fused group ("rms_norm+mul")
        uint64_t calls = 0;
        double total_us = 0;
    };
    std::vector<Choice> choices;
};

// One timed node. ts is microseconds since the profiler started (host steady clock).
struct NodeEvent {
    int32_t group;
    int32_t label;
    int32_t phase;
    float dur_us;
    double ts_us;
    float bytes, flops;
};

struct BackendEntry {
    std::string name;
    rf_device_info info{};
    Ceiling ceiling;
    std::string timing; // "device events" or "host clock"
    uint64_t calls_per_node = 0; // compute() calls timed node by node
    uint64_t calls_whole = 0;    // compute() calls timed as one whole-graph sample
};

constexpr int kUpload = 1, kDownload = 2;

// What the report names a group's op: the node op, "(whole graph)" for whole-graph samples,
// "upload" / "download" for transfers.
const char *group_op_name(const OpGroup &g);
// Groups whose samples are single nodes (not whole graphs, not transfers): the per-layer and
// per-part rollups and the node counts are made of these.
inline bool is_node_group(const OpGroup &g) { return g.whole_graph_nodes == 0 && g.transfer == 0; }

struct PhaseMark {
    int phase;
    double t_us;
};

// A node's identity before timing: where its sample goes.
struct NodeSlot {
    int32_t group;
    int32_t label;
    int32_t phase;
    float bytes, flops;
};

class ProfilerState {
public:
    ProfilerState(CeilingConfig ceilings, size_t max_events);

    double now_us() const {
        return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0_).count();
    }
    // A steady_clock reading in nanoseconds since its epoch (an observed backend's unit times) on this
    // profiler's timeline.
    double us_from_steady_ns(uint64_t ns) const {
        return (double(ns) - double(std::chrono::duration_cast<std::chrono::nanoseconds>(t0_.time_since_epoch()).count())) /
               1000.0;
    }

    int add_backend(const std::string &name, const rf_device_info &info, const std::string &timing);
    // Group and label ids for a node about to run (labels are copied: the graph may die first).
    NodeSlot slot_for(const rf_node &node, int backend);
    // slot_for of nodes[0, n) into out[0, n), under one lock (an observed call's nodes).
    void slots_for(const rf_node *const *nodes, int32_t n, int backend, NodeSlot *out);
    // The slot of a whole-graph sample: one pseudo-group per backend and node count.
    NodeSlot whole_graph_slot(int32_t n_nodes, int backend);
    // The slot of a host<->backend copy of `bytes` (direction kUpload or kDownload).
    NodeSlot transfer_slot(int backend, int direction, uint64_t bytes);
    void count_call(int backend, bool per_node);
    void record(const NodeSlot &slot, double ts_us, float dur_us);
    struct Timed {
        NodeSlot slot;
        double ts_us;
        float dur_us;
    };
    // record() of each, under one lock.
    void record_all(const Timed *samples, size_t n);
    struct Choice {
        int32_t group;                         // the unit's first node's
        const char *unit;                      // valid during the call
        const std::string *kernels, *rule;
        float dur_us;
    };
    // Counts each unit under its group's entry for (unit, kernels, rule), under one lock.
    void note_choices(const Choice *choices, size_t n);
    void mark_phase(const char *name);

    // Unresolved device events (the backend was gone before they could be read).
    void add_dropped(uint64_t n);

    // Snapshot accessors for the report (call with no compute in flight).
    const std::vector<OpGroup> &groups() const { return groups_; }
    const std::vector<NodeEvent> &events() const { return events_; }
    const std::deque<std::string> &labels() const { return labels_; }
    const std::vector<std::string> &phase_names() const { return phase_names_; }
    const std::vector<PhaseMark> &phase_marks() const { return marks_; }
    const std::vector<BackendEntry> &backends() const { return backends_; }
    uint64_t events_not_stored() const { return events_not_stored_; }
    uint64_t dropped() const { return dropped_; }
    std::mutex &mutex() { return mu_; }

private:
    struct GroupKey {
        int32_t op, backend;
        int32_t types[3];
        int64_t ne[3][RF_MAX_DIMS];
        bool operator==(const GroupKey &o) const;
    };
    struct GroupKeyHash {
        size_t operator()(const GroupKey &k) const;
    };
    int intern_label(std::string_view s);
    NodeSlot slot_for_locked(const rf_node &node, int backend);
    void record_locked(const NodeSlot &slot, double ts_us, float dur_us);
    template <class Make>
    int pseudo_group(std::unordered_map<int64_t, int> &index, int64_t key, Make make);

    std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
    CeilingConfig ceilings_;
    size_t max_events_;
    std::mutex mu_;
    std::vector<BackendEntry> backends_;
    std::vector<OpGroup> groups_;
    std::unordered_map<GroupKey, int, GroupKeyHash> group_index_;
    std::unordered_map<int64_t, int> whole_index_; // (backend << 32 | n_nodes) -> group
    int whole_label_ = -1;
    std::unordered_map<int64_t, int> transfer_index_; // (backend << 2 | direction) -> group
    std::deque<std::string> labels_;
    std::unordered_map<std::string_view, int> label_index_; // views into labels_
    std::vector<NodeEvent> events_;
    std::vector<std::string> phase_names_{"(none)"};
    std::vector<PhaseMark> marks_;
    int current_phase_ = 0;
    uint64_t events_not_stored_ = 0;
    uint64_t dropped_ = 0;
};

} // namespace rfprof
