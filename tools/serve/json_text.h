// A JSON value written back out as compact text (a schema, a call's arguments).
#pragma once
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace rf::serve {

inline std::string json_text(const rapidjson::Value &v) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    v.Accept(w);
    return {buf.GetString(), buf.GetSize()};
}

} // namespace rf::serve
