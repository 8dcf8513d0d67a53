// State of one HIP backend instance (one device, one stream) shared by the plugin's files.
#pragma once
#include <cstdint>
#include <string>

#include "gpu_runtime.h"
#include "kernel_pack.h"
#include "rocmforge/abi.h"

namespace rf_hip {

struct Backend {
    int ordinal = 0;
    hipDevice_t device = 0;
    hipStream_t stream = nullptr;
    std::string name, arch, device_arch, details;
    uint64_t total_memory = 0;
    int multiprocessors = 0;
    KernelModule kernels;
    bool sync_each_node = false; // ROCMFORGE_HIP_SYNC=1 (debugging faults)
};

// Makes the backend's device current on the calling thread (the driver binds contexts per thread).
bool make_current(Backend &b, std::string &err);

// Writes msg into a caller buffer (always NUL-terminated), returns code.
int fail(char *err, size_t len, int code, const std::string &msg);

} // namespace rf_hip
