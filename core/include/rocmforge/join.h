// Lists in messages: "cpu, hip".
#pragma once
#include <string>
#include <vector>

namespace rf {

inline std::string join(const std::vector<std::string> &items, const char *sep = ", ") {
    std::string s;
    for (const auto &item : items) s += (s.empty() ? "" : sep) + item;
    return s;
}

} // namespace rf
