// A tensor in one backend's memory for benchmarks: allocated through the backend ABI, filled
// with deterministic pseudo-random data (weights quantized once per few rows and tiled: the
// values do not matter for speed, only the bytes' layout does).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "rocmforge/abi.h"
#include "rocmforge/runtime.h"

namespace rfbench {

class DeviceTensor {
public:
    DeviceTensor(rf::Backend &backend, int type, std::initializer_list<int64_t> ne);
    ~DeviceTensor();
    DeviceTensor(const DeviceTensor &) = delete;
    DeviceTensor &operator=(const DeviceTensor &) = delete;

    rf_tensor *get() { return &t_; }
    uint64_t bytes() const { return bytes_; }
    // Random values in [-1, 1] converted to the tensor's type (any quantizable type).
    void fill_random(uint32_t seed);
    // Raw host bytes (e.g. i32 indices).
    void fill(const void *host, uint64_t n);

private:
    rf::Backend &backend_;
    rf_tensor t_{};
    rf_buffer_desc buf_{};
    uint64_t bytes_ = 0;
};

} // namespace rfbench
