// rf::parallel_for (rocmforge/parallel_for.h) on its shared helper pool: every index once, in any
// mix of thread counts, with exceptions, nested calls and several callers at once.
#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "rocmforge/parallel_for.h"

namespace {

// Runs parallel_for(n, threads) and checks every index was visited exactly once.
bool each_once(size_t n, size_t threads) {
    std::vector<std::atomic<int>> hits(n);
    for (auto &h : hits) h = 0;
    rf::parallel_for(n, threads, [&](size_t i) { hits[i].fetch_add(1); });
    for (auto &h : hits)
        if (h.load() != 1) return false;
    return true;
}

} // namespace

TEST_CASE("parallel_for: every index once, over many rounds and thread counts", "[parallel_for]") {
    for (int round = 0; round < 300; ++round) {
        const size_t threads = 1 + size_t(round % 9) * 2; // 1, 3, .., 17: the pool grows and shrinks its use
        const size_t n = size_t(round % 37) + 1;
        REQUIRE(each_once(n, threads));
    }
    REQUIRE(each_once(1000, 8));
    REQUIRE(each_once(0, 8)); // nothing to do
}

TEST_CASE("parallel_for: the chunks run on several threads at once", "[parallel_for]") {
    // Four chunks that each wait for all four to have started: only true concurrency finishes.
    std::atomic<int> started{0};
    rf::parallel_for(4, 4, [&](size_t) {
        started.fetch_add(1);
        while (started.load() < 4) std::this_thread::yield();
    });
    CHECK(started.load() == 4);
}

TEST_CASE("parallel_for: an exception reaches the caller and the pool keeps working", "[parallel_for]") {
    for (int k = 0; k < 20; ++k) {
        std::atomic<int> done{0};
        CHECK_THROWS_AS(rf::parallel_for(16, 8,
                                         [&](size_t i) {
                                             if (i == size_t(k % 16)) throw std::runtime_error("draw failed");
                                             done.fetch_add(1);
                                         }),
                        std::runtime_error);
        CHECK(done.load() <= 15);
        REQUIRE(each_once(64, 8));
    }
}

TEST_CASE("parallel_for: nested and concurrent callers", "[parallel_for]") {
    // Nested: each outer chunk runs an inner parallel_for (the pool is busy: threads of its own).
    std::vector<std::atomic<int>> hits(8 * 8);
    for (auto &h : hits) h = 0;
    rf::parallel_for(8, 4, [&](size_t i) { rf::parallel_for(8, 4, [&](size_t j) { hits[i * 8 + j].fetch_add(1); }); });
    for (auto &h : hits) CHECK(h.load() == 1);
    // Concurrent: three threads each running rounds; one gets the pool, the others their own threads.
    std::atomic<bool> ok{true};
    std::vector<std::thread> callers;
    for (int c = 0; c < 3; ++c)
        callers.emplace_back([&] {
            for (int r = 0; r < 100; ++r)
                if (!each_once(50, 6)) ok = false;
        });
    for (auto &t : callers) t.join();
    CHECK(ok.load());
}
