#include "backend_option_arg.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "rocmforge/error.h"

namespace rf {
namespace {

// `text` itself when it is one JSON value, else `text` as a JSON string.
std::string value_json(const std::string &text) {
    rapidjson::Document d;
    d.Parse<rapidjson::kParseIterativeFlag>(text.c_str(), text.size());
    if (!d.HasParseError()) return text;
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    w.String(text.c_str(), rapidjson::SizeType(text.size()));
    return sb.GetString();
}

} // namespace

BackendOptionArg parse_backend_option_arg(const std::string &flag, const std::string &text) {
    const std::string usage = " (BACKEND.KEY=VALUE, e.g. cpu.simd=avx2 or hip:1.KEY=16; `rocmforge info` lists the options)";
    const size_t eq = text.find('=');
    if (eq == std::string::npos) throw UsageError(flag + " '" + text + "' has no '='" + usage);
    const std::string name = text.substr(0, eq);
    const size_t dot = name.find('.');
    if (dot == std::string::npos) throw UsageError(flag + " '" + text + "' names no backend before a '.'" + usage);
    BackendOptionArg a{name.substr(0, dot), name.substr(dot + 1), value_json(text.substr(eq + 1))};
    if (a.backend.empty() || a.key.empty()) throw UsageError(flag + " '" + text + "' has an empty backend or key" + usage);
    parse_backend_ref(a.backend, flag + " '" + text + "'");
    return a;
}

void apply_backend_option_flags(Config &config, const std::vector<BackendOptionFlag> &flags) {
    for (const auto &f : flags) {
        const BackendOptionArg a = parse_backend_option_arg(f.flag, f.text);
        config.set_backend_option(a.backend, a.key, a.value, f.flag + " " + f.text);
    }
}

} // namespace rf
