// Checks of backend option values against their plugin's rf_option_desc (ABI 2.10).
#include "rocmforge/option_descs.h"

#include <rapidjson/document.h>

#include "rocmforge/join.h"

namespace rf {

std::vector<rf_option_desc> plugin_option_descs(const rf_backend_vtable *vt) {
    std::vector<rf_option_desc> out;
    const auto slot = vt ? RF_SLOT(vt, rf_backend_vtable, option_descs) : nullptr;
    if (!slot) return out;
    int32_t count = 0;
    const rf_option_desc *descs = slot(&count);
    for (int32_t i = 0; descs && i < count; ++i)
        if (descs[i].key && *descs[i].key) out.push_back(descs[i]);
    return out;
}

const rf_option_desc *find_option_desc(const std::vector<rf_option_desc> &descs, const std::string &key) {
    for (const auto &d : descs)
        if (key == d.key) return &d;
    return nullptr;
}

std::string option_type_name(int32_t type) {
    switch (type) {
    case RF_OPTION_BOOL: return "bool";
    case RF_OPTION_INT: return "int";
    case RF_OPTION_STRING: return "string";
    case RF_OPTION_ENUM: return "enum";
    case RF_OPTION_STRING_LIST: return "string list";
    default: return "unknown type " + std::to_string(type);
    }
}

std::vector<std::string> option_choices(const rf_option_desc &desc) {
    std::vector<std::string> out;
    if (!desc.choices) return out;
    std::string item;
    for (const char *p = desc.choices;; ++p) {
        if (*p == '|' || *p == '\0') {
            if (!item.empty()) out.push_back(item);
            item.clear();
            if (*p == '\0') break;
        } else {
            item += *p;
        }
    }
    return out;
}

std::string option_accepts(const rf_option_desc &desc) {
    switch (desc.type) {
    case RF_OPTION_BOOL: return "true or false";
    case RF_OPTION_INT: return "an integer in " + std::to_string(desc.min) + ".." + std::to_string(desc.max);
    case RF_OPTION_STRING: return "a string";
    case RF_OPTION_ENUM: return "one of " + join(option_choices(desc));
    case RF_OPTION_STRING_LIST: return "an array of strings";
    default: return "what its plugin accepts";
    }
}

bool option_value_fits(const rf_option_desc &desc, const std::string &value) {
    rapidjson::Document v;
    v.Parse<rapidjson::kParseIterativeFlag>(value.c_str(), value.size());
    if (v.HasParseError()) return false;
    switch (desc.type) {
    case RF_OPTION_BOOL: return v.IsBool();
    case RF_OPTION_INT: return v.IsInt64() && v.GetInt64() >= desc.min && v.GetInt64() <= desc.max;
    case RF_OPTION_STRING: return v.IsString();
    case RF_OPTION_ENUM: {
        if (!v.IsString()) return false;
        for (const auto &c : option_choices(desc))
            if (c == v.GetString()) return true;
        return false;
    }
    case RF_OPTION_STRING_LIST:
        if (!v.IsArray()) return false;
        for (const auto &item : v.GetArray())
            if (!item.IsString()) return false;
        return true;
    default: return true;
    }
}

} // namespace rf
