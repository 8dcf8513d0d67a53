// Finds plugin shared objects and loads them with Boost.DLL, checking the ABI version.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/abi.h"
#include "rocmforge/runtime.h"

namespace rf {

struct LoadedPlugin {
    PluginRecord record;
    const rf_plugin_info *info = nullptr;
    std::shared_ptr<void> library; // boost::dll::shared_library, type-erased
};

// Loads one file. On failure `info` is null and record.status says why (never throws).
LoadedPlugin load_plugin_file(const std::string &path);

// The backend names the loaded plugins provide for messages, each once, in search order
// ("cpu, hip"; several plugins may provide one name: the NVIDIA and AMD flavours of "hip"), or "none".
std::string backends_found(const std::vector<LoadedPlugin> &plugins);

// Refuses (UsageError) backend_options naming a backend that no plugin provides and the config
// does not list, or holding a key its plugin does not list (ABI 1.2 option_keys).
void check_backend_options(const Config &config, const std::vector<LoadedPlugin> &plugins);

// Scans the search path of `config`. Folders named in the config must exist (UsageError);
// in them every *.so is a candidate. In default folders only rocmforge-*.so files are.
std::vector<LoadedPlugin> discover_plugins(const Config &config);

} // namespace rf
