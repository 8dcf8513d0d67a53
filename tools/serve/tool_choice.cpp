#include "tool_choice.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "../../core/src/json_nesting.h"
#include "../chat_messages_json.h"
#include "../json_type_name.h"
#include "api_error.h"
#include "json_text.h"
#include "rocmforge/error.h"
#include "rocmforge/grammar.h"

namespace rf::serve {
namespace {

using rapidjson::Value;

std::string text_of(const Value &v) { return {v.GetString(), v.GetStringLength()}; }

constexpr const char *kChoiceForms = "\"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}";

void tool_choice(const Value &v, CompletionRequest &r) {
    if (v.IsNull()) return;
    r.tool_choice_given = true;
    if (v.IsString()) {
        const std::string s = text_of(v);
        if (s == "auto") r.tool_choice = ToolChoice::Auto;
        else if (s == "none") r.tool_choice = ToolChoice::None;
        else if (s == "required") r.tool_choice = ToolChoice::Required;
        else throw bad_request("'tool_choice' must be " + std::string(kChoiceForms) + ", got '" + s + "'", "tool_choice");
        return;
    }
    if (!v.IsObject())
        throw bad_request("'tool_choice' must be " + std::string(kChoiceForms) + ", got " + json_type_name(v), "tool_choice");
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
        const std::string k = text_of(it->name);
        if (k != "type" && k != "function") throw bad_request("unsupported field 'tool_choice." + k + "'", "tool_choice." + k);
    }
    if (!v.HasMember("type") || !v["type"].IsString() || text_of(v["type"]) != "function")
        throw bad_request("'tool_choice.type' must be \"function\"", "tool_choice.type");
    if (!v.HasMember("function") || !v["function"].IsObject())
        throw bad_request("'tool_choice.function' must be an object {\"name\": ...}", "tool_choice.function");
    const Value &fn = v["function"];
    for (auto it = fn.MemberBegin(); it != fn.MemberEnd(); ++it)
        if (text_of(it->name) != "name")
            throw bad_request("unsupported field 'tool_choice.function." + text_of(it->name) + "'", "tool_choice.function." + text_of(it->name));
    if (!fn.HasMember("name") || !fn["name"].IsString() || fn["name"].GetStringLength() == 0)
        throw bad_request("'tool_choice.function.name' must be a non-empty string", "tool_choice.function.name");
    r.tool_choice = ToolChoice::Function;
    r.tool_choice_function = text_of(fn["name"]);
}

// The request's tools, parsed again from the JSON text the messages parser checked.
rapidjson::Document parse_tools(const std::string &tools_json) {
    rapidjson::Document d;
    if (json_nesting_depth(tools_json) > kMaxToolJsonNesting) throw bad_request("'tools' nest too deep", "tools");
    d.Parse<rapidjson::kParseIterativeFlag>(tools_json.data(), tools_json.size());
    if (d.HasParseError() || !d.IsArray()) throw bad_request("'tools' must be an array", "tools");
    return d;
}

// A tool's parameters as the schema of its call's arguments, always an object: none is an empty
// parameter list (as OpenAI), `{}` any object, a schema without a type an object one.
void arguments_schema(const Value &fn, Value &out, rapidjson::Document::AllocatorType &a) {
    out.SetObject();
    if (!fn.HasMember("parameters")) {
        out.AddMember("type", "object", a);
        out.AddMember("properties", Value(rapidjson::kObjectType), a);
        out.AddMember("additionalProperties", false, a);
        return;
    }
    out.CopyFrom(fn["parameters"], a);
    if (!out.HasMember("type")) out.AddMember("type", "object", a);
}

// The calls' grammar with whitespace between tokens at most one space: calls are read by the
// server, not by a person, and a model (an untrained one above all) may spend its max_tokens on
// the newlines and indentation the schema's grammar allows. Its rule "ws" is the converter's.
std::string compact_whitespace(const std::string &gbnf) {
    std::string lines = "\n" + gbnf; // every rule then begins after a newline
    const size_t at = lines.find("\nws ::= ");
    if (at == std::string::npos) return gbnf;
    const size_t end = lines.find('\n', at + 1);
    lines.replace(at + 1, end == std::string::npos ? std::string::npos : end - at - 1, "ws ::= | \" \"");
    return lines.substr(1);
}

// {"type": "object", "properties": {"name": {"const": NAME}, "arguments": PARAMS}, ...}
Value call_schema(const Value &fn, rapidjson::Document::AllocatorType &a) {
    Value name(rapidjson::kObjectType), args, props(rapidjson::kObjectType), required(rapidjson::kArrayType);
    name.AddMember("const", Value(fn["name"], a), a);
    arguments_schema(fn, args, a);
    props.AddMember("name", name, a);
    props.AddMember("arguments", args, a);
    required.PushBack("name", a).PushBack("arguments", a);
    Value s(rapidjson::kObjectType);
    s.AddMember("type", "object", a);
    s.AddMember("properties", props, a);
    s.AddMember("required", required, a);
    s.AddMember("additionalProperties", false, a);
    return s;
}

// A tool's `$defs` / `definitions` moved to the root of the calls' schema, where its
// "#/$defs/NAME" references are resolved once its parameters sit inside that schema. The same
// name in two tools must be the same schema.
void hoist_definitions(Value &params, const std::string &field, std::vector<std::pair<const char *, Value>> &defs,
                       rapidjson::Document::AllocatorType &a) {
    for (auto &[key, table] : defs) {
        if (!params.HasMember(key)) continue;
        const Value &mine = params[key]; // const: its iterators compare unambiguously in C++20
        if (!mine.IsObject()) throw bad_request("'" + field + "." + key + "' must be an object", field + "." + key);
        for (auto it = mine.MemberBegin(); it != mine.MemberEnd(); ++it) {
            if (!table.HasMember(it->name)) {
                table.AddMember(Value(it->name, a), Value(it->value, a), a);
            } else if (table[it->name] != it->value) {
                const std::string name = field + "." + key + "." + text_of(it->name);
                throw bad_request("'" + name + "' differs from another tool's definition of that name", name);
            }
        }
        params.RemoveMember(key);
    }
}

// The JSON schema of the output `required` / a named function allows. Throws ApiError naming the
// tool whose parameters the grammar cannot express.
std::string forced_tool_call_schema(const std::string &tools_json, const CompletionRequest &r) {
    rapidjson::Document tools = parse_tools(tools_json);
    auto &a = tools.GetAllocator();
    Value alternatives(rapidjson::kArrayType);
    std::vector<std::pair<const char *, Value>> defs;
    for (const char *key : {"$defs", "definitions"}) defs.emplace_back(key, Value(rapidjson::kObjectType));
    for (rapidjson::SizeType i = 0; i < tools.Size(); ++i) {
        const Value &fn = tools[i]["function"];
        if (r.tool_choice == ToolChoice::Function && text_of(fn["name"]) != r.tool_choice_function) continue;
        // Each tool's parameters alone first, so an error names the tool.
        Value args;
        arguments_schema(fn, args, a);
        const std::string field = "tools[" + std::to_string(i) + "].function.parameters";
        if (!args["type"].IsString() || text_of(args["type"]) != "object")
            throw bad_request("'" + field + ".type' must be \"object\" (a call's arguments are an object)", field + ".type");
        try {
            grammar::json_schema_to_gbnf(json_text(args));
        } catch (const grammar::SchemaError &e) {
            throw bad_request("'" + field + "' (tool_choice holds the output to its schema): " + e.what(), field);
        }
        Value call = call_schema(fn, a);
        hoist_definitions(call["properties"]["arguments"], field, defs, a);
        alternatives.PushBack(call, a);
    }
    Value root;
    if (alternatives.Size() == 1) root = alternatives[0];
    else root.SetObject().AddMember("anyOf", alternatives, a);
    if (r.parallel_tool_calls) {
        Value list(rapidjson::kObjectType);
        list.AddMember("type", "array", a);
        list.AddMember("items", root, a);
        list.AddMember("minItems", 1, a);
        root = list;
    }
    for (auto &[key, table] : defs)
        if (table.MemberCount() > 0) root.AddMember(Value(key, a), table, a);
    return json_text(root);
}

} // namespace

bool parse_tool_field(const std::string &key, const Value &v, CompletionRequest &r) {
    if (key == "tool_choice") tool_choice(v, r);
    else if (key == "parallel_tool_calls") {
        if (v.IsNull()) return true;
        if (!v.IsBool()) throw bad_request(std::string("'parallel_tool_calls' must be a boolean, got ") + json_type_name(v), key);
        r.parallel_tool_calls = v.GetBool();
    } else
        return false;
    return true;
}

void finish_tool_choice(CompletionRequest &r) {
    r.tool_names.clear();
    if (!r.tools_json.empty()) {
        const rapidjson::Document tools = parse_tools(r.tools_json);
        for (const Value &t : tools.GetArray()) r.tool_names.push_back(text_of(t["function"]["name"]));
    }
    if (r.tool_choice_given && r.tool_names.empty())
        throw bad_request("'tool_choice' needs 'tools' (at least one function to call)", "tool_choice");
    if (r.tool_choice == ToolChoice::Function &&
        std::find(r.tool_names.begin(), r.tool_names.end(), r.tool_choice_function) == r.tool_names.end())
        throw bad_request("'tool_choice.function.name' is '" + r.tool_choice_function + "', which is not a function in 'tools'",
                          "tool_choice.function.name");
    if (!r.forces_tool_call()) return;
    if (!r.grammar.empty())
        throw bad_request("'tool_choice' and '" + r.structured_fields + "' cannot both constrain the output", "tool_choice");
    const std::string schema = forced_tool_call_schema(r.tools_json, r);
    try {
        r.grammar = compact_whitespace(grammar::json_schema_to_gbnf(schema));
        r.grammar_compiled = grammar::Grammar::parse(r.grammar);
    } catch (const Error &e) { // each tool's schema converted alone: only their sum can fail here
        throw bad_request(std::string("'tool_choice': the calls' grammar: ") + e.what(), "tool_choice");
    }
    r.grammar_field = r.structured_fields = "tool_choice";
}

} // namespace rf::serve
