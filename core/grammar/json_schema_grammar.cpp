// JSON schema -> GBNF. Every keyword that constrains a value is either expressed exactly or
// refused with a SchemaError naming it, so what the grammar lets through always validates.
// Objects list their properties in the schema's order (required ones always, optional ones
// each optional; the keys `required` names beyond `properties` last), which is valid whatever
// additionalProperties says; numbers and whitespace
// are bounded (as llama.cpp's converter does) so a model cannot run on forever in one place.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "../src/json_nesting.h"
#include "rocmforge/grammar.h"

namespace rf::grammar {
namespace {

using rapidjson::Value;

constexpr int kMaxDepth = 64;          // schemas within schemas
constexpr size_t kMaxJsonNesting = 128; // arrays and objects of the schema's JSON text

// The shared rules, each added once when used.
const std::map<std::string, std::string> &primitive_rules() {
    static const std::map<std::string, std::string> rules = {
        {"ws", R"(| " " | "\n" [ \t]{0,20})"},
        {"json-char", R"([^"\\\x00-\x1F\x7F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}))"},
        {"json-string", R"("\"" json-char* "\"")"},
        {"json-integer", R"("-"? ("0" | [1-9] [0-9]{0,15}))"},
        {"json-number", R"("-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?)"},
        {"json-boolean", R"("true" | "false")"},
        {"json-null", R"("null")"},
        // String formats as RFC 3339 and RFC 4122 write them; day 29 of February is left out (a
        // leap year's grammar would need the year), so every date exists.
        {"json-date", R"([1-9] [0-9]{3} "-" ( ("0" [13578] | "1" [02]) "-" ("0" [1-9] | [12] [0-9] | "3" [01]) | ("0" [469] | "11") "-" ("0" [1-9] | [12] [0-9] | "30") | "02" "-" ("0" [1-9] | "1" [0-9] | "2" [0-8]) ))"},
        {"json-time", R"(([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,9})? ("Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]))"},
        {"json-date-time", R"(json-date "T" json-time)"},
        {"json-uuid", R"([0-9a-f]{8} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{12})"},
        {"json-value", R"(json-object | json-array | json-string | json-number | json-boolean | json-null)"},
        {"json-object", R"("{" ws ( json-string ws ":" ws json-value ws ( "," ws json-string ws ":" ws json-value ws )* )? "}")"},
        {"json-array", R"("[" ws ( json-value ws ( "," ws json-value ws )* )? "]")"},
    };
    return rules;
}
// What each primitive refers to.
const std::map<std::string, std::vector<std::string>> &primitive_deps() {
    static const std::map<std::string, std::vector<std::string>> deps = {
        {"json-string", {"json-char"}},
        {"json-date-time", {"json-date", "json-time"}},
        {"json-value", {"json-object", "json-array", "json-string", "json-number", "json-boolean", "json-null"}},
        {"json-object", {"ws", "json-string", "json-value"}},
        {"json-array", {"ws", "json-value"}},
    };
    return deps;
}

// Keywords that only annotate: they constrain nothing.
const std::set<std::string> &annotations() {
    static const std::set<std::string> a = {"title", "description", "default", "examples", "$schema", "$id", "$comment",
                                            "deprecated", "readOnly", "writeOnly", "$defs", "definitions"};
    return a;
}
const std::set<std::string> &handled() {
    static const std::set<std::string> h = {"type", "properties", "required", "additionalProperties", "items", "minItems",
                                            "maxItems", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "minLength",
                                            "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "format"};
    return h;
}

// A GBNF string literal for these bytes.
std::string literal(std::string_view bytes) {
    static const char *hex = "0123456789ABCDEF";
    std::string out = "\"";
    for (unsigned char c : bytes) {
        if (c == '"') out += "\\\"";
        else if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7F) out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
        else out += (char)c;
    }
    return out + "\"";
}

std::string compact_json(const Value &v) {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    v.Accept(w);
    return {buf.GetString(), buf.GetSize()};
}

std::string repetition(int64_t lo, int64_t hi) { // GBNF postfix for lo..hi (hi < 0: no limit)
    if (lo == 0 && hi < 0) return "*";
    if (lo == 1 && hi < 0) return "+";
    if (lo == 0 && hi == 1) return "?";
    if (hi < 0) return "{" + std::to_string(lo) + ",}";
    if (lo == hi) return "{" + std::to_string(lo) + "}";
    return "{" + std::to_string(lo) + "," + std::to_string(hi) + "}";
}

std::string sanitize(std::string_view s) {
    std::string out;
    for (char c : s) out += (std::isalnum((unsigned char)c) ? c : '-');
    return out.empty() ? "x" : out;
}

class Converter {
public:
    explicit Converter(const Value &root) : root_(root) { reserved_.insert("root"); }

    std::string run() {
        const std::string expr = visit(root_, "", "root", 0);
        std::string out = "root ::= " + expr + "\n";
        for (const auto &[name, body] : rules_) out += name + " ::= " + body + "\n";
        for (const std::string &p : primitives_) out += p + " ::= " + primitive_rules().at(p) + "\n";
        return out;
    }

private:
    [[noreturn]] static void fail(const std::string &msg, const std::string &keyword, const std::string &path) {
        throw SchemaError(msg, keyword, path.empty() ? "/" : path);
    }

    std::string use(const std::string &primitive) {
        if (primitives_.insert(primitive).second)
            if (auto d = primitive_deps().find(primitive); d != primitive_deps().end())
                for (const std::string &dep : d->second) use(dep);
        return primitive;
    }

    std::string new_rule(const std::string &hint, const std::string &body) {
        std::string name = hint;
        for (int i = 2; rules_.count(name) || reserved_.count(name); ++i) name = hint + "-" + std::to_string(i);
        rules_[name] = body;
        return name;
    }

    static int64_t count(const Value &s, const char *key, const std::string &path) {
        const Value &v = s[key];
        if (!v.IsInt64() || v.GetInt64() < 0)
            fail(std::string("'") + key + "' must be a non-negative integer", key, path + "/" + key);
        return v.GetInt64();
    }

    std::string ref(const Value &s, const std::string &path, int depth) {
        const Value &r = s["$ref"];
        if (!r.IsString()) fail("'$ref' must be a string", "$ref", path);
        const std::string target(r.GetString(), r.GetStringLength());
        for (auto it = s.MemberBegin(); it != s.MemberEnd(); ++it) {
            const std::string k(it->name.GetString(), it->name.GetStringLength());
            if (k != "$ref" && !annotations().count(k))
                fail("'" + k + "' beside '$ref' is not supported", k, path);
        }
        if (auto it = refs_.find(target); it != refs_.end()) return it->second;
        std::string section, name;
        for (const char *prefix : {"#/$defs/", "#/definitions/"})
            if (target.rfind(prefix, 0) == 0) section = std::string(prefix).substr(2, std::string(prefix).size() - 3), name = target.substr(std::string(prefix).size());
        if (section.empty() || name.empty() || name.find('/') != std::string::npos)
            fail("only local references '#/$defs/NAME' are supported, got '" + target + "'", "$ref", path);
        if (!root_.IsObject() || !root_.HasMember(section.c_str()) || !root_[section.c_str()].IsObject() ||
            !root_[section.c_str()].HasMember(name.c_str()))
            fail("'$ref' to '" + target + "', which the schema does not define", "$ref", path);
        // Named before it is visited: a recursive schema refers to its own rule.
        std::string rule = "ref-" + sanitize(name);
        while (reserved_.count(rule) || rules_.count(rule)) rule += "-";
        reserved_.insert(rule);
        refs_[target] = rule;
        const std::string body = visit(root_[section.c_str()][name.c_str()], "/" + section + "/" + name, rule, depth + 1);
        rules_[rule] = body;
        return rule;
    }

    std::string visit(const Value &s, const std::string &path, const std::string &hint, int depth) {
        if (depth > kMaxDepth) fail("the schema nests deeper than " + std::to_string(kMaxDepth) + " levels", "", path);
        if (s.IsBool()) {
            if (!s.GetBool()) fail("the schema 'false' accepts nothing", "false", path);
            return use("json-value");
        }
        if (!s.IsObject()) fail("a schema must be an object or a boolean", "", path);
        for (auto it = s.MemberBegin(); it != s.MemberEnd(); ++it) {
            const std::string k(it->name.GetString(), it->name.GetStringLength());
            if (!handled().count(k) && !annotations().count(k))
                fail("the keyword '" + k + "' is not supported", k, path);
        }
        if (s.HasMember("$ref")) return ref(s, path, depth);
        auto only = [&](const char *key) { // a combinator that must stand alone
            for (auto it = s.MemberBegin(); it != s.MemberEnd(); ++it) {
                const std::string k(it->name.GetString(), it->name.GetStringLength());
                if (k != key && !annotations().count(k))
                    fail("'" + k + "' beside '" + key + "' is not supported (put it inside each alternative)", k, path);
            }
        };
        if (s.HasMember("const")) {
            only("const");
            return literal(compact_json(s["const"]));
        }
        if (s.HasMember("enum")) {
            only("enum");
            const Value &e = s["enum"];
            if (!e.IsArray() || e.Empty()) fail("'enum' must be a non-empty array", "enum", path + "/enum");
            std::string out;
            for (const Value &v : e.GetArray()) out += (out.empty() ? "" : " | ") + literal(compact_json(v));
            return "(" + out + ")";
        }
        for (const char *key : {"anyOf", "oneOf"})
            if (s.HasMember(key)) {
                only(key);
                const Value &a = s[key];
                if (!a.IsArray() || a.Empty()) fail(std::string("'") + key + "' must be a non-empty array", key, path + "/" + key);
                std::string out;
                for (rapidjson::SizeType i = 0; i < a.Size(); ++i)
                    out += (i ? " | " : "") + visit(a[i], path + "/" + key + "/" + std::to_string(i), hint + "-" + std::to_string(i), depth + 1);
                return "(" + out + ")";
            }
        if (s.HasMember("allOf")) {
            only("allOf");
            const Value &a = s["allOf"];
            if (!a.IsArray() || a.Size() != 1)
                fail("'allOf' is supported with exactly one schema", "allOf", path + "/allOf");
            return visit(a[0], path + "/allOf/0", hint, depth + 1);
        }
        std::vector<std::string> types;
        if (s.HasMember("type")) {
            const Value &t = s["type"];
            if (t.IsString()) types.emplace_back(t.GetString(), t.GetStringLength());
            else if (t.IsArray() && !t.Empty())
                for (const Value &x : t.GetArray()) {
                    if (!x.IsString()) fail("'type' must be a string or an array of strings", "type", path + "/type");
                    types.emplace_back(x.GetString(), x.GetStringLength());
                }
            else
                fail("'type' must be a string or a non-empty array of strings", "type", path + "/type");
        } else if (s.HasMember("properties") || s.HasMember("required") || s.HasMember("additionalProperties"))
            types = {"object"};
        else if (s.HasMember("items") || s.HasMember("minItems") || s.HasMember("maxItems"))
            types = {"array"};
        else if (s.HasMember("minLength") || s.HasMember("maxLength") || s.HasMember("format"))
            types = {"string"}; // only strings then: a subset of what the schema allows
        else if (const char *bound = numeric_bound(s))
            fail(std::string("'") + bound + "' without \"type\": \"integer\" is not supported", bound, path);
        else
            return use("json-value");
        std::string out;
        for (const std::string &t : types) out += (out.empty() ? "" : " | ") + typed(s, t, path, hint, depth);
        return types.size() == 1 ? out : "(" + out + ")";
    }

    std::string typed(const Value &s, const std::string &type, const std::string &path, const std::string &hint, int depth) {
        if (type == "string") {
            if (s.HasMember("format")) return formatted(s, path);
            if (!s.HasMember("minLength") && !s.HasMember("maxLength")) return use("json-string");
            const int64_t lo = s.HasMember("minLength") ? count(s, "minLength", path) : 0;
            const int64_t hi = s.HasMember("maxLength") ? count(s, "maxLength", path) : -1;
            if (hi >= 0 && hi < lo) fail("'maxLength' is below 'minLength'", "maxLength", path);
            if (lo > 10000 || hi > 10000) fail("'minLength' / 'maxLength' above 10000 are not supported", hi > 10000 ? "maxLength" : "minLength", path);
            use("json-char");
            return "(\"\\\"\" json-char" + repetition(lo, hi) + " \"\\\"\")";
        }
        if (type == "integer") return numeric_bound(s) ? integer_range(s, path) : use("json-integer");
        if (const char *bound = numeric_bound(s); bound && type == "number")
            fail(std::string("'") + bound + "' on a number is not supported (only on an integer)", bound, path);
        if (type == "number") return use("json-number");
        if (type == "boolean") return use("json-boolean");
        if (type == "null") return use("json-null");
        if (type == "object") return object(s, path, hint, depth);
        if (type == "array") return array(s, path, hint, depth);
        fail("unknown type '" + type + "'", "type", path + "/type");
    }

    std::string formatted(const Value &s, const std::string &path) {
        const Value &f = s["format"];
        if (!f.IsString()) fail("'format' must be a string", "format", path + "/format");
        const std::string name(f.GetString(), f.GetStringLength());
        if (name != "date" && name != "time" && name != "date-time" && name != "uuid")
            fail("the format '" + name + "' is not supported (date, time, date-time and uuid are)", "format", path + "/format");
        for (const char *k : {"minLength", "maxLength"})
            if (s.HasMember(k)) fail(std::string("'") + k + "' beside 'format' is not supported", k, path);
        return "(\"\\\"\" " + use("json-" + name) + " \"\\\"\")";
    }

    static const char *numeric_bound(const Value &s) {
        for (const char *k : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
            if (s.HasMember(k)) return k;
        return nullptr;
    }

    // An integer within the schema's bounds: the decimal strings of [lo, hi] as digit classes
    // (no leading zeros, at most 16 digits as json-integer).
    std::string integer_range(const Value &s, const std::string &path) {
        constexpr int64_t kLimit = 9999999999999999; // 16 digits
        int64_t lo = -kLimit, hi = kLimit;
        auto bound = [&](const char *key) -> double {
            const Value &v = s[key];
            if (!v.IsNumber() || !std::isfinite(v.GetDouble())) fail(std::string("'") + key + "' must be a number", key, path + "/" + key);
            const double d = v.GetDouble();
            if (std::fabs(d) > (double)kLimit) fail(std::string("'") + key + "' beyond 16 digits is not supported", key, path + "/" + key);
            return d;
        };
        if (s.HasMember("minimum")) lo = std::max(lo, (int64_t)std::ceil(bound("minimum")));
        if (s.HasMember("exclusiveMinimum")) lo = std::max(lo, (int64_t)std::floor(bound("exclusiveMinimum")) + 1);
        if (s.HasMember("maximum")) hi = std::min(hi, (int64_t)std::floor(bound("maximum")));
        if (s.HasMember("exclusiveMaximum")) hi = std::min(hi, (int64_t)std::ceil(bound("exclusiveMaximum")) - 1);
        if (lo > hi) fail("no integer lies within the bounds", numeric_bound(s), path);
        std::vector<std::string> alts;
        if (lo < 0) // -1 .. -|lo|, within hi
            for (const std::string &a : digit_ranges(std::max<int64_t>(1, hi < 0 ? -hi : 1), -lo)) alts.push_back("\"-\" " + a);
        if (hi >= 0)
            for (const std::string &a : digit_ranges(std::max<int64_t>(0, lo), hi)) alts.push_back(a);
        std::string out;
        for (const std::string &a : alts) out += (out.empty() ? "" : " | ") + a;
        return "(" + out + ")";
    }

    // GBNF sequences for the decimal strings of [lo, hi] (0 <= lo <= hi), one digit count at a time.
    static std::vector<std::string> digit_ranges(int64_t lo, int64_t hi) {
        std::vector<std::string> out;
        int64_t first = 0, last = 9; // the numbers with d digits
        for (int d = 1; d <= 16 && first <= hi; ++d, first = last + 1, last = last * 10 + 9) {
            const int64_t a = std::max(lo, first), b = std::min(hi, last);
            if (a <= b) same_length(std::to_string(a), std::to_string(b), "", out);
        }
        return out;
    }

    // Strings of digits from lo to hi, both of one length, after `prefix` (GBNF items).
    static void same_length(const std::string &lo, const std::string &hi, const std::string &prefix, std::vector<std::string> &out) {
        auto item = [](char a, char b) { return a == b ? std::string("\"") + a + "\"" : std::string("[") + a + "-" + b + "]"; };
        auto join = [](const std::string &a, const std::string &b) { return a.empty() ? b : b.empty() ? a : a + " " + b; };
        if (lo.empty()) return out.push_back(prefix);
        if (lo[0] == hi[0]) return same_length(lo.substr(1), hi.substr(1), join(prefix, item(lo[0], lo[0])), out);
        const size_t rest = lo.size() - 1;
        const bool low_full = lo.find_first_not_of('0', 1) == std::string::npos;  // lo = d00..0
        const bool high_full = hi.find_first_not_of('9', 1) == std::string::npos; // hi = d99..9
        const std::string any = rest == 0 ? "" : rest == 1 ? "[0-9]" : "[0-9]{" + std::to_string(rest) + "}";
        if (!low_full) same_length(lo.substr(1), std::string(rest, '9'), join(prefix, item(lo[0], lo[0])), out);
        const char from = (char)(lo[0] + (low_full ? 0 : 1)), to = (char)(hi[0] - (high_full ? 0 : 1));
        if (from <= to) out.push_back(join(join(prefix, item(from, to)), any));
        if (!high_full) same_length(std::string(rest, '0'), hi.substr(1), join(prefix, item(hi[0], hi[0])), out);
    }

    std::string object(const Value &s, const std::string &path, const std::string &hint, int depth) {
        std::vector<std::string> required;
        if (s.HasMember("required")) {
            const Value &r = s["required"];
            if (!r.IsArray()) fail("'required' must be an array of strings", "required", path + "/required");
            for (const Value &x : r.GetArray()) {
                if (!x.IsString()) fail("'required' must be an array of strings", "required", path + "/required");
                required.emplace_back(x.GetString(), x.GetStringLength());
            }
        }
        bool extra_allowed = true;
        const Value *extra_schema = nullptr;
        if (s.HasMember("additionalProperties")) {
            const Value &a = s["additionalProperties"];
            if (a.IsBool()) extra_allowed = a.GetBool();
            else if (a.IsObject()) extra_schema = &a;
            else fail("'additionalProperties' must be a boolean or a schema", "additionalProperties", path + "/additionalProperties");
        }
        const Value *props = nullptr;
        if (s.HasMember("properties")) {
            props = &s["properties"];
            if (!props->IsObject()) fail("'properties' must be an object", "properties", path + "/properties");
            if (props->ObjectEmpty()) props = nullptr;
        }
        use("ws");
        if (!props && required.empty()) {
            if (extra_schema) { // a map: any keys, each value of one schema
                use("json-string");
                const std::string v = visit(*extra_schema, path + "/additionalProperties", hint + "-value", depth + 1);
                const std::string kv = "json-string ws \":\" ws " + v + " ws";
                return new_rule(hint, "\"{\" ws ( " + kv + " ( \",\" ws " + kv + " )* )? \"}\"");
            }
            return extra_allowed ? use("json-object") : "(\"{\" ws \"}\")";
        }
        if (extra_schema) fail("'additionalProperties' with a schema beside 'properties' is not supported", "additionalProperties", path);
        struct Prop {
            std::string name, rule;
            bool required;
        };
        std::vector<Prop> list;
        std::set<std::string> listed;
        auto add = [&](const std::string &name, const Value *schema, const std::string &where) {
            const bool req = std::find(required.begin(), required.end(), name) != required.end();
            const std::string kvhint = hint + "-" + sanitize(name);
            const std::string v = schema ? visit(*schema, where, kvhint, depth + 1) : use("json-value");
            list.push_back({name, new_rule(kvhint + "-kv", literal(compact_json(Value(name.c_str(), (rapidjson::SizeType)name.size()))) + " ws \":\" ws " + v), req});
            listed.insert(name);
        };
        if (props)
            for (auto it = props->MemberBegin(); it != props->MemberEnd(); ++it) {
                const std::string name(it->name.GetString(), it->name.GetStringLength());
                add(name, &it->value, path + "/properties/" + name);
            }
        for (const std::string &r : required)
            if (!listed.count(r)) {
                if (!extra_allowed)
                    fail("'" + r + "' is required but not in 'properties' and 'additionalProperties' is false", "required", path + "/required");
                add(r, nullptr, path);
            }
        // In the schema's order. Before the first required property each optional one brings
        // the comma after it, from there on the comma before it.
        const auto first_required = std::find_if(list.begin(), list.end(), [](const Prop &p) { return p.required; });
        if (first_required != list.end()) {
            std::string body;
            for (auto it = list.begin(); it != list.end(); ++it) {
                const std::string kv = it->rule + " ws";
                if (it < first_required) body += "( " + kv + " \",\" ws )? ";
                else if (it == first_required) body += kv;
                else if (it->required) body += " \",\" ws " + kv;
                else body += " ( \",\" ws " + kv + " )?";
            }
            return new_rule(hint, "\"{\" ws " + body + " \"}\"");
        }
        std::vector<const Prop *> optional;
        for (const Prop &p : list) optional.push_back(&p);
        // Only optional properties: whichever comes first has no comma before it.
        std::vector<std::string> tails(optional.size() + 1);
        for (size_t i = optional.size(); i-- > 1;)
            tails[i] = new_rule(hint + "-tail", "( \",\" ws " + optional[i]->rule + " ws )?" + (tails[i + 1].empty() ? "" : " " + tails[i + 1]));
        std::string first;
        for (size_t i = 0; i < optional.size(); ++i)
            first += (i ? " | " : "") + optional[i]->rule + " ws" + (tails[i + 1].empty() ? "" : " " + tails[i + 1]);
        return new_rule(hint, "\"{\" ws ( " + first + " )? \"}\"");
    }

    std::string array(const Value &s, const std::string &path, const std::string &hint, int depth) {
        std::string item;
        if (s.HasMember("items")) {
            if (s["items"].IsArray()) fail("'items' as an array (tuples) is not supported", "items", path + "/items");
            item = visit(s["items"], path + "/items", hint + "-item", depth + 1);
        } else
            item = use("json-value");
        const int64_t lo = s.HasMember("minItems") ? count(s, "minItems", path) : 0;
        const int64_t hi = s.HasMember("maxItems") ? count(s, "maxItems", path) : -1;
        if (hi >= 0 && hi < lo) fail("'maxItems' is below 'minItems'", "maxItems", path);
        if (lo > 1000 || hi > 1000) fail("'minItems' / 'maxItems' above 1000 are not supported", hi > 1000 ? "maxItems" : "minItems", path);
        use("ws");
        if (hi == 0) return "(\"[\" ws \"]\")";
        const std::string more = "( \",\" ws " + item + " ws )" + repetition(lo > 0 ? lo - 1 : 0, hi < 0 ? -1 : hi - 1);
        if (lo == 0) return new_rule(hint, "\"[\" ws ( " + item + " ws " + more + " )? \"]\"");
        return new_rule(hint, "\"[\" ws " + item + " ws " + more + " \"]\"");
    }

    const Value &root_;
    std::map<std::string, std::string> rules_;
    std::set<std::string> reserved_; // $ref rules being visited
    std::map<std::string, std::string> refs_;
    std::set<std::string> primitives_;
};

} // namespace

std::string json_object_gbnf() {
    std::string out = "root ::= json-object\n";
    for (const char *p : {"ws", "json-char", "json-string", "json-integer", "json-number", "json-boolean", "json-null",
                          "json-value", "json-object", "json-array"})
        out += std::string(p) + " ::= " + primitive_rules().at(p) + "\n";
    return out;
}

std::string json_schema_to_gbnf(std::string_view schema_json) {
    // The converter and RapidJSON's writer recurse per level: deeper text is refused first.
    if (json_nesting_depth(schema_json) > kMaxJsonNesting)
        throw SchemaError("the schema nests deeper than " + std::to_string(kMaxJsonNesting) + " levels", "", "");
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(schema_json.data(), schema_json.size());
    if (doc.HasParseError())
        throw SchemaError(std::string("not JSON at offset ") + std::to_string(doc.GetErrorOffset()) + ": " +
                              rapidjson::GetParseError_En(doc.GetParseError()),
                          "", "");
    return Converter(doc).run();
}

} // namespace rf::grammar
