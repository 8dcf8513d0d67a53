// The exported C ABI of rocmforge-cpu.so: rf_plugin_info + backend vtable. Every entry point
// catches C++ exceptions and turns them into status codes with a message.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <thread>

#include "backend.h"
#include "host_memory.h"
#include "rocmforge/error.h"

namespace rfcpu {
namespace {

void set_err(char *err, size_t len, const std::string &msg) {
    if (err && len) std::snprintf(err, len, "%s", msg.c_str());
}

CpuBackend *be_of(void *ctx) { return static_cast<CpuBackend *>(ctx); }

// A buffer handle: owned memory (freed on buffer_free) or wrapped host memory.
struct HostBuffer {
    HostAllocation mem;
    bool owned;
};

int fill_owned(uint64_t size, const void *copy_from, int n_threads, rf_buffer_desc *out, char *err, size_t len) {
    const HostAllocation mem = host_alloc(size);
    if (!mem.base) {
        set_err(err, len, "cpu backend: cannot allocate " + std::to_string(size) + " bytes (" +
                              std::to_string(available_memory_bytes()) + " bytes available)");
        return RF_ERR_OUT_OF_MEMORY;
    }
    if (copy_from && size) parallel_copy(mem.base, copy_from, size, n_threads);
    out->handle = new HostBuffer{mem, true};
    out->base = mem.base;
    out->size = size;
    return RF_OK;
}

// Copy offered host memory (Auto): worth it for large buffers (huge pages, see host_memory.h)
// as long as the copy leaves most of the available memory free.
bool copy_host_buffer(const CpuBackend &be, uint64_t size) {
    switch (be.weights) {
    case WeightsMode::Copy: return true;
    case WeightsMode::Map: return false;
    default: return size >= (uint64_t(64) << 20) && size <= available_memory_bytes() / 2;
    }
}

template <class F>
int guarded(char *err, size_t len, F f) {
    try {
        return f();
    } catch (const rf::UsageError &e) {
        set_err(err, len, e.what());
        return RF_ERR_INVALID;
    } catch (const std::bad_alloc &) {
        set_err(err, len, "cpu backend: out of host memory");
        return RF_ERR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        set_err(err, len, std::string("cpu backend: ") + e.what());
        return RF_ERR_INVALID;
    } catch (...) {
        set_err(err, len, "cpu backend: unknown error");
        return RF_ERR_INVALID;
    }
}

int cpu_init(const char *config_json, void **ctx, char *err, size_t len) {
    if (!ctx) { set_err(err, len, "cpu backend: ctx is null"); return RF_ERR_INVALID; }
    return guarded(err, len, [&] {
        *ctx = create_backend(config_json).release();
        return RF_OK;
    });
}

void cpu_shutdown(void *ctx) {
    try { delete be_of(ctx); } catch (...) {}
}

int cpu_device_info(void *ctx, rf_device_info *out) {
    if (!ctx || !out) return RF_ERR_INVALID;
    return guarded(nullptr, 0, [&] { fill_device_info(*be_of(ctx), out); return RF_OK; });
}

// One device: this machine's processors, described as init would with the detected SIMD level.
int cpu_list_devices(rf_device_info *out, int32_t max, int32_t *count, char *err, size_t len) {
    if (!count || (max > 0 && !out)) { set_err(err, len, "cpu backend: list_devices needs count (and out)"); return RF_ERR_INVALID; }
    *count = 1;
    if (max < 1) return RF_OK;
    return guarded(err, len, [&] {
        CpuBackend probe;
        probe.detected = probe.simd = detect_simd_level();
        probe.n_threads = int(std::max(1u, std::thread::hardware_concurrency()));
        fill_device_info(probe, out);
        return int(RF_OK);
    });
}

// The one device's memory: the system's total and what it has available now (MemAvailable), as
// device_info reports them.
int cpu_device_memory(int32_t index, uint64_t *free_bytes, uint64_t *total_bytes, char *err, size_t len) {
    if (!free_bytes || !total_bytes) { set_err(err, len, "cpu backend: device_memory needs free and total"); return RF_ERR_INVALID; }
    if (index != 0) { set_err(err, len, "cpu backend: no device " + std::to_string(index) + " (1 found)"); return RF_ERR_INVALID; }
    rf_device_info d{};
    int32_t n = 0;
    if (const int st = cpu_list_devices(&d, 1, &n, err, len); st != RF_OK) return st;
    *total_bytes = d.total_memory;
    *free_bytes = d.free_memory;
    return RF_OK;
}

int cpu_buffer_alloc(void *, uint64_t size, rf_buffer_desc *out, char *err, size_t len) {
    if (!out) { set_err(err, len, "cpu backend: buffer_alloc output is null"); return RF_ERR_INVALID; }
    return guarded(err, len, [&] { return fill_owned(size, nullptr, 1, out, err, len); });
}

int cpu_buffer_from_host(void *ctx, void *host_ptr, uint64_t size, rf_buffer_desc *out, char *err, size_t len) {
    if (!ctx || !out || (!host_ptr && size)) { set_err(err, len, "cpu backend: buffer_from_host needs a pointer"); return RF_ERR_INVALID; }
    return guarded(err, len, [&] {
        if (copy_host_buffer(*be_of(ctx), size)) return fill_owned(size, host_ptr, be_of(ctx)->n_threads, out, err, len);
        out->handle = new HostBuffer{HostAllocation{host_ptr, size, nullptr, 0}, false};
        out->base = host_ptr;
        out->size = size;
        return int(RF_OK);
    });
}

void cpu_buffer_free(void *, void *handle) {
    auto *b = static_cast<HostBuffer *>(handle);
    if (!b) return;
    if (b->owned) host_free(b->mem);
    delete b;
}

int cpu_copy(void *, void *dst, const void *src, uint64_t size, char *err, size_t len) {
    if (size && (!dst || !src)) { set_err(err, len, "cpu backend: copy with a null pointer"); return RF_ERR_INVALID; }
    if (size) std::memcpy(dst, src, size);
    return RF_OK;
}

int cpu_supports_op(void *ctx, const rf_node *node) {
    if (!ctx || !node) return 0;
    try { return node_supported(*be_of(ctx), *node, nullptr); } catch (...) { return 0; }
}

int cpu_compute(void *ctx, const rf_graph *graph, char *err, size_t len) {
    if (!ctx || !graph) { set_err(err, len, "cpu backend: compute needs ctx and graph"); return RF_ERR_INVALID; }
    return guarded(err, len, [&] {
        std::string msg;
        const int rc = run_graph_observed(*be_of(ctx), *graph, &msg);
        if (rc != RF_OK) set_err(err, len, msg);
        return rc;
    });
}

// Nothing is pending between calls (compute() reports before it returns): just swap.
int cpu_set_observer(void *ctx, const rf_exec_observer *observer, char *err, size_t len) {
    if (!ctx) { set_err(err, len, "cpu backend: set_observer needs ctx"); return RF_ERR_INVALID; }
    CpuBackend &be = *be_of(ctx);
    if (!observer) {
        be.observing = false;
        return RF_OK;
    }
    // A 2.10 observer ends before chose (which this backend does not call: one kernel per op).
    if (observer->struct_size < offsetof(rf_exec_observer, chose) || !observer->ran) {
        set_err(err, len, "cpu backend: set_observer needs an rf_exec_observer with ran()");
        return RF_ERR_INVALID;
    }
    be.observer = {};
    std::memcpy(&be.observer, observer, std::min<size_t>(observer->struct_size, sizeof be.observer));
    be.observing = true;
    be.observed_calls = 0;
    return RF_OK;
}

int cpu_synchronize(void *, char *, size_t) { return RF_OK; } // compute() is synchronous

const rf_backend_vtable kVtable = {
    sizeof(rf_backend_vtable),
    cpu_init,
    cpu_shutdown,
    cpu_device_info,
    cpu_buffer_alloc,
    cpu_buffer_free,
    cpu_copy, // upload
    cpu_copy, // download
    cpu_supports_op,
    cpu_compute,
    cpu_synchronize,
    nullptr, // event_create: host steady clock is used
    nullptr,
    nullptr,
    nullptr,
    cpu_buffer_from_host,
    nullptr, // retired_compute_timed
    nullptr, // retired_compute_events
    option_keys,
    nullptr, // flags: none, so a config naming "cpu" fails when it cannot start
    cpu_list_devices,
    cpu_set_observer,
    cpu_device_memory,
    nullptr, // host_pin: its memory is host memory already
    nullptr, // host_unpin
    nullptr, // compute_same: compute() checks nothing it could skip
    option_descs,
};

const rf_plugin_info kInfo = {RF_ABI_MAJOR, RF_ABI_MINOR, RF_PLUGIN_BACKEND, "cpu", "0.1.0", &kVtable};

} // namespace
} // namespace rfcpu

extern "C" RF_PLUGIN_EXPORT const rf_plugin_info *rocmforge_plugin_entry(void) { return &rfcpu::kInfo; }
