// The launch list of the last unobserved compute() and the graph it was made from, so that a call
// with the same graph (every node's op, parameters and tensors: type, flags, shape, strides, data)
// reuses the list instead of walking the graph again. The walk (fusion matching, argument blocks,
// kernel lookups by name) runs before anything is submitted, while the device sits idle: on the
// H100 host ~0.4 ms of a 7B decode step of 2.6-6 ms. A decode step repeats its graph (the core
// keeps it and re-points only the input tensors, whose addresses stay the same).
// A few lists are kept (kEntries, the oldest replaced first): a step split over backends calls
// compute() with several graphs in turn.
// Not reused: a list made while a scratch buffer was reallocated (that flushes part of the list
// mid-walk), or any once one has been since (scratch_gen), observed calls (the observer records
// units during the walk) and per-node sync (ROCMFORGE_HIP_SYNC).
#pragma once
#include <cstdint>
#include <vector>

#include "launch_queue.h"
#include "rocmforge/abi.h"

namespace rf_hip {

class WalkCache {
public:
    static constexpr int kEntries = 4;
    // Encodes g as this call's key; the list saved for an equal key, null when there is none or a
    // scratch buffer was reallocated since it was made.
    const std::vector<LaunchRec> *lookup(const rf_graph &g, uint64_t scratch_gen);
    // Saves the list the walk of this call's graph (the last lookup()) made.
    void store(uint64_t scratch_gen, const std::vector<LaunchRec> &launches);
    void clear();

    // The key of a graph (exposed for tests): per node its op, parameters and, for dst and each
    // source, presence, type, flags, ne, nb and data address.
    static void encode(const rf_graph &g, std::vector<uint64_t> &key);

private:
    struct Entry {
        std::vector<uint64_t> key;
        std::vector<LaunchRec> launches;
        uint64_t gen = 0;
        bool valid = false;
    };
    Entry entries_[kEntries];
    int next_ = 0; // the entry store() replaces
    std::vector<uint64_t> cur_;
};

} // namespace rf_hip
