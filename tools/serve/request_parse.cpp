#include "request_parse.h"

#include <cmath>
#include <set>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "api_error.h"

namespace rf::serve {
namespace {

using rapidjson::Value;

constexpr size_t kMaxStops = 4; // as OpenAI

const char *type_name(const Value &v) {
    if (v.IsNull()) return "null";
    if (v.IsBool()) return "a boolean";
    if (v.IsNumber()) return "a number";
    if (v.IsString()) return "a string";
    if (v.IsArray()) return "an array";
    return "an object";
}

ApiError wrong_type(const std::string &field, const char *want, const Value &v) {
    return bad_request("'" + field + "' must be " + want + ", got " + type_name(v), field);
}

double number(const Value &v, const std::string &field, double lo, double hi) {
    if (!v.IsNumber()) throw wrong_type(field, "a number", v);
    const double d = v.GetDouble();
    if (!std::isfinite(d) || d < lo || d > hi)
        throw bad_request("'" + field + "' must be between " + std::to_string(lo) + " and " + std::to_string(hi), field);
    return d;
}

int64_t integer(const Value &v, const std::string &field) {
    if (!v.IsInt64()) throw wrong_type(field, "an integer", v);
    return v.GetInt64();
}

std::string string(const Value &v, const std::string &field) {
    if (!v.IsString()) throw wrong_type(field, "a string", v);
    return {v.GetString(), v.GetStringLength()};
}

// content: a string, or an array of {"type": "text", "text": ...} parts (joined).
std::string message_content(const Value &v, const std::string &field) {
    if (v.IsString()) return {v.GetString(), v.GetStringLength()};
    if (!v.IsArray()) throw wrong_type(field, "a string or an array of text parts", v);
    std::string out;
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        const std::string part = field + "[" + std::to_string(i) + "]";
        const Value &p = v[i];
        if (!p.IsObject() || !p.HasMember("type") || !p["type"].IsString() || std::string(p["type"].GetString()) != "text" ||
            !p.HasMember("text"))
            throw bad_request("'" + part + "' must be {\"type\": \"text\", \"text\": ...} (only text is supported)", part);
        out += string(p["text"], part + ".text");
    }
    return out;
}

std::vector<ChatMessage> messages(const Value &v) {
    if (!v.IsArray()) throw wrong_type("messages", "an array", v);
    if (v.Empty()) throw bad_request("'messages' must hold at least one message", "messages");
    std::vector<ChatMessage> out;
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        const std::string field = "messages[" + std::to_string(i) + "]";
        const Value &m = v[i];
        if (!m.IsObject()) throw wrong_type(field, "an object", m);
        ChatMessage msg;
        for (auto it = m.MemberBegin(); it != m.MemberEnd(); ++it) {
            const std::string key = it->name.GetString();
            if (key == "role") msg.role = string(it->value, field + ".role");
            else if (key == "content") msg.content = message_content(it->value, field + ".content");
            else if (key == "name") string(it->value, field + ".name"); // accepted, not used
            else throw bad_request("unsupported field '" + field + "." + key + "'", field + "." + key);
        }
        if (msg.role == "developer") msg.role = "system"; // the newer OpenAI name of the system role
        if (msg.role != "system" && msg.role != "user" && msg.role != "assistant")
            throw bad_request("'" + field + ".role' must be system, user or assistant, got '" + msg.role + "'", field + ".role");
        if (!m.HasMember("content")) throw bad_request("'" + field + ".content' is required", field + ".content");
        out.push_back(std::move(msg));
    }
    return out;
}

std::vector<std::string> stops(const Value &v) {
    std::vector<std::string> out;
    if (v.IsNull()) return out;
    if (v.IsString()) out.push_back(string(v, "stop"));
    else if (v.IsArray()) {
        if (v.Size() > kMaxStops) throw bad_request("'stop' holds at most 4 strings", "stop");
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) out.push_back(string(v[i], "stop[" + std::to_string(i) + "]"));
    } else
        throw wrong_type("stop", "a string or an array of strings", v);
    for (const auto &s : out)
        if (s.empty()) throw bad_request("'stop' strings must not be empty", "stop");
    return out;
}

} // namespace

CompletionRequest parse_completion_request(std::string_view body, bool chat) {
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());
    if (doc.HasParseError())
        throw bad_request(std::string("malformed JSON at offset ") + std::to_string(doc.GetErrorOffset()) + ": " +
                          rapidjson::GetParseError_En(doc.GetParseError()));
    if (!doc.IsObject()) throw bad_request("the request body must be a JSON object");
    CompletionRequest r;
    r.chat = chat;
    const char *input = chat ? "messages" : "prompt";
    if (!doc.HasMember(input)) throw bad_request(std::string("'") + input + "' is required", input);
    for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
        const std::string key = it->name.GetString();
        const Value &v = it->value;
        if (key == "model") r.model = string(v, key);
        else if (key == input && chat) r.messages = messages(v);
        else if (key == input) r.prompt = string(v, key); // token arrays and batches are not supported
        else if (key == "max_tokens" || (chat && key == "max_completion_tokens")) {
            if (v.IsNull()) continue;
            const int64_t n = integer(v, key);
            if (n < 1) throw bad_request("'" + key + "' must be at least 1", key);
            r.max_tokens = n;
        } else if (key == "temperature") r.temperature = v.IsNull() ? 1.0f : (float)number(v, key, 0, 2);
        else if (key == "top_p") {
            r.top_p = v.IsNull() ? 1.0f : (float)number(v, key, 0, 1);
            if (r.top_p <= 0) throw bad_request("'top_p' must be greater than 0", key);
        } else if (key == "seed") {
            if (!v.IsNull()) r.seed = (uint32_t)integer(v, key);
        } else if (key == "stop") r.stop = stops(v);
        else if (key == "stream") {
            if (!v.IsBool() && !v.IsNull()) throw wrong_type(key, "a boolean", v);
            r.stream = v.IsBool() && v.GetBool();
        } else if (key == "stream_options") {
            if (v.IsNull()) continue;
            if (!v.IsObject()) throw wrong_type(key, "an object", v);
            for (auto o = v.MemberBegin(); o != v.MemberEnd(); ++o) {
                if (std::string(o->name.GetString()) != "include_usage")
                    throw bad_request(std::string("unsupported field 'stream_options.") + o->name.GetString() + "'", key);
                if (!o->value.IsBool()) throw wrong_type("stream_options.include_usage", "a boolean", o->value);
                r.include_usage = o->value.GetBool();
            }
        } else if (key == "n") {
            if (!v.IsNull() && integer(v, key) != 1) throw bad_request("only 'n': 1 is supported", key);
        } else if (key == "user") {
            if (!v.IsNull()) string(v, key); // accepted, not used
        } else
            throw bad_request("unsupported field '" + key + "'", key);
    }
    return r;
}

} // namespace rf::serve
