// The prefix cache's table (PrefixBlockTable) and its wiring into the page table (KvPageTable):
// exact hits, reference counts, leaf-first LRU eviction, evictable pages counted as free.
#include <catch2/catch.hpp>

#include <numeric>
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/kv_cache.h"
#include "rocmforge/prefix_cache.h"

using namespace rf;

namespace {

std::vector<int32_t> page_of(int32_t first, size_t n = 4) {
    std::vector<int32_t> t(n);
    std::iota(t.begin(), t.end(), first);
    return t;
}

} // namespace

TEST_CASE("chain hash names the whole prefix, not only the page", "[prefix]") {
    const std::vector<int32_t> a{1, 2, 3, 4}, b{5, 6, 7, 8};
    const uint64_t ka = PrefixBlockTable::chain_hash(0, a);
    CHECK(ka == PrefixBlockTable::chain_hash(0, a));
    CHECK(PrefixBlockTable::chain_hash(ka, b) != PrefixBlockTable::chain_hash(0, b));
    CHECK(PrefixBlockTable::chain_hash(0, a) != PrefixBlockTable::chain_hash(0, b));
}

TEST_CASE("insert, lookup and reference counts", "[prefix]") {
    PrefixBlockTable t;
    const auto a = page_of(10), b = page_of(20);
    CHECK(t.acquire(-1, a) == -1);
    CHECK(t.insert(-1, a, 7));
    CHECK_FALSE(t.insert(-1, a, 8)); // the same content is cached by another page
    CHECK(t.insert(7, b, 8));        // b after a
    CHECK(t.refcount(7) == 1);
    CHECK(t.acquire(-1, a) == 7);
    CHECK(t.acquire(7, b) == 8);
    CHECK(t.acquire(-1, b) == -1); // b as a first page is another prefix
    CHECK(t.refcount(7) == 2);
    for (int32_t p : {8, 8, 7, 7}) t.release(p);
    CHECK(t.refcount(7) == 0);
    CHECK(t.cached_pages() == 2);
    CHECK(t.evictable_pages() == 2);
    CHECK(t.acquire(-1, a) == 7); // a hit on an unreferenced page takes it off the LRU list
    CHECK(t.evictable_pages() == 1);
    t.release(7);
    CHECK_THROWS_AS(t.release(7), Error);
    CHECK_THROWS_AS(t.release(99), Error);
    CHECK_THROWS_AS(t.insert(42, b, 9), Error); // a parent that is not cached
}

TEST_CASE("a hash collision is a miss, never another prefix's page", "[prefix]") {
    // Every key the same: only the tokens and the parent tell pages apart.
    PrefixBlockTable t([](uint64_t, std::span<const int32_t>) { return uint64_t{5}; });
    const auto a = page_of(10), b = page_of(20);
    REQUIRE(t.insert(-1, a, 3));
    CHECK(t.acquire(-1, b) == -1);       // other tokens, same key
    CHECK_FALSE(t.insert(-1, b, 4));     // the key is taken: b's page stays uncached
    CHECK(t.acquire(3, a) == -1);        // a's tokens after a: another parent
    CHECK(t.acquire(-1, a) == 3);
    CHECK(t.acquire(-1, std::vector<int32_t>{10, 11, 12}) == -1); // a shorter page
}

TEST_CASE("eviction is least-recently-used, children first, never a referenced page", "[prefix]") {
    PrefixBlockTable t;
    for (int32_t p = 0; p < 4; ++p) REQUIRE(t.insert(-1, page_of(100 * p), p));
    t.release(2);
    t.release(0);
    t.release(3); // LRU order: 2, 0, 3; page 1 still referenced
    CHECK(t.acquire(-1, page_of(200)) == 2);
    t.release(2); // page 2 used again: order 0, 3, 2
    CHECK(t.evict_one() == 0);
    CHECK(t.evict_one() == 3);
    CHECK(t.evict_one() == 2);
    CHECK(t.evict_one() == -1); // under pressure, the referenced page stays
    CHECK(t.contains_page(1));
    CHECK(t.acquire(-1, page_of(0)) == -1); // evicted pages miss

    // A chain 5 -> 6 released parent last... and first: the child goes before its parent.
    PrefixBlockTable c;
    REQUIRE(c.insert(-1, page_of(1), 5));
    REQUIRE(c.insert(5, page_of(9), 6));
    c.release(5); // the parent is now least recently used
    c.release(6);
    CHECK(c.evict_one() == 6);
    CHECK(c.evict_one() == 5);
}

TEST_CASE("page table: ended sequences' full pages serve the next prompt", "[prefix]") {
    KvPageTable pt(8, 4, 2, true);
    const std::vector<int32_t> prompt{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}; // 2 full pages + 2
    pt.reserve(0, (int64_t)prompt.size());
    pt.commit(0, prompt);
    pt.publish(0);
    CHECK(pt.stats().pages_cached == 2);
    const std::vector<int32_t> first_pages = {pt.pages(0)[0], pt.pages(0)[1]};
    pt.clear(0);
    CHECK(pt.free_pages() == 8); // the cached pages nobody holds count as free
    CHECK(pt.stats().pages_evictable == 2);

    // Shares both pages; the last token is left to compute even when it ends a page.
    CHECK(pt.map_cached_prefix(1, std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 11}) == 8);
    CHECK(pt.pages(1) == first_pages);
    CHECK(pt.map_cached_prefix(0, std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8}) == 4);
    CHECK(pt.prefix_stats().lookups == 2);
    CHECK(pt.prefix_stats().hits == 2);
    CHECK(pt.prefix_stats().cached_tokens == 12);
    const KvPoolStats st = pt.stats();
    CHECK(st.pages_used == 2);
    CHECK(st.tokens == 12);
    CHECK(st.slots_filled == 8); // the shared page once
    CHECK_THROWS_AS(pt.map_cached_prefix(0, prompt), Error); // sequence 0 is not empty

    // A prompt that differs inside the second page shares only the first.
    pt.clear(0);
    pt.clear(1);
    CHECK(pt.map_cached_prefix(0, std::vector<int32_t>{1, 2, 3, 4, 5, 6, 0, 8, 9}) == 4);
    // Writing after a mapped prefix goes to the sequence's own pages.
    pt.reserve(0, 5);
    pt.commit(0, std::vector<int32_t>{5, 6, 0, 8, 9});
    CHECK(pt.page_cached(0, 0));
    CHECK_FALSE(pt.page_cached(0, 1));
    CHECK(pt.pages(0)[1] != first_pages[1]);
    pt.publish(0); // {5, 6, 0, 8} after page 0: a second child of it
    CHECK(pt.stats().pages_cached == 3);
}

TEST_CASE("page table: cached pages are evicted when the pool needs them", "[prefix]") {
    KvPageTable pt(4, 4, 2, true);
    pt.reserve(0, 12);
    pt.commit(0, page_of(0, 12));
    pt.publish(0);
    pt.clear(0);
    CHECK(pt.free_pages() == 4);
    // 16 positions: the free page and the three cached ones, evicted last page first.
    pt.reserve(1, 16);
    CHECK(pt.stats().pages_cached == 0);
    CHECK(pt.free_pages() == 0);
    CHECK_THROWS_AS(pt.reserve(0, 1), ContextFullError);
    pt.clear(1);
    CHECK(pt.map_cached_prefix(0, page_of(0, 12)) == 0);
}

TEST_CASE("page table: a held page is never evicted, and cuts keep cached pages whole", "[prefix]") {
    KvPageTable pt(3, 4, 2, true);
    pt.reserve(0, 8);
    pt.commit(0, page_of(0, 8));
    pt.publish(0);
    CHECK(pt.map_cached_prefix(1, page_of(0, 9)) == 8); // shares both pages with sequence 0
    pt.clear(0);
    CHECK(pt.free_pages() == 1); // sequence 1 still holds both
    CHECK_THROWS_AS(pt.reserve(0, 8), ContextFullError);
    CHECK(pt.pages_freed_by_clear(1) == 2);
    // Cutting inside a cached page would let the sequence write into it.
    CHECK_THROWS_AS(pt.truncate(1, 6), Error);
    CHECK(pt.length(1) == 8);
    pt.truncate(1, 4); // at a page boundary: fine
    CHECK(pt.length(1) == 4);
    CHECK(pt.stats().pages_evictable == 1);
    // Positions committed without tokens are never cached.
    pt.reserve(0, 4);
    pt.commit(0, 4);
    pt.publish(0);
    CHECK(pt.stats().pages_cached == 2);
    CHECK(pt.tokens(0) == nullptr);
}

TEST_CASE("page table without prefix caching maps nothing", "[prefix]") {
    KvPageTable pt(4, 4, 1);
    pt.reserve(0, 8);
    pt.commit(0, page_of(0, 8));
    pt.publish(0);
    pt.clear(0);
    CHECK(pt.map_cached_prefix(0, page_of(0, 9)) == 0);
    CHECK(pt.prefix_stats().lookups == 0);
    CHECK(pt.stats().pages_cached == 0);
}
