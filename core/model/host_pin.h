// Host memory page-locked for one backend's copies (ABI 2.3 host_pin) for as long as this says so:
// the logits buffer a decode step downloads into. A GPU runtime copies pageable memory through
// staging buffers (slow for the megabytes of logits of many sequences); pinned, the
// download is one DMA. Only a speed hint: where the backend cannot pin, nothing changes.
#pragma once
#include <cstdint>

namespace rf {

class Backend;

class HostPin {
public:
    HostPin() = default;
    ~HostPin() { release(); }
    HostPin(const HostPin &) = delete;
    HostPin &operator=(const HostPin &) = delete;

    // [p, p + bytes) pinned for b: nothing to do when that range was already asked for (pinned,
    // or refused: not asked again); otherwise the earlier range is released first. False when
    // the range is not pinned (no slot, a host-memory backend, the backend refused).
    bool ensure(Backend *b, void *p, uint64_t bytes);
    // Unpins (before the memory is freed or moved).
    void release();
    bool pinned() const { return pinned_; }

private:
    Backend *b_ = nullptr;
    void *p_ = nullptr;
    uint64_t bytes_ = 0;
    bool pinned_ = false;
};

} // namespace rf
