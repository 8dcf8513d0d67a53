// How a request-parsing error names the JSON type it got ("'n' must be an integer, got a string").
#pragma once
#include <rapidjson/document.h>

namespace rf {

inline const char *json_type_name(const rapidjson::Value &v) {
    if (v.IsNull()) return "null";
    if (v.IsBool()) return "a boolean";
    if (v.IsNumber()) return "a number";
    if (v.IsString()) return "a string";
    if (v.IsArray()) return "an array";
    return "an object";
}

} // namespace rf
