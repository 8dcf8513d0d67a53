// Chrome / Perfetto trace ("traceEvents" JSON): one complete ("X") event per timed node, one
// track (tid) per backend, the phases on their own track. Times in microseconds.
#pragma once
#include <string>

#include "profiler_state.h"

namespace rfprof {

// Writes atomically (temporary file + rename). The caller holds state.mutex().
// Returns false with `error` set when the file cannot be written.
bool write_trace(const ProfilerState &state, const std::string &path, double end_us, std::string &error);

} // namespace rfprof
