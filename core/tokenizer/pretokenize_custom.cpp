// llama.cpp's hand-coded splitters (unicode_regex_split_custom_gpt2 / _llama3), reproduced step
// for step: they are what llama.cpp runs for these patterns, quirks included, so they define the
// expected token ids rather than the regexes they approximate.
#include "pretokenize.h"
#include "unicode.h"

namespace rf::tok {

namespace {

constexpr uint32_t kOutOfRange = 0xFFFFFFFF;

// Accessors bounded to one piece, as in llama.cpp's _get_cpt/_get_flags lambdas.
struct Piece {
    const std::vector<uint32_t> &cpts;
    size_t ini, end;
    uint32_t cpt(size_t pos) const { return (pos >= ini && pos < end) ? cpts[pos] : kOutOfRange; }
    CptFlags flags(size_t pos) const {
        return (pos >= ini && pos < end) ? cpt_flags(cpts[pos]) : CptFlags{};
    }
};

struct Emitter {
    std::vector<size_t> &out;
    size_t prev_end;
    size_t add(size_t end) {
        const size_t len = end - prev_end;
        if (len > 0) out.push_back(len);
        prev_end = end;
        return len;
    }
};

uint32_t ascii_lower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

bool is_punct_like(const CptFlags &f) {
    return !(f.whitespace || f.is_letter() || f.is_number()) && f.in_range;
}

} // namespace

std::vector<size_t> split_gpt2(const std::vector<uint32_t> &cpts,
                               const std::vector<size_t> &lengths) {
    std::vector<size_t> out;
    out.reserve(lengths.size());
    size_t start = 0;
    for (size_t length : lengths) {
        const Piece p{cpts, start, start + length};
        start += length;
        Emitter em{out, p.ini};
        for (size_t pos = p.ini; pos < p.end;) {
            const uint32_t cpt = p.cpt(pos);
            const CptFlags flags = p.flags(pos);

            // 's|'t|'re|'ve|'m|'ll|'d
            if (cpt == '\'' && pos + 1 < p.end) {
                const uint32_t n1 = p.cpt(pos + 1);
                if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd') {
                    pos += em.add(pos + 2);
                    continue;
                }
                if (pos + 2 < p.end) {
                    const uint32_t n2 = p.cpt(pos + 2);
                    if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') ||
                        (n1 == 'l' && n2 == 'l')) {
                        pos += em.add(pos + 3);
                        continue;
                    }
                }
            }

            CptFlags f2 = (cpt == ' ' ? p.flags(pos + 1) : flags);
            // <space>?\p{L}+
            if (f2.is_letter()) {
                pos += (cpt == ' ');
                while (f2.is_letter()) f2 = p.flags(++pos);
                em.add(pos);
                continue;
            }
            // <space>?\p{N}+
            if (f2.is_number()) {
                pos += (cpt == ' ');
                while (f2.is_number()) f2 = p.flags(++pos);
                em.add(pos);
                continue;
            }
            // <space>?[^\s\p{L}\p{N}]+
            if (is_punct_like(f2)) {
                pos += (cpt == ' ');
                while (is_punct_like(f2)) f2 = p.flags(++pos);
                em.add(pos);
                continue;
            }

            size_t num_ws = 0;
            while (p.flags(pos + num_ws).whitespace) ++num_ws;
            // \s+(?!\S)
            if (num_ws > 1 && p.cpt(pos + num_ws) != kOutOfRange) {
                pos += num_ws - 1;
                em.add(pos);
                continue;
            }
            // \s+
            if (num_ws > 0) {
                pos += num_ws;
                em.add(pos);
                continue;
            }
            em.add(++pos); // no match
        }
    }
    return out;
}

std::vector<size_t> split_llama3(const std::vector<uint32_t> &cpts,
                                 const std::vector<size_t> &lengths) {
    std::vector<size_t> out;
    out.reserve(lengths.size());
    size_t start = 0;
    for (size_t length : lengths) {
        const Piece p{cpts, start, start + length};
        start += length;
        Emitter em{out, p.ini};
        for (size_t pos = p.ini; pos < p.end;) {
            const uint32_t cpt = p.cpt(pos);
            const CptFlags flags = p.flags(pos);

            // (?i:'s|'t|'re|'ve|'m|'ll|'d). Only U+212A lower-cases to ASCII outside ASCII (to
            // 'k', not a contraction letter), so ASCII lower-casing is exact here.
            if (cpt == '\'' && pos + 1 < p.end) {
                const uint32_t n1 = ascii_lower(p.cpt(pos + 1));
                if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd') {
                    pos += em.add(pos + 2);
                    continue;
                }
                if (pos + 2 < p.end) {
                    const uint32_t n2 = ascii_lower(p.cpt(pos + 2));
                    if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') ||
                        (n1 == 'l' && n2 == 'l')) {
                        pos += em.add(pos + 3);
                        continue;
                    }
                }
            }

            // [^\r\n\p{L}\p{N}]?\p{L}+
            if (!(cpt == '\r' || cpt == '\n' || flags.is_number())) {
                if (flags.is_letter() || p.flags(pos + 1).is_letter()) {
                    ++pos;
                    while (p.flags(pos).is_letter()) ++pos;
                    em.add(pos);
                    continue;
                }
            }

            // \p{N}{1,3}
            if (flags.is_number()) {
                size_t ini = pos;
                while (p.flags(pos).is_number()) {
                    if (++pos - ini >= 3) {
                        em.add(pos);
                        ini = pos;
                    }
                }
                em.add(pos);
                continue;
            }

            // <space>?[^\s\p{L}\p{N}]+[\r\n]*  (llama.cpp tests `flags`, not `flags2`, for the
            // in-range part of the first check; kept as is)
            CptFlags f2 = (cpt == ' ' ? p.flags(pos + 1) : flags);
            if (!(f2.whitespace || f2.is_letter() || f2.is_number()) && flags.in_range) {
                pos += (cpt == ' ');
                while (is_punct_like(f2)) f2 = p.flags(++pos);
                uint32_t c2 = p.cpt(pos);
                while (c2 == '\r' || c2 == '\n') c2 = p.cpt(++pos);
                em.add(pos);
                continue;
            }

            size_t num_ws = 0;
            size_t last_end_r_or_n = 0;
            while (p.flags(pos + num_ws).whitespace) {
                const uint32_t c2 = p.cpt(pos + num_ws);
                if (c2 == '\r' || c2 == '\n') last_end_r_or_n = pos + num_ws + 1;
                ++num_ws;
            }
            // \s*[\r\n]+
            if (last_end_r_or_n > 0) {
                pos = last_end_r_or_n;
                em.add(pos);
                continue;
            }
            // \s+(?!\S)
            if (num_ws > 1 && p.cpt(pos + num_ws) != kOutOfRange) {
                pos += num_ws - 1;
                em.add(pos);
                continue;
            }
            // \s+
            if (num_ws > 0) {
                pos += num_ws;
                em.add(pos);
                continue;
            }
            em.add(++pos); // no match
        }
    }
    return out;
}

} // namespace rf::tok
