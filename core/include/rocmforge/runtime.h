// Runtime: the config in force, the plugins found and loaded, and the backends they provide.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "rocmforge/abi.h"

namespace rf {

// A backend instance as a config names it: "hip" (plugin "hip" on the device its options pick,
// 0 by default) or "hip:1" (plugin "hip" on device 1). One plugin may serve several devices, each
// through an instance of its own ("hip:0" and "hip:1" in one runtime).
struct BackendRef {
    std::string plugin;
    int device = -1; // the index after ':'; -1: none written
};
// Throws rf::UsageError (naming `source`) for "hip:", ":1", "hip:x", "hip:-1".
BackendRef parse_backend_ref(const std::string &name, const std::string &source);

struct Config {
    std::vector<std::string> backends{"hip", "cpu"}; // priority order; "hip:1" names a device
    bool backends_explicit = false;                   // named by the user: a missing one is an error
    std::vector<std::string> required;                // must start (e.g. --backend hip) or fail
    std::vector<std::string> plugin_dirs;
    std::vector<std::string> kernel_pack_dirs;
    bool profiler_enabled = false;
    std::string profiler_trace;                       // Chrome trace path ("" = none)
    std::string profiler_json = "{}";                 // the config's whole "profiler" object
    std::map<std::string, std::string> op_overrides;  // op name ("matmul") -> backend name
    // backend_options: plugin name ("hip", for all its instances) or instance name ("hip:1", on
    // top of the plugin's object for that instance only) -> its JSON object text
    std::map<std::string, std::string> backend_json;
    // Where a backend option was set when not in the config file ("--backend-option", the C
    // API's params), by "backend.key"; the messages about that option name it.
    std::map<std::string, std::string> backend_option_origin;
    int n_threads = 0;                                // 0 = backend default
    // Device index handed to the init of every backend instance the config names without one
    // ("hip", not "hip:1") as "device" (--device N); -1: each backend's own option or default.
    // The GPU backend runs on that GPU; a backend whose devices are CPUs ignores it.
    int device = -1;
    std::string source = "<built-in defaults>";

    // Throws rf::UsageError naming the file, the JSON error offset or the offending key.
    static Config from_file(const std::string &path);
    static Config from_json(const std::string &text, const std::string &source);
    // The config in force for a program: the file at `path`, else $ROCMFORGE_CONFIG's, else the
    // built-in defaults.
    static Config resolve(const std::string &path);
    // Makes `names` the backends in priority order, each required to start; CPU stays last as
    // the fallback for what the named backends cannot run.
    void require_backends(const std::vector<std::string> &names);
    // The JSON object handed to a backend instance's init: the plugin's object, the instance's
    // ("hip:1") merged over it, n_threads, device (the instance's index, else --device), pack dirs.
    std::string backend_config_json(const std::string &backend) const;
    // The keys of the backend's object in backend_options, as the user wrote them.
    std::vector<std::string> backend_option_keys(const std::string &backend) const;
    // backend_options.<backend>.<key> = the JSON text `value`, over what the file set; `origin`
    // ("--backend-option") is remembered for messages. Throws UsageError naming `origin` for a
    // malformed backend name, value or instance device.
    void set_backend_option(const std::string &backend, const std::string &key, const std::string &value,
                            const std::string &origin);
    // Every option of `json`, an object shaped like the config's "backend_options", set as above.
    void merge_backend_options(const std::string &json, const std::string &origin);
    // The JSON text of backend_options.<backend>.<key> as the user set it; "" when not set.
    std::string backend_option_value(const std::string &backend, const std::string &key) const;
    // Where that option was set: its origin, else the config file.
    std::string backend_option_source(const std::string &backend, const std::string &key) const;
    std::string to_json() const;
    // The JSON object handed to the profiler plugin's init: its config object with the
    // command line's trace path applied.
    std::string profiler_config_json() const;
};

class BufferSlab; // buffer_slab.h

// The devices a backend plugin lists (ABI 1.3 list_devices), no init needed; empty with `why` set
// when the plugin does not list them or the listing failed.
std::vector<rf_device_info> plugin_devices(const rf_backend_vtable *vt, std::string &why);
// Device `index`'s free and total memory now, no init needed (ABI 2.2 device_memory): false with
// `why` set when the plugin cannot say. May create the device's context: for reports only.
bool plugin_device_memory(const rf_backend_vtable *vt, int index, uint64_t &free_bytes, uint64_t &total_bytes,
                          std::string &why);

// One loaded backend instance: one plugin's ctx on one device.
class Backend {
public:
    Backend(std::string name, std::string plugin_path, const rf_backend_vtable *vt, void *ctx,
            std::shared_ptr<void> library);
    ~Backend();
    Backend(const Backend &) = delete;
    Backend &operator=(const Backend &) = delete;

    // The instance's name as the config wrote it ("hip", "hip:1"): unique within a runtime.
    const std::string &name() const { return name_; }
    // The plugin's backend name ("hip") and the index of the device this instance runs on (the
    // "device" handed to init; 0 where none was: a plugin's default device).
    const std::string &plugin_name() const { return plugin_name_; }
    int device_index() const { return device_index_; }
    void set_device(std::string plugin_name, int index) { plugin_name_ = std::move(plugin_name); device_index_ = index; }
    const std::string &plugin_path() const { return plugin_path_; }
    // The device as init described it (free memory as it was then).
    const rf_device_info &info() const { return info_; }
    // The device as it is now (device_info asked again: free memory after this and other
    // instances allocated); info() where the plugin cannot say.
    rf_device_info current_info() const;
    bool host_memory() const { return info_.host_memory != 0; }
    const rf_backend_vtable *vtable() const { return vt_; } // the profiler's in front when it wraps
    const rf_backend_vtable *plugin_vtable() const { return plugin_vt_; }
    void *context() const { return ctx_; }
    // The devices the plugin can run on (ABI 1.3 list_devices); empty with `why` set when the
    // plugin does not list them or the listing failed.
    std::vector<rf_device_info> devices(std::string &why) const { return plugin_devices(plugin_vt_, why); }

    // Throws rf::Error with the backend's message (OOM says requested and free bytes).
    rf_buffer_desc alloc(uint64_t bytes);
    // Wraps host memory without copying when the backend can; otherwise allocates (from `slab`
    // when given) + uploads.
    rf_buffer_desc wrap_or_upload(void *host, uint64_t bytes, BufferSlab *slab = nullptr);
    void free(const rf_buffer_desc &b);
    void upload(void *dst, const void *src, uint64_t bytes);
    void download(void *dst, const void *src, uint64_t bytes);
    // Page-locks host memory for this backend's copies (ABI 2.3 host_pin, on the plugin itself,
    // not through the profiler): false with `why` where the plugin cannot (no slot, refused);
    // copies then work as before. unpin_host before that memory is freed.
    bool pin_host(void *p, uint64_t bytes, std::string &why);
    void unpin_host(void *p);
    // false, without asking, for a node that needs a newer ABI minor version than the plugin's.
    bool supports(const rf_node &node) const;
    // The plugin's ABI minor version (rf_plugin_info.abi_minor; RF_ABI_MINOR until set).
    void set_abi_minor(uint32_t minor) { abi_minor_ = minor; }
    uint32_t abi_minor() const { return abi_minor_; }
    void compute(const rf_graph &graph);
    // compute() of the graph last given to this backend with the same node array, unchanged
    // since (ABI 2.9 compute_same; compute() where the dispatch has no such slot, e.g. through
    // the profiler).
    void compute_same(const rf_graph &graph);
    void synchronize();

    // Installs a decorator (the profiler) in front of the plugin's vtable.
    void set_dispatch(const rf_backend_vtable *vt, void *ctx) { vt_ = vt; ctx_ = ctx; }

    // Buffers this backend allocated through alloc() / wrap_or_upload() and has not freed (bytes
    // as requested) and the most there ever were; from_host: host memory handed over through
    // buffer_from_host (wrapped as is, or copied by the backend into memory of its own).
    struct MemoryUse {
        uint64_t allocated = 0, peak_allocated = 0, from_host = 0;
    };
    const MemoryUse &memory_use() const { return mem_; }

private:
    std::string name_, plugin_path_, plugin_name_;
    int device_index_ = 0;
    uint32_t abi_minor_ = RF_ABI_MINOR;
    const rf_backend_vtable *vt_;
    const rf_backend_vtable *plugin_vt_;
    void *ctx_;
    void *plugin_ctx_;
    std::shared_ptr<void> library_; // keeps the shared object loaded while this lives
    rf_device_info info_{};
    MemoryUse mem_;
    struct Held {
        uint64_t bytes;
        bool from_host;
    };
    std::unordered_map<void *, Held> held_; // buffer handle -> what memory_use() counted
};

// What the loader saw for each candidate file (for `rocmforge info` and error messages).
struct PluginRecord {
    std::string path;
    std::string name;    // empty if the file is not a plugin
    int kind = 0;        // enum rf_plugin_kind
    std::string version;
    bool loaded = false;
    std::string status;  // "loaded", "not a ROCmForge plugin: <dlerror>", "ABI 2.0, expected 1.x", ...
};

class Profiler; // profiler_host.h

class Runtime {
public:
    // Discovers plugins (config plugin_dirs, $ROCMFORGE_PLUGIN_PATH, the executable's folder and
    // its build-tree neighbours, the install lib dir), loads the backends named by the config
    // in order. Throws rf::UsageError for a config naming an unknown or unloadable backend.
    static std::unique_ptr<Runtime> create(const Config &config);
    ~Runtime();

    const Config &config() const { return config_; }
    const std::vector<Backend *> &backends() const { return order_; } // available, in order
    Backend *primary() const { return order_.empty() ? nullptr : order_.front(); }
    // The instance of that name ("cpu", "hip:1"), or nullptr.
    Backend *find(const std::string &name) const;
    // The backend op_overrides puts op (enum rf_op) on, or nullptr (create() checked it started).
    Backend *override_backend(int op) const;
    const std::vector<PluginRecord> &plugin_records() const { return records_; }
    // Backends named in the config that could not start, with the reason.
    const std::vector<std::pair<std::string, std::string>> &unavailable() const { return unavailable_; }
    Profiler *profiler() const { return profiler_.get(); }
    // Marks a phase for the profiler (no-op when none is loaded).
    void phase(const char *name);

private:
    Runtime() = default;
    Config config_;
    std::vector<std::unique_ptr<Backend>> owned_;
    std::vector<Backend *> order_;
    std::vector<PluginRecord> records_;
    std::vector<std::pair<std::string, std::string>> unavailable_;
    std::unique_ptr<Profiler> profiler_;
};

// The folders searched for plugins, in order, for this config (for `info`).
std::vector<std::string> plugin_search_path(const Config &config);

} // namespace rf
