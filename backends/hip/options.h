// What the HIP plugin tells the host before init (ABI 1.2): the backend_options keys init reads
// and the backend's flags.
#pragma once
#include <cstdint>

namespace rf_hip {

// NULL-terminated; the keys parse_config in plugin.cpp reads.
const char *const *option_keys();
// RF_BACKEND_OPTIONAL: a machine without a GPU or driver skips this backend.
uint32_t backend_flags();

} // namespace rf_hip
