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

Value Value::from_u32(uint32_t v) {
    Value r;
    r.type = ValueType::UINT32;
    r.u = v;
    return r;
}

Value Value::from_i32(int32_t v) {
    Value r;
    r.type = ValueType::INT32;
    r.i = v;
    return r;
}

Value Value::from_u64(uint64_t v) {
    Value r;
    r.type = ValueType::UINT64;
    r.u = v;
    return r;
}

Value Value::from_f32(float v) {
    Value r;
    r.type = ValueType::FLOAT32;
    r.f = v;
    return r;
}

Value Value::from_bool(bool v) {
    Value r;
    r.type = ValueType::BOOL;
    r.u = v ? 1 : 0;
    return r;
}

Value Value::from_string(std::string v) {
    Value r;
    r.type = ValueType::STRING;
    r.s = std::move(v);
    return r;
}

Value Value::from_strings(const std::vector<std::string> &v) {
    Value r;
    r.type = ValueType::ARRAY;
    r.elem_type = ValueType::STRING;
    r.arr.reserve(v.size());
    for (const auto &s : v) r.arr.push_back(from_string(s));
    return r;
}

Value Value::from_i32s(const std::vector<int32_t> &v) {
    Value r;
    r.type = ValueType::ARRAY;
    r.elem_type = ValueType::INT32;
    r.arr.reserve(v.size());
    for (int32_t x : v) r.arr.push_back(from_i32(x));
    return r;
}

Value Value::from_f32s(const std::vector<float> &v) {
    Value r;
    r.type = ValueType::ARRAY;
    r.elem_type = ValueType::FLOAT32;
    r.arr.reserve(v.size());
    for (float x : v) r.arr.push_back(from_f32(x));
    return r;
}

} // namespace rf::gguf
