// The model's output -> OpenAI tool calls. The format is the chat template's (found by the
// markers its source uses, as llama.cpp's chat.cpp does); text outside the calls is content.
// Output that does not parse as a call (unterminated markup, invalid JSON) stays content.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace rf::serve {

enum class ToolCallFormat {
    Hermes,  // Hermes / Qwen2.5 / Qwen3: <tool_call>{"name", "arguments"}</tool_call>
    Llama3,  // Llama 3.x: {"name", "parameters"} (optionally after <|python_tag|>)
    Mistral, // [TOOL_CALLS][{"name", "arguments"}, ...] (the marker optional: a control token)
    Generic, // a whole-output JSON {"name", "arguments"} or {"tool_calls": [...]}
    Harmony, // gpt-oss: commentary to=functions.NAME messages (harmony_output.h reads them)
};

// "hermes", "llama3", "mistral", "generic", "harmony".
const char *tool_call_format_name(ToolCallFormat format);

// The format a chat template's source asks for.
ToolCallFormat detect_tool_call_format(std::string_view template_source);

struct ParsedToolCall {
    std::string name;
    std::string arguments; // a JSON object, as text
};

struct ParsedOutput {
    std::string content;
    std::vector<ParsedToolCall> calls;
};

ParsedOutput parse_tool_calls(std::string_view text, ToolCallFormat format);

} // namespace rf::serve
