#include "unicode.h"

#include <algorithm>
#include <array>
#include <memory>
#include <unordered_map>

namespace rf::tok {

namespace {

// Unicode White_Space, the explicit list llama.cpp uses (not category Z: \t..\r are Cc).
bool whitespace_list(uint32_t c) {
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}

// Expands the run table once into one byte per code point (1.1 MB) so lookups on long texts
// cost one load.
const std::vector<uint8_t> &category_array() {
    static const std::vector<uint8_t> table = [] {
        std::vector<uint8_t> t(kMaxCodepoint + 1, 0);
        for (size_t i = 0; i < kCategoryRunCount; ++i) {
            const uint32_t first = kCategoryRuns[i] >> 3;
            const uint32_t end = i + 1 < kCategoryRunCount ? (kCategoryRuns[i + 1] >> 3)
                                                           : kMaxCodepoint + 1;
            const uint8_t cat = kCategoryRuns[i] & 7;
            for (uint32_t c = first; c < end; ++c) t[c] = cat;
        }
        return t;
    }();
    return table;
}

} // namespace

bool is_unicode_whitespace(uint32_t cpt) { return whitespace_list(cpt); }

CptFlags cpt_flags(uint32_t cpt) {
    CptFlags f;
    f.in_range = true; // llama.cpp gives code points past its table the UNDEFINED flag (non-zero)
    if (cpt > kMaxCodepoint) return f;
    f.category = static_cast<UnicodeCategory>(category_array()[cpt]);
    f.whitespace = whitespace_list(cpt);
    return f;
}

std::vector<uint32_t> utf8_to_cpts(std::string_view s) {
    std::vector<uint32_t> out;
    out.reserve(s.size());
    size_t i = 0;
    const size_t n = s.size();
    auto cont = [&](size_t k) { return k < n && (static_cast<uint8_t>(s[k]) & 0xC0) == 0x80; };
    while (i < n) {
        const uint8_t b0 = static_cast<uint8_t>(s[i]);
        if (!(b0 & 0x80)) {
            out.push_back(b0);
            i += 1;
        } else if (!(b0 & 0x40)) {
            out.push_back(kReplacementChar);
            i += 1;
        } else if (!(b0 & 0x20)) {
            if (!cont(i + 1)) { out.push_back(kReplacementChar); i += 1; continue; }
            out.push_back(((b0 & 0x1F) << 6) | (static_cast<uint8_t>(s[i + 1]) & 0x3F));
            i += 2;
        } else if (!(b0 & 0x10)) {
            if (!cont(i + 1) || !cont(i + 2)) { out.push_back(kReplacementChar); i += 1; continue; }
            out.push_back(((b0 & 0x0F) << 12) | ((static_cast<uint8_t>(s[i + 1]) & 0x3F) << 6) |
                          (static_cast<uint8_t>(s[i + 2]) & 0x3F));
            i += 3;
        } else if (!(b0 & 0x08)) {
            if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) {
                out.push_back(kReplacementChar);
                i += 1;
                continue;
            }
            out.push_back(((b0 & 0x07) << 18) | ((static_cast<uint8_t>(s[i + 1]) & 0x3F) << 12) |
                          ((static_cast<uint8_t>(s[i + 2]) & 0x3F) << 6) |
                          (static_cast<uint8_t>(s[i + 3]) & 0x3F));
            i += 4;
        } else {
            out.push_back(kReplacementChar);
            i += 1;
        }
    }
    return out;
}

void append_utf8(std::string &out, uint32_t c) {
    if (c <= 0x7F) {
        out.push_back(static_cast<char>(c));
    } else if (c <= 0x7FF) {
        out.push_back(static_cast<char>(0xC0 | ((c >> 6) & 0x1F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c <= 0xFFFF) {
        out.push_back(static_cast<char>(0xE0 | ((c >> 12) & 0x0F)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
        // Decoded input never exceeds 0x1FFFFF; encode the low 21 bits like llama.cpp would for
        // valid code points.
        out.push_back(static_cast<char>(0xF0 | ((c >> 18) & 0x07)));
        out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
}

std::string cpt_to_utf8(uint32_t cpt) {
    std::string s;
    append_utf8(s, cpt);
    return s;
}

namespace {
struct ByteMaps {
    std::array<std::string, 256> to_unicode;
    std::unordered_map<std::string, uint8_t> to_byte;
    ByteMaps() {
        // Printable Latin-1 bytes map to themselves; the rest to U+0100.. in byte order.
        std::array<bool, 256> printable{};
        for (int c = 0x21; c <= 0x7E; ++c) printable[c] = true;
        for (int c = 0xA1; c <= 0xAC; ++c) printable[c] = true;
        for (int c = 0xAE; c <= 0xFF; ++c) printable[c] = true;
        int n = 0;
        for (int c = 0; c < 256; ++c) {
            to_unicode[c] = cpt_to_utf8(printable[c] ? c : 256 + n++);
            to_byte[to_unicode[c]] = static_cast<uint8_t>(c);
        }
    }
};
const ByteMaps &byte_maps() {
    static const ByteMaps maps;
    return maps;
}
} // namespace

const std::string &byte_to_unicode(uint8_t byte) { return byte_maps().to_unicode[byte]; }

int unicode_to_byte(std::string_view utf8) {
    const auto &m = byte_maps().to_byte;
    auto it = m.find(std::string(utf8));
    return it == m.end() ? -1 : it->second;
}

size_t incomplete_utf8_tail(std::string_view s) {
    // Look back at most 3 bytes for a lead byte whose sequence runs past the end.
    const size_t n = s.size();
    for (size_t back = 1; back <= 3 && back <= n; ++back) {
        const uint8_t b = static_cast<uint8_t>(s[n - back]);
        if ((b & 0xC0) == 0x80) continue; // continuation byte: keep looking for the lead
        if (b < 0xC0) return 0;           // ASCII: complete
        const size_t need = utf8_len(static_cast<char>(b));
        return need > back ? back : 0;
    }
    return 0;
}

uint32_t nfd_first(uint32_t cpt) {
    // The last range starting at or before cpt.
    const auto *end = kNfdFirst + kNfdFirstCount;
    const auto *it = std::upper_bound(kNfdFirst, end, cpt, [](uint32_t c, const uint32_t(&r)[3]) { return c < r[0]; });
    if (it == kNfdFirst) return cpt;
    --it;
    return cpt <= (*it)[1] ? (*it)[2] : cpt;
}

uint32_t to_lower(uint32_t cpt) {
    const auto *end = kLowerFirst + kLowerFirstCount;
    const auto *it = std::lower_bound(kLowerFirst, end, cpt, [](const uint32_t(&r)[2], uint32_t c) { return r[0] < c; });
    return it != end && (*it)[0] == cpt ? (*it)[1] : cpt;
}

} // namespace rf::tok
