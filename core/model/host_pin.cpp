#include "host_pin.h"

#include "rocmforge/log.h"
#include "rocmforge/runtime.h"

namespace rf {

bool HostPin::ensure(Backend *b, void *p, uint64_t bytes) {
    if (b == b_ && p == p_ && bytes == bytes_) return pinned_;
    release();
    b_ = b;
    p_ = p;
    bytes_ = bytes;
    std::string why;
    pinned_ = b && p && bytes > 0 && !b->host_memory() && b->pin_host(p, bytes, why);
    if (!pinned_ && !why.empty()) spdlog::debug("logits buffer not pinned on {}: {}", b->name(), why);
    return pinned_;
}

void HostPin::release() {
    if (pinned_) b_->unpin_host(p_);
    b_ = nullptr;
    p_ = nullptr;
    bytes_ = 0;
    pinned_ = false;
}

} // namespace rf
