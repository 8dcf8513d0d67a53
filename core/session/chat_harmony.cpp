#include "chat_harmony.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "../src/json_nesting.h"

namespace rf {
namespace {

using rapidjson::Value;

// The tools' schemas and the calls are the request's JSON, checked there; deeper text is refused
// here too since both the writer and the TypeScript below recurse once per level.
constexpr size_t kMaxNesting = 64;

std::string text_of(const Value &v) { return {v.GetString(), v.GetStringLength()}; }

std::string json_text(const Value &v) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    v.Accept(w);
    return {buf.GetString(), buf.GetSize()};
}

rapidjson::Document parse(const std::string &json, const std::string &what) {
    rapidjson::Document d;
    if (json_nesting_depth(json) > kMaxNesting) throw UsageError(what + " nest too deep");
    d.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
    if (d.HasParseError()) throw UsageError(what + " are not valid JSON");
    return d;
}

// "// TEXT" for every line of a description.
std::string comment(const std::string &text, const std::string &indent) {
    std::string out;
    size_t b = 0;
    while (b <= text.size()) {
        size_t e = text.find('\n', b);
        if (e == std::string::npos) e = text.size();
        out += indent + "// " + text.substr(b, e - b) + "\n";
        b = e + 1;
    }
    return out;
}

std::string ts_type(const Value &schema, const std::string &indent);

// The members of an object schema, one a line: its description above, `?` when not required,
// its default after.
std::string ts_object(const Value &schema, const std::string &indent) {
    const Value &props = schema["properties"];
    std::string out = "{\n";
    for (auto it = props.MemberBegin(); it != props.MemberEnd(); ++it) {
        const std::string name = text_of(it->name);
        bool required = false;
        if (schema.HasMember("required") && schema["required"].IsArray())
            for (const Value &r : schema["required"].GetArray()) required = required || (r.IsString() && text_of(r) == name);
        const Value &p = it->value;
        if (p.IsObject() && p.HasMember("description") && p["description"].IsString())
            out += comment(text_of(p["description"]), indent);
        out += indent + name + (required ? ": " : "?: ") + ts_type(p, indent) + ",";
        if (p.IsObject() && p.HasMember("default")) out += " // default: " + (p["default"].IsString() ? text_of(p["default"]) : json_text(p["default"]));
        out += "\n";
    }
    return out + indent + "}";
}

std::string ts_union(const Value &list, const std::string &indent) {
    std::string out;
    for (const Value &v : list.GetArray()) out += (out.empty() ? "" : " | ") + ts_type(v, indent);
    return out.empty() ? "any" : out;
}

// A JSON schema as the TypeScript type harmony shows (enums as literal unions, arrays as T[]).
std::string ts_type(const Value &s, const std::string &indent) {
    if (!s.IsObject()) return "any";
    if (s.HasMember("enum") && s["enum"].IsArray() && !s["enum"].Empty()) {
        std::string out;
        for (const Value &v : s["enum"].GetArray()) out += (out.empty() ? "" : " | ") + json_text(v);
        return out;
    }
    if (s.HasMember("const")) return json_text(s["const"]);
    for (const char *key : {"anyOf", "oneOf"})
        if (s.HasMember(key) && s[key].IsArray()) return ts_union(s[key], indent);
    if (!s.HasMember("type")) return "any";
    const Value &t = s["type"];
    if (t.IsArray()) {
        std::string out;
        for (const Value &one : t.GetArray()) {
            if (!one.IsString()) continue;
            rapidjson::MemoryPoolAllocator<> a;
            Value copy(rapidjson::kObjectType);
            copy.CopyFrom(s, a);
            copy["type"].SetString(one.GetString(), one.GetStringLength(), a);
            out += (out.empty() ? "" : " | ") + ts_type(copy, indent);
        }
        return out.empty() ? "any" : out;
    }
    if (!t.IsString()) return "any";
    const std::string type = text_of(t);
    if (type == "string" || type == "boolean" || type == "null") return type;
    if (type == "number" || type == "integer") return "number";
    if (type == "array") {
        if (!s.HasMember("items")) return "any[]";
        const std::string item = ts_type(s["items"], indent);
        return item.find(" | ") == std::string::npos ? item + "[]" : "Array<" + item + ">";
    }
    if (type == "object") {
        if (s.HasMember("properties") && s["properties"].IsObject() && s["properties"].MemberCount() > 0)
            return ts_object(s, indent);
        return "object";
    }
    return "any";
}

// The developer message's "# Tools" section: each function as a TypeScript type.
std::string tools_section(const std::string &tools_json) {
    const rapidjson::Document tools = parse(tools_json, "tools");
    if (!tools.IsArray()) throw UsageError("tools must be an array");
    std::string out = "# Tools\n\n## functions\n\nnamespace functions {\n\n";
    for (rapidjson::SizeType i = 0; i < tools.Size(); ++i) {
        const Value &t = tools[i];
        const Value *fn = t.IsObject() && t.HasMember("function") ? &t["function"] : &t;
        if (!fn->IsObject() || !fn->HasMember("name") || !(*fn)["name"].IsString())
            throw UsageError("tools[" + std::to_string(i) + "] has no function name");
        if (fn->HasMember("description") && (*fn)["description"].IsString()) out += comment(text_of((*fn)["description"]), "");
        out += "type " + text_of((*fn)["name"]) + " = (";
        if (fn->HasMember("parameters")) {
            const Value &p = (*fn)["parameters"];
            if (p.IsObject() && p.HasMember("properties") && p["properties"].IsObject() && p["properties"].MemberCount() > 0)
                out += "_: " + ts_type(p, "");
        }
        out += ") => any;\n\n";
    }
    return out + "} // namespace functions";
}

struct Call {
    std::string id, name, arguments;
};

// An assistant message's tool_calls: [{"id", "type", "function": {"name", "arguments"}}], the
// arguments a JSON string (OpenAI's wire format) or an object.
std::vector<Call> calls_of(const ChatMessage &m, size_t index) {
    const std::string what = "chat message " + std::to_string(index) + ": tool_calls";
    const rapidjson::Document d = parse(m.tool_calls_json, what);
    if (!d.IsArray()) throw UsageError(what + " must be an array");
    std::vector<Call> out;
    for (const Value &c : d.GetArray()) {
        const Value *fn = c.IsObject() && c.HasMember("function") ? &c["function"] : &c;
        if (!fn->IsObject() || !fn->HasMember("name") || !(*fn)["name"].IsString())
            throw UsageError(what + ": a call without a function name");
        Call call{c.IsObject() && c.HasMember("id") && c["id"].IsString() ? text_of(c["id"]) : "", text_of((*fn)["name"]), "{}"};
        if (fn->HasMember("arguments")) {
            const Value &a = (*fn)["arguments"];
            call.arguments = a.IsString() ? text_of(a) : json_text(a);
        }
        out.push_back(std::move(call));
    }
    return out;
}

std::string message(const std::string &header, const std::string &text, const char *end = "<|end|>") {
    return "<|start|>" + header + "<|message|>" + text + end;
}

// The system message harmony's tool use needs: the model's identity, its channels, calls on commentary.
constexpr const char *kToolSystem = "You are ChatGPT, a large language model trained by OpenAI.\n"
                                    "Knowledge cutoff: 2024-06\n\nReasoning: medium\n\n"
                                    "# Valid channels: analysis, commentary, final. Channel must be included for every message.\n"
                                    "Calls to these tools must go to the commentary channel: 'functions'.";

} // namespace

std::string harmony_prompt(const std::vector<ChatMessage> &messages, const std::string &tools_json, bool add_assistant) {
    std::string out;
    size_t first = 0;
    if (!tools_json.empty()) {
        std::string developer;
        if (!messages.empty() && messages[0].role == "system") { // the request's system text: instructions
            developer = "# Instructions\n\n" + messages[0].content + "\n\n";
            first = 1;
        }
        out += message("system", kToolSystem) + message("developer", developer + tools_section(tools_json));
    }
    std::vector<Call> past_calls; // the calls so far, for the tool results that answer them
    for (size_t i = first; i < messages.size(); ++i) {
        const ChatMessage &m = messages[i];
        if (m.role == "system" || m.role == "developer" || m.role == "user") {
            out += message(m.role, m.content);
        } else if (m.role == "assistant" && !m.tool_calls_json.empty()) {
            // Its reasoning stays while no final answer follows: the calls are still being worked on.
            bool answered = false;
            for (size_t j = i + 1; j < messages.size(); ++j)
                answered = answered || (messages[j].role == "assistant" && messages[j].tool_calls_json.empty());
            if (!answered && !m.reasoning_content.empty()) out += message("assistant<|channel|>analysis", m.reasoning_content);
            if (!m.content.empty()) out += message("assistant<|channel|>commentary", m.content);
            for (Call &c : calls_of(m, i)) {
                out += message("assistant to=functions." + c.name + "<|channel|>commentary json", c.arguments, "<|call|>");
                past_calls.push_back(std::move(c));
            }
        } else if (m.role == "assistant") {
            const bool open = i + 1 == messages.size() && !add_assistant; // continued by the model
            if (open && !m.reasoning_content.empty()) out += message("assistant<|channel|>analysis", m.reasoning_content);
            out += message("assistant<|channel|>final", m.content);
        } else if (m.role == "tool") {
            std::string name = m.name;
            for (auto c = past_calls.rbegin(); name.empty() && c != past_calls.rend(); ++c)
                if (c->id == m.tool_call_id) name = c->name;
            if (name.empty() && !past_calls.empty()) name = past_calls.back().name;
            if (name.empty())
                throw UsageError("chat message " + std::to_string(i) + " is a tool result, but no assistant message before it calls a tool");
            out += message("functions." + name + " to=assistant<|channel|>commentary", m.content);
        } else {
            throw UsageError("chat message " + std::to_string(i) + " has role '" + m.role +
                             "', which the harmony format has not (system, developer, user, assistant, tool)");
        }
    }
    if (add_assistant) out += "<|start|>assistant";
    return out;
}

} // namespace rf
