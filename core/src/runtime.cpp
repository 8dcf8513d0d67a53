// Runtime::create: discover plugins, start the configured backends in order, load the profiler.
#include <algorithm>

#include "rocmforge/error.h"
#include "rocmforge/log.h"
#include "rocmforge/output_path.h"
#include "rocmforge/plugin_loader.h"
#include "rocmforge/profiler_host.h"
#include "rocmforge/runtime.h"

namespace rf {

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

    for (const auto &name : config.backends) {
        if (rt->find(name)) continue;
        const LoadedPlugin *p = find_plugin(RF_PLUGIN_BACKEND, name);
        if (!p) {
            std::string why = "no plugin provides backend '" + name + "' (backends found: " + backends_found(plugins) + ")";
            // A refused plugin of that name says more than "not found".
            for (const auto &r : rt->records_)
                if (r.name == name && !r.loaded) why = "plugin " + r.path + " for backend '" + name + "' was refused: " + r.status;
            // Only the built-in list may name backends this installation lacks: with no plugin
            // there is nobody to declare the backend optional.
            if (required(name)) throw UsageError(why);
            if (config.backends_explicit) throw UsageError(config.source + ": " + why);
            spdlog::info("{}", why);
            rt->unavailable_.emplace_back(name, why);
            continue;
        }
        // Several plugins may provide one name (the NVIDIA and AMD flavours of "hip"): the first
        // in search order that starts on this machine wins; every refusal is reported. Failing to
        // start is skipped only when the user did not require the backend, every plugin of that
        // name declares it optional (RF_BACKEND_OPTIONAL) and every one failed for lack of a
        // device: a bad option is an error even for an optional backend.
        std::string why_all;
        bool started = false, optional = !required(name);
        for (const auto &cand : plugins) {
            if (!cand.info || cand.info->kind != RF_PLUGIN_BACKEND || name != cand.info->name) continue;
            const auto *vt = static_cast<const rf_backend_vtable *>(cand.info->vtable); // complete: the loader checked
            const auto flags = RF_SLOT(vt, rf_backend_vtable, flags);
            optional = optional && flags && (flags() & RF_BACKEND_OPTIONAL);
            void *ctx = nullptr;
            char err[1024] = {0};
            int st = vt->init(config.backend_config_json(name).c_str(), &ctx, err, sizeof err);
            if (st != RF_OK) {
                optional = optional && st == RF_ERR_NO_DEVICE;
                why_all += std::string(why_all.empty() ? "" : "; ") + cand.record.path + ": " +
                           (err[0] ? err : "status " + std::to_string(st));
                continue;
            }
            rt->owned_.push_back(std::make_unique<Backend>(name, cand.record.path, vt, ctx, cand.library));
            rt->order_.push_back(rt->owned_.back().get());
            spdlog::info("backend '{}' ready: {} ({})", name, rt->order_.back()->info().name,
                         rt->order_.back()->info().arch);
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
            throw UsageError(config.source + ": op_overrides." + op + " names backend '" + backend + "', which is not available");

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
