// ChatTemplate: a model's Jinja template rendered with the variables transformers'
// apply_chat_template gives it (messages, tools, documents, add_generation_prompt, bos_token,
// eos_token), or one of the built-in formats.
#include "rocmforge/chat_template.h"

#include "rocmforge/jinja.h"

#include "chat_harmony.h"

namespace rf {

struct ChatTemplate::Jinja {
    jinja::Template tmpl;
    std::string origin, bos, eos;
    bool harmony = false; // gpt-oss's template: an assistant's reasoning is its message.thinking
};

namespace {

// A tool call's arguments arrive as a JSON string (OpenAI's wire format); the published
// templates write them with `| tojson` and expect an object, so a string that holds a JSON
// object is passed as that object (as vLLM does). Anything else is passed as it came.
jinja::Value tool_calls_value(const std::string &json, size_t index) {
    jinja::Value calls;
    try {
        calls = jinja::from_json(json);
    } catch (const jinja::TemplateError &e) {
        throw UsageError("chat message " + std::to_string(index) + ": tool_calls: " + e.message());
    }
    if (!calls.is_list()) throw UsageError("chat message " + std::to_string(index) + ": tool_calls must be an array");
    for (auto &call : calls.list_data().items) {
        if (!call.is_dict()) continue;
        jinja::Value *fn = call.dict_data().find(jinja::Value("function"));
        if (!fn || !fn->is_dict()) continue;
        jinja::Value *args = fn->dict_data().find(jinja::Value("arguments"));
        if (!args || !args->is_string()) continue;
        try {
            jinja::Value parsed = jinja::from_json(args->as_string());
            if (parsed.is_dict()) *args = parsed;
        } catch (const jinja::TemplateError &) {
        }
    }
    return calls;
}

// gpt-oss's template reads an assistant's reasoning as `thinking` (as llama-server passes it) and
// raises when a message with calls has both content and thinking: then the content (the model's
// preamble) is kept and the reasoning is not passed.
bool passes_thinking(const ChatMessage &m) {
    return !m.reasoning_content.empty() && (m.tool_calls_json.empty() || m.content.empty() || m.content_null);
}

jinja::Value message_value(const ChatMessage &m, size_t index, bool harmony) {
    jinja::Value v = jinja::Value::dict();
    v.set("role", jinja::Value(m.role));
    v.set("content", m.content_null ? jinja::Value::none() : jinja::Value(m.content));
    if (!m.tool_calls_json.empty()) v.set("tool_calls", tool_calls_value(m.tool_calls_json, index));
    if (!m.tool_call_id.empty()) v.set("tool_call_id", jinja::Value(m.tool_call_id));
    if (!m.name.empty()) v.set("name", jinja::Value(m.name));
    if (!m.reasoning_content.empty()) v.set("reasoning_content", jinja::Value(m.reasoning_content));
    if (harmony && passes_thinking(m)) v.set("thinking", jinja::Value(m.reasoning_content));
    return v;
}

} // namespace

ChatTemplate ChatTemplate::jinja(const std::string &source, const std::string &origin, std::string bos_token, std::string eos_token) {
    ChatTemplate t;
    try {
        t.jinja_ = std::make_shared<const Jinja>(Jinja{jinja::Template::parse(source), origin, std::move(bos_token), std::move(eos_token),
                                                       source.find("<|channel|>") != std::string::npos});
    } catch (const jinja::TemplateError &e) {
        throw UsageError("chat template (" + origin + ") does not parse: " + e.what());
    }
    return t;
}

ChatTemplate ChatTemplate::builtin(ChatFormat format) {
    ChatTemplate t;
    t.format_ = format;
    return t;
}

std::string ChatTemplate::describe() const { return jinja_ ? "jinja (" + jinja_->origin + ")" : chat_format_name(format_); }

std::string ChatTemplate::apply(const ChatTemplateInput &in) const {
    if (!jinja_) {
        if (!in.extra_json.empty())
            throw UsageError(std::string("chat_template_kwargs need the model's Jinja chat template; the built-in ") +
                             chat_format_name(format_) + " format has no variables");
        // Harmony writes tools, calls and their results (the others have no place for them).
        if (format_ == ChatFormat::Harmony) return harmony_prompt(in.messages, in.tools_json, in.add_generation_prompt);
        for (size_t i = 0; i < in.messages.size(); ++i)
            if (!in.messages[i].tool_calls_json.empty() || in.messages[i].content_null)
                throw UsageError("chat message " + std::to_string(i) + " has tool calls, which the built-in " +
                                 chat_format_name(format_) + " format cannot write (the model has no Jinja chat template)");
        if (!in.tools_json.empty())
            throw UsageError(std::string("tools need the model's Jinja chat template; the built-in ") + chat_format_name(format_) +
                             " format cannot show them");
        return apply_chat_template(format_, in.messages, in.add_generation_prompt);
    }
    jinja::Value ctx = jinja::Value::dict();
    static const char *kOwn[] = {"messages", "tools", "documents", "add_generation_prompt", "bos_token", "eos_token"};
    if (!in.extra_json.empty()) {
        jinja::Value extra;
        try {
            extra = jinja::from_json(in.extra_json);
        } catch (const jinja::TemplateError &e) {
            throw UsageError("chat_template_kwargs: " + e.message());
        }
        if (!extra.is_dict()) throw UsageError("chat_template_kwargs must be an object");
        for (const auto &kv : extra.dict_data().items) {
            for (const char *own : kOwn)
                if (kv.first.as_string() == own)
                    throw UsageError(std::string("chat_template_kwargs may not set '") + own + "' (the request gives it)");
            ctx.dict_data().items.push_back(kv);
        }
    }
    jinja::Value messages = jinja::Value::list();
    for (size_t i = 0; i < in.messages.size(); ++i) messages.push(message_value(in.messages[i], i, jinja_->harmony));
    ctx.set("messages", messages);
    jinja::Value tools = jinja::Value::none();
    if (!in.tools_json.empty()) {
        try {
            tools = jinja::from_json(in.tools_json);
        } catch (const jinja::TemplateError &e) {
            throw UsageError("tools: " + e.message());
        }
        if (!tools.is_list()) throw UsageError("tools must be an array");
    }
    ctx.set("tools", tools);
    ctx.set("documents", jinja::Value::none());
    ctx.set("add_generation_prompt", jinja::Value(in.add_generation_prompt));
    ctx.set("bos_token", jinja::Value(jinja_->bos));
    ctx.set("eos_token", jinja::Value(jinja_->eos));
    try {
        return jinja_->tmpl.render(ctx);
    } catch (const jinja::TemplateError &e) {
        if (e.kind() == jinja::TemplateError::Kind::Raised) throw ChatTemplateError("the chat template raised: " + e.message());
        throw ChatTemplateError(std::string("the chat template failed: ") + e.what());
    }
}

} // namespace rf
