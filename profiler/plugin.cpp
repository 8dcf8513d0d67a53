// rocmforge-profiler.so: the exported C ABI (rf_plugin_info + rf_profiler_vtable).
// Config (the profiler's JSON object): {"trace": "file.json", "ceilings": {"cpu": {"gbps": x,
// "tflops": y}, ...}, "top": 40, "max_events": 4000000, "nvtx": true, "sample_every": 1}.
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "nvtx_ranges.h"
#include "profiler_state.h"
#include "report_text.h"
#include "trace_json.h"
#include "wrapped_backend.h"

namespace rfprof {
namespace {

void set_err(char *err, size_t len, const std::string &msg) {
    if (err && len) std::snprintf(err, len, "%s", msg.c_str());
}

struct Options {
    std::string trace;
    CeilingConfig ceilings;
    int top = 40;
    size_t max_events = 4000000;
    bool nvtx = true;
    int sample_every = 1; // 1: every compute() call timed node by node (see call_sampler.h)
};

// Throws std::runtime_error naming the key.
Options parse_options(const char *json) {
    Options o;
    rapidjson::Document d;
    d.Parse(json && *json ? json : "{}");
    if (d.HasParseError())
        throw std::runtime_error(std::string("profiler config is not valid JSON at offset ") +
                                 std::to_string(d.GetErrorOffset()) + ": " + rapidjson::GetParseError_En(d.GetParseError()));
    if (!d.IsObject()) throw std::runtime_error("profiler config must be a JSON object");
    for (auto it = d.MemberBegin(); it != d.MemberEnd(); ++it) {
        const std::string k = it->name.GetString();
        const auto &v = it->value;
        if (k == "trace") {
            if (!v.IsString()) throw std::runtime_error("profiler.trace must be a string (a file path)");
            o.trace = v.GetString();
        } else if (k == "top") {
            if (!v.IsInt() || v.GetInt() < 1) throw std::runtime_error("profiler.top must be a positive integer");
            o.top = v.GetInt();
        } else if (k == "max_events") {
            if (!v.IsUint64()) throw std::runtime_error("profiler.max_events must be a non-negative integer");
            o.max_events = size_t(v.GetUint64());
        } else if (k == "nvtx") {
            if (!v.IsBool()) throw std::runtime_error("profiler.nvtx must be true or false");
            o.nvtx = v.GetBool();
        } else if (k == "device_node_marks") {
            // ABI 2.1: backends with set_observer report their nodes themselves, always.
            throw std::runtime_error("profiler.device_node_marks was removed: a backend with set_observer (ABI 2.1) "
                                     "reports its nodes with fusion and graph replay on; drop the key");
        } else if (k == "sample_every") {
            if (!v.IsInt() || v.GetInt() < 1)
                throw std::runtime_error("profiler.sample_every must be an integer >= 1 (1: time every compute() call "
                                         "node by node; N: every Nth, the others as whole graphs)");
            o.sample_every = v.GetInt();
        } else if (k == "ceilings") {
            if (!v.IsObject()) throw std::runtime_error("profiler.ceilings must be an object {backend: {gbps, tflops}}");
            for (auto b = v.MemberBegin(); b != v.MemberEnd(); ++b) {
                const std::string where = "profiler.ceilings." + std::string(b->name.GetString());
                if (!b->value.IsObject() || !b->value.HasMember("gbps") || !b->value.HasMember("tflops") ||
                    !b->value["gbps"].IsNumber() || !b->value["tflops"].IsNumber() ||
                    b->value["gbps"].GetDouble() <= 0 || b->value["tflops"].GetDouble() <= 0)
                    throw std::runtime_error(where + " must be {\"gbps\": <positive number>, \"tflops\": <positive number>}");
                o.ceilings[b->name.GetString()] = {b->value["gbps"].GetDouble(), b->value["tflops"].GetDouble(), "config"};
            }
        } else if (k != "enabled") {
            throw std::runtime_error("unknown profiler config key \"" + k + "\" (known: enabled, trace, ceilings, top, max_events, nvtx, sample_every)");
        }
    }
    return o;
}

struct Profiler {
    explicit Profiler(Options o) : opts(std::move(o)), state(opts.ceilings, opts.max_events), ranges(opts.nvtx) {}
    Options opts;
    ProfilerState state;
    RangeMarker ranges;
    std::vector<std::unique_ptr<WrappedBackend>> wrapped;
    bool reported = false;
};

Profiler *prof(void *ctx) { return static_cast<Profiler *>(ctx); }

int write_report(Profiler &p, char *err, size_t len) {
    p.reported = true;
    std::lock_guard<std::mutex> lock(p.state.mutex());
    const double end = p.state.now_us();
    ReportOptions ro;
    ro.top = p.opts.top;
    ro.trace_path = p.opts.trace;
    ro.sample_every = p.opts.sample_every;
    std::string text = format_report(p.state, ro, end);
    if (p.ranges.active())
        text += std::string("nvtx/roctx ranges: emitted through ") + p.ranges.library() + " (tool attached: " +
                p.ranges.tool_var() + " is set)\n";
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
    if (!p.opts.trace.empty()) {
        std::string e;
        if (!write_trace(p.state, p.opts.trace, end, e)) {
            set_err(err, len, e);
            return RF_ERR_INVALID;
        }
    }
    return RF_OK;
}

int prof_init(const char *config_json, void **ctx, char *err, size_t len) {
    if (!ctx) return RF_ERR_INVALID;
    try {
        *ctx = new Profiler(parse_options(config_json));
        return RF_OK;
    } catch (const std::exception &e) {
        set_err(err, len, e.what());
        return RF_ERR_INVALID;
    }
}

void prof_shutdown(void *ctx) {
    Profiler *p = prof(ctx);
    if (!p) return;
    try {
        // The backends are already shut down: whatever they had not reported is lost.
        for (auto &w : p->wrapped) w->abandon_pending();
        if (!p->reported) {
            char err[512] = {0};
            if (write_report(*p, err, sizeof err) != RF_OK) std::fprintf(stderr, "profiler: %s\n", err);
        }
    } catch (...) {
    }
    delete p;
}

int prof_wrap(void *ctx, const char *backend_name, const rf_backend_vtable *inner, void *inner_ctx,
              const rf_backend_vtable **out_vtable, void **out_ctx) {
    Profiler *p = prof(ctx);
    if (!p || !inner || !out_vtable || !out_ctx || !inner->compute) return RF_ERR_INVALID;
    try {
        p->wrapped.push_back(std::make_unique<WrappedBackend>(p->state, p->ranges, backend_name ? backend_name : "?",
                                                              inner, inner_ctx, p->opts.sample_every));
        *out_vtable = p->wrapped.back()->vtable();
        *out_ctx = p->wrapped.back().get();
        return RF_OK;
    } catch (...) {
        return RF_ERR_INVALID;
    }
}

void prof_phase(void *ctx, const char *name) {
    try {
        if (ctx) prof(ctx)->state.mark_phase(name);
    } catch (...) {
    }
}

int prof_report(void *ctx, char *err, size_t len) {
    Profiler *p = prof(ctx);
    if (!p) return RF_ERR_INVALID;
    try {
        // The backends are alive here: read every outstanding device timing first.
        for (auto &w : p->wrapped) w->resolve_pending();
        return write_report(*p, err, len);
    } catch (const std::exception &e) {
        set_err(err, len, std::string("profiler report: ") + e.what());
        return RF_ERR_INVALID;
    }
}

const rf_profiler_vtable kVtable = {
    sizeof(rf_profiler_vtable), prof_init, prof_shutdown, prof_wrap, prof_phase, prof_report,
};

const rf_plugin_info kInfo = {RF_ABI_MAJOR, RF_ABI_MINOR, RF_PLUGIN_PROFILER, "profiler", "0.1.0", &kVtable};

} // namespace
} // namespace rfprof

extern "C" RF_PLUGIN_EXPORT const rf_plugin_info *rocmforge_plugin_entry(void) { return &rfprof::kInfo; }
