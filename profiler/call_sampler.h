// Which compute() calls are timed node by node (profiler config "sample_every": N).
// Timing node by node means one inner compute() per node, which costs a GPU backend its graph
// replay and kernel fusion; with N > 1 only every Nth call pays that, the others run whole.
#pragma once
#include <cstdint>
#include <unordered_map>

namespace rfprof {

class CallSampler {
public:
    // Calls of each graph size that are always timed node by node, so short runs get per-op data.
    static constexpr uint64_t kFirstTimed = 2;

    explicit CallSampler(int every) : every_(every < 1 ? 1 : uint64_t(every)) {}

    // Counts the call. Counted per graph size: when graphs of different sizes alternate (a
    // backend's segments on both sides of a CPU fallback), a single counter could land every
    // Nth call on the same one of them and never time the other node by node.
    bool per_node(int32_t n_nodes) {
        const uint64_t k = seen_[n_nodes]++;
        return every_ == 1 || k < kFirstTimed || k % every_ == 0;
    }

private:
    uint64_t every_;
    std::unordered_map<int32_t, uint64_t> seen_;
};

} // namespace rfprof
