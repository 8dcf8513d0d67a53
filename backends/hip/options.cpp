#include "options.h"

#include "rocmforge/abi.h"

namespace rf_hip {

const char *const *option_keys() {
    static const char *const keys[] = {"device", "kernel_pack_dirs", "packs", "arch_override", "jit", "cache_dir", nullptr};
    return keys;
}

uint32_t backend_flags() { return RF_BACKEND_OPTIONAL; }

} // namespace rf_hip
