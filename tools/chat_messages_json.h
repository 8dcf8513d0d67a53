// OpenAI chat messages and tools in JSON -> rf::ChatMessage and the tools' JSON, for the chat
// template: shared by `rocmforge template --messages FILE` and the server's request parsing, so
// both accept the same conversations. Every mistake names its field.
#pragma once
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "rocmforge/chat_template.h"

namespace rf {

class ChatFieldError : public UsageError {
public:
    ChatFieldError(const std::string &msg, std::string field) : UsageError(msg), field_(std::move(field)) {}
    const std::string &field() const { return field_; }

private:
    std::string field_;
};

// Tools and tool calls nest at most this deep (a tool's parameters schema, a call's arguments):
// the template and the JSON writer recurse once per level, and a request parsed iteratively may
// nest a million levels deep.
constexpr size_t kMaxToolJsonNesting = 128;

// Deepest array / object nesting of a parsed value, without recursion.
size_t json_value_nesting(const rapidjson::Value &v);

// `messages`: role system / user / assistant / tool ("developer" is system), content a string,
// an array of text parts or (assistant with tool_calls) null or absent, tool_calls, tool_call_id,
// name and (assistant) reasoning_content. Throws ChatFieldError.
std::vector<ChatMessage> chat_messages_from_json(const rapidjson::Value &v, const std::string &field = "messages");

// `tools`: an array of {"type": "function", "function": {"name": ..., ...}}, returned as JSON
// text for the template. Throws ChatFieldError.
std::string chat_tools_from_json(const rapidjson::Value &v, const std::string &field = "tools");

// `chat_template_kwargs`: an object of more template variables, returned as JSON text. Throws
// ChatFieldError.
std::string chat_template_kwargs_from_json(const rapidjson::Value &v, const std::string &field = "chat_template_kwargs");

} // namespace rf
