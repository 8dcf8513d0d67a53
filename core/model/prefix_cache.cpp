// Block-hash table of cached KV pages: lookup, reference counts and LRU eviction.
#include "rocmforge/prefix_cache.h"

#include <string>

#include "rocmforge/error.h"

namespace rf {

uint64_t PrefixBlockTable::chain_hash(uint64_t parent, std::span<const int32_t> tokens) {
    // FNV-1a over the parent key and the tokens; the parent makes the key name the whole prefix.
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t v) {
        for (int i = 0; i < 8; ++i) {
            h ^= (v >> (8 * i)) & 0xff;
            h *= 1099511628211ull;
        }
    };
    mix(parent);
    mix(tokens.size());
    for (int32_t t : tokens) mix((uint32_t)t);
    return h ? h : 1; // 0 is reserved for "no parent"
}

int32_t PrefixBlockTable::acquire(uint64_t key) {
    auto it = by_key_.find(key);
    if (it == by_key_.end()) return -1;
    Entry &e = by_page_.at(it->second);
    if (e.refs == 0) lru_.erase(e.lru_pos);
    ++e.refs;
    return it->second;
}

bool PrefixBlockTable::insert(uint64_t key, int32_t page) {
    if (by_key_.count(key)) return false;
    if (by_page_.count(page))
        throw Error("prefix cache: page " + std::to_string(page) + " is already cached");
    by_key_[key] = page;
    by_page_[page] = Entry{key, 1, {}};
    return true;
}

void PrefixBlockTable::release(int32_t page) {
    auto it = by_page_.find(page);
    if (it == by_page_.end() || it->second.refs <= 0)
        throw Error("prefix cache: release of page " + std::to_string(page) + " that is not held");
    if (--it->second.refs == 0) it->second.lru_pos = lru_.insert(lru_.end(), page);
}

int32_t PrefixBlockTable::evict_one() {
    if (lru_.empty()) return -1;
    const int32_t page = lru_.front();
    lru_.pop_front();
    by_key_.erase(by_page_.at(page).key);
    by_page_.erase(page);
    return page;
}

int PrefixBlockTable::refcount(int32_t page) const {
    auto it = by_page_.find(page);
    return it == by_page_.end() ? 0 : it->second.refs;
}

} // namespace rf
