// A Jinja2 template engine for chat templates: the subset of Jinja (and of Python's value
// semantics) that published chat templates use, rendered the way Hugging Face transformers
// renders tokenizer.chat_template (jinja2 with trim_blocks, lstrip_blocks and loop controls, in
// an immutable sandbox, with raise_exception, strftime_now and transformers' tojson).
// A template is untrusted input: parsing and rendering are bounded (nesting, steps, output).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rf::jinja {

// Syntax: the template cannot be parsed (line and column of the offending token).
// Runtime: an expression failed while rendering (line of the statement).
// Raised: the template called raise_exception(message); what() is that message alone.
// Limit: rendering went past Limits (steps, nesting, output size).
class TemplateError : public std::runtime_error {
public:
    enum class Kind { Syntax, Runtime, Raised, Limit };
    TemplateError(Kind kind, std::string message, int line = 0, int column = 0);
    Kind kind() const { return kind_; }
    int line() const { return line_; }
    int column() const { return column_; }
    const std::string &message() const { return message_; } // without the position

private:
    Kind kind_;
    int line_, column_;
    std::string message_;
};

class Value;
class Interpreter;

struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keyword;
};
using Function = std::function<Value(Interpreter &, CallArgs &)>;

// A Python value as a template sees it. Lists and dicts are shared (as Python objects are), so
// a namespace changed inside a loop is changed outside it too. Dicts keep insertion order.
class Value {
public:
    enum class Type { Undefined, None, Bool, Int, Float, String, List, Dict, Function };
    struct ListData {
        std::vector<Value> items;
        bool tuple = false; // printed (a, b)
    };
    struct DictData {
        std::vector<std::pair<Value, Value>> items;
        bool is_namespace = false; // jinja2's namespace(): attributes may be assigned
        const Value *find(const Value &key) const;
        Value *find(const Value &key);
        void set(Value key, Value value);
    };

    Value() = default; // undefined
    static Value undefined(std::string hint = {});
    static Value none();
    Value(bool b);
    Value(int v) : Value((int64_t)v) {}
    Value(int64_t v);
    Value(double v);
    Value(std::string s);
    Value(const char *s) : Value(std::string(s)) {}
    static Value list(std::vector<Value> items = {}, bool tuple = false);
    static Value dict();
    static Value function(Function f);

    Type type() const { return type_; }
    bool is_undefined() const { return type_ == Type::Undefined; }
    bool is_none() const { return type_ == Type::None; }
    bool is_bool() const { return type_ == Type::Bool; }
    bool is_int() const { return type_ == Type::Int; }
    bool is_float() const { return type_ == Type::Float; }
    bool is_number() const { return type_ == Type::Int || type_ == Type::Float || type_ == Type::Bool; }
    bool is_string() const { return type_ == Type::String; }
    bool is_list() const { return type_ == Type::List; }
    bool is_dict() const { return type_ == Type::Dict; }
    bool is_function() const { return type_ == Type::Function; }

    bool as_bool() const { return b_; }
    int64_t as_int() const { return type_ == Type::Bool ? (int64_t)b_ : i_; } // Bool counts as int, as in Python
    double as_float() const { return type_ == Type::Float ? d_ : (double)as_int(); }
    const std::string &as_string() const { return *s_; }
    ListData &list_data() const { return *list_; }
    DictData &dict_data() const { return *dict_; }
    const Function &as_function() const { return *fn_; }
    const std::string &undefined_hint() const { return *s_; }

    // Python truthiness; str() (what {{ }} prints); repr(); the Python type name for errors.
    bool truthy() const;
    std::string str() const;
    std::string repr() const;
    const char *type_name() const;

    // Convenience for building contexts: dict member (insertion order kept) and list append.
    Value &set(const std::string &key, Value v);
    Value &push(Value v);

private:
    Type type_ = Type::Undefined;
    bool b_ = false;
    int64_t i_ = 0;
    double d_ = 0;
    std::shared_ptr<const std::string> s_; // String, or the Undefined's hint
    std::shared_ptr<ListData> list_;
    std::shared_ptr<DictData> dict_;
    std::shared_ptr<const Function> fn_;
};

// Python ==.
bool equal(const Value &a, const Value &b);

// JSON text -> Value (objects -> dicts in order, integers -> Int, other numbers -> Float).
// Throws TemplateError (Runtime) with the parse error and its offset.
Value from_json(std::string_view text);

// json.dumps(v, ensure_ascii, indent (<0: none), separators, sort_keys) as Python writes it.
// Throws TemplateError for values JSON cannot hold (undefined, functions).
struct JsonOptions {
    int indent = -1;
    std::string item_separator, key_separator; // empty: Python's defaults for the indent
    bool sort_keys = false;
    bool ensure_ascii = false;
};
std::string to_json(const Value &v, const JsonOptions &options = {});

struct Limits {
    size_t max_output = size_t(16) << 20; // bytes of rendered text (and of any one string)
    uint64_t max_steps = 5'000'000;       // statements, loop iterations and calls together
    int max_depth = 500;                  // nesting of evaluation: expressions, blocks, macro calls
};

struct Node;

// A parsed template. parse() throws TemplateError (Syntax) naming line and column.
class Template {
public:
    static Template parse(std::string_view source);
    // Renders with `context` (a dict) as the template's variables, over the globals jinja2 and
    // transformers define (range, namespace, dict, raise_exception, strftime_now, ...).
    std::string render(const Value &context, const Limits &limits = {}) const;

private:
    std::shared_ptr<const Node> root_;
};

} // namespace rf::jinja
