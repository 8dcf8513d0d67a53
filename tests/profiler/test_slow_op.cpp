// ROCMFORGE_DEBUG_SLOW_OP's parsing and effect (profiler/slow_op.h): the profiler's wrapper, not
// the core, slows the matching nodes.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "slow_op.h"

using rfprof::apply_slow_op;
using rfprof::parse_slow_op;

TEST_CASE("slow op: OP[:TYPE]:MICROSECONDS is parsed; anything else is refused with the expected form") {
    std::string why;
    auto s = parse_slow_op("matmul:q4_K:300", &why);
    CHECK(s.active);
    CHECK(s.op == "matmul");
    CHECK(s.type == "q4_K");
    CHECK(s.usec == 300.0);
    CHECK(why.empty());
    s = parse_slow_op("add:50", &why);
    CHECK(s.active);
    CHECK(s.type.empty());
    CHECK_FALSE(parse_slow_op(nullptr, &why).active);
    CHECK_FALSE(parse_slow_op("", &why).active);
    CHECK(why.empty());
    for (const char *bad : {"matmul", "matmul:", "matmul:q4_K:abc", ":300", "add:-5", "add:12x"}) {
        INFO(bad);
        why.clear();
        CHECK_FALSE(parse_slow_op(bad, &why).active);
        CHECK_THAT(why, Catch::Contains("expected OP[:TYPE]:MICROSECONDS"));
    }
}

TEST_CASE("slow op: only matching nodes cost the extra time") {
    rf_tensor f32{}, q4k{};
    f32.type = RF_TYPE_F32;
    q4k.type = RF_TYPE_Q4_K;
    rf_node mm_q4k{}, mm_f32{}, add{};
    mm_q4k.op = RF_OP_MATMUL, mm_q4k.src[0] = &q4k;
    mm_f32.op = RF_OP_MATMUL, mm_f32.src[0] = &f32;
    add.op = RF_OP_ADD, add.src[0] = &f32;
    rf_node *nodes[] = {&mm_q4k, &mm_f32, &add, &mm_q4k};
    const rf_graph g = {4, nodes};
    auto ms = [&](const char *spec) {
        const auto s = parse_slow_op(spec, nullptr);
        const auto t0 = std::chrono::steady_clock::now();
        apply_slow_op(s, g);
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    CHECK(ms("matmul:q4_K:20000") >= 40.0); // two matching nodes, 20 ms each
    CHECK(ms("matmul:q4_K:20000") < 60.0);  // not the f32 matmul
    CHECK(ms("softmax:20000") < 5.0);       // no softmax node
}
