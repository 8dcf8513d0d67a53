// rf::gguf::Value: type queries, conversions and rendering of metadata values.
#include <charconv>
#include <cstdio>
#include <limits>

#include "rocmforge/error.h"
#include "rocmforge/gguf.h"

namespace rf::gguf {

const char *value_type_name(ValueType t) {
    switch (t) {
    case ValueType::UINT8: return "uint8";
    case ValueType::INT8: return "int8";
    case ValueType::UINT16: return "uint16";
    case ValueType::INT16: return "int16";
    case ValueType::UINT32: return "uint32";
    case ValueType::INT32: return "int32";
    case ValueType::FLOAT32: return "float32";
    case ValueType::BOOL: return "bool";
    case ValueType::STRING: return "string";
    case ValueType::ARRAY: return "array";
    case ValueType::UINT64: return "uint64";
    case ValueType::INT64: return "int64";
    case ValueType::FLOAT64: return "float64";
    }
    return "?";
}

namespace {

bool is_unsigned_type(ValueType t) {
    return t == ValueType::UINT8 || t == ValueType::UINT16 || t == ValueType::UINT32 ||
           t == ValueType::UINT64;
}
bool is_signed_type(ValueType t) {
    return t == ValueType::INT8 || t == ValueType::INT16 || t == ValueType::INT32 ||
           t == ValueType::INT64;
}

template <typename T> std::string shortest(T v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    return std::string(buf, r.ptr);
}

// Double-quoted, with JSON-style escapes for quotes, backslashes and control bytes.
std::string quoted(const std::string &s) {
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof(buf), "\\u%04x", c);
                out += buf;
            } else {
                out += char(c);
            }
        }
    }
    out += '"';
    return out;
}

} // namespace

bool Value::is_integer() const {
    return is_unsigned_type(type) || is_signed_type(type) || type == ValueType::BOOL;
}

bool Value::is_float() const { return type == ValueType::FLOAT32 || type == ValueType::FLOAT64; }

int64_t Value::as_int() const {
    if (is_signed_type(type)) return i;
    if (is_unsigned_type(type) || type == ValueType::BOOL) {
        if (u > uint64_t(std::numeric_limits<int64_t>::max()))
            throw Error("uint64 value " + std::to_string(u) + " does not fit an int64");
        return int64_t(u);
    }
    throw Error(std::string("a ") + value_type_name(type) + " value is not an integer");
}

double Value::as_float() const {
    if (is_float()) return f;
    if (is_signed_type(type)) return double(i);
    if (is_unsigned_type(type)) return double(u);
    throw Error(std::string("a ") + value_type_name(type) + " value is not a number");
}

const std::string &Value::as_string() const {
    if (type != ValueType::STRING)
        throw Error(std::string("a ") + value_type_name(type) + " value is not a string");
    return s;
}

std::string Value::to_string(size_t max_items) const {
    switch (type) {
    case ValueType::STRING: return quoted(s);
    case ValueType::BOOL: return u ? "true" : "false";
    case ValueType::FLOAT32: return shortest(float(f));
    case ValueType::FLOAT64: return shortest(f);
    case ValueType::ARRAY: {
        std::string out = "[";
        const size_t shown = arr.size() < max_items ? arr.size() : max_items;
        for (size_t k = 0; k < shown; ++k) {
            if (k) out += ", ";
            out += arr[k].to_string(max_items);
        }
        if (shown < arr.size()) {
            out += shown ? ", ...] (" : "...] (";
            out += std::to_string(arr.size()) + " items)";
        } else {
            out += "]";
        }
        return out;
    }
    default:
        return is_signed_type(type) ? std::to_string(i) : std::to_string(u);
    }
}

Value Value::from_u32(uint32_t v) { return {.type = ValueType::UINT32, .u = v}; }
Value Value::from_i32(int32_t v) { return {.type = ValueType::INT32, .i = v}; }
Value Value::from_u64(uint64_t v) { return {.type = ValueType::UINT64, .u = v}; }
Value Value::from_f32(float v) { return {.type = ValueType::FLOAT32, .f = v}; }
Value Value::from_bool(bool v) { return {.type = ValueType::BOOL, .u = v ? 1u : 0u}; }
Value Value::from_string(std::string v) { return {.type = ValueType::STRING, .s = std::move(v)}; }

namespace {

// An array of elem_type values, make(x) building each element.
template <class T, class Make>
Value array_of(ValueType elem_type, const std::vector<T> &v, Make make) {
    Value r{.type = ValueType::ARRAY, .elem_type = elem_type};
    r.arr.reserve(v.size());
    for (const T &x : v) r.arr.push_back(make(x));
    return r;
}

} // namespace

Value Value::from_strings(const std::vector<std::string> &v) {
    return array_of(ValueType::STRING, v, from_string);
}
Value Value::from_i32s(const std::vector<int32_t> &v) { return array_of(ValueType::INT32, v, from_i32); }
Value Value::from_f32s(const std::vector<float> &v) { return array_of(ValueType::FLOAT32, v, from_f32); }

} // namespace rf::gguf
