// Kernel-pack manifest check (backends/hip/pack_manifest.cpp) on fuzzed JSON: it must accept or
// refuse with a message, and accept only a manifest that names the arch and every kernel needed.
#include <string>
#include <vector>

#include "check.h"
#include "pack_manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const std::vector<std::string> required = {"rf_add_f32", "rf_matmul_q4_0_f32"};
    const std::string text(reinterpret_cast<const char *>(data), size);
    rf_hip::PackManifest manifest;
    std::string err;
    const bool ok = rf_hip::check_pack_manifest(text, "gfx1030", required, "kernel pack fuzz.json", manifest, err);
    RF_FUZZ_CHECK(ok ? err.empty() : err.rfind("kernel pack fuzz.json", 0) == 0);
    RF_FUZZ_CHECK(!ok || manifest.n_kernels >= required.size());
    return 0;
}
