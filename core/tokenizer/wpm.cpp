// WordPiece, as llama.cpp's llm_tokenizer_wpm_session: normalise (first code point of the NFD
// decomposition, lowercased), split into words at whitespace and around punctuation, ASCII
// symbols and CJK ideographs, then cut each word, prefixed with U+2581, into the longest
// vocabulary entries from its start; a word with a position no entry matches is one [UNK].
#include "unicode.h"
#include "vocab.h"

#include <algorithm>

namespace rf::tok {

namespace {

// The CJK ranges of llama.cpp (and of HF's BERT tokenizer, 0x2B920 included as it has it).
bool is_chinese_char(uint32_t c) {
    return (c >= 0x04E00 && c <= 0x09FFF) || (c >= 0x03400 && c <= 0x04DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0x0F900 && c <= 0x0FAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

std::vector<std::string> split_words(std::string_view text) {
    std::vector<std::string> words(1);
    for (const uint32_t raw : utf8_to_cpts(text)) {
        const uint32_t cpt = nfd_first(raw);
        const CptFlags flags = cpt_flags(cpt);
        if (flags.whitespace) {
            if (!words.back().empty()) words.emplace_back();
            continue;
        }
        if (cpt == 0 || cpt == kReplacementChar || flags.category == UnicodeCategory::CONTROL) continue;
        const std::string s = cpt_to_utf8(to_lower(cpt));
        const bool alone = flags.category == UnicodeCategory::PUNCTUATION ||
                           (cpt < 0x7F && flags.category == UnicodeCategory::SYMBOL) || is_chinese_char(cpt);
        if (alone) {
            if (!words.back().empty()) words.emplace_back();
            words.back() = s;
            words.emplace_back();
        } else {
            words.back() += s;
        }
    }
    if (words.back().empty()) words.pop_back();
    return words;
}

} // namespace

void wpm_tokenize(const Vocab &vocab, std::string_view text, std::vector<int32_t> &out) {
    for (const std::string &w : split_words(text)) {
        const std::string word = "\xE2\x96\x81" + w;
        const size_t n = word.size(), first = out.size();
        // Byte positions, as llama.cpp: the longest entry starting at i, then on after it.
        for (size_t i = 0; i < n;) {
            int32_t id = -1;
            size_t j = std::min(n, i + vocab.max_token_len);
            for (; j > i; --j) {
                id = vocab.find(std::string_view(word).substr(i, j - i));
                if (id >= 0) break;
            }
            if (id < 0) {
                out.resize(first);
                break;
            }
            out.push_back(id);
            i = j;
        }
        if (out.size() == first) out.push_back(vocab.unk);
    }
}

} // namespace rf::tok
