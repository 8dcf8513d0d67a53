// First-fit offset allocator used to plan one graph's intermediate memory inside an arena.
#pragma once
#include <cstdint>
#include <vector>

namespace rf {

class MemoryPlanner {
public:
    // Returns an offset; reuses released ranges (first fit), else grows the arena.
    uint64_t allocate(uint64_t size);
    void release(uint64_t offset, uint64_t size);
    uint64_t peak() const { return end_; }

private:
    struct Range {
        uint64_t offset, size;
    };
    std::vector<Range> free_; // ascending offsets, non-adjacent (merged); a few at a time
    uint64_t end_ = 0;
};

} // namespace rf
