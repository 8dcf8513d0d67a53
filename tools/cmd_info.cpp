// `rocmforge info`: plugins found, devices and their archs, the config in force.
#include "cmd_info.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "rocmforge/error.h"
#include "rocmforge/plugin_loader.h"
#include "rocmforge/runtime.h"
#include "runtime_args.h"

using namespace rf;

namespace {
const char *kHelp = "usage: rocmforge info [options]\n"
                    "Lists the plugins found (and why any was refused), the devices and their archs,\n"
                    "and the config in force.\n";

std::string gib(uint64_t b) {
    char s[32];
    std::snprintf(s, sizeof s, "%.1f GiB", b / 1073741824.0);
    return s;
}

// The index the backend's "device" option names (--device N, backend_options.<name>.device); 0 unset.
int device_in_use(const Config &cfg, const std::string &backend) {
    rapidjson::Document d;
    d.Parse(cfg.backend_config_json(backend).c_str());
    return d.IsObject() && d.HasMember("device") && d["device"].IsInt() ? d["device"].GetInt() : 0;
}

void print_backend(const Backend &b, const Config &cfg) {
    const auto &d = b.info();
    std::printf("  %s: %s, arch %s, %s total, %s free%s\n", b.name().c_str(), d.name, d.arch, gib(d.total_memory).c_str(),
                gib(d.free_memory).c_str(), d.kind == RF_DEVICE_GPU ? " (GPU)" : "");
    if (d.details[0]) std::printf("    %s\n", d.details);
    if (d.kind != RF_DEVICE_GPU) return; // one device: the line above
    std::string why;
    const auto devs = b.devices(why);
    if (devs.empty()) {
        std::printf("    devices: %s\n", why.empty() ? "none listed" : why.c_str());
        return;
    }
    const int used = device_in_use(cfg, b.name());
    for (size_t i = 0; i < devs.size(); ++i)
        std::printf("    device %zu: %s, arch %s, %s%s\n", i, devs[i].name, devs[i].arch, gib(devs[i].total_memory).c_str(),
                    (int)i == used ? " (in use; --device N picks another)" : "");
}

} // namespace

int cmd_info(int argc, char **argv) {
    RuntimeArgs ra;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
            std::printf("%s\noptions:\n%s", kHelp, RuntimeArgs::help());
            return 0;
        }
        if (!ra.parse(argc, argv, i)) throw UsageError(std::string("info: unknown option ") + argv[i]);
    }
    Config cfg = ra.make_config();
    // info runs nothing, so there is nothing to trace: a profiler-enabled config must not leave
    // a trace file behind (the config printed below still shows the path in force).
    Config run_cfg = cfg;
    run_cfg.profiler_trace.clear();
    // When no backend starts, info still shows what it found, then fails with the reasons.
    std::unique_ptr<Runtime> rt;
    std::string failure;
    int failure_code = kExitData;
    try {
        rt = Runtime::create(run_cfg);
    } catch (const Error &e) {
        failure = e.what();
        failure_code = e.exit_code();
    }

    std::printf("config: %s\n  %s\n", cfg.source.c_str(), cfg.to_json().c_str());
    std::printf("plugin search path:\n");
    for (const auto &d : plugin_search_path(cfg)) std::printf("  %s\n", d.c_str());
    std::printf("plugins:\n");
    std::vector<PluginRecord> records;
    if (rt) records = rt->plugin_records();
    else
        for (const auto &p : discover_plugins(run_cfg)) records.push_back(p.record);
    if (records.empty()) std::printf("  (none found)\n");
    for (const auto &r : records)
        std::printf("  %-10s %-8s %s: %s\n", r.name.empty() ? "-" : r.name.c_str(),
                    r.version.empty() ? "-" : r.version.c_str(), r.path.c_str(), r.status.c_str());

    std::string order;
    for (const auto &name : cfg.backends) order += (order.empty() ? "" : ", ") + name;
    std::printf("backends (priority order: %s):\n", order.c_str());
    if (!rt) {
        std::printf("  none started:\n");
        std::fflush(stdout);
        throw Error(failure, failure_code);
    }
    // In the config's order, each either started or with the reason it did not.
    for (const auto &name : cfg.backends) {
        if (const Backend *b = rt->find(name)) {
            print_backend(*b, cfg);
            continue;
        }
        const auto &un = rt->unavailable();
        const auto it = std::find_if(un.begin(), un.end(), [&](const auto &u) { return u.first == name; });
        if (it != un.end()) std::printf("  %s: unavailable: %s\n", name.c_str(), it->second.c_str());
    }
    bool gpu = false;
    for (const auto *b : rt->backends()) gpu |= b->info().kind == RF_DEVICE_GPU;
    if (!gpu) std::printf("no GPU backend available: running on the CPU backend\n");
    return 0;
}
