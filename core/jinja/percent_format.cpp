#include "percent_format.h"

#include <cmath>
#include <cstdio>

#include "lexer.h"
#include "pyformat.h"

namespace rf::jinja {
namespace {

[[noreturn]] void fail(const std::string &m) { throw TemplateError(TemplateError::Kind::Runtime, m); }

std::string pad(std::string s, int width, bool left, char fill = ' ') {
    const int n = (int)code_point_count(s);
    if (width <= n) return s;
    const std::string p((size_t)(width - n), fill);
    return left ? s + p : p + s;
}

// snprintf into a string of the size it needs (width and precision are at most 2^20).
template <typename T> std::string printf_text(const std::string &spec, T value) {
    const int n = std::snprintf(nullptr, 0, spec.c_str(), value);
    if (n < 0) fail("bad format " + spec);
    std::string s((size_t)n + 1, '\0');
    std::snprintf(s.data(), s.size(), spec.c_str(), value);
    s.resize((size_t)n);
    return s;
}

} // namespace

std::string percent_format(const std::string &fmt, const std::vector<Value> &args, const Value *mapping, size_t max_bytes) {
    std::string out;
    size_t next = 0;
    bool used_mapping = false;
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (out.size() > max_bytes)
            throw TemplateError(TemplateError::Kind::Limit, "formatted text would exceed " + std::to_string(max_bytes) + " bytes");
        if (fmt[i] != '%') {
            out += fmt[i];
            continue;
        }
        if (++i >= fmt.size()) fail("incomplete format");
        const Value *arg = nullptr;
        Value keyed;
        if (fmt[i] == '(') {
            const size_t close = fmt.find(')', i);
            if (close == std::string::npos) fail("incomplete format key");
            if (!mapping) fail("format requires a mapping");
            const Value *v = mapping->dict_data().find(Value(fmt.substr(i + 1, close - i - 1)));
            if (!v) fail("KeyError: '" + fmt.substr(i + 1, close - i - 1) + "'");
            keyed = *v;
            arg = &keyed;
            used_mapping = true;
            i = close + 1;
        }
        bool left = false, zero = false, plus = false, space = false, alt = false;
        for (; i < fmt.size(); ++i) {
            const char c = fmt[i];
            if (c == '-') left = true;
            else if (c == '0') zero = true;
            else if (c == '+') plus = true;
            else if (c == ' ') space = true;
            else if (c == '#') alt = true;
            else break;
        }
        int width = 0, prec = -1;
        while (i < fmt.size() && std::isdigit((unsigned char)fmt[i])) width = std::min(width * 10 + (fmt[i++] - '0'), 1 << 20);
        if (i < fmt.size() && fmt[i] == '.') {
            prec = 0;
            ++i;
            while (i < fmt.size() && std::isdigit((unsigned char)fmt[i])) prec = std::min(prec * 10 + (fmt[i++] - '0'), 1 << 20);
        }
        while (i < fmt.size() && (fmt[i] == 'l' || fmt[i] == 'h' || fmt[i] == 'L')) ++i;
        if (i >= fmt.size()) fail("incomplete format");
        const char type = fmt[i];
        if (type == '%') {
            out += '%';
            continue;
        }
        if (!arg) {
            if (next >= args.size()) fail("not enough arguments for format string");
            arg = &args[next++];
        }
        const Value &v = *arg;
        switch (type) {
        case 's':
        case 'r':
        case 'a': {
            std::string s = type == 's' ? v.str() : v.repr();
            if (prec >= 0) {
                auto cps = code_points(s);
                if ((size_t)prec < cps.size()) {
                    std::string t;
                    for (int k = 0; k < prec; ++k) t += cps[(size_t)k];
                    s = t;
                }
            }
            out += pad(s, width, left);
            break;
        }
        case 'c': {
            std::string s;
            if (v.is_int()) {
                if (v.as_int() < 0 || v.as_int() > 0x10FFFF) fail("%c arg not in range(0x110000)");
                std::string u;
                append_utf8(u, (uint32_t)v.as_int());
                s = u;
            } else if (v.is_string() && code_point_count(v.as_string()) == 1) s = v.as_string();
            else fail("%c requires int or char");
            out += pad(s, width, left);
            break;
        }
        case 'd':
        case 'i':
        case 'u':
        case 'x':
        case 'X':
        case 'o': {
            if (!v.is_number()) fail(std::string("%") + type + " format: a real number is required, not " + v.type_name());
            if (v.is_float() && !std::isfinite(v.as_float())) fail("cannot convert float infinity or NaN to integer");
            if ((type == 'x' || type == 'X' || type == 'o') && v.is_float()) fail(std::string("%") + type + " format: an integer is required, not float");
            const long long n = v.is_float() ? (long long)v.as_float() : (long long)v.as_int();
            std::string spec = "%";
            if (left) spec += '-';
            if (zero && !left) spec += '0';
            if (plus) spec += '+';
            else if (space) spec += ' ';
            if (alt) spec += '#';
            spec += std::to_string(width);
            if (prec >= 0) {
                spec += '.';
                spec += std::to_string(prec);
            }
            spec += "ll";
            spec += type == 'i' || type == 'u' ? 'd' : type;
            std::string s = printf_text(spec, n);
            if (alt && type == 'o') { // Python writes 0o17, C 017
                const size_t z = s.find('0');
                if (z != std::string::npos && n != 0) s.insert(s.begin() + (std::ptrdiff_t)z + 1, 'o');
            }
            out += s;
            break;
        }
        case 'f':
        case 'F':
        case 'e':
        case 'E':
        case 'g':
        case 'G': {
            if (!v.is_number()) fail(std::string("%") + type + " format: a real number is required, not " + v.type_name());
            std::string spec = "%";
            if (left) spec += '-';
            if (zero && !left) spec += '0';
            if (plus) spec += '+';
            else if (space) spec += ' ';
            if (alt) spec += '#';
            spec += std::to_string(width);
            spec += '.';
            spec += std::to_string(prec < 0 ? 6 : prec);
            spec += type;
            out += printf_text(spec, v.as_float());
            break;
        }
        default: fail(std::string("unsupported format character '") + type + "'");
        }
    }
    if (next < args.size() && !(used_mapping || (mapping && args.size() == 1))) fail("not all arguments converted during string formatting");
    return out;
}

} // namespace rf::jinja
