// jinja2's filters and tests, the Python methods of str / dict / list that templates call, and
// the globals (range, namespace, dict; transformers' raise_exception and strftime_now). Methods
// that would change a list or dict fail, as in jinja2's ImmutableSandboxedEnvironment.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <ctime>
#include <set>

#include "interpreter.h"
#include "percent_format.h"
#include "pyformat.h"
#include "str_format.h"

namespace rf::jinja {
namespace {

constexpr int64_t kMaxRange = 100000; // jinja2's sandbox MAX_RANGE

// Arguments bound to parameter names: positional first, then keywords.
class Params {
public:
    Params(Interpreter &in, const std::string &fn, CallArgs &args, std::initializer_list<const char *> names) : in_(in), values_(names.size()) {
        std::vector<const char *> n(names);
        if (args.positional.size() > n.size())
            in.fail(fn + "() takes at most " + std::to_string(n.size()) + " argument(s), " + std::to_string(args.positional.size()) + " given");
        for (size_t k = 0; k < args.positional.size(); ++k) values_[k] = args.positional[k];
        for (auto &kw : args.keyword) {
            size_t k = 0;
            while (k < n.size() && kw.first != n[k]) ++k;
            if (k == n.size()) in.fail(fn + "() got an unexpected keyword argument '" + kw.first + "'");
            values_[k] = kw.second;
        }
    }
    bool has(size_t k) const { return values_[k].has_value(); }
    Value get(size_t k, const Value &dflt) const { return values_[k] ? *values_[k] : dflt; }
    std::string str(size_t k, const std::string &dflt) const { return values_[k] ? values_[k]->str() : dflt; }
    int64_t integer(size_t k, int64_t dflt, const char *what) const {
        if (!values_[k] || values_[k]->is_none()) return dflt;
        if (!values_[k]->is_int() && !values_[k]->is_bool()) in_.fail(std::string(what) + " must be an integer");
        return values_[k]->as_int();
    }
    bool flag(size_t k, bool dflt) const { return values_[k] ? values_[k]->truthy() : dflt; }

private:
    Interpreter &in_;
    std::vector<std::optional<Value>> values_;
};

std::string need_string(Interpreter &in, const Value &v, const char *what) {
    if (v.is_undefined()) in.fail_undefined(v);
    if (!v.is_string()) in.fail(std::string(what) + " needs a string, got " + v.type_name());
    return v.as_string();
}

int64_t length_of(Interpreter &in, const Value &v) {
    switch (v.type()) {
    case Value::Type::Undefined: return 0;
    case Value::Type::String: return (int64_t)code_point_count(v.as_string());
    case Value::Type::List: return (int64_t)v.list_data().items.size();
    case Value::Type::Dict:
        if (v.dict_data().is_namespace) break;
        return (int64_t)v.dict_data().items.size();
    default: break;
    }
    in.fail(std::string("object of type '") + v.type_name() + "' has no len()");
}

// jinja2's attribute paths for selectattr / map / sort / groupby: "a.b.0".
Value attribute_path(Interpreter &in, const Value &item, const std::string &path) {
    static const std::string dot = ".";
    Value v = item;
    for (const auto &part : py_split(path, &dot, -1)) {
        bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (v.is_undefined()) return v;
        v = digits ? in.getitem(v, Value((int64_t)std::stoll(part))) : in.getitem(v, Value(part));
    }
    return v;
}

std::string py_join(Interpreter &in, const std::vector<Value> &items, const std::string &sep) {
    std::string out;
    in.charge(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += sep;
        out += items[i].str();
        in.check_size(out.size());
    }
    return out;
}

std::string checked_replace(Interpreter &in, const std::string &s, const std::string &old, const std::string &with, int64_t count) {
    size_t n = 0;
    if (old.empty()) n = code_point_count(s) + 1;
    else
        for (size_t p = s.find(old); p != std::string::npos; p = s.find(old, p + old.size())) ++n;
    if (count >= 0) n = std::min<size_t>(n, (size_t)count);
    if (with.size() > old.size()) in.check_size(s.size() + n * (with.size() - old.size()));
    in.charge((s.size() + n * with.size()) / 16);
    return py_replace(s, old, with, count);
}

std::string do_indent(const std::string &s0, const std::string &ind, bool first, bool blank) {
    const std::string s = s0 + "\n"; // jinja2 appends a newline before splitting lines
    const std::vector<std::string> lines = py_splitlines(s);
    std::string rv;
    if (blank) {
        for (size_t i = 0; i < lines.size(); ++i) rv += (i ? "\n" + ind : "") + lines[i];
    } else {
        rv = lines.empty() ? "" : lines[0];
        for (size_t i = 1; i < lines.size(); ++i) rv += "\n" + (lines[i].empty() ? "" : ind) + lines[i];
    }
    return first ? ind + rv : rv;
}

Value to_int(const Value &v, const Value &dflt, int64_t base) {
    if (v.is_int() || v.is_bool()) return Value(v.as_int());
    if (v.is_float()) {
        if (!std::isfinite(v.as_float()) || std::fabs(v.as_float()) > 9.2e18) return dflt;
        return Value((int64_t)v.as_float());
    }
    if (v.is_string()) {
        std::string s = py_strip(v.as_string(), nullptr, true, true);
        std::string digits;
        for (char c : s)
            if (c != '_') digits += c;
        if (!digits.empty()) {
            errno = 0;
            char *end = nullptr;
            const long long x = std::strtoll(digits.c_str(), &end, (int)base);
            if (errno == 0 && end && *end == 0) return Value((int64_t)x);
            char *fend = nullptr;
            const double d = std::strtod(digits.c_str(), &fend);
            if (fend && *fend == 0 && std::isfinite(d) && std::fabs(d) < 9.2e18) return Value((int64_t)d);
        }
    }
    return dflt;
}

Value to_float(const Value &v, const Value &dflt) {
    if (v.is_number()) return Value(v.as_float());
    if (v.is_string()) {
        const std::string s = py_strip(v.as_string(), nullptr, true, true);
        char *end = nullptr;
        const double d = std::strtod(s.c_str(), &end);
        if (!s.empty() && end && *end == 0) return Value(d);
    }
    return dflt;
}

std::string html_escape(const std::string &s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&#34;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

// jinja2's sort key: strings compared case-insensitively unless case_sensitive.
Value sort_key(const Value &v, bool case_sensitive) { return (!case_sensitive && v.is_string()) ? Value(py_lower(v.as_string())) : v; }

std::vector<Value> sorted(Interpreter &in, std::vector<Value> items, bool reverse, bool case_sensitive, const std::string &attribute) {
    in.charge(items.size() * 20);
    std::vector<std::pair<Value, Value>> keyed;
    for (auto &v : items) keyed.emplace_back(sort_key(attribute.empty() ? v : attribute_path(in, v, attribute), case_sensitive), v);
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto &a, const auto &b) {
        return reverse ? compare_values(in, b.first, a.first, "<") < 0 : compare_values(in, a.first, b.first, "<") < 0;
    });
    std::vector<Value> out;
    for (auto &kv : keyed) out.push_back(kv.second);
    return out;
}

Value select_items(Interpreter &in, const Value &seq, CallArgs &args, bool attr, bool keep) {
    std::vector<Value> items = in.iterate(seq);
    size_t k = 0;
    std::string attribute;
    if (attr) {
        if (args.positional.empty()) in.fail(std::string(keep ? "selectattr" : "rejectattr") + " needs an attribute name");
        attribute = args.positional[k++].str();
    }
    std::string test;
    if (k < args.positional.size()) test = args.positional[k++].str();
    CallArgs test_args;
    for (; k < args.positional.size(); ++k) test_args.positional.push_back(args.positional[k]);
    test_args.keyword = args.keyword;
    std::vector<Value> out;
    for (const auto &item : items) {
        in.step();
        const Value v = attr ? attribute_path(in, item, attribute) : item;
        CallArgs a = test_args;
        const bool r = test.empty() ? v.truthy() : apply_test(in, test, v, a);
        if (r == keep) out.push_back(item);
    }
    return Value::list(std::move(out));
}

Value map_items(Interpreter &in, const Value &seq, CallArgs &args) {
    std::vector<Value> items = in.iterate(seq);
    std::vector<Value> out;
    std::string attribute;
    Value dflt;
    bool has_default = false;
    CallArgs rest;
    for (auto &kw : args.keyword) {
        if (kw.first == "attribute") attribute = kw.second.str();
        else if (kw.first == "default") {
            dflt = kw.second;
            has_default = true;
        } else
            rest.keyword.push_back(kw);
    }
    if (!attribute.empty()) {
        for (const auto &item : items) {
            in.step();
            Value v = attribute_path(in, item, attribute);
            out.push_back(v.is_undefined() && has_default ? dflt : v);
        }
        return Value::list(std::move(out));
    }
    if (args.positional.empty()) in.fail("map needs a filter name or attribute=");
    const std::string filter = args.positional[0].str();
    if (!is_filter(filter)) in.fail("no filter named '" + filter + "'");
    for (size_t k = 1; k < args.positional.size(); ++k) rest.positional.push_back(args.positional[k]);
    for (const auto &item : items) {
        in.step();
        CallArgs a = rest;
        out.push_back(apply_filter(in, filter, item, a));
    }
    return Value::list(std::move(out));
}

Value json_filter(Interpreter &in, const Value &v, CallArgs &args) {
    Params p(in, "tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
    // transformers' tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False);
    // a lone positional argument is the indent, as in jinja2's own tojson.
    JsonOptions o;
    size_t indent_at = 1;
    Value first = p.get(0, Value::none());
    if (args.positional.size() == 1 && args.keyword.empty() && first.is_int()) indent_at = 0;
    else o.ensure_ascii = p.flag(0, false);
    const Value ind = indent_at == 0 ? first : p.get(1, Value::none());
    if (ind.is_int()) o.indent = (int)std::clamp<int64_t>(ind.as_int(), 0, 64);
    else if (!ind.is_none()) in.fail("tojson: indent must be an integer");
    if (p.has(2) && !p.get(2, Value()).is_none()) {
        const Value sep = p.get(2, Value());
        if (!sep.is_list() || sep.list_data().items.size() != 2) in.fail("tojson: separators must be a pair of strings");
        o.item_separator = sep.list_data().items[0].str();
        o.key_separator = sep.list_data().items[1].str();
    }
    o.sort_keys = p.flag(3, false);
    try {
        std::string s = to_json(v, o);
        in.check_size(s.size());
        return Value(std::move(s));
    } catch (const TemplateError &e) {
        if (e.kind() != TemplateError::Kind::Runtime || e.line() > 0) throw;
        in.fail(e.message());
    }
}

} // namespace

int compare_values(Interpreter &in, const Value &a, const Value &b, const char *op) {
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) return a.as_float() < b.as_float() ? -1 : a.as_float() > b.as_float() ? 1 : 0;
        return a.as_int() < b.as_int() ? -1 : a.as_int() > b.as_int() ? 1 : 0;
    }
    if (a.is_string() && b.is_string()) return a.as_string().compare(b.as_string()) < 0 ? -1 : a.as_string() == b.as_string() ? 0 : 1;
    if (a.is_list() && b.is_list()) {
        const auto &x = a.list_data().items, &y = b.list_data().items;
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (equal(x[i], y[i])) continue;
            return compare_values(in, x[i], y[i], op);
        }
        return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
    }
    if (a.is_undefined()) in.fail_undefined(a);
    if (b.is_undefined()) in.fail_undefined(b);
    in.fail(std::string("'") + op + "' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() + "'");
}

static const std::set<std::string> kFilters = {
    "abs", "attr", "capitalize", "center", "count", "d", "default", "dictsort", "e", "escape", "first", "float", "forceescape", "format",
    "indent", "int", "items", "join", "last", "length", "list", "lower", "map", "max", "min", "reject", "rejectattr", "replace",
    "reverse", "round", "safe", "select", "selectattr", "sort", "string", "sum", "title", "tojson", "trim", "unique", "upper",
    "wordcount"};
static const std::set<std::string> kTests = {
    "boolean", "callable", "defined", "divisibleby", "eq", "equalto", "escaped", "even", "false", "filter", "float", "ge", "gt",
    "greaterthan", "in", "integer", "iterable", "le", "lessthan", "lower", "lt", "mapping", "ne", "none", "number", "odd",
    "sameas", "sequence", "string", "test", "true", "undefined", "upper", "==", "!=", "<", "<=", ">", ">="};

bool is_filter(const std::string &name) { return kFilters.count(name) != 0; }
bool is_test(const std::string &name) { return kTests.count(name) != 0; }

Value apply_filter(Interpreter &in, const std::string &f, const Value &v, CallArgs &args) {
    if (f == "safe") return v;
    if (f == "string") return Value(v.str());
    if (f == "trim") {
        Params p(in, f, args, {"chars"});
        const std::string chars = p.str(0, "");
        return Value(py_strip(v.str(), p.has(0) && !p.get(0, Value()).is_none() ? &chars : nullptr, true, true));
    }
    if (f == "upper") return Value(py_upper(v.str()));
    if (f == "lower") return Value(py_lower(v.str()));
    if (f == "capitalize") return Value(py_capitalize(v.str()));
    if (f == "title") return Value(py_title(v.str()));
    if (f == "length" || f == "count") return Value(length_of(in, v));
    if (f == "first" || f == "last") {
        std::vector<Value> items = in.iterate(v);
        if (items.empty()) return Value::undefined(std::string("No ") + f + " item, sequence was empty.");
        return f == "first" ? items.front() : items.back();
    }
    if (f == "join") {
        Params p(in, f, args, {"d", "attribute"});
        std::vector<Value> items = in.iterate(v);
        if (p.has(1))
            for (auto &item : items) item = attribute_path(in, item, p.str(1, ""));
        return Value(py_join(in, items, p.str(0, "")));
    }
    if (f == "replace") {
        Params p(in, f, args, {"old", "new", "count"});
        if (!p.has(0) || !p.has(1)) in.fail("replace needs old and new strings");
        return Value(checked_replace(in, v.str(), p.str(0, ""), p.str(1, ""), p.integer(2, -1, "replace count")));
    }
    if (f == "default" || f == "d") {
        Params p(in, f, args, {"default_value", "boolean"});
        const bool boolean = p.flag(1, false);
        if (v.is_undefined() || (boolean && !v.truthy())) return p.get(0, Value(""));
        return v;
    }
    if (f == "items") {
        if (v.is_undefined()) return Value::list();
        if (!v.is_dict() || v.dict_data().is_namespace) in.fail("Can only get item pairs from a mapping.");
        std::vector<Value> out;
        for (const auto &kv : v.dict_data().items) out.push_back(Value::list({kv.first, kv.second}, true));
        return Value::list(std::move(out));
    }
    if (f == "dictsort") {
        Params p(in, f, args, {"case_sensitive", "by", "reverse"});
        if (!v.is_dict()) in.fail("dictsort needs a mapping");
        const bool by_value = p.str(1, "key") == "value";
        std::vector<Value> pairs;
        for (const auto &kv : v.dict_data().items) pairs.push_back(Value::list({kv.first, kv.second}, true));
        const bool cs = p.flag(0, false), rev = p.flag(2, false);
        std::stable_sort(pairs.begin(), pairs.end(), [&](const Value &a, const Value &b) {
            const Value ka = sort_key(a.list_data().items[by_value ? 1 : 0], cs), kb = sort_key(b.list_data().items[by_value ? 1 : 0], cs);
            return rev ? compare_values(in, kb, ka, "<") < 0 : compare_values(in, ka, kb, "<") < 0;
        });
        return Value::list(std::move(pairs));
    }
    if (f == "selectattr" || f == "rejectattr") return select_items(in, v, args, true, f == "selectattr");
    if (f == "select" || f == "reject") return select_items(in, v, args, false, f == "select");
    if (f == "map") return map_items(in, v, args);
    if (f == "list") return Value::list(in.iterate(v));
    if (f == "int") {
        Params p(in, f, args, {"default", "base"});
        return to_int(v, p.get(0, Value((int64_t)0)), p.integer(1, 10, "int base"));
    }
    if (f == "float") {
        Params p(in, f, args, {"default"});
        return to_float(v, p.get(0, Value(0.0)));
    }
    if (f == "abs") {
        if (!v.is_number()) in.fail(std::string("bad operand type for abs(): '") + v.type_name() + "'");
        if (!v.is_float() && v.as_int() == INT64_MIN) in.fail("integer overflow");
        return v.is_float() ? Value(std::fabs(v.as_float())) : Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
    }
    if (f == "round") {
        Params p(in, f, args, {"precision", "method"});
        if (!v.is_number()) in.fail("round needs a number");
        const int64_t prec = p.integer(0, 0, "round precision");
        const std::string method = p.str(1, "common");
        const double scale = std::pow(10.0, (double)prec);
        const double x = v.as_float() * scale;
        double r;
        if (method == "ceil") r = std::ceil(x);
        else if (method == "floor") r = std::floor(x);
        else if (method == "common") r = std::nearbyint(x);
        else in.fail("method must be common, ceil or floor");
        return Value(r / scale);
    }
    if (f == "indent") {
        Params p(in, f, args, {"width", "first", "blank"});
        const Value w = p.get(0, Value((int64_t)4));
        const std::string ind = w.is_string() ? w.as_string() : std::string((size_t)std::clamp<int64_t>(w.as_int(), 0, 1024), ' ');
        std::string out = do_indent(v.str(), ind, p.flag(1, false), p.flag(2, false));
        in.check_size(out.size());
        return Value(std::move(out));
    }
    if (f == "tojson") return json_filter(in, v, args);
    if (f == "escape" || f == "e" || f == "forceescape") return Value(html_escape(v.str()));
    if (f == "unique") {
        Params p(in, f, args, {"case_sensitive", "attribute"});
        std::vector<Value> out, seen;
        for (const auto &item : in.iterate(v)) {
            const Value key = sort_key(p.has(1) ? attribute_path(in, item, p.str(1, "")) : item, p.flag(0, false));
            in.charge(seen.size());
            if (std::none_of(seen.begin(), seen.end(), [&](const Value &s) { return equal(s, key); })) {
                seen.push_back(key);
                out.push_back(item);
            }
        }
        return Value::list(std::move(out));
    }
    if (f == "reverse") {
        if (v.is_string()) {
            auto cps = code_points(v.as_string());
            std::string out;
            for (auto it = cps.rbegin(); it != cps.rend(); ++it) out += *it;
            return Value(std::move(out));
        }
        std::vector<Value> items = in.iterate(v);
        std::reverse(items.begin(), items.end());
        return Value::list(std::move(items));
    }
    if (f == "sort") {
        Params p(in, f, args, {"reverse", "case_sensitive", "attribute"});
        return Value::list(sorted(in, in.iterate(v), p.flag(0, false), p.flag(1, false), p.str(2, "")));
    }
    if (f == "min" || f == "max") {
        Params p(in, f, args, {"case_sensitive", "attribute"});
        std::vector<Value> items = sorted(in, in.iterate(v), false, p.flag(0, false), p.str(1, ""));
        if (items.empty()) return Value::undefined(std::string("No aggregated item, sequence was empty."));
        return f == "min" ? items.front() : items.back();
    }
    if (f == "sum") {
        Params p(in, f, args, {"attribute", "start"});
        Value acc = p.get(1, Value((int64_t)0));
        for (const auto &item : in.iterate(v)) {
            const Value x = p.has(0) ? attribute_path(in, item, p.str(0, "")) : item;
            if (!x.is_number() || !acc.is_number()) in.fail(std::string("unsupported operand type(s) for +: '") + acc.type_name() + "' and '" + x.type_name() + "'");
            acc = (acc.is_float() || x.is_float()) ? Value(acc.as_float() + x.as_float()) : Value(acc.as_int() + x.as_int());
        }
        return acc;
    }
    if (f == "wordcount") return Value((int64_t)py_split(v.str(), nullptr, -1).size());
    if (f == "center") {
        Params p(in, f, args, {"width"});
        const std::string s = v.str();
        const int64_t width = std::clamp<int64_t>(p.integer(0, 80, "center width"), 0, 1 << 20);
        const int64_t len = (int64_t)code_point_count(s);
        if (len >= width) return Value(s);
        const int64_t pad = width - len, left = pad / 2 + (pad & width & 1);
        return Value(std::string((size_t)left, ' ') + s + std::string((size_t)(pad - left), ' '));
    }
    if (f == "format") {
        if (!args.positional.empty() && !args.keyword.empty()) in.fail("can't handle positional and keyword arguments at the same time");
        Value mapping = Value::dict();
        for (auto &kw : args.keyword) mapping.dict_data().set(Value(kw.first), kw.second);
        try {
            std::string s = percent_format(v.str(), args.positional, args.keyword.empty() ? nullptr : &mapping, in.limits().max_output);
            in.check_size(s.size());
            return Value(std::move(s));
        } catch (const TemplateError &e) {
            if (e.kind() != TemplateError::Kind::Runtime || e.line() > 0) throw;
            in.fail(e.message());
        }
    }
    if (f == "attr") {
        Params p(in, f, args, {"name"});
        return in.getattr(v, p.str(0, ""));
    }
    in.fail("no filter named '" + f + "'");
}

bool apply_test(Interpreter &in, const std::string &t, const Value &v, CallArgs &args) {
    auto arg = [&](const char *name) -> Value {
        Params p(in, t, args, {name});
        if (!p.has(0)) in.fail("test '" + t + "' needs an argument");
        return p.get(0, Value());
    };
    if (t == "defined") return !v.is_undefined();
    if (t == "undefined") return v.is_undefined();
    if (t == "none") return v.is_none();
    if (t == "boolean") return v.is_bool();
    if (t == "true") return v.is_bool() && v.as_bool();
    if (t == "false") return v.is_bool() && !v.as_bool();
    if (t == "integer") return v.is_int();
    if (t == "float") return v.is_float();
    if (t == "number") return v.is_number();
    if (t == "string") return v.is_string();
    if (t == "mapping") return v.is_dict() && !v.dict_data().is_namespace;
    if (t == "iterable") return v.is_string() || v.is_list() || (v.is_dict() && !v.dict_data().is_namespace) || v.is_undefined();
    if (t == "sequence") return v.is_string() || v.is_list() || (v.is_dict() && !v.dict_data().is_namespace) || v.is_undefined();
    if (t == "callable") return v.is_function();
    if (t == "escaped") return false;
    if (t == "lower") return v.is_string() && py_lower(v.as_string()) == v.as_string();
    if (t == "upper") return v.is_string() && py_upper(v.as_string()) == v.as_string();
    if (t == "even" || t == "odd") {
        if (!v.is_int() && !v.is_bool()) in.fail("test '" + t + "' needs an integer");
        const int64_t r = v.as_int() % 2;
        return t == "even" ? r == 0 : r != 0;
    }
    if (t == "divisibleby") {
        const Value d = arg("num");
        if (!v.is_number() || !d.is_number()) in.fail("divisibleby needs numbers");
        if (d.as_float() == 0) in.fail("integer division or modulo by zero");
        return (v.is_float() || d.is_float()) ? std::fmod(v.as_float(), d.as_float()) == 0 : v.as_int() % d.as_int() == 0;
    }
    if (t == "sameas") {
        const Value o = arg("other");
        if (v.type() != o.type()) return false;
        if (v.is_none() || v.is_bool() || v.is_int() || v.is_float() || v.is_string() || v.is_undefined()) return equal(v, o);
        if (v.is_list()) return &v.list_data() == &o.list_data();
        if (v.is_dict()) return &v.dict_data() == &o.dict_data();
        return &v.as_function() == &o.as_function();
    }
    if (t == "eq" || t == "equalto" || t == "==") return equal(v, arg("other"));
    if (t == "ne" || t == "!=") return !equal(v, arg("other"));
    if (t == "lt" || t == "lessthan" || t == "<") return compare_values(in, v, arg("other"), "<") < 0;
    if (t == "le" || t == "<=") return compare_values(in, v, arg("other"), "<=") <= 0;
    if (t == "gt" || t == "greaterthan" || t == ">") return compare_values(in, v, arg("other"), ">") > 0;
    if (t == "ge" || t == ">=") return compare_values(in, v, arg("other"), ">=") >= 0;
    if (t == "in") {
        const Value seq = arg("seq");
        if (seq.is_string()) return v.is_string() && seq.as_string().find(v.as_string()) != std::string::npos;
        if (seq.is_dict()) return seq.dict_data().find(v) != nullptr;
        for (const auto &x : in.iterate(seq))
            if (equal(x, v)) return true;
        return false;
    }
    if (t == "filter") return v.is_string() && is_filter(v.as_string());
    if (t == "test") return v.is_string() && is_test(v.as_string());
    in.fail("no test named '" + t + "'");
}

namespace {

Value bound(std::function<Value(Interpreter &, CallArgs &)> f) { return Value::function(std::move(f)); }

Value unsafe(const std::string &name, const char *type) {
    return bound([name, type](Interpreter &in, CallArgs &) -> Value {
        in.fail("access to attribute '" + name + "' of '" + type + "' object is unsafe.");
    });
}

// str.startswith / endswith take a string or a tuple of strings.
bool affix(Interpreter &in, const std::string &s, const Value &what, bool start) {
    auto one = [&](const Value &x) {
        const std::string a = need_string(in, x, start ? "startswith" : "endswith");
        return start ? s.compare(0, a.size(), a) == 0 && s.size() >= a.size()
                     : s.size() >= a.size() && s.compare(s.size() - a.size(), a.size(), a) == 0;
    };
    if (what.is_list()) {
        for (const auto &x : what.list_data().items)
            if (one(x)) return true;
        return false;
    }
    return one(what);
}

Value string_method(Interpreter &, const Value &obj, const std::string &name) {
    // The bound methods hold the string's Value (shared), not a copy of its text.
    const Value sv = obj;
    if (name == "strip" || name == "lstrip" || name == "rstrip")
        return bound([sv, name](Interpreter &in, CallArgs &a) {
            const std::string &s = sv.as_string();
            Params p(in, name, a, {"chars"});
            const bool given = p.has(0) && !p.get(0, Value()).is_none();
            const std::string chars = given ? need_string(in, p.get(0, Value()), name.c_str()) : "";
            return Value(py_strip(s, given ? &chars : nullptr, name != "rstrip", name != "lstrip"));
        });
    if (name == "startswith" || name == "endswith")
        return bound([sv, name](Interpreter &in, CallArgs &a) {
            const std::string &s = sv.as_string();
            Params p(in, name, a, {"prefix"});
            if (!p.has(0)) in.fail(name + "() takes at least 1 argument");
            return Value(affix(in, s, p.get(0, Value()), name == "startswith"));
        });
    if (name == "split" || name == "rsplit")
        return bound([sv, name](Interpreter &in, CallArgs &a) {
            const std::string &s = sv.as_string();
            Params p(in, name, a, {"sep", "maxsplit"});
            const bool given = p.has(0) && !p.get(0, Value()).is_none();
            const std::string sep = given ? need_string(in, p.get(0, Value()), "split") : "";
            if (given && sep.empty()) in.fail("empty separator");
            const int64_t maxsplit = p.integer(1, -1, "maxsplit");
            std::vector<std::string> parts;
            if (name == "rsplit" && maxsplit >= 0) { // split from the right: reverse, split, reverse back
                std::string rs(s.rbegin(), s.rend()), rsep(sep.rbegin(), sep.rend());
                parts = py_split(rs, given ? &rsep : nullptr, maxsplit);
                for (auto &x : parts) std::reverse(x.begin(), x.end());
                std::reverse(parts.begin(), parts.end());
            } else
                parts = py_split(s, given ? &sep : nullptr, maxsplit);
            in.charge(parts.size() + s.size() / 16);
            std::vector<Value> out;
            for (auto &x : parts) out.emplace_back(std::move(x));
            return Value::list(std::move(out));
        });
    if (name == "splitlines")
        return bound([sv](Interpreter &, CallArgs &) {
            const std::string &s = sv.as_string();
            std::vector<Value> out;
            for (auto &x : py_splitlines(s)) out.emplace_back(std::move(x));
            return Value::list(std::move(out));
        });
    if (name == "lower") return bound([sv](Interpreter &, CallArgs &) {
            const std::string &s = sv.as_string(); return Value(py_lower(s)); });
    if (name == "upper") return bound([sv](Interpreter &, CallArgs &) {
            const std::string &s = sv.as_string(); return Value(py_upper(s)); });
    if (name == "title") return bound([sv](Interpreter &, CallArgs &) {
            const std::string &s = sv.as_string(); return Value(py_title(s)); });
    if (name == "capitalize") return bound([sv](Interpreter &, CallArgs &) {
            const std::string &s = sv.as_string(); return Value(py_capitalize(s)); });
    if (name == "replace")
        return bound([sv](Interpreter &in, CallArgs &a) {
            const std::string &s = sv.as_string();
            Params p(in, "replace", a, {"old", "new", "count"});
            if (!p.has(0) || !p.has(1)) in.fail("replace() takes at least 2 arguments");
            return Value(checked_replace(in, s, need_string(in, p.get(0, Value()), "replace"), need_string(in, p.get(1, Value()), "replace"),
                                         p.integer(2, -1, "count")));
        });
    if (name == "find" || name == "rfind" || name == "count" || name == "index")
        return bound([sv, name](Interpreter &in, CallArgs &a) {
            const std::string &s = sv.as_string();
            Params p(in, name, a, {"sub"});
            const std::string sub = need_string(in, p.get(0, Value()), name.c_str());
            if (name == "count") {
                if (sub.empty()) return Value((int64_t)code_point_count(s) + 1);
                int64_t n = 0;
                for (size_t q = s.find(sub); q != std::string::npos; q = s.find(sub, q + sub.size())) ++n;
                return Value(n);
            }
            const size_t q = name == "rfind" ? s.rfind(sub) : s.find(sub);
            if (q == std::string::npos) {
                if (name == "index") in.fail("substring not found");
                return Value((int64_t)-1);
            }
            return Value((int64_t)code_point_count(std::string_view(s).substr(0, q)));
        });
    if (name == "format")
        return bound([sv](Interpreter &in, CallArgs &a) {
            std::string s = str_format(in, sv.as_string(), a);
            in.check_size(s.size());
            return Value(std::move(s));
        });
    if (name == "join")
        return bound([sv](Interpreter &in, CallArgs &a) {
            const std::string &s = sv.as_string();
            Params p(in, "join", a, {"iterable"});
            std::vector<Value> items = in.iterate(p.get(0, Value()));
            for (const auto &x : items)
                if (!x.is_string()) in.fail(std::string("sequence item: expected str instance, ") + x.type_name() + " found");
            return Value(py_join(in, items, s));
        });
    auto all = [sv](auto pred) {
        const std::string &s = sv.as_string();
        return !s.empty() && std::all_of(s.begin(), s.end(), pred);
    };
    if (name == "isdigit") return bound([all](Interpreter &, CallArgs &) { return Value(all([](char c) { return c >= '0' && c <= '9'; })); });
    if (name == "isalpha") return bound([all](Interpreter &, CallArgs &) { return Value(all([](char c) { return std::isalpha((unsigned char)c) != 0; })); });
    if (name == "isalnum") return bound([all](Interpreter &, CallArgs &) { return Value(all([](char c) { return std::isalnum((unsigned char)c) != 0; })); });
    if (name == "isspace") return bound([all](Interpreter &, CallArgs &) { return Value(all([](char c) { return is_py_space(c); })); });
    if (name == "islower")
        return bound([sv](Interpreter &, CallArgs &) {
            const std::string &s = sv.as_string(); return Value(py_lower(s) == s && py_upper(s) != s); });
    if (name == "isupper")
        return bound([sv](Interpreter &, CallArgs &) {
            const std::string &s = sv.as_string(); return Value(py_upper(s) == s && py_lower(s) != s); });
    return Value();
}

Value dict_method(Interpreter &, const Value &obj, const std::string &name) {
    if (name == "get")
        return bound([obj](Interpreter &in, CallArgs &a) {
            Params p(in, "get", a, {"key", "default"});
            if (!p.has(0)) in.fail("get expected at least 1 argument, got 0");
            const Value *v = obj.dict_data().find(p.get(0, Value()));
            return v ? *v : p.get(1, Value::none());
        });
    if (name == "items" || name == "keys" || name == "values")
        return bound([obj, name](Interpreter &, CallArgs &) {
            std::vector<Value> out;
            for (const auto &kv : obj.dict_data().items)
                out.push_back(name == "items" ? Value::list({kv.first, kv.second}, true) : name == "keys" ? kv.first : kv.second);
            return Value::list(std::move(out));
        });
    if (name == "copy") return bound([obj](Interpreter &, CallArgs &) {
        Value d = Value::dict();
        d.dict_data().items = obj.dict_data().items;
        return d;
    });
    static const char *mutating[] = {"update", "pop", "popitem", "setdefault", "clear"};
    for (const char *m : mutating)
        if (name == m) return unsafe(name, "dict");
    return Value();
}

Value list_method(Interpreter &, const Value &obj, const std::string &name) {
    if (name == "index" || name == "count")
        return bound([obj, name](Interpreter &in, CallArgs &a) {
            Params p(in, name, a, {"value"});
            const Value x = p.get(0, Value());
            int64_t n = 0, i = 0;
            for (const auto &item : obj.list_data().items) {
                if (equal(item, x)) {
                    if (name == "index") return Value(i);
                    ++n;
                }
                ++i;
            }
            if (name == "index") in.fail(x.repr() + " is not in list");
            return Value(n);
        });
    static const char *mutating[] = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"};
    for (const char *m : mutating)
        if (name == m) return unsafe(name, obj.type_name());
    return Value();
}

} // namespace

Value method(Interpreter &in, const Value &obj, const std::string &name) {
    in.charge_size(obj); // what the method will walk
    if (obj.is_string()) return string_method(in, obj, name);
    if (obj.is_dict() && !obj.dict_data().is_namespace) return dict_method(in, obj, name);
    if (obj.is_list()) return list_method(in, obj, name);
    return Value();
}

void add_globals(std::unordered_map<std::string, Value> &vars) {
    vars["range"] = bound([](Interpreter &in, CallArgs &a) {
        if (!a.keyword.empty() || a.positional.empty() || a.positional.size() > 3) in.fail("range expected 1 to 3 integer arguments");
        std::vector<int64_t> n;
        for (const auto &v : a.positional) {
            if (!v.is_int() && !v.is_bool()) in.fail(std::string("'") + v.type_name() + "' object cannot be interpreted as an integer");
            n.push_back(v.as_int());
        }
        const int64_t start = n.size() > 1 ? n[0] : 0, stop = n.size() > 1 ? n[1] : n[0], step = n.size() > 2 ? n[2] : 1;
        if (step == 0) in.fail("range() arg 3 must not be zero");
        // Counted in 128 bits, so no value between start and stop can overflow.
        using i128 = __int128;
        const i128 count = step > 0 ? (stop > start ? ((i128)stop - start + step - 1) / step : 0)
                                    : (stop < start ? ((i128)start - stop - step - 1) / -(i128)step : 0);
        if (count > kMaxRange) in.fail("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
        std::vector<Value> out;
        for (i128 k = 0; k < count; ++k) out.emplace_back((int64_t)(start + k * step));
        in.charge((uint64_t)count);
        return Value::list(std::move(out));
    });
    auto from_kwargs = [](Interpreter &in, CallArgs &a, bool ns) {
        Value d = Value::dict();
        d.dict_data().is_namespace = ns;
        for (const auto &p : a.positional) {
            if (!p.is_dict()) in.fail(std::string(ns ? "namespace" : "dict") + "() takes a mapping or keyword arguments");
            in.charge(p.dict_data().items.size() * (p.dict_data().items.size() + a.keyword.size()));
            for (const auto &kv : p.dict_data().items) d.dict_data().set(kv.first, kv.second);
        }
        for (auto &kw : a.keyword) d.dict_data().set(Value(kw.first), kw.second);
        return d;
    };
    vars["namespace"] = bound([from_kwargs](Interpreter &in, CallArgs &a) { return from_kwargs(in, a, true); });
    vars["dict"] = bound([from_kwargs](Interpreter &in, CallArgs &a) { return from_kwargs(in, a, false); });
    vars["raise_exception"] = bound([](Interpreter &in, CallArgs &a) -> Value {
        const std::string msg = a.positional.empty() ? "" : a.positional[0].str();
        throw TemplateError(TemplateError::Kind::Raised, msg);
        (void)in;
    });
    vars["strftime_now"] = bound([](Interpreter &in, CallArgs &a) {
        if (a.positional.size() != 1 || !a.positional[0].is_string()) in.fail("strftime_now needs one format string");
        const std::time_t now = std::time(nullptr);
        std::tm tm{};
        localtime_r(&now, &tm);
        char buf[512];
        const size_t n = std::strftime(buf, sizeof buf, a.positional[0].as_string().c_str(), &tm);
        return Value(std::string(buf, n));
    });
}

} // namespace rf::jinja
