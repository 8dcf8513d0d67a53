#include "json_schema_check.h"

#include <cstring>
#include <regex>

namespace rf_test {
namespace {

using rapidjson::Value;

size_t codepoints(const Value &s) {
    size_t n = 0;
    for (rapidjson::SizeType i = 0; i < s.GetStringLength(); ++i) n += ((unsigned char)s.GetString()[i] & 0xC0) != 0x80;
    return n;
}

bool has_type(const Value &doc, const std::string &t) {
    if (t == "null") return doc.IsNull();
    if (t == "boolean") return doc.IsBool();
    if (t == "string") return doc.IsString();
    if (t == "object") return doc.IsObject();
    if (t == "array") return doc.IsArray();
    if (t == "number") return doc.IsNumber();
    if (t == "integer") return doc.IsInt64() || doc.IsUint64() || (doc.IsDouble() && doc.GetDouble() == (double)(int64_t)doc.GetDouble());
    return false;
}

// RFC 3339 full-date, a day that exists (leap years included).
bool is_date(const std::string &s) {
    std::smatch m;
    if (!std::regex_match(s, m, std::regex(R"((\d{4})-(\d{2})-(\d{2}))"))) return false;
    const int y = std::stoi(m[1]), mo = std::stoi(m[2]), d = std::stoi(m[3]);
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    const int days[] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= days[mo - 1];
}
// RFC 3339 full-time (the offset is required).
bool is_time(const std::string &s) {
    return std::regex_match(s, std::regex(R"(([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d))"));
}
bool has_format(const std::string &s, const std::string &format) {
    if (format == "date") return is_date(s);
    if (format == "time") return is_time(s);
    if (format == "date-time") {
        const size_t t = s.find_first_of("Tt");
        return t != std::string::npos && is_date(s.substr(0, t)) && is_time(s.substr(t + 1));
    }
    if (format == "uuid") return std::regex_match(s, std::regex("[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"));
    return false;
}

} // namespace

std::string schema_violation(const Value &schema, const Value &doc, const Value &root, const std::string &path) {
    const std::string at = path.empty() ? "/" : path;
    if (schema.IsBool()) return schema.GetBool() ? "" : at + ": schema false";
    if (schema.HasMember("$ref")) {
        std::string ref = schema["$ref"].GetString();
        const char *section = ref.rfind("#/$defs/", 0) == 0 ? "$defs" : "definitions";
        const std::string name = ref.substr(ref.find('/', 2) + 1);
        return schema_violation(root[section][name.c_str()], doc, root, path);
    }
    if (schema.HasMember("const") && doc != schema["const"]) return at + ": not the const value";
    if (schema.HasMember("enum")) {
        bool found = false;
        for (const Value &e : schema["enum"].GetArray()) found |= doc == e;
        if (!found) return at + ": not one of the enum values";
    }
    if (schema.HasMember("anyOf")) {
        bool any = false;
        for (const Value &s : schema["anyOf"].GetArray()) any |= schema_violation(s, doc, root, path).empty();
        if (!any) return at + ": matches no anyOf alternative";
    }
    if (schema.HasMember("oneOf")) {
        int n = 0;
        for (const Value &s : schema["oneOf"].GetArray()) n += schema_violation(s, doc, root, path).empty();
        if (n != 1) return at + ": matches " + std::to_string(n) + " oneOf alternatives";
    }
    if (schema.HasMember("allOf"))
        for (const Value &s : schema["allOf"].GetArray())
            if (auto v = schema_violation(s, doc, root, path); !v.empty()) return v;
    if (schema.HasMember("type")) {
        const Value &t = schema["type"];
        bool ok = false;
        if (t.IsString()) ok = has_type(doc, t.GetString());
        else
            for (const Value &x : t.GetArray()) ok |= has_type(doc, x.GetString());
        if (!ok) return at + ": wrong type";
    }
    if (doc.IsNumber()) {
        const double d = doc.GetDouble();
        if (schema.HasMember("minimum") && d < schema["minimum"].GetDouble()) return at + ": below minimum";
        if (schema.HasMember("maximum") && d > schema["maximum"].GetDouble()) return at + ": above maximum";
        if (schema.HasMember("exclusiveMinimum") && d <= schema["exclusiveMinimum"].GetDouble()) return at + ": not above exclusiveMinimum";
        if (schema.HasMember("exclusiveMaximum") && d >= schema["exclusiveMaximum"].GetDouble()) return at + ": not below exclusiveMaximum";
    }
    if (doc.IsString()) {
        if (schema.HasMember("minLength") && codepoints(doc) < schema["minLength"].GetUint64()) return at + ": too short";
        if (schema.HasMember("maxLength") && codepoints(doc) > schema["maxLength"].GetUint64()) return at + ": too long";
        if (schema.HasMember("format") && !has_format(doc.GetString(), schema["format"].GetString()))
            return at + ": not a " + std::string(schema["format"].GetString());
    }
    if (doc.IsArray()) {
        if (schema.HasMember("minItems") && doc.Size() < schema["minItems"].GetUint64()) return at + ": too few items";
        if (schema.HasMember("maxItems") && doc.Size() > schema["maxItems"].GetUint64()) return at + ": too many items";
        if (schema.HasMember("items"))
            for (rapidjson::SizeType i = 0; i < doc.Size(); ++i)
                if (auto v = schema_violation(schema["items"], doc[i], root, path + "/" + std::to_string(i)); !v.empty()) return v;
    }
    if (doc.IsObject()) {
        if (schema.HasMember("required"))
            for (const Value &r : schema["required"].GetArray())
                if (!doc.HasMember(r.GetString())) return at + ": '" + r.GetString() + "' missing";
        for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
            const std::string key(it->name.GetString(), it->name.GetStringLength());
            const bool listed = schema.HasMember("properties") && schema["properties"].HasMember(key.c_str());
            if (listed) {
                if (auto v = schema_violation(schema["properties"][key.c_str()], it->value, root, path + "/" + key); !v.empty()) return v;
            } else if (schema.HasMember("additionalProperties")) {
                const Value &a = schema["additionalProperties"];
                if (a.IsBool() && !a.GetBool()) return at + ": additional property '" + key + "'";
                if (a.IsObject())
                    if (auto v = schema_violation(a, it->value, root, path + "/" + key); !v.empty()) return v;
            }
        }
    }
    return "";
}

} // namespace rf_test
