#include "backend_config.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace opcheck {

bool set_config_option(std::string &config, const std::string &key, const std::string &value, std::string &err) {
    rapidjson::Document doc;
    doc.Parse(config.empty() ? "{}" : config.c_str());
    if (doc.HasParseError() || !doc.IsObject()) { err = "GPU config is not a JSON object: " + config; return false; }
    auto &alloc = doc.GetAllocator();
    rapidjson::Document parsed(&alloc);
    parsed.Parse(value.c_str());
    rapidjson::Value v;
    if (!parsed.HasParseError()) v.CopyFrom(parsed, alloc);
    else v.SetString(value.c_str(), (rapidjson::SizeType)value.size(), alloc);
    doc.RemoveMember(key.c_str());
    doc.AddMember(rapidjson::Value(key.c_str(), (rapidjson::SizeType)key.size(), alloc), v, alloc);
    rapidjson::StringBuffer out;
    rapidjson::Writer<rapidjson::StringBuffer> w(out);
    doc.Accept(w);
    config = out.GetString();
    return true;
}

bool set_config_option(std::string &config, const std::string &key_value, std::string &err) {
    const size_t eq = key_value.find('=');
    if (eq == std::string::npos || eq == 0) { err = "--option takes KEY=VALUE, got '" + key_value + "'"; return false; }
    return set_config_option(config, key_value.substr(0, eq), key_value.substr(eq + 1), err);
}

} // namespace opcheck
