#include "utf8_ranges.h"

#include <algorithm>

namespace rf::grammar {
namespace {

constexpr uint32_t kMaxCodepoint = 0x10FFFF, kSurrogateLo = 0xD800, kSurrogateHi = 0xDFFF;

int encoded_length(uint32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

void encode(uint32_t cp, uint8_t *b) {
    switch (encoded_length(cp)) {
    case 1: b[0] = (uint8_t)cp; break;
    case 2: b[0] = (uint8_t)(0xC0 | cp >> 6), b[1] = (uint8_t)(0x80 | (cp & 0x3F)); break;
    case 3:
        b[0] = (uint8_t)(0xE0 | cp >> 12), b[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3F)), b[2] = (uint8_t)(0x80 | (cp & 0x3F));
        break;
    default:
        b[0] = (uint8_t)(0xF0 | cp >> 18), b[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3F)), b[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3F)),
        b[3] = (uint8_t)(0x80 | (cp & 0x3F));
    }
}

// [lo, hi] within one encoded length, split until every byte position is an independent range.
void split(uint32_t lo, uint32_t hi, std::vector<ByteRangeSeq> &out) {
    for (uint32_t edge : {0x7Fu, 0x7FFu, 0xFFFFu})
        if (lo <= edge && hi > edge) {
            split(lo, edge, out);
            split(edge + 1, hi, out);
            return;
        }
    const int n = encoded_length(lo);
    for (int i = 1; i < n; ++i) {
        const uint32_t m = (1u << (6 * i)) - 1; // the low i continuation bytes
        if ((lo & ~m) != (hi & ~m)) {
            if ((lo & m) != 0) {
                split(lo, lo | m, out);
                split((lo | m) + 1, hi, out);
                return;
            }
            if ((hi & m) != m) {
                split(lo, (hi & ~m) - 1, out);
                split(hi & ~m, hi, out);
                return;
            }
        }
    }
    uint8_t a[4], b[4];
    encode(lo, a);
    encode(hi, b);
    ByteRangeSeq seq;
    for (int i = 0; i < n; ++i) seq.emplace_back(a[i], b[i]);
    out.push_back(std::move(seq));
}

} // namespace

std::vector<CodepointRange> normalize_ranges(std::vector<CodepointRange> ranges) {
    std::vector<CodepointRange> cut;
    for (CodepointRange r : ranges) {
        if (r.lo > r.hi) continue;
        r.hi = std::min(r.hi, kMaxCodepoint);
        if (r.lo > r.hi) continue;
        if (r.lo < kSurrogateLo && r.hi > kSurrogateHi) {
            cut.push_back({r.lo, kSurrogateLo - 1});
            cut.push_back({kSurrogateHi + 1, r.hi});
        } else if (r.lo >= kSurrogateLo && r.hi <= kSurrogateHi) {
            continue;
        } else if (r.lo >= kSurrogateLo && r.lo <= kSurrogateHi) {
            cut.push_back({kSurrogateHi + 1, r.hi});
        } else if (r.hi >= kSurrogateLo && r.hi <= kSurrogateHi) {
            cut.push_back({r.lo, kSurrogateLo - 1});
        } else
            cut.push_back(r);
    }
    std::sort(cut.begin(), cut.end(), [](CodepointRange a, CodepointRange b) { return a.lo < b.lo; });
    std::vector<CodepointRange> out;
    for (CodepointRange r : cut) {
        if (!out.empty() && r.lo <= out.back().hi + 1) out.back().hi = std::max(out.back().hi, r.hi);
        else out.push_back(r);
    }
    return out;
}

std::vector<CodepointRange> complement_ranges(const std::vector<CodepointRange> &normalized) {
    std::vector<CodepointRange> out;
    uint32_t next = 0;
    for (CodepointRange r : normalized) {
        if (r.lo > next) out.push_back({next, r.lo - 1});
        next = r.hi + 1;
    }
    if (next <= kMaxCodepoint) out.push_back({next, kMaxCodepoint});
    return normalize_ranges(out);
}

std::vector<ByteRangeSeq> utf8_sequences(const std::vector<CodepointRange> &normalized) {
    std::vector<ByteRangeSeq> out;
    for (CodepointRange r : normalized) split(r.lo, r.hi, out);
    return out;
}

void append_utf8(std::vector<uint8_t> &out, uint32_t cp) {
    uint8_t b[4];
    encode(cp, b);
    out.insert(out.end(), b, b + encoded_length(cp));
}

} // namespace rf::grammar
