// Host allocations of the CPU backend. Large buffers (weights, KV pools) are backed by
// transparent huge pages when the kernel allows it: a decode step streams every weight once,
// and with 4 KiB pages (e.g. an mmap'd GGUF in the page cache) the TLB misses and the
// prefetcher stopping at every page boundary cost a large share of the memory bandwidth.
#pragma once
#include <cstdint>

namespace rfcpu {

struct HostAllocation {
    void *base = nullptr; // 64-byte aligned (2 MiB aligned for huge-page allocations)
    uint64_t size = 0;
    void *map = nullptr;  // mmap region to unmap (nullptr: base came from aligned_alloc)
    uint64_t map_size = 0;
};

// nullptr base when out of memory.
HostAllocation host_alloc(uint64_t size);
void host_free(const HostAllocation &a);
// memcpy, split over up to n_threads threads for large copies (page faults are the main cost).
void parallel_copy(void *dst, const void *src, uint64_t size, int n_threads);

} // namespace rfcpu
