#include "rocmforge/memory_plan.h"

#include <cstddef>

namespace rf {

uint64_t MemoryPlanner::allocate(uint64_t size) {
    for (std::size_t i = 0; i < free_.size(); ++i) {
        Range &r = free_[i];
        if (r.size < size) continue;
        const uint64_t off = r.offset;
        const uint64_t rest = r.size - size;
        if (rest) r = {off + size, rest}; // the rest stays in place: still sorted
        else free_.erase(free_.begin() + (long)i);
        return off;
    }
    // Extend a free block that touches the end instead of leaving it stranded.
    if (!free_.empty() && free_.back().offset + free_.back().size == end_) {
        const uint64_t off = free_.back().offset;
        free_.pop_back();
        end_ = off + size;
        return off;
    }
    const uint64_t off = end_;
    end_ += size;
    return off;
}

void MemoryPlanner::release(uint64_t offset, uint64_t size) {
    std::size_t i = 0; // first range at or after `offset`
    while (i < free_.size() && free_[i].offset < offset) ++i;
    if (i == free_.size() || free_[i].offset != offset) free_.insert(free_.begin() + (long)i, Range{offset, size});
    // (a range already starting at `offset` is kept as it is, as a map's emplace would)
    if (i + 1 < free_.size() && free_[i].offset + free_[i].size == free_[i + 1].offset) {
        free_[i].size += free_[i + 1].size;
        free_.erase(free_.begin() + (long)(i + 1));
    }
    if (i > 0 && free_[i - 1].offset + free_[i - 1].size == free_[i].offset) {
        free_[i - 1].size += free_[i].size;
        free_.erase(free_.begin() + (long)i);
    }
}

} // namespace rf
