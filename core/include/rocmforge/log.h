// Logging: spdlog (header-only) behind one logger whose messages go to a callback set by the
// embedding program, or to stderr. Nothing is ever written to stdout.
// Level from -v or ROCMFORGE_LOG (trace|debug|info|warn|error|off).
#pragma once
#include <functional>

#include <spdlog/spdlog.h>

namespace rf {

enum class LogLevel : int { Debug = 0, Info = 1, Warn = 2, Error = 3 };
// Receives each message (no trailing newline); called from whichever thread logs, one call at
// a time.
using LogSink = std::function<void(LogLevel level, const char *text)>;

// verbosity: 0 = warnings, 1 = info (-v), 2 = debug (-vv). ROCMFORGE_LOG overrides.
void init_logging(int verbosity);
// Installs the library logger (stderr, warnings and errors) unless one is in place: the entry
// points of the embedding API call it, so spdlog's stdout default logger is never used.
void ensure_logging();
// Routes every message to `sink` (empty: back to stderr). The level filter stays as set.
void set_log_sink(LogSink sink);
void set_log_level(LogLevel min_level);

} // namespace rf
