// phase_times() on hand-made timelines: every number below is worked out by hand.
#include <catch2/catch.hpp>

#include "phase_timeline.h"

using rfprof::NodeEvent;
using rfprof::PhaseMark;
using rfprof::phase_times;

namespace {

NodeEvent ev(int phase, double ts_us, float dur_us) { return {0, 0, phase, dur_us, ts_us, 0, 0}; }

} // namespace

TEST_CASE("phase timeline: gaps before the first node, between nodes and after the last") {
    // One phase from 0 to 100 us; nodes at [30, 40) and [60, 70): 20 us of nodes, 80 us outside.
    const std::vector<PhaseMark> marks = {{1, 0.0}};
    const std::vector<NodeEvent> events = {ev(1, 30, 10), ev(1, 60, 10)};
    const auto t = phase_times(marks, events, 2, 100.0);
    REQUIRE(t.size() == 2);
    CHECK(t[1].wall_us == Approx(100));
    CHECK(t[1].node_us == Approx(20));
    CHECK(t[1].covered_us == Approx(20));
    CHECK(t[1].outside_us() == Approx(80)); // 30 lead + 20 between + 30 tail
    CHECK(t[1].accounted() == Approx(1.0));
    CHECK(t[1].overlap_us() == Approx(0));
    CHECK(t[0].wall_us == 0);
}

TEST_CASE("phase timeline: overlapping backends count once in the coverage, nodes crossing a mark are split") {
    // Phase 1 on [0, 100), phase 2 on [100, 200).
    const std::vector<PhaseMark> marks = {{1, 0.0}, {2, 100.0}};
    const std::vector<NodeEvent> events = {
        ev(0, -10, 15),  // recorded before the marks: covers [0, 5) of phase 1
        ev(1, 10, 20),   // backend A [10, 30)
        ev(1, 30, 20),   // backend A [30, 50)
        ev(1, 20, 20),   // backend B [20, 40), overlaps A
        ev(1, 90, 30),   // [90, 120): recorded in phase 1, ran 10 us in phase 1 and 20 in phase 2
        ev(2, 150, 10),  // [150, 160)
        ev(2, 190, 30),  // [190, 220): runs past the end of the timeline
    };
    const auto t = phase_times(marks, events, 3, 200.0);
    REQUIRE(t.size() == 3);
    CHECK(t[0].node_us == Approx(15));
    CHECK(t[0].wall_us == 0);

    CHECK(t[1].wall_us == Approx(100));
    CHECK(t[1].node_us == Approx(90));              // 20 + 20 + 20 + 30
    CHECK(t[1].covered_us == Approx(5 + 40 + 10));  // [0,5) + [10,50) + [90,100)
    CHECK(t[1].outside_us() == Approx(45));
    CHECK(t[1].clipped_us == Approx(5 + 20 + 20 + 20 + 10));
    CHECK(t[1].overlap_us() == Approx(20));         // [20, 40) ran on both backends
    CHECK(t[1].accounted() == Approx((90.0 + 45.0) / 100.0));

    CHECK(t[2].wall_us == Approx(100));
    CHECK(t[2].node_us == Approx(40));
    CHECK(t[2].covered_us == Approx(20 + 10 + 10)); // [100,120) + [150,160) + [190,200)
    CHECK(t[2].outside_us() == Approx(60));
    CHECK(t[2].overlap_us() == Approx(0));
}

TEST_CASE("phase timeline: a phase marked twice sums its segments") {
    const std::vector<PhaseMark> marks = {{1, 0.0}, {2, 50.0}, {1, 80.0}};
    const std::vector<NodeEvent> events = {ev(1, 10, 10), ev(2, 55, 20), ev(1, 90, 5)};
    const auto t = phase_times(marks, events, 3, 100.0);
    CHECK(t[1].wall_us == Approx(70)); // [0,50) + [80,100)
    CHECK(t[1].node_us == Approx(15));
    CHECK(t[1].outside_us() == Approx(55));
    CHECK(t[2].wall_us == Approx(30));
    CHECK(t[2].outside_us() == Approx(10));
    CHECK(t[1].accounted() == Approx(1.0));
    CHECK(t[2].accounted() == Approx(1.0));
}

TEST_CASE("phase timeline: no events leaves the whole wall time outside ops") {
    const auto t = phase_times({{1, 5.0}}, {}, 2, 25.0);
    CHECK(t[1].wall_us == Approx(20));
    CHECK(t[1].outside_us() == Approx(20));
    CHECK(t[1].node_us == 0);
    CHECK(t[1].accounted() == Approx(1.0));
}
