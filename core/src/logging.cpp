#include "rocmforge/log.h"

#include <cstdlib>
#include <spdlog/sinks/stdout_color_sinks.h>

namespace rf {

void init_logging(int verbosity) {
    auto logger = spdlog::stderr_color_mt("rocmforge");
    spdlog::set_default_logger(logger);
    spdlog::set_pattern("[%^%l%$] %v");
    auto level = verbosity >= 2 ? spdlog::level::debug
                 : verbosity == 1 ? spdlog::level::info
                                  : spdlog::level::warn;
    if (const char *env = std::getenv("ROCMFORGE_LOG")) level = spdlog::level::from_str(env);
    spdlog::set_level(level);
}

} // namespace rf
