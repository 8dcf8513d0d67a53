// Kernel-pack plugins (rocmforge/pack_abi.h): finding the packs of an arch and verifying all that
// needs no GPU (entry symbol, kind, ABI major, arch, kernel-argument version, code checksum,
// kernel list, fusion table). The HIP backend then loads their code objects; rocmforge-pack-check
// uses the same code on a machine without a GPU.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/pack_abi.h"

namespace rf_hip {

// One verified pack. The shared object stays open while this (or a copy) lives.
struct PackPlugin {
    std::string path, name, version;
    std::shared_ptr<void> library; // dlopen handle
    const rf_kernel_pack_vtable *vt = nullptr;
    std::vector<const rf_fusion *> fusions; // the usable ones, in the pack's order
    bool base() const { return vt && (vt->flags & RF_PACK_BASE_KERNELS); }
};

// File name of a pack for `arch` in a pack folder: "rocmforge-pack-<arch>.so" (the base kernels)
// or "rocmforge-pack-<name>-<arch>.so" (others). Only such files are opened, so packs of other
// archs are never loaded.
bool pack_file_for_arch(const std::string &file_name, const std::string &arch);

// Whether the pack's kernel list names `name` (a fusion's kernel, or one a claim names).
bool pack_lists_kernel(const rf_kernel_pack_vtable &vt, const char *name);

// Opens `path` and verifies it for `arch`. A pack with RF_PACK_BASE_KERNELS must list every name
// in `base_kernels`. False with `err` naming the file and the reason (both archs, both ABI
// versions, both checksums, the missing kernel or the bad fusion).
bool open_pack(const std::string &path, const std::string &arch, const std::vector<std::string> &base_kernels,
               PackPlugin &out, std::string &err);

struct PackSearch {
    std::string arch;
    std::vector<std::string> files; // the config's "packs": each must load and serve `arch`
    std::vector<std::string> dirs;  // searched for pack_file_for_arch() names, in order
};

struct PackSet {
    std::vector<PackPlugin> packs; // explicit files first, then by folder and name
    // What was looked for and what was found, for device_info.details when no base pack is used.
    std::string looked_for;
};

// Opens every pack of the search. False on the first pack that fails open_pack (a broken or
// foreign pack is an error, never skipped) or on an explicit file that does not exist.
bool find_packs(const PackSearch &search, const std::vector<std::string> &base_kernels, PackSet &out, std::string &err);

} // namespace rf_hip
