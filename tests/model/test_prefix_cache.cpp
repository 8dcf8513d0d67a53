#include <catch2/catch.hpp>

#include <vector>

#include "rocmforge/prefix_cache.h"
#include "rocmforge/error.h"

using namespace rf;

TEST_CASE("chain hash names the whole prefix, not only the page", "[prefix]") {
    const std::vector<int32_t> a{1, 2, 3, 4}, b{5, 6, 7, 8};
    const uint64_t ka = PrefixBlockTable::chain_hash(0, a);
    CHECK(ka == PrefixBlockTable::chain_hash(0, a));
    CHECK(PrefixBlockTable::chain_hash(ka, b) != PrefixBlockTable::chain_hash(0, b));
    CHECK(PrefixBlockTable::chain_hash(0, a) != PrefixBlockTable::chain_hash(0, b));
}

TEST_CASE("insert, lookup and reference counts", "[prefix]") {
    PrefixBlockTable t;
    CHECK(t.acquire(42) == -1);
    CHECK(t.insert(42, 7));
    CHECK_FALSE(t.insert(42, 8)); // key already cached by another page
    CHECK(t.refcount(7) == 1);
    CHECK(t.acquire(42) == 7);
    CHECK(t.refcount(7) == 2);
    t.release(7);
    t.release(7);
    CHECK(t.refcount(7) == 0);
    CHECK(t.cached_pages() == 1);
    CHECK(t.evictable_pages() == 1);
    CHECK(t.acquire(42) == 7); // a hit on an unreferenced page takes it off the LRU list
    CHECK(t.evictable_pages() == 0);
    t.release(7);
    CHECK_THROWS_AS(t.release(7), Error);
    CHECK_THROWS_AS(t.release(99), Error);
}

TEST_CASE("eviction is least-recently-used and never takes a referenced page", "[prefix]") {
    PrefixBlockTable t;
    for (int32_t p = 0; p < 4; ++p) REQUIRE(t.insert(100 + p, p));
    t.release(2);
    t.release(0);
    t.release(3); // LRU order: 2, 0, 3; page 1 still referenced
    CHECK(t.acquire(102) == 2);
    t.release(2); // page 2 used again: order 0, 3, 2
    CHECK(t.evict_one() == 0);
    CHECK(t.evict_one() == 3);
    CHECK(t.evict_one() == 2);
    CHECK(t.evict_one() == -1); // under pressure, the referenced page stays
    CHECK(t.contains_page(1));
    CHECK(t.acquire(100) == -1); // evicted keys miss
}
