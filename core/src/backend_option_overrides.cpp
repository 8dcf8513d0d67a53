// Backend options set on top of the config file: the command line's --backend-option and the C
// API's backend_options string. They land in the same backend_json objects as the file's, so one
// check (backend_options.cpp) covers all of them.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "json_nesting.h"
#include "rocmforge/error.h"
#include "rocmforge/runtime.h"

namespace rf {
namespace {

// The config file allows 64 levels; a value sits two levels down in it.
constexpr size_t kMaxValueNesting = 62;

std::string json_text(const rapidjson::Value &v) {
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    v.Accept(w);
    return sb.GetString();
}

} // namespace

void Config::set_backend_option(const std::string &backend, const std::string &key, const std::string &value,
                                const std::string &origin) {
    const BackendRef ref = parse_backend_ref(backend, origin);
    if (key.empty()) throw UsageError(origin + ": backend option of '" + backend + "' with an empty key");
    rapidjson::Document v;
    v.Parse<rapidjson::kParseIterativeFlag>(value.c_str(), value.size());
    if (v.HasParseError()) throw UsageError(origin + ": the value of " + backend + "." + key + " is not JSON: " + value);
    if (json_nesting_depth(value) > kMaxValueNesting)
        throw UsageError(origin + ": the value of " + backend + "." + key + " is nested more than " +
                         std::to_string(kMaxValueNesting) + " levels deep");
    if (ref.device >= 0 && key == "device" && !(v.IsInt() && v.GetInt() == ref.device))
        throw UsageError(origin + ": " + backend + ".device contradicts the device in its name");

    rapidjson::Document obj;
    const auto it = backend_json.find(backend);
    obj.Parse(it == backend_json.end() ? "{}" : it->second.c_str());
    auto &a = obj.GetAllocator();
    obj.RemoveMember(key.c_str());
    obj.AddMember(rapidjson::Value(key.c_str(), a), rapidjson::Value(v, a), a);
    backend_json[backend] = json_text(obj);
    backend_option_origin[backend + "." + key] = origin;
}

void Config::merge_backend_options(const std::string &json, const std::string &origin) {
    rapidjson::Document d;
    d.Parse<rapidjson::kParseIterativeFlag>(json.c_str(), json.size());
    if (d.HasParseError() || !d.IsObject())
        throw UsageError(origin + ": not a JSON object of backend objects ({\"cpu\": {\"simd\": \"avx2\"}})");
    for (auto b = d.MemberBegin(); b != d.MemberEnd(); ++b) {
        const std::string backend(b->name.GetString(), b->name.GetStringLength());
        parse_backend_ref(backend, origin);
        if (!b->value.IsObject()) throw UsageError(origin + ": " + backend + " must be an object of options");
        for (auto m = b->value.MemberBegin(); m != b->value.MemberEnd(); ++m)
            set_backend_option(backend, std::string(m->name.GetString(), m->name.GetStringLength()), json_text(m->value),
                               origin);
    }
}

std::string Config::backend_option_value(const std::string &backend, const std::string &key) const {
    const auto it = backend_json.find(backend);
    if (it == backend_json.end()) return "";
    rapidjson::Document d;
    d.Parse(it->second.c_str());
    const auto m = d.FindMember(key.c_str());
    return m == d.MemberEnd() ? "" : json_text(m->value);
}

std::string Config::backend_option_source(const std::string &backend, const std::string &key) const {
    const auto it = backend_option_origin.find(backend + "." + key);
    return it == backend_option_origin.end() ? source : it->second;
}

} // namespace rf
