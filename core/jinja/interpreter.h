// Rendering: walks the node tree with jinja2's scoping (a for loop and a macro call open a
// scope; if does not), counting steps and nesting against Limits.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "ast.h"

namespace rf::jinja {

class Interpreter {
public:
    Interpreter(const Limits &limits, const Value &context);
    std::string render(const Node &root);

    // For the builtins.
    [[noreturn]] void fail(const std::string &message) const;
    [[noreturn]] void fail_undefined(const Value &undefined) const;
    void step();
    // Work in proportion to a size (elements copied or compared, bytes / 16 of text built):
    // counted with the steps, so quadratic templates (l = l + [x] in a loop) stop too.
    void charge(uint64_t units);
    void charge_size(const Value &v); // a value's size in those units
    void check_size(size_t bytes) const;
    Value call(const Value &callee, CallArgs &args, const std::string &what);
    Value getattr(const Value &obj, const std::string &name);
    Value getitem(const Value &obj, const Value &key);
    std::vector<Value> iterate(const Value &v);
    const Limits &limits() const { return limits_; }

private:
    struct Frame {
        std::unordered_map<std::string, Value> vars;
        std::shared_ptr<Frame> parent;
    };
    enum class Flow { Normal, Break, Continue };

    const Limits &limits_;
    std::shared_ptr<Frame> frame_;
    std::string *out_ = nullptr;
    uint64_t steps_ = 0;
    int depth_ = 0;
    int line_ = 0;

    struct Deeper {
        Interpreter &in;
        explicit Deeper(Interpreter &i);
        ~Deeper() { --in.depth_; }
    };

    Flow exec(const Node &n);
    Flow exec_body(const Node &body);
    Flow exec_for(const Node &n);
    void exec_set(const Node &n);
    void define_macro(const Node &n);
    void write(const std::string &s);
    // The text `body` writes, into a string instead of the output (set blocks, filter blocks).
    std::string capture(const Node &body);

    Value eval(const Node &n);
    Value eval_binary(const Node &n);
    bool compare(const std::string &op, const Value &a, const Value &b);
    void eval_args(const Node &n, size_t first, CallArgs &args);
    Value lookup(const std::string &name) const;
    void assign(const std::string &name, Value v);
    Value slice(const Value &obj, const Node &n);
};

// builtins.cpp
Value apply_filter(Interpreter &in, const std::string &name, const Value &v, CallArgs &args);
bool apply_test(Interpreter &in, const std::string &name, const Value &v, CallArgs &args);
Value method(Interpreter &in, const Value &obj, const std::string &name); // undefined when none
void add_globals(std::unordered_map<std::string, Value> &vars);
bool is_filter(const std::string &name);
bool is_test(const std::string &name);
int compare_values(Interpreter &in, const Value &a, const Value &b, const char *op); // <0, 0, >0

} // namespace rf::jinja
