// A backend plugin loaded through the ABI exactly as the core does it (dlopen ->
// rocmforge_plugin_entry -> vtable), plus the few tensor helpers the op checks need.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "rocmforge/abi.h"

namespace opcheck {

class Plugin {
public:
    // Loads and initializes; on failure status() != RF_OK and message() says why.
    Plugin(const std::string &path, const std::string &config);
    ~Plugin();
    Plugin(const Plugin &) = delete;
    Plugin &operator=(const Plugin &) = delete;

    int status() const { return status_; }
    const std::string &message() const { return message_; }
    const rf_backend_vtable &vt() const { return *vt_; }
    void *ctx() const { return ctx_; }
    rf_device_info info() const;

    // Device buffer of `bytes`, filled from host memory when `host` is non-null. Throws on error.
    void *alloc(uint64_t bytes, const void *host = nullptr);
    void upload(void *dst, const void *src, uint64_t bytes);
    void download(void *dst, const void *src, uint64_t bytes);
    void run(rf_node &node); // compute + synchronize; throws with the plugin's message
    void sync();
    void free_all();

private:
    void *lib_ = nullptr;
    const rf_backend_vtable *vt_ = nullptr;
    void *ctx_ = nullptr;
    int status_ = RF_ERR_NO_DEVICE;
    std::string message_;
    std::vector<void *> buffers_;
};

} // namespace opcheck
