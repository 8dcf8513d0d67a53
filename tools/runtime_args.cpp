#include "runtime_args.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "backend_option_arg.h"
#include "rocmforge/error.h"

namespace rf {

const char *RuntimeArgs::help() {
    return "  --config FILE      JSON config (backends, plugin_dirs, kernel_pack_dirs, profiler, op_overrides)\n"
           "                     default: $ROCMFORGE_CONFIG, else built-in (backends: hip, cpu)\n"
           "  --backend NAME     run on backend NAME (repeatable: priority order; the model goes on\n"
           "                     the first); NAME:N runs it on its device N (hip:1); exits with an\n"
           "                     error if NAME cannot start, rather than falling back to another\n"
           "  --backend-option BACKEND.KEY=VALUE  set backend option KEY of BACKEND (hip, cpu, or an\n"
           "                     instance: hip:1) over the config's backend_options (repeatable);\n"
           "                     VALUE is JSON when it parses (true, 16, [\"a\"]), else a string;\n"
           "                     `rocmforge info` lists every backend's options\n"
           "  --device N         GPU N for the hip backend (`rocmforge info` lists every device;\n"
           "                     default: the config's backend_options.hip.device, else 0; the CPU\n"
           "                     has one); an index out of range is an error naming the devices\n"
           "  -t, --threads N    CPU threads (default: all cores)\n"
           "  --profile [FILE]   load the profiler plugin; optional Chrome trace output FILE\n"
           "  --profile-every N  time every Nth compute() call node by node, the others as whole\n"
           "                     graphs (lower overhead; implies --profile; default 1)\n";
}

bool RuntimeArgs::parse(int argc, char **argv, int &i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw UsageError("option " + a + " needs a value");
        return argv[++i];
    };
    if (a == "--config") config_path = value();
    else if (a == "--backend") backends.push_back(value());
    else if (a == "--backend-option") {
        backend_options.push_back({a, value()});
        parse_backend_option_arg(a, backend_options.back().text); // a malformed one fails before anything loads
    }
    else if (a == "--device") {
        std::string v = value();
        char *end = nullptr;
        long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end || n < 0 || n > 1023) throw UsageError("bad --device '" + v + "' (a GPU index: 0, 1, ...)");
        device = static_cast<int>(n);
    }
    else if (a == "-t" || a == "--threads") {
        std::string v = value();
        char *end = nullptr;
        long n = std::strtol(v.c_str(), &end, 10);
        if (*end || n <= 0 || n > 1024) throw UsageError("bad thread count '" + v + "'");
        n_threads = static_cast<int>(n);
    } else if (a == "--profile-every") {
        std::string v = value();
        char *end = nullptr;
        long n = std::strtol(v.c_str(), &end, 10);
        if (v.empty() || *end || n < 1 || n > 1000000) throw UsageError("bad --profile-every '" + v + "' (an integer >= 1)");
        profile_every = static_cast<int>(n);
    } else if (a == "--profile") {
        profile = true;
        if (i + 1 < argc && argv[i + 1][0] != '-') profile_trace = argv[++i];
    } else return false;
    return true;
}

Config RuntimeArgs::make_config() const {
    Config c = Config::resolve(config_path);
    if (!backends.empty()) c.require_backends(backends);
    apply_backend_option_flags(c, backend_options);
    if (n_threads > 0) c.n_threads = n_threads;
    if (device >= 0) c.device = device;
    if (profile || profile_every > 0) {
        c.profiler_enabled = true;
        if (!profile_trace.empty()) c.profiler_trace = profile_trace;
    }
    if (profile_every > 0) {
        // The profiler plugin reads sample_every from its config object.
        rapidjson::Document d;
        d.Parse(c.profiler_json.c_str());
        if (!d.IsObject()) d.SetObject();
        d.RemoveMember("sample_every");
        d.AddMember("sample_every", profile_every, d.GetAllocator());
        rapidjson::StringBuffer buf;
        rapidjson::Writer<rapidjson::StringBuffer> w(buf);
        d.Accept(w);
        c.profiler_json = buf.GetString();
    }
    return c;
}

} // namespace rf
