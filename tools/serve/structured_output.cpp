#include "structured_output.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "../chat_messages_json.h"
#include "api_error.h"
#include "json_text.h"

namespace rf::serve {
namespace {

using rapidjson::Value;

std::string member_name(const Value &v) { return {v.GetString(), v.GetStringLength()}; }

constexpr size_t kMaxSchemaNesting = 128;

// The schema's GBNF; a schema the converter cannot express is a 400 naming the keyword.
void set_schema(const Value &schema, const std::string &field, CompletionRequest &r) {
    if (!schema.IsObject() && !schema.IsBool()) throw bad_request("'" + field + "' must be a JSON schema (an object)", field);
    if (json_value_nesting(schema) > kMaxSchemaNesting) // iterative: the body may nest past a stack
        throw bad_request("'" + field + "' nests deeper than " + std::to_string(kMaxSchemaNesting) + " levels", field);
    try {
        r.grammar = grammar::json_schema_to_gbnf(json_text(schema));
        r.grammar_compiled = grammar::Grammar::parse(r.grammar);
    } catch (const grammar::SchemaError &e) {
        throw bad_request("'" + field + "': " + e.what(), field);
    } catch (const grammar::GrammarError &e) { // a bug of the converter, but still the schema's doing
        throw bad_request("'" + field + "': the schema's grammar: " + e.what(), field);
    }
    r.grammar_field = field;
}

void response_format(const Value &v, CompletionRequest &r) {
    if (v.IsNull()) return;
    if (!v.IsObject() || !v.HasMember("type") || !v["type"].IsString())
        throw bad_request("'response_format' must be {\"type\": \"text\" | \"json_object\" | \"json_schema\", ...}", "response_format");
    const std::string type = member_name(v["type"]);
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
        const std::string k = member_name(it->name);
        if (k != "type" && !(type == "json_schema" && k == "json_schema"))
            throw bad_request("unsupported field 'response_format." + k + "'", "response_format." + k);
    }
    if (type == "text") return;
    if (type == "json_object") {
        r.grammar = grammar::json_object_gbnf();
        r.grammar_compiled = grammar::Grammar::parse(r.grammar);
        r.grammar_field = "response_format";
        return;
    }
    if (type != "json_schema")
        throw bad_request("'response_format.type' must be text, json_object or json_schema, got '" + type + "'", "response_format.type");
    if (!v.HasMember("json_schema") || !v["json_schema"].IsObject())
        throw bad_request("'response_format.json_schema' must be an object {\"name\", \"schema\", \"strict\"}", "response_format.json_schema");
    const Value &js = v["json_schema"];
    const Value *schema = nullptr;
    for (auto it = js.MemberBegin(); it != js.MemberEnd(); ++it) {
        const std::string k = member_name(it->name), field = "response_format.json_schema." + k;
        if (k == "name") {
            if (!it->value.IsString()) throw bad_request("'" + field + "' must be a string", field);
        } else if (k == "description") {
            if (!it->value.IsString()) throw bad_request("'" + field + "' must be a string", field);
        } else if (k == "strict") { // the output always follows the schema, strict or not
            if (!it->value.IsBool() && !it->value.IsNull()) throw bad_request("'" + field + "' must be a boolean", field);
        } else if (k == "schema")
            schema = &it->value;
        else
            throw bad_request("unsupported field '" + field + "'", field);
    }
    if (!js.HasMember("name")) throw bad_request("'response_format.json_schema.name' is required", "response_format.json_schema.name");
    if (!schema) throw bad_request("'response_format.json_schema.schema' is required", "response_format.json_schema.schema");
    set_schema(*schema, "response_format.json_schema.schema", r);
}

void gbnf(const Value &v, CompletionRequest &r) {
    if (v.IsNull()) return;
    if (!v.IsString()) throw bad_request("'grammar' must be a string (GBNF)", "grammar");
    r.grammar.assign(v.GetString(), v.GetStringLength());
    try {
        r.grammar_compiled = grammar::Grammar::parse(r.grammar);
    } catch (const grammar::GrammarError &e) {
        throw bad_request("'grammar': " + std::string(e.what()), "grammar");
    }
    r.grammar_field = "grammar";
}

// {"token id": bias}: ids as strings (JSON keys), biases in [-100, 100] as OpenAI.
void logit_bias(const Value &v, CompletionRequest &r) {
    r.logit_bias.clear();
    if (v.IsNull()) return;
    if (!v.IsObject()) throw bad_request("'logit_bias' must be an object {\"token id\": bias}", "logit_bias");
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
        const std::string key = member_name(it->name), field = "logit_bias." + key;
        char *end = nullptr;
        errno = 0;
        const long long id = key.empty() || key.size() > 10 ? -1 : std::strtoll(key.c_str(), &end, 10);
        if (key.empty() || end != key.c_str() + key.size() || errno || id < 0 || id > INT32_MAX || !std::isdigit((unsigned char)key[0]))
            throw bad_request("'logit_bias' keys must be token ids (non-negative integers), got '" + key + "'", "logit_bias");
        if (!it->value.IsNumber()) throw bad_request("'" + field + "' must be a number", "logit_bias");
        const double b = it->value.GetDouble();
        if (!std::isfinite(b) || b < -100 || b > 100) throw bad_request("'" + field + "' must be between -100 and 100", "logit_bias");
        r.logit_bias.emplace_back((int32_t)id, (float)b);
    }
}

} // namespace

bool parse_structured_field(const std::string &key, const Value &v, CompletionRequest &r) {
    if (key == "response_format") response_format(v, r);
    else if (key == "grammar") gbnf(v, r);
    else if (key == "json_schema") {
        if (!v.IsNull()) set_schema(v, "json_schema", r);
    } else if (key == "logit_bias") logit_bias(v, r);
    else return false;
    if (key != "logit_bias" && !v.IsNull()) {
        if (!r.structured_fields.empty() && r.structured_fields != key)
            throw bad_request("'" + key + "' and '" + r.structured_fields + "' cannot both constrain the output", key);
        if (!r.grammar.empty()) r.structured_fields = key;
    }
    return true;
}

std::shared_ptr<const grammar::TokenGrammar> GrammarCache::get(const CompletionRequest &r) {
    if (r.grammar.empty()) return nullptr;
    std::lock_guard lock(mutex_);
    for (auto it = lru_.begin(); it != lru_.end(); ++it)
        if (it->first == r.grammar) {
            lru_.splice(lru_.begin(), lru_, it);
            return lru_.front().second;
        }
    auto compiled = r.grammar_compiled ? r.grammar_compiled : grammar::Grammar::parse(r.grammar);
    lru_.emplace_front(r.grammar, std::make_shared<grammar::TokenGrammar>(compiled, trie_));
    if (lru_.size() > kMaxGrammars) lru_.pop_back();
    return lru_.front().second;
}

} // namespace rf::serve
