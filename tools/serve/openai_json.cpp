#include "openai_json.h"

#include <string_view>

#include "logprobs_json.h"
#include "utf8_text.h"

namespace rf::serve {
namespace {

using Writer = JsonWriter;

void str(Writer &w, const std::string &s) { w.String(s.c_str(), (rapidjson::SizeType)s.size()); }

void head(Writer &w, const ResponseMeta &m, const char *object) {
    w.Key("id");
    str(w, m.id);
    w.Key("object");
    w.String(object);
    w.Key("created");
    w.Int64(m.created);
    w.Key("model");
    str(w, m.model);
}

void usage(Writer &w, const Usage &u) {
    w.Key("usage");
    w.StartObject();
    w.Key("prompt_tokens");
    w.Int64(u.prompt_tokens);
    w.Key("completion_tokens");
    w.Int64(u.completion_tokens);
    w.Key("total_tokens");
    w.Int64(u.prompt_tokens + u.completion_tokens);
    w.EndObject();
}

void timings(Writer &w, const Usage &u) {
    if (!u.speculative) return;
    w.Key("timings");
    w.StartObject();
    w.Key("draft_n");
    w.Int64(u.draft_n);
    w.Key("draft_n_accepted");
    w.Int64(u.draft_n_accepted);
    w.EndObject();
}

// "tool_calls": whole calls in a message; in a delta each piece with its index, the id, type and
// name only on a call's first piece.
void tool_calls(Writer &w, const std::vector<ToolCallOut> &calls, bool delta) {
    w.Key("tool_calls");
    w.StartArray();
    for (const ToolCallOut &c : calls) {
        w.StartObject();
        if (delta) {
            w.Key("index");
            w.Int(c.index);
        }
        if (!delta || !c.id.empty()) {
            w.Key("id");
            str(w, c.id);
            w.Key("type");
            w.String("function");
        }
        w.Key("function");
        w.StartObject();
        if (!delta || !c.name.empty()) {
            w.Key("name");
            str(w, c.name);
        }
        w.Key("arguments");
        str(w, sanitize_utf8(c.arguments));
        w.EndObject();
        w.EndObject();
    }
    w.EndArray();
}

// One choice: chat puts the text in `message` (whole) or `delta` (chunk), with the role when
// asked and no content key in an empty delta; completions in `text`.
void choice(Writer &w, const ResponseMeta &m, const char *chat_key, const Choice &c, bool with_role) {
    w.StartObject();
    w.Key("index");
    w.Int(c.index);
    if (m.chat) {
        w.Key(chat_key);
        w.StartObject();
        if (with_role) {
            w.Key("role");
            w.String("assistant");
        }
        const bool delta = std::string_view(chat_key) == "delta";
        if (!delta && !c.tool_calls.empty() && c.text.empty()) {
            w.Key("content");
            w.Null();
        } else if (!c.text.empty() || with_role) {
            w.Key("content");
            str(w, sanitize_utf8(c.text));
        }
        if (!c.reasoning.empty()) {
            w.Key("reasoning_content");
            str(w, sanitize_utf8(c.reasoning));
        }
        if (!c.tool_calls.empty()) tool_calls(w, c.tool_calls, delta);
        w.EndObject();
    } else {
        w.Key("text");
        str(w, sanitize_utf8(c.text));
    }
    w.Key("logprobs");
    if (c.logprobs) write_logprobs(w, m.chat, *c.logprobs);
    else w.Null();
    w.Key("finish_reason");
    if (c.finish_reason) str(w, *c.finish_reason);
    else w.Null();
    w.EndObject();
}

} // namespace

std::string completion_body(const ResponseMeta &m, const std::vector<Choice> &choices, const Usage &u) {
    rapidjson::StringBuffer sb;
    Writer w(sb);
    w.StartObject();
    head(w, m, m.chat ? "chat.completion" : "text_completion");
    w.Key("choices");
    w.StartArray();
    for (const Choice &c : choices) choice(w, m, "message", c, /*with_role=*/true);
    w.EndArray();
    usage(w, u);
    timings(w, u);
    w.EndObject();
    return sb.GetString();
}

std::string chunk_body(const ResponseMeta &m, const Choice &c, bool with_role, const Usage *t) {
    rapidjson::StringBuffer sb;
    Writer w(sb);
    w.StartObject();
    head(w, m, m.chat ? "chat.completion.chunk" : "text_completion");
    w.Key("choices");
    w.StartArray();
    choice(w, m, "delta", c, with_role);
    w.EndArray();
    if (t) timings(w, *t);
    w.EndObject();
    return sb.GetString();
}

std::string usage_chunk_body(const ResponseMeta &m, const Usage &u) {
    rapidjson::StringBuffer sb;
    Writer w(sb);
    w.StartObject();
    head(w, m, m.chat ? "chat.completion.chunk" : "text_completion");
    w.Key("choices");
    w.StartArray();
    w.EndArray();
    usage(w, u);
    timings(w, u);
    w.EndObject();
    return sb.GetString();
}

std::string models_body(const std::string &model, int64_t created) {
    rapidjson::StringBuffer sb;
    Writer w(sb);
    w.StartObject();
    w.Key("object");
    w.String("list");
    w.Key("data");
    w.StartArray();
    w.StartObject();
    w.Key("id");
    str(w, model);
    w.Key("object");
    w.String("model");
    w.Key("created");
    w.Int64(created);
    w.Key("owned_by");
    w.String("rocmforge");
    w.EndObject();
    w.EndArray();
    w.EndObject();
    return sb.GetString();
}

} // namespace rf::serve
