#include <catch2/catch.hpp>

#include <set>

#include "rocmforge/kv_cache.h"

using namespace rf;

TEST_CASE("page table hands out pages per sequence and maps positions to slots", "[kv]") {
    KvPageTable pt(4, 8, 2); // 32 slots
    CHECK(pt.free_pages() == 4);
    pt.reserve(0, 10); // 2 pages
    CHECK(pt.free_pages() == 2);
    CHECK(pt.pages(0).size() == 2);
    CHECK(pt.length(0) == 0);
    pt.commit(0, 10);
    CHECK(pt.length(0) == 10);
    pt.reserve(1, 3);
    pt.commit(1, 3);
    CHECK(pt.free_pages() == 1);

    // Every stored position has a distinct slot, inside its page.
    std::set<int32_t> slots;
    for (int64_t p = 0; p < 10; ++p) slots.insert(pt.slot(0, p));
    for (int64_t p = 0; p < 3; ++p) slots.insert(pt.slot(1, p));
    CHECK(slots.size() == 13);
    for (int32_t s : slots) CHECK((s >= 0 && s < 32));
    CHECK(pt.slot(0, 9) == pt.pages(0)[1] * 8 + 1);

    // Growing within an owned page needs no new page.
    CHECK(pt.pages_needed(0, 6) == 0);
    CHECK(pt.pages_needed(0, 7) == 1);
    CHECK_THROWS_AS(pt.slot(1, 8), Error); // not reserved
}

TEST_CASE("a full pool refuses without changing anything; clear gives pages back", "[kv]") {
    KvPageTable pt(3, 4, 2);
    pt.reserve(0, 5);
    pt.commit(0, 5);
    pt.reserve(1, 3);
    pt.commit(1, 3);
    CHECK(pt.free_pages() == 0);
    CHECK_THROWS_AS(pt.reserve(0, 4), ContextFullError);
    CHECK(pt.length(0) == 5);
    CHECK(pt.pages(0).size() == 2);
    pt.reserve(1, 1); // fits in its page
    pt.commit(1, 1);
    CHECK_THROWS_AS(pt.reserve(1, 1), ContextFullError);
    try {
        pt.reserve(1, 1);
    } catch (const ContextFullError &e) {
        CHECK(e.seq() == 1);
        CHECK(std::string(e.what()).find("context full") != std::string::npos);
    }

    pt.clear(0);
    CHECK(pt.length(0) == 0);
    CHECK(pt.free_pages() == 2);
    pt.reserve(1, 8);
    CHECK(pt.free_pages() == 0);
    CHECK_THROWS_AS(pt.commit(1, 9), Error); // beyond reserved
    CHECK_THROWS_AS(pt.length(2), Error);   // no such sequence
}

TEST_CASE("cache types parse", "[kv]") {
    CHECK(kv_cache_type_from_name("f16") == RF_TYPE_F16);
    CHECK(kv_cache_type_from_name("q8_0") == RF_TYPE_Q8_0);
    CHECK(kv_cache_type_from_name("F32") == RF_TYPE_F32);
    CHECK_THROWS_AS(kv_cache_type_from_name("q4_0"), UsageError);
    CHECK_THROWS_AS(kv_cache_type_from_name("nope"), UsageError);
}

TEST_CASE("pool stats count used pages, stored tokens and the unfilled page tails", "[kv]") {
    KvPageTable pt(8, 4, 3); // 32 slots
    KvPoolStats st = pt.stats();
    CHECK(st.pages_total == 8);
    CHECK(st.pages_used == 0);
    CHECK(st.tokens == 0);
    CHECK(st.internal_fragmentation() == 0.0);
    pt.reserve(0, 5), pt.commit(0, 5); // 2 pages, 3 slots unfilled
    pt.reserve(1, 4), pt.commit(1, 4); // 1 page, full
    pt.reserve(2, 1), pt.commit(2, 1); // 1 page, 3 slots unfilled
    st = pt.stats();
    CHECK(st.pages_used == 4);
    CHECK(st.slots_reserved == 16);
    CHECK(st.tokens == 10);
    CHECK(st.internal_fragmentation() == Approx(6.0 / 16.0));
    pt.clear(0);
    st = pt.stats();
    CHECK(st.pages_used == 2);
    CHECK(st.tokens == 5);
    CHECK(st.internal_fragmentation() == Approx(3.0 / 8.0));
    // Reserved but not yet committed slots count as reserved and empty.
    pt.reserve(1, 2);
    st = pt.stats();
    CHECK(st.pages_used == 3);
    CHECK(st.internal_fragmentation() == Approx(7.0 / 12.0));
}
