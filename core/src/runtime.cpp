// Runtime::create: discover plugins, start the configured backends in order, load the profiler.
#include <algorithm>
#include <cstdio>

#include <rapidjson/document.h>

#include "rocmforge/error.h"
#include "rocmforge/log.h"
#include "rocmforge/output_path.h"
#include "rocmforge/plugin_loader.h"
#include "rocmforge/profiler_host.h"
#include "rocmforge/runtime.h"

namespace rf {
namespace {

std::string gib(uint64_t bytes) {
    char s[32];
    std::snprintf(s, sizeof s, "%.1f GiB", double(bytes) / 1073741824.0);
    return s;
}

// The device index instance `name` will be handed at init (0 where none: a plugin's default
// device), checked against the devices its plugin lists (when it lists them): an index out of
// range is a usage error naming the count and the devices. --device N (Config::device) is for
// GPUs: a plugin whose devices are CPUs ignores it, as it always did; an index the config gave
// this backend itself ("cpu:1", backend_options.cpu.device) is checked whatever the kind.
int check_device_index(const Config &config, const std::string &name, const BackendRef &ref, const std::string &init_json,
                       const rf_backend_vtable *vt, const std::string &plugin_path) {
    rapidjson::Document d;
    d.Parse(init_json.c_str());
    const int device = d.IsObject() && d.HasMember("device") && d["device"].IsInt() ? d["device"].GetInt() : 0;
    if (!RF_SLOT(vt, rf_backend_vtable, list_devices)) return device; // the plugin's init checks it
    std::string why;
    const auto devices = plugin_devices(vt, why);
    // None listed (no driver here, or the listing failed): init says why, and an optional
    // backend is skipped for it.
    if (devices.empty() || device < int(devices.size())) return device;
    const auto keys = config.backend_option_keys(ref.plugin);
    const bool own = ref.device >= 0 || std::find(keys.begin(), keys.end(), "device") != keys.end();
    const bool gpus = std::any_of(devices.begin(), devices.end(), [](const rf_device_info &i) { return i.kind == RF_DEVICE_GPU; });
    if (!own && !gpus) return 0; // --device N on a backend of CPUs: it has its one device
    std::string list;
    for (size_t i = 0; i < devices.size(); ++i)
        list += std::string(i ? "; " : "") + std::to_string(i) + ": " + devices[i].name + " (" + devices[i].arch + ", " +
                gib(devices[i].total_memory) + ")";
    throw UsageError("backend '" + name + "': device " + std::to_string(device) + " is out of range: plugin " + plugin_path +
                     " has " + std::to_string(devices.size()) + (devices.size() == 1 ? " device" : " devices") + " (" + list +
                     "); `rocmforge info` lists them");
}

} // namespace

Runtime::~Runtime() {
    // The report reads the backends' pending device events, so it comes while they still exist.
    if (profiler_) profiler_->report();
    // Backends (and their libraries) go before the profiler that may wrap them.
    order_.clear();
    owned_.clear();
    profiler_.reset();
}

Backend *Runtime::find(const std::string &name) const {
    for (auto *b : order_)
        if (b->name() == name) return b;
    return nullptr;
}

Backend *Runtime::override_backend(int op) const {
    auto it = config_.op_overrides.find(rf_op_name(op));
    return it == config_.op_overrides.end() ? nullptr : find(it->second);
}

void Runtime::phase(const char *name) {
    if (profiler_) profiler_->phase(name);
}

std::unique_ptr<Runtime> Runtime::create(const Config &config) {
    std::unique_ptr<Runtime> rt(new Runtime());
    rt->config_ = config;
    auto plugins = discover_plugins(config);
    for (const auto &p : plugins) rt->records_.push_back(p.record);

    auto find_plugin = [&](int kind, const std::string &name) -> const LoadedPlugin * {
        for (const auto &p : plugins)
            if (p.info && p.info->kind == kind && (name.empty() || name == p.info->name)) return &p;
        return nullptr;
    };
    auto required = [&](const std::string &name) {
        return std::find(config.required.begin(), config.required.end(), name) != config.required.end();
    };
    check_backend_options(config, plugins);

    // (plugin name, device index) of the instances started, so that two names for one device
    // ("hip" and "hip:0") are refused instead of holding the device twice.
    std::vector<std::pair<std::string, int>> devices_in_use;
    for (const auto &name : config.backends) {
        if (rt->find(name)) continue;
        const BackendRef ref = parse_backend_ref(name, config.source);
        const LoadedPlugin *p = find_plugin(RF_PLUGIN_BACKEND, ref.plugin);
        if (!p) {
            std::string why = "no plugin provides backend '" + ref.plugin + "' (backends found: " + backends_found(plugins) + ")";
            // A refused plugin of that name says more than "not found".
            for (const auto &r : rt->records_)
                if (r.name == ref.plugin && !r.loaded) why = "plugin " + r.path + " for backend '" + ref.plugin + "' was refused: " + r.status;
            // Only the built-in list may name backends this installation lacks: with no plugin
            // there is nobody to declare the backend optional.
            if (required(name)) throw UsageError(why);
            if (config.backends_explicit) throw UsageError(config.source + ": " + why);
            spdlog::info("{}", why);
            rt->unavailable_.emplace_back(name, why);
            continue;
        }
        const std::string init_json = config.backend_config_json(name);
        // Several plugins may provide one name (the NVIDIA and AMD flavours of "hip"): the first
        // in search order that starts on this machine wins; every refusal is reported. Failing to
        // start is skipped only when the user did not require the backend, every plugin of that
        // name declares it optional (RF_BACKEND_OPTIONAL) and every one failed for lack of a
        // device: a bad option (a device index out of range included) is an error even for an
        // optional backend.
        std::string why_all;
        bool started = false, optional = !required(name);
        for (const auto &cand : plugins) {
            if (!cand.info || cand.info->kind != RF_PLUGIN_BACKEND || ref.plugin != cand.info->name) continue;
            const auto *vt = static_cast<const rf_backend_vtable *>(cand.info->vtable); // complete: the loader checked
            const auto flags = RF_SLOT(vt, rf_backend_vtable, flags);
            optional = optional && flags && (flags() & RF_BACKEND_OPTIONAL);
            const int device = check_device_index(config, name, ref, init_json, vt, cand.record.path);
            for (const auto &[plugin, index] : devices_in_use)
                if (plugin == ref.plugin && index == device) {
                    std::string other;
                    for (const auto *b : rt->order_)
                        if (b->plugin_name() == plugin && b->device_index() == index) other = b->name();
                    throw UsageError(config.source + ": backends '" + other + "' and '" + name + "' both name device " +
                                     std::to_string(device) + " of backend '" + plugin + "'; list each device once");
                }
            void *ctx = nullptr;
            char err[1024] = {0};
            int st = vt->init(init_json.c_str(), &ctx, err, sizeof err);
            if (st != RF_OK) {
                optional = optional && st == RF_ERR_NO_DEVICE;
                why_all += std::string(why_all.empty() ? "" : "; ") + cand.record.path + ": " +
                           (err[0] ? err : "status " + std::to_string(st));
                continue;
            }
            rt->owned_.push_back(std::make_unique<Backend>(name, cand.record.path, vt, ctx, cand.library));
            Backend *b = rt->owned_.back().get();
            b->set_device(ref.plugin, device);
            b->set_abi_minor(cand.info->abi_minor);
            rt->order_.push_back(b);
            devices_in_use.emplace_back(ref.plugin, device);
            spdlog::info("backend '{}' ready: {} ({}), device {} of plugin {}", name, b->info().name, b->info().arch, device,
                         cand.record.path);
            started = true;
            break;
        }
        if (!started) {
            std::string why = "backend '" + name + "' cannot start: " + why_all;
            if (!optional) throw Error(why);
            spdlog::info("{}", why);
            rt->unavailable_.emplace_back(name, why);
        }
    }
    if (rt->order_.empty()) {
        // Lead with the reasons, a backend that failed to start before one that was not found
        // (a bad backend option says more than a GPU plugin absent from a CPU machine).
        std::vector<std::string> why;
        for (const auto &[n, w] : rt->unavailable_) why.push_back(w);
        std::stable_partition(why.begin(), why.end(), [](const std::string &w) { return w.find("cannot start") != std::string::npos; });
        std::string msg;
        for (const auto &w : why) msg += w + "\n";
        throw Error(msg + "so no backend could start (config " + config.source + ")");
    }
    for (const auto &[op, backend] : config.op_overrides)
        if (!rt->find(backend))
            throw UsageError(config.source + ": op_overrides." + op + " names backend '" + backend +
                             "', which is not available (backends started: " + [&] {
                                 std::string s;
                                 for (const auto *b : rt->order_) s += (s.empty() ? "" : ", ") + b->name();
                                 return s;
                             }() + ")");

    if (config.profiler_enabled) {
        // The trace is written at exit: an unwritable path must fail now, not after the run.
        if (!config.profiler_trace.empty()) check_output_path(config.profiler_trace, "profiler trace");
        const LoadedPlugin *p = find_plugin(RF_PLUGIN_PROFILER, "");
        if (!p) throw UsageError("the profiler is enabled but no profiler plugin was found in: " +
                                 [&] { std::string s; for (auto &d : plugin_search_path(config)) s += "\n  " + d; return s; }());
        const auto *vt = static_cast<const rf_profiler_vtable *>(p->info->vtable);
        void *ctx = nullptr;
        char err[1024] = {0};
        if (vt->init(config.profiler_config_json().c_str(), &ctx, err, sizeof err) != RF_OK)
            throw Error(std::string("profiler plugin failed to start: ") + err);
        rt->profiler_ = std::make_unique<Profiler>(vt, ctx, p->library);
        for (auto *b : rt->order_) rt->profiler_->wrap(*b);
    }
    return rt;
}

Profiler::Profiler(const rf_profiler_vtable *vt, void *ctx, std::shared_ptr<void> library)
    : vt_(vt), ctx_(ctx), library_(std::move(library)) {}

Profiler::~Profiler() {
    if (auto shutdown = RF_SLOT(vt_, rf_profiler_vtable, shutdown)) shutdown(ctx_);
}

void Profiler::wrap(Backend &backend) {
    const rf_backend_vtable *out_vt = nullptr;
    void *out_ctx = nullptr;
    if (vt_->wrap(ctx_, backend.name().c_str(), backend.vtable(), backend.context(), &out_vt, &out_ctx) == RF_OK)
        backend.set_dispatch(out_vt, out_ctx);
}

void Profiler::phase(const char *name) {
    if (auto phase = RF_SLOT(vt_, rf_profiler_vtable, phase)) phase(ctx_, name);
}

void Profiler::report() {
    char err[1024] = {0};
    auto report = RF_SLOT(vt_, rf_profiler_vtable, report);
    if (report && report(ctx_, err, sizeof err) != RF_OK)
        spdlog::warn("profiler report failed: {}", err);
}

} // namespace rf
