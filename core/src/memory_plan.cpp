#include "rocmforge/memory_plan.h"

namespace rf {

uint64_t MemoryPlanner::allocate(uint64_t size) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->second < size) continue;
        uint64_t off = it->first;
        uint64_t rest = it->second - size;
        free_.erase(it);
        if (rest) free_[off + size] = rest;
        return off;
    }
    // Extend a free block that touches the end instead of leaving it stranded.
    if (!free_.empty()) {
        auto last = std::prev(free_.end());
        if (last->first + last->second == end_) {
            uint64_t off = last->first;
            free_.erase(last);
            end_ = off + size;
            return off;
        }
    }
    uint64_t off = end_;
    end_ += size;
    return off;
}

void MemoryPlanner::release(uint64_t offset, uint64_t size) {
    auto it = free_.emplace(offset, size).first;
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
        it->second += next->second;
        free_.erase(next);
    }
    if (it != free_.begin()) {
        auto prev = std::prev(it);
        if (prev->first + prev->second == it->first) {
            prev->second += it->second;
            free_.erase(it);
        }
    }
}

} // namespace rf
