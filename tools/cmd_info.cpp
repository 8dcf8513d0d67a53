// `rocmforge info`: plugins found, devices and their archs, the config in force.
#include "cmd_info.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "info_backend_options.h"
#include "rocmforge/error.h"
#include "rocmforge/plugin_loader.h"
#include "rocmforge/runtime.h"
#include "runtime_args.h"

using namespace rf;

namespace {
const char *kHelp = "usage: rocmforge info [options]\n"
                    "Lists the plugins found (and why any was refused), the backends started, every\n"
                    "device of every backend plugin (arch, total and free memory, the backend using it),\n"
                    "every backend plugin's options (value in force, default, valid values, meaning),\n"
                    "and the config in force.\n";

std::string gib(uint64_t b) {
    char s[32];
    std::snprintf(s, sizeof s, "%.1f GiB", b / 1073741824.0);
    return s;
}

void print_backend(const Backend &b) {
    const auto &d = b.info();
    std::printf("  %s: %s, arch %s, %s total, %s free%s\n", b.name().c_str(), d.name, d.arch, gib(d.total_memory).c_str(),
                gib(d.free_memory).c_str(), d.kind == RF_DEVICE_GPU ? " (GPU)" : "");
    if (d.details[0]) std::printf("    %s\n", d.details);
}

// Every device of every backend plugin, with its memory now and the backend instance on it. Free
// memory comes from the instance running there, else the plugin's device_memory (ABI 2.2; the HIP
// plugin creates the device's context for it), else the listing.
void print_devices(const std::vector<LoadedPlugin> &plugins, const Runtime *rt) {
    std::printf("devices (\"backends\": [\"NAME:N\"] runs backend NAME on its device N; --device N picks the GPU of \"hip\"):\n");
    for (const auto &p : plugins) {
        if (!p.info || p.info->kind != RF_PLUGIN_BACKEND) continue;
        const auto *vt = static_cast<const rf_backend_vtable *>(p.info->vtable);
        const std::string file = std::filesystem::path(p.record.path).filename().string();
        std::string why;
        const auto devs = plugin_devices(vt, why);
        if (devs.empty()) {
            std::printf("  %s (%s): no devices: %s\n", p.info->name, file.c_str(), why.c_str());
            continue;
        }
        for (size_t i = 0; i < devs.size(); ++i) {
            const rf_device_info &d = devs[i];
            const Backend *user = nullptr;
            if (rt)
                for (const Backend *b : rt->backends())
                    if (b->plugin_path() == p.record.path && b->device_index() == int(i)) user = b;
            std::string free_s;
            uint64_t free_b = 0, total = 0;
            std::string no_free;
            if (user) free_s = gib(user->current_info().free_memory) + " free";
            else if (plugin_device_memory(vt, int(i), free_b, total, no_free)) free_s = gib(free_b) + " free";
            else if (d.free_memory) free_s = gib(d.free_memory) + " free";
            else free_s = "free unknown until it starts";
            std::string use = user ? "used by backend '" + user->name() + "'" + (user == rt->primary() ? " (the model goes here)" : "")
                                   : std::string("not used");
            std::printf("  %s %zu: %s, arch %s, %s, %s total, %s; %s\n", p.info->name, i, d.name, d.arch,
                        d.kind == RF_DEVICE_GPU ? "GPU" : "CPU", gib(d.total_memory).c_str(), free_s.c_str(), use.c_str());
        }
    }
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
        std::printf("  none started\n");
        const auto plugins = discover_plugins(run_cfg);
        print_devices(plugins, nullptr);
        print_backend_options(plugins, cfg);
        std::fflush(stdout);
        throw Error(failure, failure_code);
    }
    // In the config's order, each either started or with the reason it did not.
    for (const auto &name : cfg.backends) {
        if (const Backend *b = rt->find(name)) {
            print_backend(*b);
            continue;
        }
        const auto &un = rt->unavailable();
        const auto it = std::find_if(un.begin(), un.end(), [&](const auto &u) { return u.first == name; });
        if (it != un.end()) std::printf("  %s: unavailable: %s\n", name.c_str(), it->second.c_str());
    }
    const auto plugins = discover_plugins(run_cfg);
    print_devices(plugins, rt.get());
    print_backend_options(plugins, cfg);
    bool gpu = false;
    for (const auto *b : rt->backends()) gpu |= b->info().kind == RF_DEVICE_GPU;
    if (!gpu) std::printf("no GPU backend available: running on the CPU backend\n");
    return 0;
}
