// The Value model: Python truthiness, str(), repr() and == for the types templates meet.
#include <cmath>

#include "pyformat.h"
#include "rocmforge/jinja.h"

namespace rf::jinja {

namespace {
std::string position_prefix(TemplateError::Kind kind, int line, int column) {
    if (kind == TemplateError::Kind::Raised || line <= 0) return "";
    std::string s = "line " + std::to_string(line);
    if (column > 0) s += ", column " + std::to_string(column);
    return s + ": ";
}
} // namespace

TemplateError::TemplateError(Kind kind, std::string message, int line, int column)
    : std::runtime_error(position_prefix(kind, line, column) + message), kind_(kind), line_(line), column_(column),
      message_(std::move(message)) {}

const Value *Value::DictData::find(const Value &key) const {
    for (const auto &kv : items)
        if (equal(kv.first, key)) return &kv.second;
    return nullptr;
}
Value *Value::DictData::find(const Value &key) {
    for (auto &kv : items)
        if (equal(kv.first, key)) return &kv.second;
    return nullptr;
}
void Value::DictData::set(Value key, Value value) {
    if (Value *v = find(key)) *v = std::move(value);
    else items.emplace_back(std::move(key), std::move(value));
}

Value Value::undefined(std::string hint) {
    Value v;
    if (!hint.empty()) v.s_ = std::make_shared<const std::string>(std::move(hint));
    return v;
}
Value Value::none() {
    Value v;
    v.type_ = Type::None;
    return v;
}
Value::Value(bool b) : type_(Type::Bool), b_(b) {}
Value::Value(int64_t v) : type_(Type::Int), i_(v) {}
Value::Value(double v) : type_(Type::Float), d_(v) {}
Value::Value(std::string s) : type_(Type::String), s_(std::make_shared<const std::string>(std::move(s))) {}
Value Value::list(std::vector<Value> items, bool tuple) {
    Value v;
    v.type_ = Type::List;
    v.list_ = std::make_shared<ListData>();
    v.list_->items = std::move(items);
    v.list_->tuple = tuple;
    return v;
}
Value Value::dict() {
    Value v;
    v.type_ = Type::Dict;
    v.dict_ = std::make_shared<DictData>();
    return v;
}
Value Value::function(Function f) {
    Value v;
    v.type_ = Type::Function;
    v.fn_ = std::make_shared<const Function>(std::move(f));
    return v;
}

const std::string &empty_string() {
    static const std::string e;
    return e;
}

bool Value::truthy() const {
    switch (type_) {
    case Type::Undefined:
    case Type::None: return false;
    case Type::Bool: return b_;
    case Type::Int: return i_ != 0;
    case Type::Float: return d_ != 0;
    case Type::String: return !s_->empty();
    case Type::List: return !list_->items.empty();
    case Type::Dict: return dict_->is_namespace || !dict_->items.empty();
    case Type::Function: return true;
    }
    return false;
}

std::string Value::str() const {
    switch (type_) {
    case Type::Undefined: return "";
    case Type::String: return *s_;
    default: return repr();
    }
}

std::string Value::repr() const {
    switch (type_) {
    case Type::Undefined: return "";
    case Type::None: return "None";
    case Type::Bool: return b_ ? "True" : "False";
    case Type::Int: return std::to_string(i_);
    case Type::Float: return float_repr(d_);
    case Type::String: return string_repr(*s_);
    case Type::List: {
        std::string out = list_->tuple ? "(" : "[";
        for (size_t i = 0; i < list_->items.size(); ++i) out += (i ? ", " : "") + list_->items[i].repr();
        if (list_->tuple && list_->items.size() == 1) out += ",";
        return out + (list_->tuple ? ")" : "]");
    }
    case Type::Dict: {
        std::string out = dict_->is_namespace ? "<Namespace {" : "{";
        bool first = true;
        for (const auto &kv : dict_->items) {
            out += (first ? "" : ", ") + kv.first.repr() + ": " + kv.second.repr();
            first = false;
        }
        return out + (dict_->is_namespace ? "}>" : "}");
    }
    case Type::Function: return "<function>";
    }
    return "";
}

const char *Value::type_name() const {
    switch (type_) {
    case Type::Undefined: return "Undefined";
    case Type::None: return "NoneType";
    case Type::Bool: return "bool";
    case Type::Int: return "int";
    case Type::Float: return "float";
    case Type::String: return "str";
    case Type::List: return list_->tuple ? "tuple" : "list";
    case Type::Dict: return dict_->is_namespace ? "Namespace" : "dict";
    case Type::Function: return "function";
    }
    return "?";
}

Value &Value::set(const std::string &key, Value v) {
    dict_->set(Value(key), std::move(v));
    return *dict_->find(Value(key));
}

Value &Value::push(Value v) {
    list_->items.push_back(std::move(v));
    return list_->items.back();
}

bool equal(const Value &a, const Value &b) {
    using T = Value::Type;
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) return a.as_float() == b.as_float();
        return a.as_int() == b.as_int();
    }
    if (a.type() != b.type()) return false;
    switch (a.type()) {
    case T::Undefined:
    case T::None: return true;
    case T::String: return a.as_string() == b.as_string();
    case T::List: {
        const auto &x = a.list_data(), &y = b.list_data();
        if (x.tuple != y.tuple || x.items.size() != y.items.size()) return false;
        for (size_t i = 0; i < x.items.size(); ++i)
            if (!equal(x.items[i], y.items[i])) return false;
        return true;
    }
    case T::Dict: {
        const auto &x = a.dict_data(), &y = b.dict_data();
        if (&x == &y) return true;
        if (x.is_namespace || y.is_namespace || x.items.size() != y.items.size()) return false;
        for (const auto &kv : x.items) {
            const Value *o = y.find(kv.first);
            if (!o || !equal(kv.second, *o)) return false;
        }
        return true;
    }
    case T::Function: return &a.as_function() == &b.as_function();
    default: return false;
    }
}

} // namespace rf::jinja
