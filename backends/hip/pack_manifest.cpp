#include "pack_manifest.h"

#include <rapidjson/document.h>

#include "kernel_args.h"
#include "rocmforge/abi.h"

namespace rf_hip {

bool check_pack_manifest(const std::string &text, const std::string &arch, const std::vector<std::string> &required,
                         const std::string &where, PackManifest &out, std::string &err) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag>(text.c_str(), text.size()); // recursion would overflow on deep nesting
    auto str = [&](const char *k) -> std::string {
        return doc.IsObject() && doc.HasMember(k) && doc[k].IsString() ? doc[k].GetString() : "";
    };
    auto num = [&](const char *k) -> int { return doc.IsObject() && doc.HasMember(k) && doc[k].IsInt() ? doc[k].GetInt() : -1; };
    if (doc.HasParseError() || !doc.IsObject()) { err = where + ": not a valid JSON manifest"; return false; }
    if (str("arch") != arch) {
        err = where + ": built for arch '" + str("arch") + "' but the device needs '" + arch + "'";
        return false;
    }
    if (num("abi_major") != RF_ABI_MAJOR || num("kargs_version") != RF_KARGS_VERSION) {
        err = where + ": ABI " + std::to_string(num("abi_major")) + "/kargs " + std::to_string(num("kargs_version")) +
              " but this plugin has ABI " + std::to_string(RF_ABI_MAJOR) + "/kargs " + std::to_string(RF_KARGS_VERSION) +
              ": rebuild the pack";
        return false;
    }
    std::vector<std::string> listed;
    if (doc.HasMember("kernels") && doc["kernels"].IsArray())
        for (const auto &v : doc["kernels"].GetArray())
            if (v.IsString()) listed.emplace_back(v.GetString());
    for (const auto &name : required) {
        bool found = false;
        for (const auto &l : listed) found = found || l == name;
        if (!found) { err = where + " (arch " + arch + ") lacks kernel '" + name + "' that this plugin needs: rebuild the pack"; return false; }
    }
    out.code = str("code");
    out.sha256 = str("sha256");
    out.compiler = str("compiler");
    out.n_kernels = listed.size();
    return true;
}

} // namespace rf_hip
