// Where each phase's wall time went: time inside timed nodes, and "outside ops" time, when no
// node ran on any backend (the device waited for host work: sampling, graph build, launches,
// transfers, the profiler's own bookkeeping). Computed from the stored node events, whose
// timestamps are on the same host-anchored clock as the phase marks.
#pragma once
#include <cstddef>
#include <vector>

#include "profiler_state.h"

namespace rfprof {

struct PhaseTime {
    double wall_us = 0;    // the phase's segments (mark to next mark), summed
    double node_us = 0;    // durations of the samples recorded in this phase, summed
    double covered_us = 0; // time inside the segments when at least one node ran (union)
    double clipped_us = 0; // durations of all samples clipped to the segments, summed
    // Time when no node ran. The union keeps concurrent backends from being counted twice.
    double outside_us() const { return wall_us > covered_us ? wall_us - covered_us : 0.0; }
    // (node + outside) / wall: 1 when every node's time lies inside the phase it was recorded in
    // and no two backends ran at once.
    double accounted() const { return wall_us > 0 ? (node_us + outside_us()) / wall_us : 0.0; }
    // Node time that ran while another backend's node ran too.
    double overlap_us() const { return clipped_us > covered_us ? clipped_us - covered_us : 0.0; }
};

// Indexed by phase id (0 = "(none)", before the first mark: node_us only, no wall time).
// A phase's segments run from each of its marks to the next mark (the last one to end_us).
std::vector<PhaseTime> phase_times(const std::vector<PhaseMark> &marks, const std::vector<NodeEvent> &events,
                                   size_t n_phases, double end_us);

} // namespace rfprof
