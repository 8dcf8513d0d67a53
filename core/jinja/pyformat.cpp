#include "pyformat.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rf::jinja {

std::string float_repr(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
    // Shortest digits that read back as d.
    char buf[64];
    int prec = 1;
    for (; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
        if (std::strtod(buf, nullptr) == d) break;
    }
    // buf: [-]d.ddde[+-]xx
    std::string s = buf;
    const bool neg = s[0] == '-';
    if (neg) s.erase(0, 1);
    const size_t e = s.find('e');
    std::string digits = s.substr(0, e);
    digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    const int exp10 = std::atoi(s.c_str() + e + 1);
    const int decpt = exp10 + 1; // d = 0.digits x 10^decpt
    std::string out;
    if (decpt > -4 && decpt <= 16) {
        if (decpt <= 0) {
            out = "0.";
            out.append((size_t)-decpt, '0');
            out += digits;
        }
        else if ((size_t)decpt >= digits.size()) out = digits + std::string((size_t)decpt - digits.size(), '0') + ".0";
        else out = digits.substr(0, (size_t)decpt) + "." + digits.substr((size_t)decpt);
    } else {
        out = digits.substr(0, 1);
        if (digits.size() > 1) out += "." + digits.substr(1);
        char eb[16];
        std::snprintf(eb, sizeof eb, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
        out += eb;
    }
    return neg ? "-" + out : out;
}

std::string string_repr(const std::string &s) {
    const bool has_single = s.find('\'') != std::string::npos, has_double = s.find('"') != std::string::npos;
    const char q = has_single && !has_double ? '"' : '\'';
    std::string out(1, q);
    for (unsigned char c : s) {
        if (c == (unsigned char)q || c == '\\') {
            out += '\\';
            out += (char)c;
        } else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) {
            char b[8];
            std::snprintf(b, sizeof b, "\\x%02x", c);
            out += b;
        } else
            out += (char)c;
    }
    out += q;
    return out;
}

std::vector<std::string_view> code_points(std::string_view s) {
    std::vector<std::string_view> out;
    for (size_t i = 0; i < s.size();) {
        const unsigned char c = (unsigned char)s[i];
        size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
        if (i + n > s.size()) n = 1;
        for (size_t k = 1; k < n; ++k)
            if (((unsigned char)s[i + k] >> 6) != 2) n = 1;
        out.push_back(s.substr(i, n));
        i += n;
    }
    return out;
}

size_t code_point_count(std::string_view s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c >> 6) != 2;
    return n;
}

bool is_py_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == '\x1c' || c == '\x1d' || c == '\x1e' ||
           c == '\x1f';
}

std::string py_strip(std::string_view s, const std::string *chars, bool left, bool right) {
    auto strip_this = [&](char c) { return chars ? chars->find(c) != std::string::npos : is_py_space(c); };
    size_t b = 0, e = s.size();
    if (left)
        while (b < e && strip_this(s[b])) ++b;
    if (right)
        while (e > b && strip_this(s[e - 1])) --e;
    return std::string(s.substr(b, e - b));
}

std::vector<std::string> py_split(std::string_view s, const std::string *sep, int64_t maxsplit) {
    std::vector<std::string> out;
    if (!sep) {
        size_t i = 0;
        while (i < s.size()) {
            while (i < s.size() && is_py_space(s[i])) ++i;
            if (i >= s.size()) break;
            if (maxsplit >= 0 && (int64_t)out.size() >= maxsplit) {
                size_t e = s.size();
                while (e > i && is_py_space(s[e - 1])) --e;
                out.emplace_back(s.substr(i, e - i));
                return out;
            }
            size_t j = i;
            while (j < s.size() && !is_py_space(s[j])) ++j;
            out.emplace_back(s.substr(i, j - i));
            i = j;
        }
        return out;
    }
    size_t i = 0;
    for (;;) {
        if (maxsplit >= 0 && (int64_t)out.size() >= maxsplit) break;
        const size_t j = s.find(*sep, i);
        if (j == std::string_view::npos) break;
        out.emplace_back(s.substr(i, j - i));
        i = j + sep->size();
    }
    out.emplace_back(s.substr(i));
    return out;
}

std::string py_replace(std::string_view s, std::string_view old, std::string_view with, int64_t count) {
    std::string out;
    if (old.empty()) { // Python inserts `with` between every character (and at both ends)
        int64_t n = 0;
        for (auto cp : code_points(s)) {
            if (count < 0 || n < count) {
                out += with;
                ++n;
            }
            out += cp;
        }
        if (count < 0 || n < count) out += with;
        return out;
    }
    size_t i = 0;
    int64_t n = 0;
    for (;;) {
        const size_t j = (count >= 0 && n >= count) ? std::string_view::npos : s.find(old, i);
        if (j == std::string_view::npos) break;
        out += s.substr(i, j - i);
        out += with;
        i = j + old.size();
        ++n;
    }
    out += s.substr(i);
    return out;
}

std::string py_lower(std::string_view s) {
    std::string out(s);
    for (char &c : out)
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    return out;
}

std::string py_upper(std::string_view s) {
    std::string out(s);
    for (char &c : out)
        if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
    return out;
}

static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string py_title(std::string_view s) {
    std::string out(s);
    bool prev_cased = false;
    for (char &c : out) {
        if (is_alpha(c)) {
            c = prev_cased ? (char)std::tolower((unsigned char)c) : (char)std::toupper((unsigned char)c);
            prev_cased = true;
        } else
            prev_cased = ((unsigned char)c) >= 0x80 && prev_cased;
    }
    return out;
}

std::string py_capitalize(std::string_view s) {
    std::string out = py_lower(s);
    if (!out.empty() && out[0] >= 'a' && out[0] <= 'z') out[0] = (char)(out[0] - 'a' + 'A');
    return out;
}

std::vector<std::string> py_splitlines(std::string_view s) {
    std::vector<std::string> out;
    size_t i = 0, start = 0;
    while (i < s.size()) {
        const char c = s[i];
        size_t brk = 0;
        if (c == '\n' || c == '\v' || c == '\f' || c == '\x1c' || c == '\x1d' || c == '\x1e') brk = 1;
        else if (c == '\r') brk = (i + 1 < s.size() && s[i + 1] == '\n') ? 2 : 1;
        else if (s.compare(i, 2, "\xc2\x85") == 0) brk = 2;
        else if (s.compare(i, 3, "\xe2\x80\xa8") == 0 || s.compare(i, 3, "\xe2\x80\xa9") == 0) brk = 3;
        if (brk) {
            out.emplace_back(s.substr(start, i - start));
            i += brk;
            start = i;
        } else
            ++i;
    }
    if (start < s.size()) out.emplace_back(s.substr(start));
    return out;
}

} // namespace rf::jinja
