#include "plugin_handle.h"

#include <dlfcn.h>

#include <stdexcept>

namespace opcheck {

Plugin::Plugin(const std::string &path, const std::string &config) {
    lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib_) { message_ = "cannot load " + path + ": " + dlerror(); return; }
    auto entry = reinterpret_cast<rf_plugin_entry_fn>(dlsym(lib_, RF_PLUGIN_ENTRY_SYMBOL));
    if (!entry) { message_ = path + " has no " RF_PLUGIN_ENTRY_SYMBOL; return; }
    const rf_plugin_info *info = entry();
    if (!info || info->abi_major != RF_ABI_MAJOR || info->kind != RF_PLUGIN_BACKEND) {
        message_ = path + ": not a backend plugin of ABI " + std::to_string(RF_ABI_MAJOR);
        return;
    }
    vt_ = static_cast<const rf_backend_vtable *>(info->vtable);
    char err[1024] = {0};
    status_ = vt_->init(config.c_str(), &ctx_, err, sizeof err);
    if (status_ != RF_OK) message_ = err;
}

Plugin::~Plugin() {
    if (status_ == RF_OK) {
        free_all();
        vt_->shutdown(ctx_);
    }
    // The library stays loaded: unloading GPU runtimes at exit races their own teardown.
}

rf_device_info Plugin::info() const {
    rf_device_info i{};
    vt_->device_info(ctx_, &i);
    return i;
}

void *Plugin::alloc(uint64_t bytes, const void *host) {
    rf_buffer_desc d{};
    char err[1024] = {0};
    if (vt_->buffer_alloc(ctx_, bytes, &d, err, sizeof err) != RF_OK) throw std::runtime_error(std::string("alloc: ") + err);
    buffers_.push_back(d.handle);
    if (host) upload(d.base, host, bytes);
    return d.base;
}

void Plugin::upload(void *dst, const void *src, uint64_t bytes) {
    char err[1024] = {0};
    if (vt_->upload(ctx_, dst, src, bytes, err, sizeof err) != RF_OK) throw std::runtime_error(std::string("upload: ") + err);
}

void Plugin::download(void *dst, const void *src, uint64_t bytes) {
    char err[1024] = {0};
    if (vt_->download(ctx_, dst, src, bytes, err, sizeof err) != RF_OK) throw std::runtime_error(std::string("download: ") + err);
}

void Plugin::run(rf_node &node) {
    rf_node *nodes[1] = {&node};
    rf_graph g{1, nodes};
    char err[1024] = {0};
    if (vt_->compute(ctx_, &g, err, sizeof err) != RF_OK) throw std::runtime_error(std::string("compute: ") + err);
    sync();
}

void Plugin::sync() {
    char err[1024] = {0};
    if (vt_->synchronize(ctx_, err, sizeof err) != RF_OK) throw std::runtime_error(std::string("synchronize: ") + err);
}

void Plugin::free_all() {
    for (void *h : buffers_) vt_->buffer_free(ctx_, h);
    buffers_.clear();
}

} // namespace opcheck
