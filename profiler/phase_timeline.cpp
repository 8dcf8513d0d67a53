#include "phase_timeline.h"

#include <algorithm>
#include <utility>

namespace rfprof {
namespace {

using Interval = std::pair<double, double>; // [begin, end) in microseconds

// Sorted, non-overlapping intervals covering the same time as the input.
std::vector<Interval> merge(std::vector<Interval> v) {
    std::sort(v.begin(), v.end());
    std::vector<Interval> out;
    for (const Interval &i : v) {
        if (!out.empty() && i.first <= out.back().second) out.back().second = std::max(out.back().second, i.second);
        else out.push_back(i);
    }
    return out;
}

// Length of [a, b) covered by `sorted` (non-overlapping, sorted by begin and so also by end).
double covered(const std::vector<Interval> &sorted, double a, double b) {
    auto it = std::upper_bound(sorted.begin(), sorted.end(), a,
                               [](double t, const Interval &i) { return t < i.second; });
    double sum = 0;
    for (; it != sorted.end() && it->first < b; ++it) sum += std::min(b, it->second) - std::max(a, it->first);
    return sum;
}

struct Segment {
    double begin, end;
    int phase;
};

} // namespace

std::vector<PhaseTime> phase_times(const std::vector<PhaseMark> &marks, const std::vector<NodeEvent> &events,
                                   size_t n_phases, double end_us) {
    std::vector<PhaseTime> out(n_phases);
    std::vector<Segment> segs;
    for (size_t i = 0; i < marks.size(); ++i) {
        const double end = i + 1 < marks.size() ? marks[i + 1].t_us : end_us;
        segs.push_back({marks[i].t_us, std::max(marks[i].t_us, end), marks[i].phase});
        out[size_t(marks[i].phase)].wall_us += segs.back().end - segs.back().begin;
    }
    std::vector<Interval> nodes;
    nodes.reserve(events.size());
    for (const NodeEvent &e : events) {
        out[size_t(e.phase)].node_us += e.dur_us;
        if (e.dur_us > 0) nodes.push_back({e.ts_us, e.ts_us + double(e.dur_us)});
    }
    // Each node's time inside each segment, before merging (the overlap is the difference).
    std::sort(segs.begin(), segs.end(), [](const Segment &x, const Segment &y) { return x.begin < y.begin; });
    for (const Interval &n : nodes) {
        auto s = std::upper_bound(segs.begin(), segs.end(), n.first, [](double t, const Segment &g) { return t < g.end; });
        for (; s != segs.end() && s->begin < n.second; ++s)
            out[size_t(s->phase)].clipped_us += std::min(n.second, s->end) - std::max(n.first, s->begin);
    }
    const std::vector<Interval> merged = merge(std::move(nodes));
    for (const Segment &s : segs) out[size_t(s.phase)].covered_us += covered(merged, s.begin, s.end);
    return out;
}

} // namespace rfprof
