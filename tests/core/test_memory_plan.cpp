#include <catch2/catch.hpp>

#include "rocmforge/memory_plan.h"

TEST_CASE("memory plan: released ranges are reused and merged") {
    rf::MemoryPlanner p;
    uint64_t a = p.allocate(100), b = p.allocate(200), c = p.allocate(50);
    CHECK(a == 0);
    CHECK(b == 100);
    CHECK(c == 300);
    CHECK(p.peak() == 350);
    p.release(a, 100);
    p.release(b, 200); // merges with a: one free range of 300
    CHECK(p.allocate(250) == 0);
    CHECK(p.peak() == 350);
    p.release(c, 50);
    // free: [250,300) and [300,350) merged -> [250,350); 120 does not fit, extends the tail block.
    CHECK(p.allocate(120) == 250);
    CHECK(p.peak() == 370);
}
