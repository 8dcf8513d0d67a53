#include "rocmforge/escape.h"

namespace rf {

std::string quote_name(std::string_view s, size_t max_bytes) {
    static const char hex[] = "0123456789abcdef";
    const size_t shown = s.size() < max_bytes ? s.size() : max_bytes;
    std::string out = "'";
    for (size_t k = 0; k < shown; ++k) {
        const unsigned char c = static_cast<unsigned char>(s[k]);
        if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
            out += char(c);
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    out += '\'';
    if (shown < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
    return out;
}

} // namespace rf
