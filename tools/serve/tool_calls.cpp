#include "tool_calls.h"

#include <optional>

#include <rapidjson/document.h>

#include "../../core/src/json_nesting.h"
#include "json_text.h"

namespace rf::serve {
namespace {

using rapidjson::Value;

// Output nested deeper is not a call (it stays content): the parser and the writer recurse once
// per level, and a model may write "[[[[..." for as long as max_tokens lets it.
constexpr size_t kMaxCallNesting = 128;

// Whether `s` is JSON nesting no deeper than a call may (then parsed into d).
bool parse_guarded(rapidjson::Document &d, std::string_view s) {
    if (json_nesting_depth(s) > kMaxCallNesting) return false;
    d.Parse(s.data(), s.size());
    return !d.HasParseError();
}

std::string_view trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// {"name": string, <args_key>: object | JSON string of an object} -> a call; nullopt otherwise.
std::optional<ParsedToolCall> call_of(const Value &v) {
    if (!v.IsObject() || !v.HasMember("name") || !v["name"].IsString()) return std::nullopt;
    ParsedToolCall c{v["name"].GetString(), "{}"};
    if (c.name.empty()) return std::nullopt;
    for (const char *key : {"arguments", "parameters"}) {
        if (!v.HasMember(key)) continue;
        const Value &a = v[key];
        if (a.IsObject()) c.arguments = json_text(a);
        else if (a.IsString()) { // some models write the arguments as a JSON string
            rapidjson::Document d;
            if (!parse_guarded(d, {a.GetString(), a.GetStringLength()}) || !d.IsObject()) return std::nullopt;
            c.arguments = json_text(d);
        } else
            return std::nullopt;
        return c;
    }
    return c;
}

// The whole of `s` as one call or an array of calls; nullopt when it is not exactly that.
std::optional<std::vector<ParsedToolCall>> calls_of_json(std::string_view s) {
    rapidjson::Document d;
    s = trim(s);
    if (!parse_guarded(d, s)) return std::nullopt;
    std::vector<ParsedToolCall> out;
    const Value *list = &d;
    if (d.IsObject() && d.HasMember("tool_calls")) list = &d["tool_calls"];
    if (list->IsArray()) {
        if (list->Empty()) return std::nullopt;
        for (const Value &e : list->GetArray()) {
            const Value &f = e.IsObject() && e.HasMember("function") ? e["function"] : e;
            auto c = call_of(f);
            if (!c) return std::nullopt;
            out.push_back(std::move(*c));
        }
        return out;
    }
    auto c = call_of(*list);
    if (!c) return std::nullopt;
    out.push_back(std::move(*c));
    return out;
}

// <tool_call>json</tool_call> blocks; a block that is unterminated or not a call stays content.
ParsedOutput parse_hermes(std::string_view text) {
    static constexpr std::string_view open = "<tool_call>", close = "</tool_call>";
    ParsedOutput out;
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t b = text.find(open, pos);
        if (b == std::string_view::npos) break;
        const size_t e = text.find(close, b + open.size());
        if (e == std::string_view::npos) break;
        auto calls = calls_of_json(text.substr(b + open.size(), e - b - open.size()));
        out.content += text.substr(pos, b - pos);
        if (calls) out.calls.insert(out.calls.end(), calls->begin(), calls->end());
        else out.content += text.substr(b, e + close.size() - b);
        pos = e + close.size();
    }
    out.content += text.substr(pos);
    if (!out.calls.empty()) out.content = std::string(trim(out.content));
    return out;
}

// Text before a marker, then the calls' JSON after it (the whole rest of the output).
ParsedOutput parse_after_marker(std::string_view text, std::string_view marker) {
    const size_t m = text.find(marker);
    if (m == std::string_view::npos) return {std::string(text), {}};
    auto calls = calls_of_json(text.substr(m + marker.size()));
    if (!calls) return {std::string(text), {}};
    return {std::string(trim(text.substr(0, m))), std::move(*calls)};
}

ParsedOutput parse_whole_json(std::string_view text) {
    auto calls = calls_of_json(text);
    if (!calls) return {std::string(text), {}};
    return {"", std::move(*calls)};
}

} // namespace

const char *tool_call_format_name(ToolCallFormat f) {
    switch (f) {
    case ToolCallFormat::Hermes: return "hermes";
    case ToolCallFormat::Llama3: return "llama3";
    case ToolCallFormat::Mistral: return "mistral";
    case ToolCallFormat::Harmony: return "harmony";
    case ToolCallFormat::Generic: break;
    }
    return "generic";
}

ToolCallFormat detect_tool_call_format(std::string_view src) {
    // gpt-oss's template: its messages' headers and bodies.
    if (src.find("<|channel|>") != std::string_view::npos ||
        (src.find("<|start|>") != std::string_view::npos && src.find("<|message|>") != std::string_view::npos))
        return ToolCallFormat::Harmony;
    if (src.find("<tool_call>") != std::string_view::npos) return ToolCallFormat::Hermes;
    if (src.find("[TOOL_CALLS]") != std::string_view::npos) return ToolCallFormat::Mistral;
    if (src.find("<|python_tag|>") != std::string_view::npos ||
        (src.find("<|start_header_id|>") != std::string_view::npos && src.find("tools") != std::string_view::npos))
        return ToolCallFormat::Llama3;
    return ToolCallFormat::Generic;
}

ParsedOutput parse_tool_calls(std::string_view text, ToolCallFormat format) {
    switch (format) {
    case ToolCallFormat::Hermes: return parse_hermes(text);
    // Mistral's [TOOL_CALLS] and Llama 3's <|python_tag|> are control tokens, which the text a
    // model generates leaves out: without the marker, the whole output may be the calls.
    case ToolCallFormat::Mistral:
        if (text.find("[TOOL_CALLS]") != std::string_view::npos) return parse_after_marker(text, "[TOOL_CALLS]");
        return parse_whole_json(text);
    case ToolCallFormat::Llama3:
        if (text.find("<|python_tag|>") != std::string_view::npos) return parse_after_marker(text, "<|python_tag|>");
        return parse_whole_json(text);
    // Harmony output is read whole by harmony_output.cpp; what reaches here is the forced
    // calls' generic JSON.
    case ToolCallFormat::Harmony:
    case ToolCallFormat::Generic: break;
    }
    // Generic: a Hermes block if there is one, else the whole output as JSON.
    ParsedOutput h = parse_hermes(text);
    return h.calls.empty() ? parse_whole_json(text) : h;
}

} // namespace rf::serve
