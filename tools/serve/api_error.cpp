#include "api_error.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace rf::serve {

ApiError bad_request(const std::string &message, const std::string &param) {
    return ApiError{400, message, "invalid_request_error", param};
}

std::string error_body(const ApiError &e) {
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    w.StartObject();
    w.Key("error");
    w.StartObject();
    w.Key("message");
    w.String(e.message.c_str(), (rapidjson::SizeType)e.message.size());
    w.Key("type");
    w.String(e.type.c_str());
    w.Key("param");
    if (e.param.empty()) w.Null();
    else w.String(e.param.c_str());
    w.Key("code");
    w.Null();
    w.EndObject();
    w.EndObject();
    return sb.GetString();
}

} // namespace rf::serve
