#include "host_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace rfcpu {

namespace {
constexpr uint64_t kHugePage = uint64_t(2) << 20;
constexpr uint64_t kHugeThreshold = uint64_t(8) << 20; // smaller buffers: plain aligned_alloc
}

HostAllocation host_alloc(uint64_t size) {
    HostAllocation a;
    a.size = size;
    if (size > (uint64_t(1) << 60)) return a;
    if (size < kHugeThreshold) {
        a.base = std::aligned_alloc(64, size ? (size + 63) / 64 * 64 : 64);
        return a;
    }
    // Over-allocate by one huge page so the start can be aligned to 2 MiB.
    const uint64_t rounded = (size + kHugePage - 1) / kHugePage * kHugePage;
    a.map_size = rounded + kHugePage;
    void *m = mmap(nullptr, a.map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return HostAllocation{};
    a.map = m;
    const uintptr_t aligned = (reinterpret_cast<uintptr_t>(m) + kHugePage - 1) & ~uintptr_t(kHugePage - 1);
    a.base = reinterpret_cast<void *>(aligned);
    madvise(a.base, rounded, MADV_HUGEPAGE); // advisory: ignored where THP is off
    return a;
}

void host_free(const HostAllocation &a) {
    if (a.map) munmap(a.map, a.map_size);
    else std::free(a.base);
}

void parallel_copy(void *dst, const void *src, uint64_t size, int n_threads) {
    constexpr uint64_t kPerThreadMin = uint64_t(64) << 20;
    const int nt = int(std::min<uint64_t>(uint64_t(std::max(n_threads, 1)), std::max<uint64_t>(1, size / kPerThreadMin)));
    auto copy = [&](int i) {
        const uint64_t b = size * uint64_t(i) / uint64_t(nt), e = size * uint64_t(i + 1) / uint64_t(nt);
        std::memcpy(static_cast<uint8_t *>(dst) + b, static_cast<const uint8_t *>(src) + b, e - b);
    };
    std::vector<std::thread> threads;
    for (int i = 1; i < nt; ++i) threads.emplace_back(copy, i);
    copy(0);
    for (auto &t : threads) t.join();
}

} // namespace rfcpu
