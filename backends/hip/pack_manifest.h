// Checks a kernel pack's manifest (rocmforge-kernels-<arch>.json) against the device arch, this
// plugin's ABI / kernel-argument versions and the kernels it needs. Pure JSON, no GPU call, so
// tests/fuzz links it without the plugin.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace rf_hip {

// What the rest of the pack loading needs from a manifest that passed the checks.
struct PackManifest {
    std::string code;     // code object file name, relative to the manifest's folder ("" = none)
    std::string sha256;   // expected checksum of the code object
    std::string compiler; // for the origin shown by `info`
    size_t n_kernels = 0; // kernel names listed
};

// False with `err` set (prefixed by `where`, e.g. "kernel pack /path/x.json") when `text` is not
// a JSON object, names another arch or other ABI/kargs versions, or lacks a kernel in `required`.
bool check_pack_manifest(const std::string &text, const std::string &arch, const std::vector<std::string> &required,
                         const std::string &where, PackManifest &out, std::string &err);

} // namespace rf_hip
