#include "utf8_text.h"

namespace rf::serve {
namespace {

// Length of the well-formed character at s[i], 0 when none starts there.
size_t char_at(const std::string &s, size_t i) {
    const auto c = (unsigned char)s[i];
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
    for (size_t k = 1; k < n; ++k) {
        const auto d = (unsigned char)s[i + k];
        if ((d & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (d & 0x3F);
    }
    static const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
    return n;
}

} // namespace

bool valid_utf8(const std::string &s) {
    for (size_t i = 0; i < s.size();) {
        const size_t n = char_at(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

int64_t utf8_chars(const std::string &s) {
    int64_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

std::string sanitize_utf8(const std::string &s) {
    if (valid_utf8(s)) return s;
    std::string out;
    for (size_t i = 0; i < s.size();) {
        const size_t n = char_at(s, i);
        if (n == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
        } else {
            out.append(s, i, n);
            i += n;
        }
    }
    return out;
}

} // namespace rf::serve
