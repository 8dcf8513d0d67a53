// JSON in (rapidjson, keeping key order and the integer / float distinction Python's json.loads
// makes) and out (json.dumps, byte for byte: its separators, indent and escapes).
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "lexer.h"
#include "pyformat.h"
#include "rocmforge/jinja.h"

namespace rf::jinja {
namespace {

constexpr int kMaxJsonNesting = 256;

Value convert(const rapidjson::Value &j, int depth) {
    if (depth > kMaxJsonNesting)
        throw TemplateError(TemplateError::Kind::Runtime, "JSON nested deeper than " + std::to_string(kMaxJsonNesting) + " levels");
    if (j.IsNull()) return Value::none();
    if (j.IsBool()) return Value(j.GetBool());
    if (j.IsInt64()) return Value((int64_t)j.GetInt64());
    if (j.IsNumber()) return Value(j.GetDouble());
    if (j.IsString()) return Value(std::string(j.GetString(), j.GetStringLength()));
    if (j.IsArray()) {
        Value l = Value::list();
        for (const auto &e : j.GetArray()) l.push(convert(e, depth + 1));
        return l;
    }
    // A repeated key keeps its first place and takes the last value, as json.loads does.
    Value d = Value::dict();
    std::unordered_map<std::string, size_t> at;
    auto &items = d.dict_data().items;
    for (auto it = j.MemberBegin(); it != j.MemberEnd(); ++it) {
        std::string key(it->name.GetString(), it->name.GetStringLength());
        Value v = convert(it->value, depth + 1);
        const auto [pos, fresh] = at.emplace(key, items.size());
        if (fresh) items.emplace_back(Value(std::move(key)), std::move(v));
        else items[pos->second].second = std::move(v);
    }
    return d;
}

void escape_string(std::string &out, const std::string &s, bool ensure_ascii) {
    out += '"';
    for (size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            if (c < 0x20) {
                char b[8];
                std::snprintf(b, sizeof b, "\\u%04x", c);
                out += b;
            } else if (c >= 0x80 && ensure_ascii) {
                // Decode one code point; write \uXXXX (a surrogate pair above the BMP).
                uint32_t cp = c;
                size_t n = (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 0;
                cp = n == 1 ? c & 0x1F : n == 2 ? c & 0x0F : c & 0x07;
                for (size_t k = 0; k < n && i + 1 < s.size(); ++k) cp = (cp << 6) | ((unsigned char)s[++i] & 0x3F);
                char b[16];
                if (cp >= 0x10000) {
                    cp -= 0x10000;
                    std::snprintf(b, sizeof b, "\\u%04x\\u%04x", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
                } else
                    std::snprintf(b, sizeof b, "\\u%04x", cp);
                out += b;
            } else
                out += (char)c;
        }
    }
    out += '"';
}

struct Writer {
    const JsonOptions &o;
    std::string item_sep, key_sep;
    std::string out;
    int depth = 0;

    void newline(int level) {
        out += '\n';
        out.append((size_t)(o.indent * level), ' ');
    }

    std::string key_text(const Value &k) {
        if (k.is_string()) return k.as_string();
        if (k.is_bool()) return k.as_bool() ? "true" : "false";
        if (k.is_none()) return "null";
        if (k.is_int()) return std::to_string(k.as_int());
        if (k.is_float()) return float_repr(k.as_float());
        throw TemplateError(TemplateError::Kind::Runtime, std::string("tojson: keys must be str, int, float, bool or None, not ") + k.type_name());
    }

    void write(const Value &v) {
        if (++depth > 500) throw TemplateError(TemplateError::Kind::Limit, "tojson: value nested too deeply");
        switch (v.type()) {
        case Value::Type::None: out += "null"; break;
        case Value::Type::Bool: out += v.as_bool() ? "true" : "false"; break;
        case Value::Type::Int: out += std::to_string(v.as_int()); break;
        case Value::Type::Float: {
            const double d = v.as_float();
            out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity") : float_repr(d);
            break;
        }
        case Value::Type::String: escape_string(out, v.as_string(), o.ensure_ascii); break;
        case Value::Type::List: {
            const auto &items = v.list_data().items;
            if (items.empty()) {
                out += "[]";
                break;
            }
            out += '[';
            for (size_t i = 0; i < items.size(); ++i) {
                if (i) out += item_sep;
                if (o.indent >= 0) newline(depth);
                write(items[i]);
            }
            if (o.indent >= 0) newline(depth - 1);
            out += ']';
            break;
        }
        case Value::Type::Dict: {
            if (v.dict_data().is_namespace) throw TemplateError(TemplateError::Kind::Runtime, "Object of type Namespace is not JSON serializable");
            std::vector<std::pair<std::string, const Value *>> items;
            for (const auto &kv : v.dict_data().items) items.emplace_back(key_text(kv.first), &kv.second);
            if (o.sort_keys) std::stable_sort(items.begin(), items.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
            if (items.empty()) {
                out += "{}";
                break;
            }
            out += '{';
            for (size_t i = 0; i < items.size(); ++i) {
                if (i) out += item_sep;
                if (o.indent >= 0) newline(depth);
                escape_string(out, items[i].first, o.ensure_ascii);
                out += key_sep;
                write(*items[i].second);
            }
            if (o.indent >= 0) newline(depth - 1);
            out += '}';
            break;
        }
        default:
            throw TemplateError(TemplateError::Kind::Runtime, std::string("Object of type ") + v.type_name() + " is not JSON serializable");
        }
        --depth;
    }
};

} // namespace

Value from_json(std::string_view text) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(text.data(), text.size());
    if (doc.HasParseError())
        throw TemplateError(TemplateError::Kind::Runtime, std::string("malformed JSON at offset ") + std::to_string(doc.GetErrorOffset()) +
                                                              ": " + rapidjson::GetParseError_En(doc.GetParseError()));
    return convert(doc, 0);
}

std::string to_json(const Value &v, const JsonOptions &options) {
    Writer w{options, options.item_separator, options.key_separator, {}, 0};
    if (w.item_sep.empty()) w.item_sep = options.indent >= 0 ? "," : ", ";
    if (w.key_sep.empty()) w.key_sep = ": ";
    w.write(v);
    return std::move(w.out);
}

} // namespace rf::jinja
