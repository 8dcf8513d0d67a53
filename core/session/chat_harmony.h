// gpt-oss's harmony prompt format (OpenAI's harmony docs; llama.cpp's LLM_CHAT_TEMPLATE_OPENAI_MOE
// for the plain conversation): every message <|start|>ROLE<|message|>TEXT<|end|>, the assistant's
// past answers on the final channel, the open turn <|start|>assistant.
//
// With tools: the harmony system message (its channels, calls on commentary), the developer
// message with the request's system text as "# Instructions" and the functions as a TypeScript
// namespace. An assistant's calls as <|start|>assistant to=functions.NAME<|channel|>commentary
// json<|message|>ARGS<|call|> (its text before them as a commentary preamble), a tool's result
// as <|start|>functions.NAME to=assistant<|channel|>commentary<|message|>TEXT<|end|>.
// Reasoning (reasoning_content) of past turns is dropped, as the format asks, but for the turns
// of calls after which no final answer came yet (the model is still working on the question)
// and an assistant turn left open for the model to continue.
#pragma once
#include <string>
#include <vector>

#include "rocmforge/chat_template.h"

namespace rf {

// Throws UsageError for a role harmony has not (system, developer, user, assistant, tool are
// its), tool calls that are not a JSON array of calls, tools that are not an array of functions.
std::string harmony_prompt(const std::vector<ChatMessage> &messages, const std::string &tools_json, bool add_assistant);

} // namespace rf
