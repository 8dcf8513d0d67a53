// Content-addressed table of full KV pages for automatic prefix caching (issue 55 item 1).
// A page is cached under (its parent page, its tokens): the parent is the cached page of the
// tokens before it (-1 for a sequence's first page), so a chain of hits from the first page
// names the whole prefix. The 64-bit key only finds the candidate; a hit compares the tokens
// and the parent, so a hash collision is a miss, never a wrong page. Pages are
// reference-counted by the sequences that map them; an unreferenced page stays cached and is
// evicted least-recently-used when the pool needs pages, children before their parent (a
// cached page's parent is always cached, which is what makes comparing the parent enough).
// KvPageTable (kv_cache.h) owns one when prefix caching is on.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace rf {

class PrefixBlockTable {
  public:
    using Hash = std::function<uint64_t(uint64_t parent_key, std::span<const int32_t> tokens)>;
    // `hash` replaces chain_hash (tests force collisions with it).
    explicit PrefixBlockTable(Hash hash = chain_hash) : hash_(std::move(hash)) {}

    // FNV-1a of a page's tokens chained with its parent's key (0 for the first page).
    static uint64_t chain_hash(uint64_t parent_key, std::span<const int32_t> tokens);

    // The cached page that holds `tokens` after page `parent` (-1: the first page), or -1. A
    // hit takes a reference (the page leaves the LRU list).
    int32_t acquire(int32_t parent, std::span<const int32_t> tokens);
    // Caches the caller's just-filled `page` holding `tokens` after the cached page `parent`
    // (-1: the first page), with one reference (the caller's). False, nothing changed, when
    // the key is taken (the same content cached by another page, or a hash collision).
    bool insert(int32_t parent, std::span<const int32_t> tokens, int32_t page);
    // Drops one reference; at zero the page becomes evictable (most recently used end).
    void release(int32_t page);
    // Evicts the least-recently-used unreferenced page that no cached page follows and returns
    // it, or -1 if no page is unreferenced.
    int32_t evict_one();

    bool contains_page(int32_t page) const { return by_page_.count(page) != 0; }
    int refcount(int32_t page) const;
    int64_t cached_pages() const { return (int64_t)by_page_.size(); }
    int64_t evictable_pages() const { return (int64_t)lru_.size(); }

  private:
    struct Entry {
        uint64_t key;
        int32_t parent;
        std::vector<int32_t> tokens;
        int refs;
        int children = 0;                     // cached pages whose parent this is
        std::list<int32_t>::iterator lru_pos; // valid only while refs == 0
    };
    uint64_t key_of(int32_t parent, std::span<const int32_t> tokens) const;
    Hash hash_;
    std::unordered_map<uint64_t, int32_t> by_key_;
    std::unordered_map<int32_t, Entry> by_page_;
    std::list<int32_t> lru_; // front: least recently used
};

} // namespace rf
