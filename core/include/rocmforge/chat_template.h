// Chat templates. A GGUF file's tokenizer.chat_template (or a template file) is rendered by the
// Jinja engine (rocmforge/jinja.h) as Hugging Face transformers renders it; seven common formats
// are also written by code, recognised by name or by their markers (as llama.cpp's
// llm_chat_detect_template), for files without a template.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/error.h"

namespace rf {

enum class ChatFormat { ChatML, Llama2, Llama3, Mistral, Gemma, Phi3, Harmony };

struct ChatMessage {
    std::string role; // "system", "user", "assistant" (or "tool" for a Jinja template)
    std::string content;
    bool content_null = false;   // content is null (an assistant turn that only calls tools)
    std::string tool_calls_json; // assistant: its tool_calls, a JSON array ("" when none)
    std::string tool_call_id;    // tool: the call it answers ("" when none)
    std::string name;            // tool: the function's name ("" when none)
    std::string reasoning_content; // assistant: its reasoning, for templates that show it ("" when none)
};

// A format name ("chatml", "llama2", "llama3", "mistral", "gemma", "phi3", "gpt-oss" or its alias
// "harmony") or the text of a
// template. Throws UsageError naming the supported formats when neither matches.
ChatFormat chat_format_from(const std::string &name_or_template);
const char *chat_format_name(ChatFormat format);
// The format a family's files are written for when they carry no template (gpt-oss: harmony),
// or ChatML, the default of the others; general_architecture as the file names it.
ChatFormat family_chat_format(const std::string &general_architecture);

// The conversation as the format writes it; add_assistant opens the assistant's turn.
// Throws UsageError for a role other than system / user / assistant.
std::string apply_chat_template(ChatFormat format, const std::vector<ChatMessage> &messages, bool add_assistant);

// A template a conversation cannot be rendered with: the template raised (what() is its
// message) or failed on it. A bad request, not a server fault.
class ChatTemplateError : public UsageError {
public:
    explicit ChatTemplateError(const std::string &msg) : UsageError(msg) {}
};

struct ChatTemplateInput {
    std::vector<ChatMessage> messages;
    std::string tools_json; // the request's tools, a JSON array ("" when none: tools is None)
    bool add_generation_prompt = true;
    // More variables for a Jinja template (e.g. Qwen3's enable_thinking), a JSON object ("" when
    // none), as chat_template_kwargs in llama-server and vLLM. They cannot replace the above.
    std::string extra_json;
};

// The template a model's conversations are rendered with: its Jinja template, or a built-in
// format.
class ChatTemplate {
public:
    // Parses a Jinja template; bos_token / eos_token are the vocabulary's texts of those tokens.
    // Throws UsageError naming `origin`, the line and the column when it does not parse.
    static ChatTemplate jinja(const std::string &source, const std::string &origin, std::string bos_token,
                              std::string eos_token);
    static ChatTemplate builtin(ChatFormat format);

    bool is_jinja() const { return jinja_ != nullptr; }
    ChatFormat format() const { return format_; }
    // "jinja (ORIGIN)" or the format's name.
    std::string describe() const;

    // The prompt. Throws ChatTemplateError when the template raises or fails (its message),
    // UsageError for a role a built-in format lacks or tools it cannot show.
    std::string apply(const ChatTemplateInput &input) const;

private:
    struct Jinja;
    std::shared_ptr<const Jinja> jinja_;
    ChatFormat format_ = ChatFormat::ChatML;
};

} // namespace rf
