#pragma once
#include "backend.h"

namespace rf_hip {
int buffer_alloc(Backend &b, uint64_t size, rf_buffer_desc *out, char *err, size_t len);
void buffer_free(Backend &b, void *handle);
// Blocking copy between host memory and a device address.
int copy(Backend &b, void *dst, const void *src, uint64_t size, bool to_device, char *err, size_t len);
// ABI upload: a small one (a decode step's inputs) is copied into pinned staging memory and its
// device copy queued behind the work before it, without waiting (the bytes at src may be reused
// at once; everything queued later on the stream, downloads included, sees them); others as
// copy(). *blocked: whether it was a blocking copy (the stream is idle on return).
int upload(Backend &b, void *dst, const void *src, uint64_t size, bool *blocked, char *err, size_t len);
// The stream is idle: the staged uploads are done, their staging memory free again.
void staging_idle(Backend &b);
void staging_release(Backend &b);
// ABI host_pin / host_unpin: page-lock host memory the core copies into (its logits buffer), so
// that copy() runs as one DMA instead of through the runtime's pageable staging.
int host_pin(Backend &b, void *ptr, uint64_t size, char *err, size_t len);
void host_unpin(Backend &b, void *ptr);
} // namespace rf_hip
