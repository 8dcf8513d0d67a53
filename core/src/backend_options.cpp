// The config's backend_options checked against the plugins found. A backend's init ignores keys it
// does not know (the host adds some of its own to every backend's object), so without this check a
// misspelt option would silently do nothing.
#include <algorithm>

#include "rocmforge/error.h"
#include "rocmforge/join.h"
#include "rocmforge/log.h"
#include "rocmforge/plugin_loader.h"

namespace rf {

void check_backend_options(const Config &config, const std::vector<LoadedPlugin> &plugins) {
    for (const auto &[backend, text] : config.backend_json) {
        // "hip:1": the options of one instance of plugin "hip", checked against that plugin's keys.
        const BackendRef ref = parse_backend_ref(backend, config.source);
        const std::string &plugin = ref.plugin;
        if (ref.device >= 0 && std::find(config.backends.begin(), config.backends.end(), backend) == config.backends.end())
            throw UsageError(config.source + ": backend_options names instance '" + backend +
                             "', which \"backends\" does not list (backends: " + join(config.backends) + ")");
        std::vector<std::string> known;
        bool provided = false, listed = false;
        for (const auto &p : plugins) {
            if (!p.info || p.info->kind != RF_PLUGIN_BACKEND || plugin != p.info->name) continue;
            provided = true;
            const auto option_keys = RF_SLOT(static_cast<const rf_backend_vtable *>(p.info->vtable), rf_backend_vtable, option_keys);
            if (!option_keys) continue;
            listed = true;
            for (const char *const *k = option_keys(); k && *k; ++k)
                if (std::find(known.begin(), known.end(), *k) == known.end()) known.emplace_back(*k);
        }
        if (!provided) {
            // A backend the config lists: starting it reports the missing plugin (or skips it).
            if (std::any_of(config.backends.begin(), config.backends.end(),
                            [&](const std::string &b) { return parse_backend_ref(b, config.source).plugin == plugin; }))
                continue;
            throw UsageError(config.source + ": backend_options names backend '" + backend +
                             "', which no plugin provides and \"backends\" does not list (backends found: " +
                             backends_found(plugins) + ")");
        }
        if (!listed) {
            spdlog::debug("backend_options.{}: its plugin lists no option keys (ABI < 1.2), passed on unchecked", backend);
            continue;
        }
        for (const auto &key : config.backend_option_keys(backend))
            if (std::find(known.begin(), known.end(), key) == known.end())
                throw UsageError(config.source + ": backend_options." + backend + "." + key + " is not an option of backend '" +
                                 backend + "' (its options: " + (known.empty() ? std::string("none") : join(known)) + ")");
    }
}

} // namespace rf
