// The GPU plugin's config for the checks: a JSON object (--gpu-config) with options set on top
// (--option KEY=VALUE, and the observer check's two timing modes).
#pragma once
#include <string>

namespace opcheck {

// Sets `key` in the JSON object `config` to `value`: the value as JSON where it parses as JSON
// (true, 64, "text", [..]), else as a string. False with `err` where config is no JSON object.
bool set_config_option(std::string &config, const std::string &key, const std::string &value, std::string &err);
// The same from "KEY=VALUE" (opcheck's --option); false with `err` where there is no '=' or key.
bool set_config_option(std::string &config, const std::string &key_value, std::string &err);

} // namespace opcheck
