// Config file parsing (RapidJSON). Every problem is a UsageError naming the file and the key.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "json_nesting.h"
#include "rocmforge/error.h"
#include "rocmforge/join.h"
#include "rocmforge/runtime.h"

namespace rf {
namespace {

// Real configs nest 3 levels; the bound keeps every later recursive pass over the text safe.
constexpr size_t kMaxNesting = 64;

const std::set<std::string> kTopLevelKeys = {"backends", "plugin_dirs", "kernel_pack_dirs",
                                             "profiler", "op_overrides", "n_threads", "device",
                                             "backend_options"};

std::string json_text(const rapidjson::Value &v) {
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    v.Accept(w);
    return sb.GetString();
}

std::vector<std::string> string_list(const rapidjson::Value &v, const char *key,
                                     const std::string &source) {
    if (!v.IsArray())
        throw UsageError(source + ": \"" + key + "\" must be an array of strings");
    std::vector<std::string> out;
    for (const auto &item : v.GetArray()) {
        if (!item.IsString())
            throw UsageError(source + ": \"" + key + "\" must contain only strings");
        out.emplace_back(item.GetString(), item.GetStringLength());
    }
    return out;
}

// An override for an op that does not exist would silently do nothing.
void check_op_name(const std::string &op, const std::string &source) {
    std::vector<std::string> ops;
    for (int i = RF_OP_NONE + 1; i < RF_OP_COUNT; ++i) {
        if (op == rf_op_name(i)) return;
        ops.emplace_back(rf_op_name(i));
    }
    throw UsageError(source + ": op_overrides names op \"" + op + "\", which does not exist (ops: " + join(ops) + ")");
}

} // namespace

BackendRef parse_backend_ref(const std::string &name, const std::string &source) {
    const size_t colon = name.find(':');
    if (colon == std::string::npos) return {name, -1};
    BackendRef r{name.substr(0, colon), -1};
    const std::string index = name.substr(colon + 1);
    const bool digits = !index.empty() && index.size() <= 4 &&
                        std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (r.plugin.empty() || !digits)
        throw UsageError(source + ": backend '" + name + "' is neither a backend name nor NAME:DEVICE (\"hip:1\": device 1 of backend hip)");
    r.device = std::stoi(index);
    return r;
}

Config Config::from_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError("cannot open config file '" + path + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    return from_json(ss.str(), path);
}

Config Config::resolve(const std::string &path) {
    std::string p = path;
    if (p.empty())
        if (const char *env = std::getenv("ROCMFORGE_CONFIG")) p = env;
    return p.empty() ? Config() : from_file(p);
}

void Config::require_backends(const std::vector<std::string> &names) {
    for (const auto &n : names) parse_backend_ref(n, "--backend");
    backends = names;
    required = names;
    backends_explicit = true;
    // CPU stays last as the fallback, unless an instance of it is named ("cpu:0").
    if (std::none_of(backends.begin(), backends.end(), [](const std::string &b) { return parse_backend_ref(b, "").plugin == "cpu"; }))
        backends.push_back("cpu");
}

Config Config::from_json(const std::string &text, const std::string &source) {
    rapidjson::Document doc;
    // Iterative: the default recursive parser overflows the stack on deeply nested input.
    doc.Parse<rapidjson::kParseIterativeFlag>(text.c_str(), text.size());
    if (doc.HasParseError())
        throw UsageError(source + ": not valid JSON at offset " +
                         std::to_string(doc.GetErrorOffset()) + ": " +
                         rapidjson::GetParseError_En(doc.GetParseError()));
    if (const size_t depth = json_nesting_depth(text); depth > kMaxNesting)
        throw UsageError(source + ": JSON nested " + std::to_string(depth) + " levels deep (at most " +
                         std::to_string(kMaxNesting) + ")");
    if (!doc.IsObject()) throw UsageError(source + ": the config must be a JSON object");

    Config c;
    c.source = source;
    for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
        std::string key = it->name.GetString();
        if (!kTopLevelKeys.count(key))
            throw UsageError(source + ": unknown key \"" + key +
                             "\" (known: backends, plugin_dirs, kernel_pack_dirs, profiler, "
                             "op_overrides, n_threads, device, backend_options)");
    }
    if (doc.HasMember("backends")) {
        c.backends = string_list(doc["backends"], "backends", source);
        if (c.backends.empty()) throw UsageError(source + ": \"backends\" is empty");
        c.backends_explicit = true;
        for (const auto &b : c.backends) parse_backend_ref(b, source); // a name listed twice starts once
    }
    if (doc.HasMember("plugin_dirs")) c.plugin_dirs = string_list(doc["plugin_dirs"], "plugin_dirs", source);
    if (doc.HasMember("kernel_pack_dirs"))
        c.kernel_pack_dirs = string_list(doc["kernel_pack_dirs"], "kernel_pack_dirs", source);
    if (doc.HasMember("n_threads")) {
        if (!doc["n_threads"].IsInt() || doc["n_threads"].GetInt() < 0)
            throw UsageError(source + ": \"n_threads\" must be a non-negative integer");
        c.n_threads = doc["n_threads"].GetInt();
    }
    if (doc.HasMember("device")) {
        if (!doc["device"].IsInt() || doc["device"].GetInt() < 0)
            throw UsageError(source + ": \"device\" must be a non-negative integer (a GPU index; `rocmforge info` lists them)");
        c.device = doc["device"].GetInt();
    }
    if (doc.HasMember("profiler")) {
        const auto &p = doc["profiler"];
        if (p.IsBool()) {
            c.profiler_enabled = p.GetBool();
        } else if (p.IsObject()) {
            c.profiler_json = json_text(p);
            if (p.HasMember("enabled")) {
                if (!p["enabled"].IsBool()) throw UsageError(source + ": \"profiler.enabled\" must be true or false");
                c.profiler_enabled = p["enabled"].GetBool();
            }
            if (p.HasMember("trace")) {
                if (!p["trace"].IsString()) throw UsageError(source + ": \"profiler.trace\" must be a string");
                c.profiler_trace = p["trace"].GetString();
            }
        } else {
            throw UsageError(source + ": \"profiler\" must be an object or a boolean");
        }
    }
    if (doc.HasMember("op_overrides")) {
        const auto &o = doc["op_overrides"];
        if (!o.IsObject()) throw UsageError(source + ": \"op_overrides\" must be an object");
        for (auto it = o.MemberBegin(); it != o.MemberEnd(); ++it) {
            if (!it->value.IsString())
                throw UsageError(source + ": op_overrides." + it->name.GetString() + " must be a backend name");
            check_op_name(it->name.GetString(), source);
            c.op_overrides[it->name.GetString()] = it->value.GetString();
        }
    }
    if (doc.HasMember("backend_options")) {
        const auto &o = doc["backend_options"];
        if (!o.IsObject()) throw UsageError(source + ": \"backend_options\" must be an object");
        for (auto it = o.MemberBegin(); it != o.MemberEnd(); ++it) {
            if (!it->value.IsObject())
                throw UsageError(source + ": backend_options." + it->name.GetString() + " must be an object");
            const BackendRef ref = parse_backend_ref(it->name.GetString(), source);
            if (ref.device >= 0 && it->value.HasMember("device") &&
                !(it->value["device"].IsInt() && it->value["device"].GetInt() == ref.device))
                throw UsageError(source + ": backend_options." + it->name.GetString() + ".device contradicts the device in its name");
            c.backend_json[it->name.GetString()] = json_text(it->value);
        }
    }
    return c;
}

std::string Config::backend_config_json(const std::string &backend) const {
    const BackendRef ref = parse_backend_ref(backend, source);
    rapidjson::Document d;
    auto it = backend_json.find(ref.plugin);
    d.Parse(it == backend_json.end() ? "{}" : it->second.c_str());
    auto &a = d.GetAllocator();
    if (ref.device >= 0) // "hip:1": backend_options."hip:1" over backend_options.hip
        if (auto inst = backend_json.find(backend); inst != backend_json.end()) {
            rapidjson::Document o(&a);
            o.Parse(inst->second.c_str());
            for (auto m = o.MemberBegin(); m != o.MemberEnd(); ++m) {
                d.RemoveMember(m->name);
                d.AddMember(rapidjson::Value(m->name, a), rapidjson::Value(m->value, a), a);
            }
        }
    if (n_threads > 0 && !d.HasMember("n_threads")) d.AddMember("n_threads", n_threads, a);
    // The device: the instance's own ("hip:1"), else --device N, which wins over the file's
    // backend_options.<name>.device.
    if (const int dev = ref.device >= 0 ? ref.device : device; dev >= 0) {
        d.RemoveMember("device");
        d.AddMember("device", dev, a);
    }
    if (!kernel_pack_dirs.empty() && !d.HasMember("kernel_pack_dirs")) {
        rapidjson::Value arr(rapidjson::kArrayType);
        for (const auto &p : kernel_pack_dirs) arr.PushBack(rapidjson::Value(p.c_str(), a), a);
        d.AddMember("kernel_pack_dirs", arr, a);
    }
    return json_text(d);
}

std::vector<std::string> Config::backend_option_keys(const std::string &backend) const {
    std::vector<std::string> keys;
    auto it = backend_json.find(backend);
    if (it == backend_json.end()) return keys;
    rapidjson::Document d;
    d.Parse(it->second.c_str());
    for (auto m = d.MemberBegin(); m != d.MemberEnd(); ++m) keys.emplace_back(m->name.GetString(), m->name.GetStringLength());
    return keys;
}

std::string Config::profiler_config_json() const {
    rapidjson::Document d;
    d.Parse(profiler_json.c_str());
    if (!d.IsObject()) d.SetObject();
    auto &a = d.GetAllocator();
    d.RemoveMember("trace");
    d.AddMember("trace", rapidjson::Value(profiler_trace.c_str(), a), a);
    return json_text(d);
}

std::string Config::to_json() const {
    rapidjson::Document d(rapidjson::kObjectType);
    auto &a = d.GetAllocator();
    auto list = [&](const std::vector<std::string> &v) {
        rapidjson::Value arr(rapidjson::kArrayType);
        for (const auto &s : v) arr.PushBack(rapidjson::Value(s.c_str(), a), a);
        return arr;
    };
    d.AddMember("backends", list(backends), a);
    d.AddMember("plugin_dirs", list(plugin_dirs), a);
    d.AddMember("kernel_pack_dirs", list(kernel_pack_dirs), a);
    rapidjson::Value prof(rapidjson::kObjectType);
    prof.AddMember("enabled", profiler_enabled, a);
    prof.AddMember("trace", rapidjson::Value(profiler_trace.c_str(), a), a);
    d.AddMember("profiler", prof, a);
    rapidjson::Value ov(rapidjson::kObjectType);
    for (const auto &[k, v] : op_overrides)
        ov.AddMember(rapidjson::Value(k.c_str(), a), rapidjson::Value(v.c_str(), a), a);
    d.AddMember("op_overrides", ov, a);
    d.AddMember("n_threads", n_threads, a);
    if (device >= 0) d.AddMember("device", device, a);
    rapidjson::Value opts(rapidjson::kObjectType);
    for (const auto &[backend, text] : backend_json) {
        rapidjson::Document o(&a); // parsed with d's allocator, so it can be moved into d
        o.Parse(text.c_str());
        opts.AddMember(rapidjson::Value(backend.c_str(), a), rapidjson::Value(o, a), a);
    }
    d.AddMember("backend_options", opts, a);
    return json_text(d);
}

} // namespace rf
