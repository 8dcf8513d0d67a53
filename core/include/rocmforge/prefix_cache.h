// Content-addressed table of full KV pages for automatic prefix caching (issue 55 item 1).
// A page's key hashes its tokens chained with the previous page's key, so equal keys mean an
// equal whole prefix. Pages are reference-counted by live sequences; a page no sequence holds
// stays cached and is evicted least-recently-used when the pool needs pages.
// Not yet wired into KvPageTable / inference / the scheduler (see docs/SERVING.md).
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace rf {

class PrefixBlockTable {
  public:
    // Key of a full page of `tokens` that follows the page with key `parent` (0 for the first).
    static uint64_t chain_hash(uint64_t parent, std::span<const int32_t> tokens);

    // Page cached under `key`, or -1. A hit takes a reference (the page leaves the LRU list).
    int32_t acquire(uint64_t key);
    // Registers a just-filled page of the caller under `key` with one reference (the caller's).
    // Returns false (nothing changed) when the key is already cached by another page.
    bool insert(uint64_t key, int32_t page);
    // Drops one reference; at zero the page becomes evictable (most recently used end).
    void release(int32_t page);
    // Evicts the least-recently-used unreferenced page and returns it, or -1 if none.
    int32_t evict_one();

    bool contains_page(int32_t page) const { return by_page_.count(page) != 0; }
    int refcount(int32_t page) const;
    int64_t cached_pages() const { return (int64_t)by_page_.size(); }
    int64_t evictable_pages() const { return (int64_t)lru_.size(); }

  private:
    struct Entry {
        uint64_t key;
        int refs;
        std::list<int32_t>::iterator lru_pos; // valid only while refs == 0
    };
    std::unordered_map<uint64_t, int32_t> by_key_;
    std::unordered_map<int32_t, Entry> by_page_;
    std::list<int32_t> lru_; // front: least recently used
};

} // namespace rf
