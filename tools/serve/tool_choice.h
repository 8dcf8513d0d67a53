// `tool_choice` and `parallel_tool_calls` of a chat request, checked against its `tools` (400
// naming the field); and for `required` or a named function, the grammar that holds the output
// to calls in the generic JSON form {"name": an allowed name, "arguments": that tool's
// parameters} (an array of one or more when parallel_tool_calls), which parse_tool_calls reads
// back like any output. So even a model that never learned tools returns a valid call.
#pragma once
#include <string>

#include <rapidjson/document.h>

#include "request_parse.h"

namespace rf::serve {

// True when `key` is tool_choice or parallel_tool_calls (then parsed into r). Throws ApiError.
bool parse_tool_field(const std::string &key, const rapidjson::Value &v, CompletionRequest &r);

// After every field is parsed: the tools' names, tool_choice checked against them, and the
// forced-call grammar when tool_choice asks for one. Throws ApiError.
void finish_tool_choice(CompletionRequest &r);

} // namespace rf::serve
