// The launches of a recent compute() and the graph they were made from, so that a call with the
// same graph (every node's op, parameters and tensors: type, flags, shape, strides, data) queues
// them again instead of walking the graph. The walk (fusion matching, argument blocks, kernel
// lookups by name) runs before anything is submitted, while the device sits idle, and costs the
// host more than queueing the kept launches again. A decode step repeats its graph (the core keeps
// it and re-points only the input
// tensors, whose addresses stay the same).
// The launches are kept as the walk added them, with the launch units it reported (a node or a
// fused group: exec_observer.h), so an observed call replays them unit by unit and the observer
// sees what it would have seen from the walk. A few graphs are kept (kEntries, the oldest
// replaced first): a step split over backends calls compute() with several graphs in turn.
// Not reused: a list made while a scratch buffer was reallocated (that flushes part of the list
// mid-walk), or any once one has been since (scratch_gen), and with per-node sync
// (option sync_each_node).
#pragma once
#include <cstdint>
#include <vector>

#include "launch_queue.h"
#include "rocmforge/abi.h"

namespace rf_hip {

class WalkCache {
public:
    static constexpr int kEntries = 4;
    struct Unit {
        int first, used; // the nodes it covers
        uint32_t end;    // launches [previous unit's end, end) are its own
        const char *rule; // the kernel-table row or fusion that chose them (Backend::rule)
    };
    struct Entry {
        std::vector<unsigned char> key;
        std::vector<LaunchRec> launches;
        std::vector<Unit> units;
        uint64_t gen = 0;
        uint64_t tag = 0; // unique per store(): LaunchQueue::flush / replay_tagged know the list by it
        bool valid = false;
        // The node array of the last call that stored or found this entry (compute_same, ABI 2.9:
        // the host's promise that a call with that array and nothing changed is this graph).
        rf_node *const *nodes = nullptr;
        int32_t n_nodes = 0;
    };
    // The entry saved for g (compared in place, node by node), null when there is none or a
    // scratch buffer was reallocated since it was made.
    const Entry *lookup(const rf_graph &g, uint64_t scratch_gen) const;
    // The entry the last store() or lookup() hit made for g's node array (same array, same node
    // count), without comparing the nodes: for a caller that knows they did not change (the host's
    // compute_same). Null when none, or a scratch buffer was reallocated since.
    const Entry *lookup_same(const rf_graph &g, uint64_t scratch_gen) const;
    // Marks e as the entry of g's node array (and no other entry as that array's).
    void remember_nodes(const Entry *e, const rf_graph &g);
    // Saves what the walk of g made; takes the vectors' contents (they come back holding an older
    // entry's, to be cleared and reused). Returns the new entry's tag. The new entry is g's node
    // array's (remember_nodes).
    uint64_t store(const rf_graph &g, uint64_t scratch_gen, std::vector<LaunchRec> &launches, std::vector<Unit> &units);
    void clear();

    // The key of a graph: per node its op, which of dst and the sources are present, its
    // parameters and, per present tensor, type, flags, ne, nb and data address as bytes.
    static void encode(const rf_graph &g, std::vector<unsigned char> &key);
    static bool matches(const rf_graph &g, const std::vector<unsigned char> &key);

private:
    Entry entries_[kEntries];
    int next_ = 0;         // the entry store() replaces
    uint64_t last_tag_ = 0;
};

} // namespace rf_hip
