// The GPU-free part of timing an observed call with the kernels' own timestamps
// (kernels/stamps.h, exec_observer.h): checking the stamps a call's end mark copied out and
// turning them into unit times on the host's clock. Tested without a GPU (tests/hip/test_stamp_times.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "stamps.h"

namespace rf_hip {

// Device clock -> host steady clock (ns): a stamp `ticks` taken at host time `ns` (an anchor),
// `ns_per_tick` (1 on NVIDIA's %globaltimer).
struct StampClock {
    uint64_t ticks = 0;
    uint64_t ns = 0;
    double ns_per_tick = 1.0;
    uint64_t host_ns(uint64_t t) const;
};

// A call's units among its stamps, kept while the call is queued, from a running count of the
// stamps queued so far (LaunchQueue::stamps(): launches whose kernels write one, the observer's
// stamp kernels included). first[u]: how many of the call's stamps came before unit u's first
// launch, i.e. the position of the stamp that starts it.
struct StampUnits {
    uint64_t base = 0, unit = 0;
    std::vector<uint32_t> first;
    void begin(uint64_t stamps) { base = unit = stamps, first.clear(); }
    // After a unit's launches were queued.
    void end_unit(uint64_t stamps) { first.push_back(uint32_t(unit - base)), unit = stamps; }
    // The call's stamps queued so far.
    uint64_t count(uint64_t stamps) const { return stamps - base; }
};

// "" when the n stamps at `e` are those of one call whose first stamp took counter index `base`:
// the k-th written (tagged) with index base + k (32-bit, wrapping), times never decreasing by
// more than `skew` ticks; otherwise what is wrong (a launch that wrote no stamp or one more than
// counted, a ring overrun, a copy not done). `skew`: the multiprocessors read the clock a tick
// apart at times (%globaltimer: now and then a stamp one tick before the one of the kernel that
// completed before it), and a kernel that completes right after its
// stamp lets the next one stamp within that tick.
std::string check_stamps(const rf_stamp *e, uint32_t n, uint32_t base, uint64_t skew = 0);

// Unit u of a call ran from stamp first[u] to stamp first[u + 1] (the last unit: to stamp
// n - 1, the end mark's), each stamp's time taken as the latest of the stamps up to it; first[]
// (positions among the call's n stamps, before the unit's first launch) never decreases and is
// < n (a unit that launched nothing shares its start with the next one: 0 ns). Writes
// start_ns[u], end_ns[u] on the host's clock. False (nothing usable) when first[] breaks those
// rules.
bool unit_times(const rf_stamp *e, uint32_t n, const uint32_t *first, size_t n_units, const StampClock &clock, uint64_t *start_ns,
                uint64_t *end_ns);

} // namespace rf_hip
