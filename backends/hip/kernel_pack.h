// Finding the device code for the current arch: the base kernels from a pack plugin
// (pack_plugin.h: rocmforge-pack-<arch>.so, verified) or, when no pack carries them, a
// hipRTC/NVRTC compile of the embedded kernel sources cached on disk; and the code objects and
// fusions of the other packs of the arch.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu_runtime.h"
#include "pack_plugin.h"

namespace rf_hip {

struct KernelLoadOptions {
    std::string arch;                   // device arch (or the config's arch_override)
    std::vector<std::string> pack_dirs;  // searched in order for rocmforge-pack-*<arch>.so
    std::vector<std::string> pack_files; // the config's "packs": loaded first, each must serve the arch
    std::string jit = "auto";            // "auto": JIT when no base pack; "off": never; "force": ignore packs
    std::string cache_dir;              // JIT cache; empty = default
};

// A fusion of a loaded pack with its kernel resolved.
struct PackFusion {
    const rf_fusion *fusion = nullptr;
    hipFunction_t function = nullptr;
    bool programmatic = false; // the pack's kernels begin with rf_pack_kernel_start (RF_PACK_KERNELS_WAIT)
    bool stamps = false;       // its code object has the stamp constant (kernels/stamps.h)
    const PackPlugin *pack = nullptr;
    hipModule_t module = nullptr; // the pack's code object (a claim may name another of its kernels)
    std::string rule;             // "pack fusion 'name'": what the observer says chose its units
};

struct KernelModule {
    hipModule_t module = nullptr; // the base kernels
    std::unordered_map<std::string, hipFunction_t> functions;
    std::string origin; // for device_info.details: which packs / JIT and why
    std::vector<PackPlugin> packs;          // kept open while their code and claims are in use
    std::vector<hipModule_t> pack_modules;  // code objects of the packs other than the base one
    std::vector<PackFusion> fusions;        // claimed before the backend's own fusions and kernels, in order
    // Timestamps (kernels/stamps.h, exec_observer.h): the device address of the stamp constant of
    // every loaded module that has one, and the base module's stamp kernel. base_stamps: the base
    // kernels write stamps (their module has both; an older base pack has neither).
    std::vector<void *> stamp_ctls;
    hipFunction_t stamp_mark = nullptr;
    bool base_stamps = false;
    // The base module was built with Hopper's arch-specific instructions (sm_90a: it defines
    // rf_feature_wgmma, kernels/matmul_h16_wgmma.hip); rf_mm_h16w_* are empty without them.
    bool wgmma = false;
    // Kernels claims named (rf_fusion_launch.kernel, ABI 2.6), resolved on first use per module.
    std::unordered_map<std::string, hipFunction_t> claim_kernels;
};

// The function of kernel `name` that a claim of `pf` names: listed by its pack and present in
// its code object (resolved once, then cached in m.claim_kernels); null with `err` otherwise.
hipFunction_t claim_kernel(KernelModule &m, const PackFusion &pf, const char *name, std::string &err);

// Loads and resolves every name in `required` and every kernel each pack lists. False with a
// message naming the arch, the pack and the reason (never a launch-time "invalid device function").
bool load_kernels(const KernelLoadOptions &opt, const std::vector<std::string> &required, KernelModule &out,
                  std::string &err);
void unload_kernels(KernelModule &m);

// Default JIT cache folder: $ROCMFORGE_CACHE_DIR, else $XDG_CACHE_HOME/rocmforge, else ~/.cache/rocmforge.
std::string default_cache_dir();

} // namespace rf_hip
