#pragma once
#include "backend.h"

namespace rf_hip {
int buffer_alloc(Backend &b, uint64_t size, rf_buffer_desc *out, char *err, size_t len);
void buffer_free(Backend &b, void *handle);
// Blocking copy between host memory and a device address.
int copy(Backend &b, void *dst, const void *src, uint64_t size, bool to_device, char *err, size_t len);
} // namespace rf_hip
