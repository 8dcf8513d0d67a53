// Options every runtime-using command shares: --config, --backend, --backend-option, --device, -t,
// --profile.
#pragma once
#include <string>
#include <vector>

#include "backend_option_arg.h"
#include "rocmforge/runtime.h"

namespace rf {

struct RuntimeArgs {
    std::string config_path;
    std::vector<std::string> backends; // --backend (repeatable)
    std::vector<BackendOptionFlag> backend_options; // --backend-option BACKEND.KEY=VALUE (repeatable)
    int n_threads = 0;
    int device = -1; // --device N: the GPU the hip backend runs on (-1: the config's, else 0)
    bool profile = false;
    std::string profile_trace;
    int profile_every = 0; // --profile-every N: the profiler's sample_every (0 = not given)

    // Consumes argv[i] (and its value) if it is one of these options; returns true if consumed.
    // Throws UsageError on a missing value.
    bool parse(int argc, char **argv, int &i);
    // The config in force: file (or built-in defaults) + command-line overrides.
    Config make_config() const;
    static const char *help();
};

} // namespace rf
