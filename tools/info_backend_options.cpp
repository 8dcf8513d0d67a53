#include "info_backend_options.h"

#include <algorithm>
#include <cstdio>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "rocmforge/option_descs.h"

namespace rf {
namespace {

// A value as one would write it after --backend-option: a string without its quotes.
std::string shown(const rapidjson::Value &v) {
    if (v.IsString()) return std::string(v.GetString(), v.GetStringLength());
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    v.Accept(w);
    return sb.GetString();
}

// "KEY = VALUE (where it was set)", the value from the object the backend's init receives.
std::string value_line(const Config &config, const std::string &backend, const rapidjson::Document &given,
                       const std::string &key, const rf_option_desc *desc) {
    const auto m = given.FindMember(key.c_str());
    if (m == given.MemberEnd()) {
        if (desc && desc->default_value && *desc->default_value) return key + " = " + desc->default_value + " (default)";
        return key + " (not set: the backend's default)";
    }
    std::string where;
    if (!config.backend_option_value(backend, key).empty()) {
        const std::string source = config.backend_option_source(backend, key);
        where = (source == config.source ? "set in " : "set by ") + source;
    } else {
        where = key == "n_threads" ? "from -t or the config's n_threads"
                : key == "device"  ? "from --device or the config's device"
                                   : "from the config's " + key;
    }
    return key + " = " + shown(m->value) + " (" + where + ")";
}

// The instances the config runs of `plugin` with options of their own ("hip:1").
std::vector<std::string> instances_with_options(const Config &config, const std::string &plugin) {
    std::vector<std::string> out;
    for (const auto &[name, text] : config.backend_json)
        if (parse_backend_ref(name, config.source).plugin == plugin && name != plugin) out.push_back(name);
    return out;
}

void print_plugin(const LoadedPlugin &p, const Config &config) {
    const auto *vt = static_cast<const rf_backend_vtable *>(p.info->vtable);
    const std::string name = p.info->name;
    std::printf("  %s (%s):\n", name.c_str(), p.record.path.c_str());
    const auto option_keys = RF_SLOT(vt, rf_backend_vtable, option_keys);
    if (!option_keys) {
        std::printf("    lists no options (ABI < 1.2): backend_options.%s is passed on unchecked\n", name.c_str());
        return;
    }
    const auto descs = plugin_option_descs(vt);
    std::vector<std::string> keys;
    for (const char *const *k = option_keys(); k && *k; ++k) keys.emplace_back(*k);
    if (keys.empty()) std::printf("    none\n");
    const auto instances = instances_with_options(config, name);
    rapidjson::Document given;
    given.Parse(config.backend_config_json(name).c_str());
    for (const auto &key : keys) {
        const rf_option_desc *d = find_option_desc(descs, key);
        std::printf("    %s\n", value_line(config, name, given, key, d).c_str());
        for (const auto &inst : instances) {
            rapidjson::Document inst_given;
            inst_given.Parse(config.backend_config_json(inst).c_str());
            if (!config.backend_option_value(inst, key).empty())
                std::printf("      on %s: %s\n", inst.c_str(), value_line(config, inst, inst_given, key, d).c_str());
        }
        if (d)
            std::printf("      %s: %s; default %s. %s\n", option_type_name(d->type).c_str(), option_accepts(*d).c_str(),
                        d->default_value && *d->default_value ? d->default_value : "none", d->help ? d->help : "");
        else
            std::printf("      (not described by its plugin: passed on unchecked)\n");
    }
}

} // namespace

void print_backend_options(const std::vector<LoadedPlugin> &plugins, const Config &config) {
    std::printf("backend options (the config's backend_options.BACKEND.KEY, --backend-option BACKEND.KEY=VALUE;\n"
                "docs/OPTIONS.md):\n");
    bool any = false;
    for (const auto &p : plugins) {
        if (!p.info || p.info->kind != RF_PLUGIN_BACKEND) continue;
        print_plugin(p, config);
        any = true;
    }
    if (!any) std::printf("  (no backend plugin found)\n");
}

} // namespace rf
