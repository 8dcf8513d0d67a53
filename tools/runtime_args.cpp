#include "runtime_args.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "rocmforge/error.h"

namespace rf {

const char *RuntimeArgs::help() {
    return "  --config FILE      JSON config (backends, plugin_dirs, kernel_pack_dirs, profiler, op_overrides)\n"
           "                     default: $ROCMFORGE_CONFIG, else built-in (backends: hip, cpu)\n"
           "  --backend NAME     run on NAME (repeatable: priority order); NAME must start\n"
           "  -t, --threads N    CPU threads (default: all cores)\n"
           "  --profile [FILE]   load the profiler plugin; optional Chrome trace output FILE\n";
}

bool RuntimeArgs::parse(int argc, char **argv, int &i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw UsageError("option " + a + " needs a value");
        return argv[++i];
    };
    if (a == "--config") config_path = value();
    else if (a == "--backend") backends.push_back(value());
    else if (a == "-t" || a == "--threads") {
        std::string v = value();
        char *end = nullptr;
        long n = std::strtol(v.c_str(), &end, 10);
        if (*end || n <= 0 || n > 1024) throw UsageError("bad thread count '" + v + "'");
        n_threads = static_cast<int>(n);
    } else if (a == "--profile") {
        profile = true;
        if (i + 1 < argc && argv[i + 1][0] != '-') profile_trace = argv[++i];
    } else return false;
    return true;
}

Config RuntimeArgs::make_config() const {
    Config c;
    std::string path = config_path;
    if (path.empty())
        if (const char *env = std::getenv("ROCMFORGE_CONFIG")) path = env;
    if (!path.empty()) c = Config::from_file(path);
    if (!backends.empty()) {
        c.backends = backends;
        c.required = backends;
        c.backends_explicit = true;
        // CPU stays available as the fallback for anything the named backends cannot run.
        if (std::find(c.backends.begin(), c.backends.end(), "cpu") == c.backends.end()) c.backends.push_back("cpu");
    }
    if (n_threads > 0) c.n_threads = n_threads;
    if (profile) {
        c.profiler_enabled = true;
        if (!profile_trace.empty()) c.profiler_trace = profile_trace;
    }
    return c;
}

} // namespace rf
