#include "openai_json.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace rf::serve {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

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

void finish(Writer &w, const std::optional<std::string> &reason) {
    w.Key("logprobs");
    w.Null();
    w.Key("finish_reason");
    if (reason) str(w, *reason);
    else w.Null();
}

// "choices": [one choice]: chat puts the text in `message` (whole) or `delta` (chunk), with the
// role when asked and no content key in an empty delta; completions in `text`.
void single_choice(Writer &w, const ResponseMeta &m, const char *chat_key, const std::string &text, bool with_role,
                   const std::optional<std::string> &finish_reason) {
    w.Key("choices");
    w.StartArray();
    w.StartObject();
    w.Key("index");
    w.Int(0);
    if (m.chat) {
        w.Key(chat_key);
        w.StartObject();
        if (with_role) {
            w.Key("role");
            w.String("assistant");
        }
        if (!text.empty() || with_role) {
            w.Key("content");
            str(w, text);
        }
        w.EndObject();
    } else {
        w.Key("text");
        str(w, text);
    }
    finish(w, finish_reason);
    w.EndObject();
    w.EndArray();
}

} // namespace

std::string completion_body(const ResponseMeta &m, const std::string &text, const std::string &finish_reason,
                            const Usage &u) {
    rapidjson::StringBuffer sb;
    Writer w(sb);
    w.StartObject();
    head(w, m, m.chat ? "chat.completion" : "text_completion");
    single_choice(w, m, "message", text, /*with_role=*/true, finish_reason);
    usage(w, u);
    w.EndObject();
    return sb.GetString();
}

std::string chunk_body(const ResponseMeta &m, const std::string &text, bool with_role,
                       const std::optional<std::string> &finish_reason) {
    rapidjson::StringBuffer sb;
    Writer w(sb);
    w.StartObject();
    head(w, m, m.chat ? "chat.completion.chunk" : "text_completion");
    single_choice(w, m, "delta", text, with_role, finish_reason);
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
