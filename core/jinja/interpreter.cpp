#include "interpreter.h"

#include <cmath>

#include "percent_format.h"
#include "pyformat.h"

namespace rf::jinja {

Interpreter::Deeper::Deeper(Interpreter &i) : in(i) {
    if (++in.depth_ > in.limits_.max_depth)
        throw TemplateError(TemplateError::Kind::Limit,
                            "template nesting deeper than " + std::to_string(in.limits_.max_depth) + " levels (runaway macro recursion?)",
                            in.line_);
}

Interpreter::Interpreter(const Limits &limits, const Value &context) : limits_(limits) {
    auto globals = std::make_shared<Frame>();
    add_globals(globals->vars);
    frame_ = std::make_shared<Frame>();
    frame_->parent = globals;
    if (context.is_dict())
        for (const auto &kv : context.dict_data().items)
            if (kv.first.is_string()) frame_->vars[kv.first.as_string()] = kv.second;
}

void Interpreter::fail(const std::string &message) const { throw TemplateError(TemplateError::Kind::Runtime, message, line_); }

void Interpreter::fail_undefined(const Value &u) const {
    const std::string hint = u.is_undefined() && !u.undefined_hint().empty() ? u.undefined_hint() : "value is undefined";
    fail(hint);
}

void Interpreter::step() {
    if (++steps_ > limits_.max_steps)
        throw TemplateError(TemplateError::Kind::Limit,
                            "rendering took more than " + std::to_string(limits_.max_steps) + " steps (a loop that does not end?)", line_);
}

void Interpreter::charge(uint64_t units) {
    steps_ += units;
    if (steps_ > limits_.max_steps)
        throw TemplateError(TemplateError::Kind::Limit,
                            "rendering took more than " + std::to_string(limits_.max_steps) + " steps (a loop that does not end?)", line_);
}

void Interpreter::charge_size(const Value &v) {
    if (v.is_string()) charge(v.as_string().size() / 16);
    else if (v.is_list()) charge(v.list_data().items.size());
    else if (v.is_dict()) charge(v.dict_data().items.size());
}

void Interpreter::check_size(size_t bytes) const {
    if (bytes > limits_.max_output)
        throw TemplateError(TemplateError::Kind::Limit, "a string of the template would exceed " + std::to_string(limits_.max_output) + " bytes",
                            line_);
}

std::string Interpreter::capture(const Node &body) {
    std::string buf;
    struct Restore {
        std::string *&out, *saved;
        ~Restore() { out = saved; }
    } restore{out_, out_};
    out_ = &buf;
    exec(body);
    return buf;
}

void Interpreter::write(const std::string &s) {
    if (out_->size() + s.size() > limits_.max_output)
        throw TemplateError(TemplateError::Kind::Limit, "rendered text exceeds " + std::to_string(limits_.max_output) + " bytes", line_);
    *out_ += s;
}

std::string Interpreter::render(const Node &root) {
    std::string out;
    out_ = &out;
    exec(root);
    return out;
}

Value Interpreter::lookup(const std::string &name) const {
    for (const Frame *f = frame_.get(); f; f = f->parent.get()) {
        auto it = f->vars.find(name);
        if (it != f->vars.end()) return it->second;
    }
    return Value::undefined("'" + name + "' is undefined");
}

void Interpreter::assign(const std::string &name, Value v) { frame_->vars[name] = std::move(v); }

Interpreter::Flow Interpreter::exec_body(const Node &body) {
    for (const auto &k : body.kids) {
        const Flow f = exec(*k);
        if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
}

Interpreter::Flow Interpreter::exec(const Node &n) {
    Deeper deeper(*this);
    line_ = n.line;
    step();
    using K = Node::Kind;
    switch (n.kind) {
    case K::Body: return exec_body(n);
    case K::Text: write(n.literal.as_string()); return Flow::Normal;
    case K::Print: {
        const Value v = eval(*n.kids[0]);
        write(v.str());
        return Flow::Normal;
    }
    case K::If: {
        size_t i = 0;
        for (; i + 1 < n.kids.size(); i += 2) {
            line_ = n.kids[i]->line;
            if (eval(*n.kids[i]).truthy()) return exec(*n.kids[i + 1]);
        }
        if (n.has_else) return exec(*n.kids.back());
        return Flow::Normal;
    }
    case K::For: return exec_for(n);
    case K::Set: exec_set(n); return Flow::Normal;
    case K::SetBlock: {
        std::string buf = capture(*n.kids[0]);
        assign(n.names[0], Value(std::move(buf)));
        return Flow::Normal;
    }
    case K::Macro: define_macro(n); return Flow::Normal;
    case K::Break: return Flow::Break;
    case K::Continue: return Flow::Continue;
    case K::FilterBlock: {
        std::string buf = capture(*n.kids[0]);
        // Apply the chain innermost first, the body's text as the innermost value.
        std::vector<const Node *> chain;
        for (const Node *f = n.kids[1].get(); f; f = f->kids[0].get()) chain.push_back(f);
        Value v(std::move(buf));
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            CallArgs args;
            eval_args(**it, 1, args);
            v = apply_filter(*this, (*it)->name, v, args);
        }
        write(v.str());
        return Flow::Normal;
    }
    default: fail("internal error: an expression where a statement belongs");
    }
}

Interpreter::Flow Interpreter::exec_for(const Node &n) {
    std::vector<Value> items = iterate(eval(*n.kids[0]));
    const Node *filter = n.kids[2].get();
    auto scope = std::make_shared<Frame>();
    scope->parent = frame_;
    struct Restore {
        Interpreter &in;
        std::shared_ptr<Frame> saved;
        ~Restore() { in.frame_ = saved; }
    } restore{*this, frame_};
    frame_ = scope;
    auto bind = [&](const Value &item) {
        if (n.names.size() == 1) {
            scope->vars[n.names[0]] = item;
            return;
        }
        std::vector<Value> parts = iterate(item);
        if (parts.size() != n.names.size())
            fail("cannot unpack " + std::to_string(parts.size()) + " values into " + std::to_string(n.names.size()) + " loop variables");
        for (size_t k = 0; k < parts.size(); ++k) scope->vars[n.names[k]] = parts[k];
    };
    if (filter) {
        std::vector<Value> kept;
        for (auto &item : items) {
            step();
            bind(item);
            line_ = filter->line;
            if (eval(*filter).truthy()) kept.push_back(std::move(item));
        }
        items = std::move(kept);
    }
    const int64_t length = (int64_t)items.size();
    static const struct {
        Value index{"index"}, index0{"index0"}, revindex{"revindex"}, revindex0{"revindex0"}, first{"first"}, last{"last"},
            length{"length"}, depth{"depth"}, depth0{"depth0"}, previtem{"previtem"}, nextitem{"nextitem"}, cycle{"cycle"};
    } keys;
    auto cycle = [](int64_t i) {
        return Value::function([i](Interpreter &in, CallArgs &a) -> Value {
            if (a.positional.empty()) in.fail("no items for cycling given");
            return a.positional[(size_t)i % a.positional.size()];
        });
    };
    for (int64_t i = 0; i < length; ++i) {
        step();
        bind(items[(size_t)i]);
        // A fresh loop object each iteration (a template may keep one), its keys all distinct.
        Value loop = Value::dict();
        auto &li = loop.dict_data().items;
        li.reserve(12);
        li.emplace_back(keys.index, Value(i + 1));
        li.emplace_back(keys.index0, Value(i));
        li.emplace_back(keys.revindex, Value(length - i));
        li.emplace_back(keys.revindex0, Value(length - i - 1));
        li.emplace_back(keys.first, Value(i == 0));
        li.emplace_back(keys.last, Value(i == length - 1));
        li.emplace_back(keys.length, Value(length));
        li.emplace_back(keys.depth, Value((int64_t)1));
        li.emplace_back(keys.depth0, Value((int64_t)0));
        li.emplace_back(keys.previtem, i > 0 ? items[(size_t)i - 1] : Value::undefined("there is no previous item"));
        li.emplace_back(keys.nextitem, i + 1 < length ? items[(size_t)i + 1] : Value::undefined("there is no next item"));
        li.emplace_back(keys.cycle, cycle(i));
        scope->vars["loop"] = std::move(loop);
        const Flow f = exec(*n.kids[1]);
        if (f == Flow::Break) break;
    }
    if (length == 0 && n.kids[3]) return exec(*n.kids[3]);
    return Flow::Normal;
}

void Interpreter::exec_set(const Node &n) {
    Value v = eval(*n.kids[0]);
    if (!n.attr.empty()) {
        Value ns = lookup(n.names[0]);
        if (!ns.is_dict() || !ns.dict_data().is_namespace) fail("cannot assign attribute on non-namespace object '" + n.names[0] + "'");
        ns.dict_data().set(Value(n.attr), std::move(v));
        return;
    }
    if (n.names.size() == 1) {
        assign(n.names[0], std::move(v));
        return;
    }
    std::vector<Value> parts = iterate(v);
    if (parts.size() != n.names.size())
        fail("cannot unpack " + std::to_string(parts.size()) + " values into " + std::to_string(n.names.size()) + " names");
    for (size_t k = 0; k < parts.size(); ++k) assign(n.names[k], parts[k]);
}

void Interpreter::define_macro(const Node &n) {
    // The macro is bound in the frame it closes over (so it can call itself); a weak pointer
    // back keeps that frame and the macro from owning each other.
    std::weak_ptr<Frame> weak_scope = frame_;
    const Node *node = &n;
    Value macro = Value::function([this, node, weak_scope](Interpreter &, CallArgs &args) -> Value {
        std::shared_ptr<Frame> defined_in = weak_scope.lock();
        if (!defined_in) fail("macro '" + node->name + "' called after the scope that defined it ended");
        if (args.positional.size() > node->names.size())
            fail("macro '" + node->name + "' takes not more than " + std::to_string(node->names.size()) + " argument(s)");
        auto scope = std::make_shared<Frame>();
        scope->parent = defined_in;
        std::vector<bool> given(node->names.size(), false);
        for (size_t k = 0; k < args.positional.size(); ++k) {
            scope->vars[node->names[k]] = args.positional[k];
            given[k] = true;
        }
        for (auto &kw : args.keyword) {
            size_t k = 0;
            while (k < node->names.size() && node->names[k] != kw.first) ++k;
            if (k == node->names.size()) fail("macro '" + node->name + "' takes no keyword argument '" + kw.first + "'");
            scope->vars[kw.first] = kw.second;
            given[k] = true;
        }
        std::shared_ptr<Frame> saved_frame = frame_;
        std::string *saved_out = out_;
        const int saved_line = line_;
        std::string buf;
        frame_ = scope;
        out_ = &buf;
        try {
            for (size_t k = 0; k < node->names.size(); ++k)
                if (!given[k])
                    scope->vars[node->names[k]] = node->kids[1 + k] ? eval(*node->kids[1 + k])
                                                                     : Value::undefined("parameter '" + node->names[k] + "' was not provided");
            exec(*node->kids[0]);
        } catch (...) {
            frame_ = saved_frame;
            out_ = saved_out;
            throw;
        }
        frame_ = saved_frame;
        out_ = saved_out;
        line_ = saved_line;
        return Value(std::move(buf));
    });
    assign(n.name, macro);
}

std::vector<Value> Interpreter::iterate(const Value &v) {
    switch (v.type()) {
    case Value::Type::Undefined: return {};
    case Value::Type::List: charge(v.list_data().items.size()); return v.list_data().items;
    case Value::Type::Dict: {
        if (v.dict_data().is_namespace) fail("'Namespace' object is not iterable");
        charge(v.dict_data().items.size());
        std::vector<Value> keys;
        for (const auto &kv : v.dict_data().items) keys.push_back(kv.first);
        return keys;
    }
    case Value::Type::String: {
        charge(v.as_string().size());
        std::vector<Value> chars;
        for (auto cp : code_points(v.as_string())) chars.emplace_back(std::string(cp));
        return chars;
    }
    default: fail(std::string("'") + v.type_name() + "' object is not iterable");
    }
}

Value Interpreter::call(const Value &callee, CallArgs &args, const std::string &what) {
    if (callee.is_undefined()) fail_undefined(callee);
    if (!callee.is_function()) fail(std::string("'") + callee.type_name() + "' object is not callable" + (what.empty() ? "" : " (" + what + ")"));
    step();
    Deeper deeper(*this);
    Value r = callee.as_function()(*this, args);
    charge_size(r);
    return r;
}

Value Interpreter::getattr(const Value &obj, const std::string &name) {
    if (obj.is_undefined()) fail_undefined(obj);
    if (obj.is_dict()) {
        if (!obj.dict_data().is_namespace) {
            Value m = method(*this, obj, name);
            if (!m.is_undefined()) return m;
        }
        if (const Value *v = obj.dict_data().find(Value(name))) return *v;
        return Value::undefined("'" + std::string(obj.type_name()) + " object' has no attribute '" + name + "'");
    }
    Value m = method(*this, obj, name);
    if (!m.is_undefined()) return m;
    return Value::undefined("'" + std::string(obj.type_name()) + " object' has no attribute '" + name + "'");
}

Value Interpreter::getitem(const Value &obj, const Value &key) {
    if (obj.is_undefined()) fail_undefined(obj);
    if (obj.is_dict()) {
        if (const Value *v = obj.dict_data().find(key)) return *v;
        if (key.is_string() && !obj.dict_data().is_namespace) {
            Value m = method(*this, obj, key.as_string());
            if (!m.is_undefined()) return m;
        }
        return Value::undefined("'" + std::string(obj.type_name()) + " object' has no attribute '" + key.str() + "'");
    }
    if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
        int64_t i = key.as_int();
        if (obj.is_list()) {
            const auto &items = obj.list_data().items;
            if (i < 0) i += (int64_t)items.size();
            if (i < 0 || i >= (int64_t)items.size()) return Value::undefined(std::string("'") + obj.type_name() + " object' has no element " + key.str());
            return items[(size_t)i];
        }
        const auto cps = code_points(obj.as_string());
        if (i < 0) i += (int64_t)cps.size();
        if (i < 0 || i >= (int64_t)cps.size()) return Value::undefined("'str object' has no element " + key.str());
        return Value(std::string(cps[(size_t)i]));
    }
    if (key.is_string()) return getattr(obj, key.as_string());
    return Value::undefined(std::string("'") + obj.type_name() + " object' has no element " + key.repr());
}

Value Interpreter::slice(const Value &obj, const Node &n) {
    if (obj.is_undefined()) fail_undefined(obj);
    auto bound = [&](const NodePtr &p) -> std::optional<int64_t> {
        if (!p) return std::nullopt;
        const Value v = eval(*p);
        if (v.is_none()) return std::nullopt;
        if (!v.is_int() && !v.is_bool()) fail("slice indices must be integers or None");
        return v.as_int();
    };
    const std::optional<int64_t> start = bound(n.kids[1]), stop = bound(n.kids[2]), stepv = bound(n.kids[3]);
    const int64_t st = stepv.value_or(1);
    if (st == 0) fail("slice step cannot be zero");
    std::vector<Value> src;
    std::vector<std::string_view> cps;
    int64_t len;
    if (obj.is_list()) len = (int64_t)obj.list_data().items.size();
    else if (obj.is_string()) {
        cps = code_points(obj.as_string());
        len = (int64_t)cps.size();
    } else
        fail(std::string("'") + obj.type_name() + "' object is not subscriptable");
    // Python's slice.indices().
    auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
        if (!v) return dflt;
        int64_t x = *v;
        if (x < 0) x += len;
        if (st > 0) return std::clamp<int64_t>(x, 0, len);
        return std::clamp<int64_t>(x, -1, len - 1);
    };
    const int64_t b = clamp(start, st > 0 ? 0 : len - 1), e = clamp(stop, st > 0 ? len : -1);
    charge((uint64_t)std::max<int64_t>(0, st > 0 ? (e - b) / st : (b - e) / -st));
    if (obj.is_list()) {
        const auto &items = obj.list_data().items;
        std::vector<Value> out;
        for (int64_t i = b; st > 0 ? i < e : i > e; i += st) out.push_back(items[(size_t)i]);
        return Value::list(std::move(out), obj.list_data().tuple);
    }
    std::string out;
    for (int64_t i = b; st > 0 ? i < e : i > e; i += st) out += cps[(size_t)i];
    return Value(std::move(out));
}

void Interpreter::eval_args(const Node &n, size_t first, CallArgs &args) {
    const size_t np = n.n_positional(first);
    for (size_t k = 0; k < np; ++k) args.positional.push_back(eval(*n.kids[first + k]));
    for (size_t k = 0; k < n.names.size(); ++k) args.keyword.emplace_back(n.names[k], eval(*n.kids[first + np + k]));
}

Value Interpreter::eval(const Node &n) {
    Deeper deeper(*this);
    using K = Node::Kind;
    switch (n.kind) {
    case K::Literal: return n.literal;
    case K::Name: return lookup(n.name);
    case K::ListLit:
    case K::TupleLit: {
        std::vector<Value> items;
        for (const auto &k : n.kids) items.push_back(eval(*k));
        return Value::list(std::move(items), n.kind == K::TupleLit);
    }
    case K::DictLit: {
        Value d = Value::dict();
        for (size_t k = 0; k + 1 < n.kids.size(); k += 2) {
            Value key = eval(*n.kids[k]);
            if (key.is_list() || key.is_dict()) fail(std::string("unhashable type: '") + key.type_name() + "'");
            d.dict_data().set(std::move(key), eval(*n.kids[k + 1]));
        }
        return d;
    }
    case K::GetAttr: return getattr(eval(*n.kids[0]), n.name);
    case K::GetItem: {
        const Value obj = eval(*n.kids[0]);
        return getitem(obj, eval(*n.kids[1]));
    }
    case K::Slice: return slice(eval(*n.kids[0]), n);
    case K::Call: {
        const Value callee = eval(*n.kids[0]);
        CallArgs args;
        eval_args(n, 1, args);
        std::string what = n.kids[0]->kind == K::Name ? n.kids[0]->name : n.kids[0]->kind == K::GetAttr ? n.kids[0]->name : "";
        return call(callee, args, what);
    }
    case K::Filter: {
        const Value v = eval(*n.kids[0]);
        CallArgs args;
        eval_args(n, 1, args);
        step();
        charge_size(v);
        Value r = apply_filter(*this, n.name, v, args);
        charge_size(r);
        return r;
    }
    case K::Test: {
        const Value v = eval(*n.kids[0]);
        charge_size(v);
        CallArgs args;
        eval_args(n, 1, args);
        const bool r = apply_test(*this, n.name, v, args);
        return Value(n.negated ? !r : r);
    }
    case K::Neg:
    case K::Pos: {
        const Value v = eval(*n.kids[0]);
        if (v.is_undefined()) fail_undefined(v);
        if (!v.is_number()) fail(std::string("bad operand type for unary ") + (n.kind == K::Neg ? "-" : "+") + ": '" + v.type_name() + "'");
        if (n.kind == K::Pos) return v.is_bool() ? Value(v.as_int()) : v;
        if (v.is_float()) return Value(-v.as_float());
        if (v.as_int() == INT64_MIN) fail("integer overflow");
        return Value(-v.as_int());
    }
    case K::Not: return Value(!eval(*n.kids[0]).truthy());
    case K::And: {
        Value l = eval(*n.kids[0]);
        return l.truthy() ? eval(*n.kids[1]) : l;
    }
    case K::Or: {
        Value l = eval(*n.kids[0]);
        return l.truthy() ? l : eval(*n.kids[1]);
    }
    case K::Binary: return eval_binary(n);
    case K::Compare: {
        Value l = eval(*n.kids[0]);
        for (size_t k = 0; k < n.names.size(); ++k) {
            Value r = eval(*n.kids[k + 1]);
            if (!compare(n.names[k], l, r)) return Value(false);
            l = std::move(r);
        }
        return Value(true);
    }
    case K::CondExpr: {
        if (eval(*n.kids[1]).truthy()) return eval(*n.kids[0]);
        if (n.kids[2]) return eval(*n.kids[2]);
        return Value::undefined("the inline if expression evaluated to false and no else section was defined");
    }
    default: fail("internal error: a statement where an expression belongs");
    }
}

namespace {
std::string operand_types(const char *op, const Value &a, const Value &b) {
    return std::string("unsupported operand type(s) for ") + op + ": '" + a.type_name() + "' and '" + b.type_name() + "'";
}
int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}
} // namespace

Value Interpreter::eval_binary(const Node &n) {
    const std::string &op = n.name;
    const Value a = eval(*n.kids[0]);
    const Value b = eval(*n.kids[1]);
    if (op == "~") {
        std::string s = a.str();
        s += b.str();
        check_size(s.size());
        charge(s.size() / 16);
        return Value(std::move(s));
    }
    if (a.is_undefined()) fail_undefined(a);
    if (b.is_undefined()) fail_undefined(b);
    if (a.is_number() && b.is_number()) {
        const bool fl = a.is_float() || b.is_float();
        const int64_t x = a.as_int(), y = b.as_int();
        const double fx = a.as_float(), fy = b.as_float();
        int64_t r = 0;
        if (op == "+") {
            if (fl) return Value(fx + fy);
            if (__builtin_add_overflow(x, y, &r)) fail("integer overflow");
            return Value(r);
        }
        if (op == "-") {
            if (fl) return Value(fx - fy);
            if (__builtin_sub_overflow(x, y, &r)) fail("integer overflow");
            return Value(r);
        }
        if (op == "*") {
            if (fl) return Value(fx * fy);
            if (__builtin_mul_overflow(x, y, &r)) fail("integer overflow");
            return Value(r);
        }
        if (op == "/") {
            if (fy == 0) fail("division by zero");
            return Value(fx / fy);
        }
        if (op == "//" || op == "%") {
            if (fl ? fy == 0 : y == 0) fail(op == "%" ? "modulo by zero" : "integer division or modulo by zero");
            if (fl) {
                const double m = std::fmod(fx, fy);
                const double mod = (m != 0 && ((m < 0) != (fy < 0))) ? m + fy : m;
                if (op == "%") return Value(mod);
                const double div = (fx - mod) / fy; // Python's float floor division
                double fd = std::floor(div);
                if (div - fd > 0.5) fd += 1.0;
                return Value(fd);
            }
            if (x == INT64_MIN && y == -1) fail("integer overflow");
            const int64_t q = floor_div(x, y);
            return op == "//" ? Value(q) : Value(x - q * y);
        }
        if (op == "**") {
            if (!fl && y >= 0) {
                int64_t acc = 1, base = x, e = y;
                while (e > 0) {
                    if (e & 1)
                        if (__builtin_mul_overflow(acc, base, &acc)) fail("integer overflow");
                    e >>= 1;
                    if (e > 0 && __builtin_mul_overflow(base, base, &base)) fail("integer overflow");
                }
                return Value(acc);
            }
            return Value(std::pow(fx, fy));
        }
    }
    if (op == "+") {
        if (a.is_string() && b.is_string()) {
            check_size(a.as_string().size() + b.as_string().size());
            charge((a.as_string().size() + b.as_string().size()) / 16);
            return Value(a.as_string() + b.as_string());
        }
        if (a.is_list() && b.is_list()) {
            charge(a.list_data().items.size() + b.list_data().items.size());
            std::vector<Value> items = a.list_data().items;
            items.insert(items.end(), b.list_data().items.begin(), b.list_data().items.end());
            return Value::list(std::move(items), a.list_data().tuple);
        }
    }
    if (op == "*") {
        const Value *seq = (a.is_string() || a.is_list()) ? &a : (b.is_string() || b.is_list()) ? &b : nullptr;
        const Value *cnt = seq == &a ? &b : &a;
        if (seq && (cnt->is_int() || cnt->is_bool())) {
            const int64_t k = std::max<int64_t>(0, cnt->as_int());
            if (seq->is_string()) {
                check_size((size_t)k * seq->as_string().size());
                charge((uint64_t)k * seq->as_string().size() / 16);
                std::string out;
                for (int64_t i = 0; i < k; ++i) out += seq->as_string();
                return Value(std::move(out));
            }
            check_size((size_t)k * seq->list_data().items.size());
            charge((uint64_t)k * seq->list_data().items.size());
            std::vector<Value> out;
            for (int64_t i = 0; i < k; ++i) out.insert(out.end(), seq->list_data().items.begin(), seq->list_data().items.end());
            return Value::list(std::move(out), seq->list_data().tuple);
        }
    }
    if (op == "%" && a.is_string()) {
        // Python: a tuple gives the arguments, a dict may also be the mapping of %(name)s.
        std::vector<Value> args = b.is_list() && b.list_data().tuple ? b.list_data().items : std::vector<Value>{b};
        try {
            std::string s = percent_format(a.as_string(), args, b.is_dict() ? &b : nullptr, limits_.max_output);
            check_size(s.size());
            return Value(std::move(s));
        } catch (const TemplateError &e) {
            if (e.kind() != TemplateError::Kind::Runtime || e.line() > 0) throw;
            fail(e.message());
        }
    }
    fail(operand_types(op.c_str(), a, b));
}

bool Interpreter::compare(const std::string &op, const Value &a, const Value &b) {
    auto size = [](const Value &v) -> uint64_t {
        return v.is_list() ? v.list_data().items.size() : v.is_dict() ? v.dict_data().items.size() : v.is_string() ? v.as_string().size() / 16 : 0;
    };
    charge(size(a) + size(b));
    if (op == "==") return equal(a, b);
    if (op == "!=") return !equal(a, b);
    if (op == "in" || op == "notin") {
        bool found = false;
        if (b.is_string()) {
            if (!a.is_string()) fail(std::string("'in <string>' requires string as left operand, not ") + a.type_name());
            found = b.as_string().find(a.as_string()) != std::string::npos;
        } else if (b.is_list()) {
            for (const auto &x : b.list_data().items)
                if (equal(x, a)) {
                    found = true;
                    break;
                }
        } else if (b.is_dict()) {
            if (b.dict_data().is_namespace) fail("argument of type 'Namespace' is not iterable");
            found = b.dict_data().find(a) != nullptr;
        } else if (b.is_undefined()) {
            found = false;
        } else
            fail(std::string("argument of type '") + b.type_name() + "' is not iterable");
        return op == "in" ? found : !found;
    }
    const int c = compare_values(*this, a, b, op.c_str());
    if (op == "<") return c < 0;
    if (op == "<=") return c <= 0;
    if (op == ">") return c > 0;
    return c >= 0;
}

} // namespace rf::jinja
