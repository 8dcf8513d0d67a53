#include "str_format.h"

#include <cmath>
#include <cstdio>

#include "interpreter.h"
#include "pyformat.h"

namespace rf::jinja {
namespace {

struct Spec {
    char fill = ' ', align = 0, sign = '-', type = 0;
    bool alt = false, zero = false, comma = false;
    int width = -1, prec = -1;
};

Spec parse_spec(Interpreter &in, const std::string &s) {
    Spec p;
    size_t i = 0;
    auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
    if (s.size() >= 2 && is_align(s[1])) {
        p.fill = s[0];
        p.align = s[1];
        i = 2;
    } else if (!s.empty() && is_align(s[0])) {
        p.align = s[0];
        i = 1;
    }
    if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) p.sign = s[i++];
    if (i < s.size() && s[i] == '#') p.alt = (++i, true);
    if (i < s.size() && s[i] == '0') p.zero = (++i, true);
    auto number = [&]() {
        int n = 0;
        while (i < s.size() && std::isdigit((unsigned char)s[i])) n = std::min(n * 10 + (s[i++] - '0'), 1 << 20);
        return n;
    };
    if (i < s.size() && std::isdigit((unsigned char)s[i])) p.width = number();
    if (i < s.size() && (s[i] == ',' || s[i] == '_')) p.comma = (++i, true);
    if (i < s.size() && s[i] == '.') {
        ++i;
        if (i >= s.size() || !std::isdigit((unsigned char)s[i])) in.fail("Format specifier missing precision");
        p.prec = number();
    }
    if (i < s.size()) p.type = s[i++];
    if (i < s.size()) in.fail("Invalid format specifier '" + s + "'");
    return p;
}

std::string align(std::string body, const Spec &p, char dflt) {
    const int n = (int)code_point_count(body);
    if (p.width <= n) return body;
    const size_t padn = (size_t)(p.width - n);
    const char a = p.align ? p.align : (p.zero ? '=' : dflt);
    const char fill = p.align ? p.fill : (p.zero ? '0' : p.fill);
    if (a == '<') return body + std::string(padn, fill);
    if (a == '^') return std::string(padn / 2, fill) + body + std::string(padn - padn / 2, fill);
    if (a == '=') { // after the sign
        const size_t at = (!body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ')) ? 1 : 0;
        return body.substr(0, at) + std::string(padn, fill) + body.substr(at);
    }
    return std::string(padn, fill) + body;
}

std::string group_thousands(const std::string &digits) {
    std::string out;
    const size_t n = digits.size();
    for (size_t i = 0; i < n; ++i) {
        if (i && (n - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string format_value(Interpreter &in, const Value &v, const std::string &spec_text) {
    if (spec_text.empty()) return v.str();
    const Spec p = parse_spec(in, spec_text);
    if (v.is_string() || ((v.is_none() || v.is_list() || v.is_dict() || v.is_undefined()) && !p.type)) {
        if (p.type && p.type != 's') in.fail(std::string("Unknown format code '") + p.type + "' for object of type 'str'");
        std::string s = v.str();
        if (p.prec >= 0) {
            auto cps = code_points(s);
            if ((size_t)p.prec < cps.size()) {
                std::string t;
                for (int k = 0; k < p.prec; ++k) t += cps[(size_t)k];
                s = t;
            }
        }
        return align(s, p, '<');
    }
    if (!v.is_number()) in.fail(std::string("unsupported format string passed to ") + v.type_name() + ".__format__");
    const bool integer = v.is_int() || v.is_bool();
    char t = p.type;
    if (!t) t = integer ? 'd' : 0;
    std::string body;
    if (t == 'd' || t == 'x' || t == 'X' || t == 'o' || t == 'b' || t == 'c' || t == 'n') {
        if (!integer) in.fail(std::string("Unknown format code '") + t + "' for object of type 'float'");
        const int64_t n = v.as_int();
        if (t == 'c') return align(std::string(1, (char)n), p, '<');
        const uint64_t mag = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;
        std::string digits;
        if (t == 'b') {
            for (uint64_t m = mag; m; m >>= 1) digits.insert(digits.begin(), (char)('0' + (m & 1)));
            if (digits.empty()) digits.assign(1, '0');
        } else {
            char buf[32];
            std::snprintf(buf, sizeof buf, t == 'x' ? "%llx" : t == 'X' ? "%llX" : t == 'o' ? "%llo" : "%llu", (unsigned long long)mag);
            digits = buf;
        }
        if (p.comma && (t == 'd' || t == 'n')) digits = group_thousands(digits);
        if (p.alt) {
            std::string prefix = "0";
            prefix += t == 'x' ? "x" : t == 'X' ? "X" : t == 'o' ? "o" : t == 'b' ? "b" : "";
            digits.insert(0, prefix);
        }
        body.clear();
        if (n < 0) body += '-';
        else if (p.sign == '+' || p.sign == ' ') body += p.sign;
        body += digits;
        return align(body, p, '>');
    }
    const double d = v.as_float();
    if (!t && p.prec < 0) body = float_repr(d);
    else {
        const char ct = t == '%' ? 'f' : t ? t : 'g';
        const int prec = p.prec < 0 ? 6 : p.prec;
        const double x = t == '%' ? d * 100 : d;
        char spec[32];
        std::snprintf(spec, sizeof spec, "%%%s.%d%c", p.alt ? "#" : "", prec, ct);
        const int len = std::snprintf(nullptr, 0, spec, std::fabs(x));
        std::string s((size_t)len + 1, '\0');
        std::snprintf(s.data(), s.size(), spec, std::fabs(x));
        s.resize((size_t)len);
        if (p.comma) {
            const size_t dot = s.find_first_not_of("0123456789");
            s = group_thousands(s.substr(0, dot)) + (dot == std::string::npos ? "" : s.substr(dot));
        }
        if (t == '%') s += '%';
        body.clear();
        if (std::signbit(x)) body += '-';
        else if (p.sign == '+' || p.sign == ' ') body += p.sign;
        body += s;
        return align(body, p, '>');
    }
    if (p.sign == '+' && d >= 0) body = "+" + body;
    return align(body, p, '>');
}

} // namespace

std::string str_format(Interpreter &in, const std::string &fmt, const CallArgs &args) {
    std::string out;
    size_t auto_index = 0;
    bool numbered = false, automatic = false;
    for (size_t i = 0; i < fmt.size(); ++i) {
        const char c = fmt[i];
        if (c == '}') {
            if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
                out += '}';
                ++i;
                continue;
            }
            in.fail("Single '}' encountered in format string");
        }
        if (c != '{') {
            out += c;
            continue;
        }
        if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
            out += '{';
            ++i;
            continue;
        }
        // {field!conv:spec}; the spec may hold {nested} fields, not supported.
        const size_t close = fmt.find('}', i);
        if (close == std::string::npos) in.fail("Single '{' encountered in format string");
        std::string field = fmt.substr(i + 1, close - i - 1);
        i = close;
        std::string spec, conv;
        if (const size_t colon = field.find(':'); colon != std::string::npos) {
            spec = field.substr(colon + 1);
            field.resize(colon);
        }
        if (const size_t bang = field.find('!'); bang != std::string::npos) {
            conv = field.substr(bang + 1);
            field.resize(bang);
            if (conv != "r" && conv != "s" && conv != "a") in.fail("Unknown conversion specifier " + conv);
        }
        // The argument: a number or a name, then .attr / [key] parts.
        size_t e = 0;
        while (e < field.size() && field[e] != '.' && field[e] != '[') ++e;
        const std::string head = field.substr(0, e);
        Value v;
        if (head.empty()) {
            if (numbered) in.fail("cannot switch from manual field specification to automatic field numbering");
            automatic = true;
            if (auto_index >= args.positional.size()) in.fail("Replacement index " + std::to_string(auto_index) + " out of range for positional args tuple");
            v = args.positional[auto_index++];
        } else if (std::all_of(head.begin(), head.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
            if (automatic) in.fail("cannot switch from automatic field numbering to manual field specification");
            numbered = true;
            const size_t k = (size_t)std::stoull(head.size() > 9 ? "999999999" : head);
            if (k >= args.positional.size()) in.fail("Replacement index " + head + " out of range for positional args tuple");
            v = args.positional[k];
        } else {
            bool found = false;
            for (const auto &kw : args.keyword)
                if (kw.first == head) {
                    v = kw.second;
                    found = true;
                }
            if (!found) in.fail("KeyError: '" + head + "'");
        }
        while (e < field.size()) {
            if (field[e] == '.') {
                size_t f = e + 1;
                while (f < field.size() && field[f] != '.' && field[f] != '[') ++f;
                v = in.getattr(v, field.substr(e + 1, f - e - 1));
                e = f;
            } else {
                const size_t f = field.find(']', e);
                if (f == std::string::npos) in.fail("Missing ']' in format string");
                const std::string key = field.substr(e + 1, f - e - 1);
                const bool digits = !key.empty() && std::all_of(key.begin(), key.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
                v = in.getitem(v, digits ? Value((int64_t)std::stoll(key.size() > 18 ? "999999999999999999" : key)) : Value(key));
                e = f + 1;
            }
        }
        if (v.is_undefined()) in.fail_undefined(v);
        if (conv == "r" || conv == "a") v = Value(v.repr());
        else if (conv == "s") v = Value(v.str());
        out += format_value(in, v, spec);
        in.check_size(out.size());
    }
    return out;
}

} // namespace rf::jinja
