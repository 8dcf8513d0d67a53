// Code point ranges as UTF-8 byte sequences: a character class of the grammar becomes
// alternatives of byte ranges, so the matcher works byte by byte.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace rf::grammar {

struct CodepointRange {
    uint32_t lo, hi; // inclusive
};

// One alternative: a byte range per byte of the encoding.
using ByteRangeSeq = std::vector<std::pair<uint8_t, uint8_t>>;

// Sorted, merged ranges without surrogates (D800-DFFF), which UTF-8 cannot encode.
std::vector<CodepointRange> normalize_ranges(std::vector<CodepointRange> ranges);
// Everything in [0, 10FFFF] except surrogates and the given ranges (normalized).
std::vector<CodepointRange> complement_ranges(const std::vector<CodepointRange> &normalized);
// The encodings of every code point of the normalized ranges, as byte-range sequences (the
// same split UTF-8 regex compilers use: each sequence is a product of byte ranges).
std::vector<ByteRangeSeq> utf8_sequences(const std::vector<CodepointRange> &normalized);

// Appends the UTF-8 encoding of cp.
void append_utf8(std::vector<uint8_t> &out, uint32_t cp);

} // namespace rf::grammar
