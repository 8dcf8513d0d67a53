// Block-hash table of cached KV pages: exact lookup, reference counts and LRU eviction.
#include "rocmforge/prefix_cache.h"

#include <algorithm>
#include <string>

#include "rocmforge/error.h"

namespace rf {

uint64_t PrefixBlockTable::chain_hash(uint64_t parent_key, std::span<const int32_t> tokens) {
    // FNV-1a over the parent key and the tokens; the parent makes the key name the whole prefix.
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t v) {
        for (int i = 0; i < 8; ++i) {
            h ^= (v >> (8 * i)) & 0xff;
            h *= 1099511628211ull;
        }
    };
    mix(parent_key);
    mix(tokens.size());
    for (int32_t t : tokens) mix((uint32_t)t);
    return h;
}

uint64_t PrefixBlockTable::key_of(int32_t parent, std::span<const int32_t> tokens) const {
    uint64_t parent_key = 0;
    if (parent >= 0) {
        auto it = by_page_.find(parent);
        if (it == by_page_.end())
            throw Error("prefix cache: parent page " + std::to_string(parent) + " is not cached");
        parent_key = it->second.key;
    }
    return hash_(parent_key, tokens);
}

int32_t PrefixBlockTable::acquire(int32_t parent, std::span<const int32_t> tokens) {
    if (parent >= 0 && !by_page_.count(parent)) return -1;
    auto it = by_key_.find(key_of(parent, tokens));
    if (it == by_key_.end()) return -1;
    Entry &e = by_page_.at(it->second);
    if (e.parent != parent || !std::equal(e.tokens.begin(), e.tokens.end(), tokens.begin(), tokens.end()))
        return -1; // another prefix under the same key
    if (e.refs == 0) lru_.erase(e.lru_pos);
    ++e.refs;
    return it->second;
}

bool PrefixBlockTable::insert(int32_t parent, std::span<const int32_t> tokens, int32_t page) {
    const uint64_t key = key_of(parent, tokens);
    if (by_key_.count(key)) return false;
    if (by_page_.count(page))
        throw Error("prefix cache: page " + std::to_string(page) + " is already cached");
    by_key_[key] = page;
    by_page_[page] = Entry{key, parent, std::vector<int32_t>(tokens.begin(), tokens.end()), 1};
    if (parent >= 0) ++by_page_.at(parent).children;
    return true;
}

void PrefixBlockTable::release(int32_t page) {
    auto it = by_page_.find(page);
    if (it == by_page_.end() || it->second.refs <= 0)
        throw Error("prefix cache: release of page " + std::to_string(page) + " that is not held");
    if (--it->second.refs == 0) it->second.lru_pos = lru_.insert(lru_.end(), page);
}

int32_t PrefixBlockTable::evict_one() {
    // A referenced page's parent is referenced too (sequences map whole chains), so every
    // unreferenced page has an unreferenced leaf below it: the scan finds one. Sequences release
    // their pages last first, so the front is usually a leaf already.
    for (auto pos = lru_.begin(); pos != lru_.end(); ++pos) {
        const int32_t page = *pos;
        const Entry &e = by_page_.at(page);
        if (e.children > 0) continue;
        if (e.parent >= 0) --by_page_.at(e.parent).children;
        lru_.erase(pos);
        by_key_.erase(e.key);
        by_page_.erase(page);
        return page;
    }
    return -1;
}

int PrefixBlockTable::refcount(int32_t page) const {
    auto it = by_page_.find(page);
    return it == by_page_.end() ? 0 : it->second.refs;
}

} // namespace rf
