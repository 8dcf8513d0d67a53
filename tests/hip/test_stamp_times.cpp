// The host side of kernel timestamps (backends/hip/stamp_times.h, launch_queue.h; the observer
// in exec_observer.h), without a GPU: a simulated device runs the queued launches as the kernels
// do (kernels/compat.h rf_kernel_start, kernels/stamp.hip): each launch whose kernel stamps takes
// the next counter index and writes the clock into the ring when it starts, i.e. when the launch
// before it ended; the end mark copies the call's last n entries out.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "launch_queue.h"
#include "stamp_times.h"

using namespace rf_hip;

namespace {

struct Device {
    std::vector<rf_stamp> ring;
    uint32_t counter = 0;
    uint64_t clock = 1'000'000;
    explicit Device(uint32_t entries, uint32_t counter0 = 0) : ring(entries), counter(counter0) {}
    // A kernel that starts now (the previous one ended) and runs `ns`.
    void kernel(bool stamps, uint64_t ns) {
        if (stamps) {
            const uint32_t idx = counter++;
            ring[idx & (ring.size() - 1)] = {clock, idx, RF_STAMP_TAG};
        }
        clock += ns;
    }
    // rf_stamp_mark with iparams[0] = n: its stamp, then the n entries ending with it.
    std::vector<rf_stamp> end_mark(uint32_t n) {
        kernel(true, 2);
        std::vector<rf_stamp> out(n);
        for (uint32_t k = 0; k < n; ++k) out[k] = ring[(counter - n + k) & (ring.size() - 1)];
        return out;
    }
};

// Fake kernel handles: the queue only compares and counts them.
hipFunction_t fn(uintptr_t k) { return reinterpret_cast<hipFunction_t>(k); }

LaunchRec launch(uintptr_t k, bool stamps = true, unsigned grid = 4) {
    LaunchRec r;
    r.f = fn(k);
    r.grid[0] = grid;
    r.threads = 64;
    r.stamps = stamps;
    return r;
}

LaunchRec mark_rec() {
    LaunchRec m;
    m.f = fn(999);
    m.threads = 32;
    m.mark = true;
    return m;
}

} // namespace

TEST_CASE("stamps: a call's stamps checked and turned into unit times", "[stamps]") {
    Device d(1024, 100);
    d.kernel(true, 50); // an earlier call's stamp
    const uint32_t base = d.counter;
    // Units: [k0 k1] [k2] [nothing] [k3]; durations 10+20, 30, 0, 40.
    d.kernel(true, 10);
    d.kernel(true, 20);
    d.kernel(true, 30);
    d.kernel(true, 40);
    const std::vector<rf_stamp> e = d.end_mark(5);
    CHECK(check_stamps(e.data(), 5, base).empty());
    const uint32_t first[] = {0, 2, 3, 3};
    StampClock clock{e[0].t, 5'000'000'000ull, 1.0};
    uint64_t start[4], end[4];
    REQUIRE(unit_times(e.data(), 5, first, 4, clock, start, end));
    CHECK(start[0] == 5'000'000'000ull);
    CHECK(end[0] - start[0] == 30);
    CHECK(end[1] - start[1] == 30);
    CHECK(end[2] == start[2]); // launched nothing: 0 ns where the next unit starts
    CHECK(start[2] == start[3]);
    CHECK(end[3] - start[3] == 40);
    for (int u = 1; u < 4; ++u) CHECK(start[u] == end[u - 1]); // units in order, back to back
    CHECK(end[3] - start[0] == e[4].t - e[0].t);                // they sum to the call's span

    // A unit map that breaks the rules is refused.
    const uint32_t decreasing[] = {0, 2, 1, 3};
    CHECK_FALSE(unit_times(e.data(), 5, decreasing, 4, clock, start, end));
    const uint32_t past_end[] = {0, 5};
    CHECK_FALSE(unit_times(e.data(), 5, past_end, 2, clock, start, end));
}

TEST_CASE("stamps: a missing, extra or stale stamp fails the check", "[stamps]") {
    SECTION("a launch counted as stamping wrote nothing: the end mark copies one earlier entry") {
        Device d(1024, 6);
        d.kernel(true, 50); // an earlier call's stamp
        const uint32_t base = d.counter;
        d.kernel(true, 10);
        d.kernel(false, 10); // the host counted it
        d.kernel(true, 10);
        const std::vector<rf_stamp> e = d.end_mark(4);
        const std::string why = check_stamps(e.data(), 4, base);
        CHECK_FALSE(why.empty());
        CHECK(why.find("index") != std::string::npos);
    }
    SECTION("one stamp more than counted") {
        Device d(1024, 7);
        const uint32_t base = d.counter;
        for (int k = 0; k < 4; ++k) d.kernel(true, 10);
        const std::vector<rf_stamp> e = d.end_mark(4); // the host expected 3 launches + the mark
        CHECK_FALSE(check_stamps(e.data(), 4, base).empty());
    }
    SECTION("an entry never written (ring cleared)") {
        Device d(1024, 0);
        const std::vector<rf_stamp> e = d.end_mark(3); // only one stamp exists
        CHECK(check_stamps(e.data(), 3, uint32_t(0) - 2).find("not written") != std::string::npos);
    }
    SECTION("times going backwards") {
        Device d(1024, 0);
        d.kernel(true, 10);
        d.kernel(true, 10);
        std::vector<rf_stamp> e = d.end_mark(3);
        e[1].t = e[0].t - 1;
        CHECK(check_stamps(e.data(), 3, 0).find("earlier") != std::string::npos);
    }
    SECTION("a stamp a clock tick behind the one before: accepted within the skew, timed as taken with it") {
        Device d(1024, 0);
        d.kernel(true, 10);
        d.kernel(true, 0);
        d.kernel(true, 20);
        std::vector<rf_stamp> e = d.end_mark(4);
        e[2].t = e[1].t - 32; // the third kernel's multiprocessor read the clock a tick behind
        CHECK(check_stamps(e.data(), 4, 0, 32).empty());
        CHECK(check_stamps(e.data(), 4, 0, 31).find("earlier than a stamp before it by 32") != std::string::npos);
        CHECK_FALSE(check_stamps(e.data(), 4, 0).empty());
        e[3].t = e[1].t - 40; // behind the latest stamp (not only the one before) by more than the skew
        CHECK_FALSE(check_stamps(e.data(), 4, 0, 32).empty());
        e[3].t = e[1].t + 20;
        const uint32_t first[] = {0, 1, 2};
        uint64_t start[3], end[3];
        REQUIRE(unit_times(e.data(), 4, first, 3, StampClock{e[0].t, 0, 1.0}, start, end));
        CHECK(end[0] - start[0] == 10);
        CHECK(end[1] == start[1]); // from stamp 1 to stamp 2 (32 ticks earlier): 0, not negative
        CHECK(start[2] == end[1]);
        CHECK(end[2] - start[2] == 20);
    }
    CHECK_FALSE(check_stamps(nullptr, 0, 0).empty());
}

TEST_CASE("stamps: ring wrap-around and overrun", "[stamps]") {
    SECTION("a call across the end of the ring and of the 32-bit index") {
        Device d(64, 0xFFFFFFF0u); // index wraps to 0 within the call; ring position wraps too
        const uint32_t base = d.counter;
        for (int k = 0; k < 40; ++k) d.kernel(true, 3);
        const std::vector<rf_stamp> e = d.end_mark(41);
        CHECK(check_stamps(e.data(), 41, base).empty());
        CHECK(e[40].idx == uint32_t(base + 40));
        std::vector<uint32_t> first(40);
        for (uint32_t k = 0; k < 40; ++k) first[k] = k;
        std::vector<uint64_t> start(40), end(40);
        REQUIRE(unit_times(e.data(), 41, first.data(), 40, StampClock{e[0].t, 0, 1.0}, start.data(), end.data()));
        for (int k = 0; k < 40; ++k) CHECK(end[k] - start[k] == 3);
    }
    SECTION("more stamps than the ring holds: overwritten entries fail the check") {
        Device d(16, 5);
        const uint32_t base = d.counter;
        for (int k = 0; k < 20; ++k) d.kernel(true, 3);
        const std::vector<rf_stamp> e = d.end_mark(21);
        CHECK_FALSE(check_stamps(e.data(), 21, base).empty());
    }
}

TEST_CASE("stamps: the device clock placed on the host's", "[stamps]") {
    const StampClock ns{1000, 50'000, 1.0};
    CHECK(ns.host_ns(1000) == 50'000);
    CHECK(ns.host_ns(1500) == 50'500);
    CHECK(ns.host_ns(400) == 49'400); // stamped before the anchor
    const StampClock amd{100, 1'000'000, 10.0}; // 100 MHz ticks
    CHECK(amd.host_ns(250) == 1'001'500);
    const StampClock early{1'000'000, 10, 1.0};
    CHECK(early.host_ns(0) == 0); // never below 0
}

TEST_CASE("stamps: the launch queue counts stamps and starts every unit with one", "[stamps]") {
    LaunchQueue q;
    q.begin();
    q.add(launch(1));
    CHECK(q.stamps() == 0); // not stamping: nothing counted
    q.set_stamping(true, mark_rec());
    q.begin();
    StampUnits u;
    u.begin(q.stamps());
    // unit 0: two base kernels
    q.add(launch(1));
    q.add(launch(2));
    u.end_unit(q.stamps());
    q.unit_start();
    // unit 1: a pack kernel without stamps first, then a base kernel: the stamp kernel goes first
    q.add(launch(10, false));
    q.add(launch(3));
    u.end_unit(q.stamps());
    q.unit_start();
    // unit 2: a base kernel, then a pack kernel (its end is the next unit's start: no mark)
    q.add(launch(4));
    q.add(launch(11, false));
    u.end_unit(q.stamps());
    q.unit_start();
    // unit 3: an empty launch (dropped, writes nothing) only: launched nothing
    q.add(launch(5, true, 0));
    u.end_unit(q.stamps());
    q.unit_start();
    // unit 4: a base kernel
    q.add(launch(6));
    u.end_unit(q.stamps());
    const std::vector<LaunchRec> &list = q.pending();
    REQUIRE(list.size() == 8);
    CHECK(list[2].mark);
    CHECK(list[2].f == fn(999));
    CHECK(list[3].f == fn(10));
    CHECK(u.count(q.stamps()) == 6); // k1 k2 mark k3 k4 k6 (the pack kernels write none)
    CHECK(u.first == std::vector<uint32_t>{0, 2, 4, 5, 5});

    // Run the list on the simulated device; the end mark follows (as close_call queues it).
    Device d(256, 42);
    const uint32_t base = d.counter;
    const uint64_t t0 = d.clock;
    uint64_t ns = 100;
    for (const LaunchRec &r : list) d.kernel(r.stamps || r.mark, ns += 10);
    const uint32_t n = uint32_t(u.count(q.stamps())) + 1;
    const std::vector<rf_stamp> e = d.end_mark(n);
    REQUIRE(check_stamps(e.data(), n, base).empty());
    std::vector<uint64_t> start(5), end(5);
    REQUIRE(unit_times(e.data(), n, u.first.data(), 5, StampClock{t0, 0, 1.0}, start.data(), end.data()));
    // Durations 110.. per launch in list order: unit 0 = 110 + 120; unit 1 = mark 130 + pack 140
    // + 150; unit 2 = 160 + 170; unit 3 = 0; unit 4 = 180.
    CHECK(end[0] - start[0] == 230);
    CHECK(end[1] - start[1] == 420);
    CHECK(end[2] - start[2] == 330);
    CHECK(end[3] - start[3] == 0);
    CHECK(end[4] - start[4] == 180);
    CHECK(start[0] == 0);

    // Stamping off again: nothing counted, no marks.
    q.set_stamping(false, LaunchRec{});
    q.begin();
    const uint64_t before = q.stamps();
    q.add(launch(10, false));
    CHECK(q.pending().size() == 1);
    CHECK(q.stamps() == before);
}
