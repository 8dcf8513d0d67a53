#pragma once
// Many persistent tensors that live and die together (a model's weights, a KV pool's layers)
// carved from one backend allocation. GPU runtimes round every allocation up to whole 2 MiB
// pages: Llama-2-7B's ~290 weights, one allocation each, left a few hundred MiB of those pages
// unused, and its 64 K/V layer pools more (`rocmforge bench-memory` reports the device's use).
#include <cstdint>

#include "rocmforge/abi.h"

namespace rf {

class Backend;

class BufferSlab {
public:
    // `capacity` bytes (the sum of the slices' sizes, each rounded up to kAlign), allocated at the
    // first take(): a backend that wraps host memory instead (the CPU's mapped weights) never
    // allocates it.
    BufferSlab(Backend &backend, uint64_t capacity) : backend_(backend), capacity_(capacity) {}
    // Frees the allocation: destroy it after every tensor carved from it.
    ~BufferSlab();
    BufferSlab(const BufferSlab &) = delete;
    BufferSlab &operator=(const BufferSlab &) = delete;

    static constexpr uint64_t kAlign = 256;
    static uint64_t slice_bytes(uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

    // The next kAlign-aligned `bytes`: a slice (null handle, so that Backend::free leaves it to the
    // slab), or a buffer of its own when the slab has no room left. Throws rf::Error when the
    // backend cannot allocate.
    rf_buffer_desc take(uint64_t bytes);
    uint64_t used() const { return used_; }
    uint64_t capacity() const { return capacity_; }

private:
    Backend &backend_;
    uint64_t capacity_, used_ = 0;
    bool allocated_ = false;
    rf_buffer_desc whole_{};
};

} // namespace rf
