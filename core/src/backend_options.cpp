// The config's backend_options (with what --backend-option and the C API set over them) checked
// against the plugins found. A backend's init ignores keys it does not know (the host adds some of
// its own to every backend's object), so without this check a misspelt option would silently do
// nothing; a value of the wrong type or out of range is refused here, before any backend starts,
// with the same words whichever plugin would have read it.
#include <algorithm>

#include "rocmforge/error.h"
#include "rocmforge/join.h"
#include "rocmforge/log.h"
#include "rocmforge/option_descs.h"
#include "rocmforge/plugin_loader.h"

namespace rf {
namespace {

// Where a backend named in backend_options came from: the file, or the flag / parameter that set
// its first option.
std::string backend_source(const Config &config, const std::string &backend) {
    for (const auto &key : config.backend_option_keys(backend)) return config.backend_option_source(backend, key);
    return config.source;
}

// Refuses a value that a plugin providing the backend describes otherwise (each flavour of a
// backend must accept it: which one starts is known only later).
void check_value(const Config &config, const std::string &backend, const std::string &key,
                 const std::vector<const LoadedPlugin *> &providers) {
    const std::string value = config.backend_option_value(backend, key);
    for (const LoadedPlugin *p : providers) {
        const auto descs = plugin_option_descs(static_cast<const rf_backend_vtable *>(p->info->vtable));
        const rf_option_desc *d = find_option_desc(descs, key);
        if (!d || option_value_fits(*d, value)) continue;
        throw UsageError(config.backend_option_source(backend, key) + ": backend_options." + backend + "." + key + " is " +
                         value + ", but option " + key + " of backend '" + p->info->name + "' is of type " +
                         option_type_name(d->type) + ": " + option_accepts(*d) +
                         (d->default_value && *d->default_value ? std::string(" (default ") + d->default_value + ")" : ""));
    }
}

} // namespace

void check_backend_options(const Config &config, const std::vector<LoadedPlugin> &plugins) {
    for (const auto &[backend, text] : config.backend_json) {
        const std::string source = backend_source(config, backend);
        // "hip:1": the options of one instance of plugin "hip", checked against that plugin's keys.
        const BackendRef ref = parse_backend_ref(backend, source);
        const std::string &plugin = ref.plugin;
        if (ref.device >= 0 && std::find(config.backends.begin(), config.backends.end(), backend) == config.backends.end())
            throw UsageError(source + ": backend_options names instance '" + backend +
                             "', which \"backends\" does not list (backends: " + join(config.backends) + ")");
        std::vector<std::string> known;
        std::vector<const LoadedPlugin *> providers;
        bool listed = false;
        for (const auto &p : plugins) {
            if (!p.info || p.info->kind != RF_PLUGIN_BACKEND || plugin != p.info->name) continue;
            providers.push_back(&p);
            const auto option_keys = RF_SLOT(static_cast<const rf_backend_vtable *>(p.info->vtable), rf_backend_vtable, option_keys);
            if (!option_keys) continue;
            listed = true;
            for (const char *const *k = option_keys(); k && *k; ++k)
                if (std::find(known.begin(), known.end(), *k) == known.end()) known.emplace_back(*k);
        }
        if (providers.empty()) {
            // A backend the config lists: starting it reports the missing plugin (or skips it).
            if (std::any_of(config.backends.begin(), config.backends.end(),
                            [&](const std::string &b) { return parse_backend_ref(b, config.source).plugin == plugin; }))
                continue;
            throw UsageError(source + ": backend_options names backend '" + backend +
                             "', which no plugin provides and \"backends\" does not list (backends found: " +
                             backends_found(plugins) + ")");
        }
        if (!listed) {
            spdlog::debug("backend_options.{}: its plugin lists no option keys (ABI < 1.2), passed on unchecked", backend);
            continue;
        }
        for (const auto &key : config.backend_option_keys(backend)) {
            if (std::find(known.begin(), known.end(), key) == known.end())
                throw UsageError(config.backend_option_source(backend, key) + ": backend_options." + backend + "." + key +
                                 " is not an option of backend '" + backend + "' (its options: " +
                                 (known.empty() ? std::string("none") : join(known)) + ")");
            check_value(config, backend, key, providers);
        }
    }
}

} // namespace rf
