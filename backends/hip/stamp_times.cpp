#include "stamp_times.h"

namespace rf_hip {

uint64_t StampClock::host_ns(uint64_t t) const {
    const double d = double(int64_t(t - ticks)) * ns_per_tick; // stamps before the anchor: negative
    const double v = double(ns) + d;
    return v > 0 ? uint64_t(v) : 0;
}

std::string check_stamps(const rf_stamp *e, uint32_t n, uint32_t base, uint64_t skew) {
    if (n == 0) return "no stamps";
    uint64_t latest = 0;
    for (uint32_t k = 0; k < n; ++k) {
        if (e[k].tag != RF_STAMP_TAG) return "stamp " + std::to_string(k) + " of " + std::to_string(n) + " not written";
        if (e[k].idx != uint32_t(base + k))
            return "stamp " + std::to_string(k) + " of " + std::to_string(n) + " has index " + std::to_string(e[k].idx) + ", want " +
                   std::to_string(uint32_t(base + k));
        if (k > 0 && e[k].t + skew < latest)
            return "stamp " + std::to_string(k) + " earlier than a stamp before it by " + std::to_string(latest - e[k].t) + " ticks";
        if (e[k].t > latest) latest = e[k].t;
    }
    return "";
}

bool unit_times(const rf_stamp *e, uint32_t n, const uint32_t *first, size_t n_units, const StampClock &clock, uint64_t *start_ns,
                uint64_t *end_ns) {
    if (n == 0) return n_units == 0;
    for (size_t u = 0; u < n_units; ++u)
        if (first[u] >= n || (u > 0 && first[u] < first[u - 1])) return false;
    // Each stamp's time as the latest up to it (a stamp a clock tick behind the one before, see
    // check_stamps, counts as taken with it): units never overlap and never run backwards. The
    // positions asked for never decrease, so one walk over the stamps serves them all.
    uint32_t k = 0;
    uint64_t latest = e[0].t;
    auto at = [&](uint32_t i) {
        for (; k <= i; ++k)
            if (e[k].t > latest) latest = e[k].t;
        return clock.host_ns(latest);
    };
    for (size_t u = 0; u < n_units; ++u) {
        const uint32_t to = u + 1 < n_units ? first[u + 1] : n - 1;
        start_ns[u] = at(first[u]);
        end_ns[u] = at(to);
    }
    return true;
}

} // namespace rf_hip
