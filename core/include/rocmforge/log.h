// Logging: spdlog (header-only) to stderr. Level from -v or ROCMFORGE_LOG (trace|debug|info|warn|error|off).
#pragma once
#include <spdlog/spdlog.h>

namespace rf {
// verbosity: 0 = warnings, 1 = info (-v), 2 = debug (-vv). ROCMFORGE_LOG overrides.
void init_logging(int verbosity);
} // namespace rf
