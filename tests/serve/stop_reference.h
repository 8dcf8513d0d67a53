// What a stop matcher fed text in pieces must emit (the reference of the unit tests and the
// serve_request fuzz target): generation stops after the first piece following which the text
// so far holds a stop string, and the output is the text before that string's earliest
// occurrence (a longer stop string that would have begun earlier but was not complete yet does
// not count: the text after it is never generated).
#pragma once
#include <string>
#include <vector>

namespace rf_test {

inline std::string stop_reference(const std::vector<std::string> &pieces, const std::vector<std::string> &stops) {
    std::string seen;
    for (const auto &p : pieces) {
        seen += p;
        size_t cut = std::string::npos;
        for (const auto &s : stops)
            if (size_t at = s.empty() ? std::string::npos : seen.find(s); at != std::string::npos && at < cut) cut = at;
        if (cut != std::string::npos) return seen.substr(0, cut);
    }
    return seen;
}

} // namespace rf_test
