// Backend: a C++ face over one plugin's vtable. Converts status codes into rf::Error.
// The loader guarantees the required slots (plugin_loader.cpp); optional ones are read through
// RF_SLOT, so a plugin of an older minor version with a shorter vtable is never read past its end.
#include <algorithm>
#include <cstring>

#include "rocmforge/buffer_slab.h"
#include "rocmforge/error.h"
#include "rocmforge/log.h"
#include "rocmforge/runtime.h"
#include "rocmforge/types.h"

namespace rf {
namespace {
constexpr size_t kErrLen = 1024;

[[noreturn]] void fail(const std::string &backend, const char *what, int status, const char *msg) {
    std::string m = "backend '" + backend + "': " + what + " failed";
    if (msg && *msg) m += ": " + std::string(msg);
    else m += " (status " + std::to_string(status) + ")";
    throw Error(m);
}
} // namespace

Backend::Backend(std::string name, std::string plugin_path, const rf_backend_vtable *vt, void *ctx,
                 std::shared_ptr<void> library)
    : name_(std::move(name)), plugin_path_(std::move(plugin_path)), vt_(vt), plugin_vt_(vt),
      ctx_(ctx), plugin_ctx_(ctx), library_(std::move(library)) {
    if (auto device_info = RF_SLOT(vt_, rf_backend_vtable, device_info)) device_info(ctx_, &info_);
}

Backend::~Backend() {
    if (auto shutdown = RF_SLOT(plugin_vt_, rf_backend_vtable, shutdown)) shutdown(plugin_ctx_);
}

std::vector<rf_device_info> plugin_devices(const rf_backend_vtable *vt, std::string &why) {
    const auto list = RF_SLOT(vt, rf_backend_vtable, list_devices);
    if (!list) { why = "the plugin does not list its devices (ABI before 1.3)"; return {}; }
    constexpr int32_t kMax = 64;
    std::vector<rf_device_info> out(kMax);
    int32_t n = 0;
    char err[512] = {0};
    if (int st = list(out.data(), kMax, &n, err, sizeof err); st != RF_OK) {
        why = err[0] ? err : "list_devices failed with status " + std::to_string(st);
        return {};
    }
    out.resize((size_t)std::clamp<int32_t>(n, 0, kMax));
    if (out.empty()) why = "the plugin finds no device on this machine";
    return out;
}

bool plugin_device_memory(const rf_backend_vtable *vt, int index, uint64_t &free_bytes, uint64_t &total_bytes,
                          std::string &why) {
    const auto memory = RF_SLOT(vt, rf_backend_vtable, device_memory);
    if (!memory) { why = "the plugin cannot report a device's memory before it starts (ABI before 2.2)"; return false; }
    char err[512] = {0};
    if (int st = memory(index, &free_bytes, &total_bytes, err, sizeof err); st != RF_OK) {
        why = err[0] ? err : "device_memory failed with status " + std::to_string(st);
        return false;
    }
    return true;
}

rf_device_info Backend::current_info() const {
    rf_device_info now{};
    const auto device_info = RF_SLOT(plugin_vt_, rf_backend_vtable, device_info);
    if (device_info && device_info(plugin_ctx_, &now) == RF_OK) return now;
    return info_;
}

rf_buffer_desc Backend::alloc(uint64_t bytes) {
    rf_buffer_desc d{};
    char err[kErrLen] = {0};
    int st = vt_->buffer_alloc(ctx_, bytes, &d, err, sizeof err);
    if (st != RF_OK) fail(name_, ("allocating " + std::to_string(bytes) + " bytes").c_str(), st, err);
    if (d.handle) {
        held_[d.handle] = {bytes, false};
        mem_.allocated += bytes;
        mem_.peak_allocated = std::max(mem_.peak_allocated, mem_.allocated);
    }
    return d;
}

rf_buffer_desc Backend::wrap_or_upload(void *host, uint64_t bytes, BufferSlab *slab) {
    if (auto from_host = RF_SLOT(vt_, rf_backend_vtable, buffer_from_host)) {
        rf_buffer_desc d{};
        char err[kErrLen] = {0};
        if (from_host(ctx_, host, bytes, &d, err, sizeof err) == RF_OK) {
            if (d.handle) {
                held_[d.handle] = {bytes, true};
                mem_.from_host += bytes;
            }
            return d;
        }
    }
    rf_buffer_desc d = slab ? slab->take(bytes) : alloc(bytes);
    upload(d.base, host, bytes);
    return d;
}

void Backend::free(const rf_buffer_desc &b) {
    if (!b.handle) return;
    auto it = held_.find(b.handle);
    if (it != held_.end()) {
        (it->second.from_host ? mem_.from_host : mem_.allocated) -= it->second.bytes;
        held_.erase(it);
    }
    if (auto buffer_free = RF_SLOT(vt_, rf_backend_vtable, buffer_free)) buffer_free(ctx_, b.handle);
}

void Backend::upload(void *dst, const void *src, uint64_t bytes) {
    char err[kErrLen] = {0};
    int st = vt_->upload(ctx_, dst, src, bytes, err, sizeof err);
    if (st != RF_OK) fail(name_, "upload", st, err);
}

void Backend::download(void *dst, const void *src, uint64_t bytes) {
    char err[kErrLen] = {0};
    int st = vt_->download(ctx_, dst, src, bytes, err, sizeof err);
    if (st != RF_OK) fail(name_, "download", st, err);
}

bool Backend::pin_host(void *p, uint64_t bytes, std::string &why) {
    const auto pin = RF_SLOT(plugin_vt_, rf_backend_vtable, host_pin);
    const auto unpin = RF_SLOT(plugin_vt_, rf_backend_vtable, host_unpin);
    if (!pin || !unpin) { why = "the plugin cannot pin host memory (ABI before 2.3, or no host_pin)"; return false; }
    char err[kErrLen] = {0};
    if (int st = pin(plugin_ctx_, p, bytes, err, sizeof err); st != RF_OK) {
        why = err[0] ? err : "host_pin failed with status " + std::to_string(st);
        return false;
    }
    return true;
}

void Backend::unpin_host(void *p) {
    if (auto unpin = RF_SLOT(plugin_vt_, rf_backend_vtable, host_unpin)) unpin(plugin_ctx_, p);
}

bool Backend::supports(const rf_node &node) const {
    if ((uint32_t)rf_node_abi_minor(&node) > abi_minor_) return false;
    return vt_->supports_op(ctx_, &node) != 0;
}

void Backend::compute(const rf_graph &graph) {
    char err[kErrLen] = {0};
    int st = vt_->compute(ctx_, &graph, err, sizeof err);
    if (st != RF_OK) fail(name_, "compute", st, err);
}

void Backend::compute_same(const rf_graph &graph) {
    auto same = RF_SLOT(vt_, rf_backend_vtable, compute_same);
    if (!same) return compute(graph);
    char err[kErrLen] = {0};
    int st = same(ctx_, &graph, err, sizeof err);
    if (st != RF_OK) fail(name_, "compute", st, err);
}

void Backend::synchronize() {
    auto synchronize = RF_SLOT(vt_, rf_backend_vtable, synchronize);
    if (!synchronize) return;
    char err[kErrLen] = {0};
    int st = synchronize(ctx_, err, sizeof err);
    if (st != RF_OK) fail(name_, "synchronize", st, err);
}

} // namespace rf
