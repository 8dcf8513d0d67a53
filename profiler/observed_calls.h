// The profiler's side of rf_exec_observer (ABI 2.1): matches what an observed backend reports it
// ran with the compute() call it came from, and records the units as node samples. A report
// can come after compute() returned (the HIP backend reads a step's timing events during a later
// compute(), after that one's launch; WrappedBackend::resolve_pending collects the rest by setting
// the observer again), when the graph may be gone: each call's node slots are taken as soon as its
// compute() returns, while the device runs it (not before: that would delay the launch). A
// report made inside compute() (synchronous backends) is held until then.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "profiler_state.h"
#include "rocmforge/abi.h"

namespace rfprof {

class ObservedCalls {
public:
    explicit ObservedCalls(ProfilerState &state) : state_(state) {}

    // Before the inner compute(): numbers the call as the backend will.
    void begin();
    // After the inner compute() returned `status` (a failed call reports nothing): the slots its
    // units are recorded in. per_node false: the call is one whole-graph sample (sample_every),
    // from its first unit's start to its last's end.
    void end(int status, const rf_graph &graph, bool per_node, int backend);
    // rf_exec_observer::chose (ABI 2.11): kept for the ran() of the same call that follows.
    void chose(uint64_t call, const rf_unit_choice *choices, int32_t n_units);
    // rf_exec_observer::ran. Units naming nodes outside their graph are counted as dropped.
    void ran(uint64_t call, const rf_exec_unit *units, int32_t n_units);
    // Calls never reported (the backend is gone): counted as dropped.
    void abandon();
    // The observer was set again (after the backend reported everything pending): calls not
    // reported are dropped and the numbering starts from 0 again, as the backend's does.
    void restart();

private:
    struct Call {
        uint64_t id;
        bool per_node;
        std::vector<NodeSlot> slots; // per node (per_node), or the one whole-graph slot
    };
    struct HeldUnit { // a unit reported inside compute(), before its call's slots exist
        size_t first;    // its nodes: held_nodes_[first, first + count)
        int32_t count;
        uint64_t start_ns, end_ns;
        std::string name;
    };
    void record_units(const Call &c, const rf_exec_unit *units, int32_t n_units);
    void recycle(Call &c); // keeps its slot vector's storage for a later call

    ProfilerState &state_;
    uint64_t next_ = 0; // the backend's count of compute() calls since the observer was set
    bool in_compute_ = false;
    std::vector<HeldUnit> held_;
    std::vector<int32_t> held_nodes_;
    std::vector<rf_exec_unit> held_units_; // held_ as units, for record_units
    bool have_held_ = false;
    std::deque<Call> pending_;
    std::vector<std::vector<NodeSlot>> spare_slots_; // recorded calls' slot vectors, for reuse
    std::vector<ProfilerState::Timed> timed_;        // record_units' batch, reused
    // The last chose() report: its call and, per unit, the kernels and the rule (copied: the
    // backend's strings live only during the callback).
    uint64_t choices_call_ = UINT64_MAX;
    std::vector<std::string> choice_text_; // kernels, rule, kernels, rule, ...
    std::vector<ProfilerState::Choice> choice_batch_; // record_units' batch, reused
};

} // namespace rfprof
