#include "rocmforge/buffer_slab.h"

#include "rocmforge/runtime.h"

namespace rf {

BufferSlab::~BufferSlab() {
    if (allocated_) backend_.free(whole_);
}

rf_buffer_desc BufferSlab::take(uint64_t bytes) {
    const uint64_t need = slice_bytes(bytes);
    if (used_ + need > capacity_) return backend_.alloc(bytes); // full: not carved, freed on its own
    if (!allocated_) {
        whole_ = backend_.alloc(capacity_);
        allocated_ = true;
    }
    rf_buffer_desc d{};
    d.base = static_cast<char *>(whole_.base) + used_;
    d.size = bytes;
    used_ += need;
    return d;
}

} // namespace rf
