// Chat templates: the common formats of GGUF files' tokenizer.chat_template, recognised by
// their markers (as llama.cpp's llm_chat_detect_template) and written by code, not by a Jinja
// interpreter.
#pragma once
#include <string>
#include <vector>

namespace rf {

enum class ChatFormat { ChatML, Llama2, Llama3, Mistral, Gemma, Phi3 };

struct ChatMessage {
    std::string role; // "system", "user" or "assistant"
    std::string content;
};

// A format name ("chatml", "llama2", "llama3", "mistral", "gemma", "phi3") or the text of a
// template. Throws UsageError naming the supported formats when neither matches.
ChatFormat chat_format_from(const std::string &name_or_template);
const char *chat_format_name(ChatFormat format);

// The conversation as the format writes it; add_assistant opens the assistant's turn.
// Throws UsageError for a role other than system / user / assistant.
std::string apply_chat_template(ChatFormat format, const std::vector<ChatMessage> &messages, bool add_assistant);

} // namespace rf
