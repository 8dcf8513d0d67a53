#include "stamp_times.h"

namespace rf_hip {

uint64_t StampClock::host_ns(uint64_t t) const {
    const double d = double(int64_t(t - ticks)) * ns_per_tick; // stamps before the anchor: negative
    const double v = double(ns) + d;
    return v > 0 ? uint64_t(v) : 0;
}

std::string check_stamps(const rf_stamp *e, uint32_t n, uint32_t base) {
    if (n == 0) return "no stamps";
    for (uint32_t k = 0; k < n; ++k) {
        if (e[k].tag != RF_STAMP_TAG) return "stamp " + std::to_string(k) + " of " + std::to_string(n) + " not written";
        if (e[k].idx != uint32_t(base + k))
            return "stamp " + std::to_string(k) + " of " + std::to_string(n) + " has index " + std::to_string(e[k].idx) + ", want " +
                   std::to_string(uint32_t(base + k));
        if (k > 0 && e[k].t < e[k - 1].t) return "stamp " + std::to_string(k) + " earlier than the one before";
    }
    return "";
}

bool unit_times(const rf_stamp *e, uint32_t n, const uint32_t *first, size_t n_units, const StampClock &clock, uint64_t *start_ns,
                uint64_t *end_ns) {
    if (n == 0) return n_units == 0;
    for (size_t u = 0; u < n_units; ++u)
        if (first[u] >= n || (u > 0 && first[u] < first[u - 1])) return false;
    for (size_t u = 0; u < n_units; ++u) {
        const uint32_t to = u + 1 < n_units ? first[u + 1] : n - 1;
        start_ns[u] = clock.host_ns(e[first[u]].t);
        end_ns[u] = clock.host_ns(e[to].t);
        if (end_ns[u] < start_ns[u]) end_ns[u] = start_ns[u]; // only by rounding: check_stamps saw them in order
    }
    return true;
}

} // namespace rf_hip
