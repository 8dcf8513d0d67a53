// Python's text forms of numbers and the string operations templates call, on UTF-8 strings.
// Case mapping and whitespace are ASCII (Python also maps non-ASCII letters).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rf::jinja {

std::string float_repr(double d);         // repr(float): shortest round-trip, "1.0", "1e-05"
std::string string_repr(const std::string &s); // repr(str): quoted and escaped

// Code points of UTF-8 text (invalid bytes count as one each).
std::vector<std::string_view> code_points(std::string_view s);
size_t code_point_count(std::string_view s);

bool is_py_space(char c);
std::string py_strip(std::string_view s, const std::string *chars, bool left, bool right);
std::vector<std::string> py_split(std::string_view s, const std::string *sep, int64_t maxsplit);
std::string py_replace(std::string_view s, std::string_view old, std::string_view with, int64_t count);
std::string py_lower(std::string_view s);
std::string py_upper(std::string_view s);
std::string py_title(std::string_view s);
std::string py_capitalize(std::string_view s);
std::vector<std::string> py_splitlines(std::string_view s);

} // namespace rf::jinja
