// Selects the GPU runtime for this build flavour: the real HIP runtime + hipRTC on AMD, our
// HIP->CUDA driver/NVRTC mapping on NVIDIA. Everything above this header is vendor-neutral.
#pragma once
#include <string>

#if defined(RF_HIP_NVIDIA)
#include "hip_cuda_map.h"
#define RF_GPU_VENDOR "nvidia"
#else
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>
#define RF_GPU_VENDOR "amd"
#endif

namespace rf_hip {
// Makes the runtime callable (NVIDIA: dlopen libcuda.so.1 + libnvrtc). False with a reason.
bool gpu_runtime_load(std::string &why);
// "what failed: runtime message (code)".
std::string gpu_error(const char *what, hipError_t e);
// False when the run-time compiler library is missing (NVIDIA: libnvrtc not found).
bool jit_available();
// True when kernel graphs can be built and replayed (NVIDIA flavour with a CUDA 12+ driver).
bool graphs_available();
// True when graphs can also hold event records (timing marks of a replayed graph).
bool graph_events_available();
} // namespace rf_hip
