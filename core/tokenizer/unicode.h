// Unicode helpers for the tokenizers: UTF-8 <-> code points, category flags (same classes as
// llama.cpp's unicode_cpt_flags) and GPT-2's byte <-> printable-character mapping.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rf::tok {

// One category per code point, following llama.cpp's gen-unicode-data.py (Cn -> UNDEFINED).
enum class UnicodeCategory : uint8_t {
    UNDEFINED = 0, NUMBER = 1, LETTER = 2, SEPARATOR = 3, MARK = 4, PUNCTUATION = 5, SYMBOL = 6,
    CONTROL = 7,
};

struct CptFlags {
    UnicodeCategory category = UnicodeCategory::UNDEFINED;
    bool whitespace = false;
    // llama.cpp's flags.as_uint() != 0: true for every code point in range (UNDEFINED is a flag
    // there too); false only for the "outside the text" sentinel.
    bool in_range = false;
    bool is_letter() const { return category == UnicodeCategory::LETTER; }
    bool is_number() const { return category == UnicodeCategory::NUMBER; }
};

constexpr uint32_t kMaxCodepoint = 0x10FFFF;
constexpr uint32_t kReplacementChar = 0xFFFD;

CptFlags cpt_flags(uint32_t cpt);
bool is_unicode_whitespace(uint32_t cpt);

// Byte length of a UTF-8 sequence from its first byte (llama.cpp's unicode_len_utf8: continuation
// and invalid lead bytes count as 1).
inline size_t utf8_len(char first) {
    static constexpr uint8_t lookup[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return lookup[static_cast<uint8_t>(first) >> 4];
}

// Decodes like llama.cpp's unicode_cpts_from_utf8: an invalid sequence yields U+FFFD and skips
// one byte.
std::vector<uint32_t> utf8_to_cpts(std::string_view utf8);
void append_utf8(std::string &out, uint32_t cpt);
std::string cpt_to_utf8(uint32_t cpt);

// GPT-2 byte-level BPE mapping: every byte has a printable stand-in character.
const std::string &byte_to_unicode(uint8_t byte);
// Inverse; returns -1 when `utf8` is not one of the 256 stand-ins.
int unicode_to_byte(std::string_view utf8);

// Number of bytes at the end of `s` that form an incomplete (but so far valid) UTF-8 sequence.
size_t incomplete_utf8_tail(std::string_view s);

// llama.cpp's unicode_cpts_normalize_nfd for one code point (the first code point of its NFD
// decomposition) and unicode_tolower (the first code point of its lowercase): WordPiece's
// normalisation (unicode_wpm_tables.cpp).
uint32_t nfd_first(uint32_t cpt);
uint32_t to_lower(uint32_t cpt);

extern const char *const kUnicodeTablesVersion;
extern const uint32_t kCategoryRuns[];
extern const size_t kCategoryRunCount;
extern const uint32_t kNfdFirst[][3];
extern const size_t kNfdFirstCount;
extern const uint32_t kLowerFirst[][2];
extern const size_t kLowerFirstCount;

} // namespace rf::tok
