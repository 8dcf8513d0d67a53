#include "chat_messages_json.h"

#include <algorithm>
#include <utility>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include "json_type_name.h"

namespace rf {
namespace {

using rapidjson::Value;

const char *type_name(const Value &v) { return json_type_name(v); }

ChatFieldError wrong_type(const std::string &field, const char *want, const Value &v) {
    return ChatFieldError("'" + field + "' must be " + want + ", got " + type_name(v), field);
}

std::string string(const Value &v, const std::string &field) {
    if (!v.IsString()) throw wrong_type(field, "a string", v);
    return {v.GetString(), v.GetStringLength()};
}

std::string name(const Value &v) { return {v.GetString(), v.GetStringLength()}; }

// Refuses a value nested deeper than the template and the JSON writer can safely recurse.
void check_nesting(const Value &v, const std::string &field) {
    if (json_value_nesting(v) > kMaxToolJsonNesting)
        throw ChatFieldError("'" + field + "' nests deeper than " + std::to_string(kMaxToolJsonNesting) + " levels", field);
}

std::string to_json(const Value &v) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    v.Accept(w);
    return {buf.GetString(), buf.GetSize()};
}

// content: a string, or an array of {"type": "text", "text": ...} parts (joined).
std::string content_text(const Value &v, const std::string &field) {
    if (v.IsString()) return {v.GetString(), v.GetStringLength()};
    if (!v.IsArray()) throw wrong_type(field, "a string or an array of text parts", v);
    std::string out;
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        const std::string part = field + "[" + std::to_string(i) + "]";
        const Value &p = v[i];
        if (!p.IsObject() || !p.HasMember("type") || !p["type"].IsString() || std::string(p["type"].GetString()) != "text" ||
            !p.HasMember("text"))
            throw ChatFieldError("'" + part + "' must be {\"type\": \"text\", \"text\": ...} (only text is supported)", part);
        out += string(p["text"], part + ".text");
    }
    return out;
}

// function: {"name": string, "arguments": a JSON string or an object}.
void check_tool_call(const Value &c, const std::string &field) {
    if (!c.IsObject()) throw wrong_type(field, "an object", c);
    if (!c.HasMember("function")) throw ChatFieldError("'" + field + ".function' is required", field + ".function");
    const Value &fn = c["function"];
    if (!fn.IsObject()) throw wrong_type(field + ".function", "an object", fn);
    if (!fn.HasMember("name")) throw ChatFieldError("'" + field + ".function.name' is required", field + ".function.name");
    if (string(fn["name"], field + ".function.name").empty())
        throw ChatFieldError("'" + field + ".function.name' must not be empty", field + ".function.name");
    if (fn.HasMember("arguments") && !fn["arguments"].IsString() && !fn["arguments"].IsObject())
        throw wrong_type(field + ".function.arguments", "a JSON string or an object", fn["arguments"]);
    if (c.HasMember("id")) string(c["id"], field + ".id");
}

} // namespace

size_t json_value_nesting(const Value &v) {
    size_t deepest = 0;
    std::vector<std::pair<const Value *, size_t>> todo{{&v, 0}};
    while (!todo.empty()) {
        const auto [x, depth] = todo.back();
        todo.pop_back();
        if (!x->IsArray() && !x->IsObject()) continue;
        deepest = std::max(deepest, depth + 1);
        if (x->IsArray())
            for (const Value &e : x->GetArray()) todo.emplace_back(&e, depth + 1);
        else
            for (auto it = x->MemberBegin(); it != x->MemberEnd(); ++it) todo.emplace_back(&it->value, depth + 1);
    }
    return deepest;
}

std::vector<ChatMessage> chat_messages_from_json(const Value &v, const std::string &top) {
    if (!v.IsArray()) throw wrong_type(top, "an array", v);
    if (v.Empty()) throw ChatFieldError("'" + top + "' must hold at least one message", top);
    std::vector<ChatMessage> out;
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        const std::string field = top + "[" + std::to_string(i) + "]";
        const Value &m = v[i];
        if (!m.IsObject()) throw wrong_type(field, "an object", m);
        ChatMessage msg;
        bool has_content = false, has_calls = false;
        for (auto it = m.MemberBegin(); it != m.MemberEnd(); ++it) {
            const std::string key = name(it->name);
            const Value &x = it->value;
            if (key == "role") msg.role = string(x, field + ".role");
            else if (key == "content") {
                has_content = true;
                if (x.IsNull()) msg.content_null = true;
                else msg.content = content_text(x, field + ".content");
            } else if (key == "name") msg.name = string(x, field + ".name");
            else if (key == "tool_call_id") msg.tool_call_id = string(x, field + ".tool_call_id");
            else if (key == "reasoning_content") {
                if (!x.IsNull()) msg.reasoning_content = string(x, field + ".reasoning_content");
            }
            else if (key == "tool_calls") {
                if (x.IsNull()) continue;
                if (!x.IsArray()) throw wrong_type(field + ".tool_calls", "an array", x);
                check_nesting(x, field + ".tool_calls");
                for (rapidjson::SizeType k = 0; k < x.Size(); ++k) check_tool_call(x[k], field + ".tool_calls[" + std::to_string(k) + "]");
                msg.tool_calls_json = to_json(x);
                has_calls = true;
            } else
                throw ChatFieldError("unsupported field '" + field + "." + key + "'", field + "." + key);
        }
        if (msg.role == "developer") msg.role = "system"; // the newer OpenAI name of the system role
        if (msg.role != "system" && msg.role != "user" && msg.role != "assistant" && msg.role != "tool")
            throw ChatFieldError("'" + field + ".role' must be system, user, assistant or tool, got '" + msg.role + "'", field + ".role");
        if (!msg.reasoning_content.empty() && msg.role != "assistant")
            throw ChatFieldError("'" + field + ".reasoning_content': only an assistant message has reasoning", field + ".reasoning_content");
        if (has_calls && msg.role != "assistant")
            throw ChatFieldError("'" + field + ".tool_calls': only an assistant message calls tools", field + ".tool_calls");
        if (!has_content && !has_calls) throw ChatFieldError("'" + field + ".content' is required", field + ".content");
        if (!has_content) msg.content_null = true;
        if (msg.content_null && !has_calls)
            throw ChatFieldError("'" + field + ".content' may be null only in an assistant message with tool_calls", field + ".content");
        out.push_back(std::move(msg));
    }
    return out;
}

std::string chat_tools_from_json(const Value &v, const std::string &top) {
    if (!v.IsArray()) throw wrong_type(top, "an array", v);
    check_nesting(v, top);
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        const std::string field = top + "[" + std::to_string(i) + "]";
        const Value &t = v[i];
        if (!t.IsObject()) throw wrong_type(field, "an object", t);
        if (!t.HasMember("type") || !t["type"].IsString() || std::string(t["type"].GetString()) != "function")
            throw ChatFieldError("'" + field + ".type' must be \"function\"", field + ".type");
        if (!t.HasMember("function") || !t["function"].IsObject())
            throw ChatFieldError("'" + field + ".function' must be an object", field + ".function");
        const Value &fn = t["function"];
        if (!fn.HasMember("name")) throw ChatFieldError("'" + field + ".function.name' is required (a tool needs a name)", field + ".function.name");
        if (string(fn["name"], field + ".function.name").empty())
            throw ChatFieldError("'" + field + ".function.name' must not be empty", field + ".function.name");
        if (fn.HasMember("parameters") && !fn["parameters"].IsObject())
            throw wrong_type(field + ".function.parameters", "an object (a JSON schema)", fn["parameters"]);
    }
    return to_json(v);
}

std::string chat_template_kwargs_from_json(const Value &v, const std::string &field) {
    if (!v.IsObject()) throw wrong_type(field, "an object", v);
    check_nesting(v, field);
    return to_json(v);
}

} // namespace rf
