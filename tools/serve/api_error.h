// An error answered to an HTTP client: status code plus the OpenAI error body
// {"error": {"message", "type", "param", "code"}} that the official clients parse.
#pragma once
#include <string>

namespace rf::serve {

struct ApiError {
    int status = 400;
    std::string message;
    std::string type = "invalid_request_error";
    std::string param; // the offending field, "" when none
};

// 400 invalid_request_error naming the field.
ApiError bad_request(const std::string &message, const std::string &param = "");

// {"error":{...}} as OpenAI writes it (param and code null when absent).
std::string error_body(const ApiError &e);

} // namespace rf::serve
