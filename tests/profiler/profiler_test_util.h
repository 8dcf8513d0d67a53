// Helpers shared by the profiler tests: temp paths, stderr capture, trace loading.
#pragma once
#include <string>
#include <vector>

#include <rapidjson/document.h>

namespace proftest {

// A fresh path under the system temp folder (the file does not exist yet).
std::string temp_path(const std::string &name);
std::string read_file(const std::string &path);

// Runs f with fd 2 redirected to a file; returns what was written to stderr.
template <class F>
std::string capture_stderr(F f);
std::string capture_stderr_impl(void (*fn)(void *), void *arg);
template <class F>
std::string capture_stderr(F f) {
    return capture_stderr_impl([](void *a) { (*static_cast<F *>(a))(); }, &f);
}

struct TraceNode {
    std::string name, cat;
    int tid;
    double ts, dur;
};
// Parses a trace file; REQUIREs it is valid JSON with a traceEvents array. Returns the "X"
// events that are not phases, and not transfers (uploads, downloads) unless with_transfers.
std::vector<TraceNode> load_trace_nodes(const std::string &path, bool with_transfers = false);

} // namespace proftest
