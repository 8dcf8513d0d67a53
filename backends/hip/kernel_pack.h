// Finding the device code for the current arch: an AOT pack (manifest + code object, checksum
// and kernel list verified) or, when no pack serves the arch, a hipRTC/NVRTC compile of the
// embedded kernel sources cached on disk.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu_runtime.h"

namespace rf_hip {

struct KernelLoadOptions {
    std::string arch;                   // device arch (or the config's arch_override)
    std::vector<std::string> pack_dirs; // searched in order
    std::string jit = "auto";           // "auto": JIT when no pack; "off": never; "force": ignore packs
    std::string cache_dir;              // JIT cache; empty = default
};

struct KernelModule {
    hipModule_t module = nullptr;
    std::unordered_map<std::string, hipFunction_t> functions;
    std::string origin; // for device_info.details: which pack / JIT and why
};

// Loads and resolves every name in `required`. False with a message naming the arch, the pack
// and the missing kernel (never a launch-time "invalid device function").
bool load_kernels(const KernelLoadOptions &opt, const std::vector<std::string> &required, KernelModule &out,
                  std::string &err);
void unload_kernels(KernelModule &m);

// Default JIT cache folder: $ROCMFORGE_CACHE_DIR, else $XDG_CACHE_HOME/rocmforge, else ~/.cache/rocmforge.
std::string default_cache_dir();

} // namespace rf_hip
