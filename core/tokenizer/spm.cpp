// SentencePiece BPE, as llama.cpp's llm_tokenizer_spm_session: start from UTF-8 characters and
// repeatedly merge the adjacent pair whose concatenation is the highest-scoring token.
#include "rocmforge/error.h"
#include "symbol_merge.h"
#include "unicode.h"
#include "vocab.h"

#include <functional>

namespace rf::tok {

namespace {

void tokenize_segment(const Vocab &vocab, std::string_view text, std::vector<int32_t> &out) {
    std::vector<Symbol> symbols = split_into_chars(text);
    const auto token_score = [&](const Symbol &l, const Symbol &r) -> std::optional<float> {
        const int32_t id = vocab.find(std::string_view(l.text, l.n + r.n));
        if (id < 0) return std::nullopt;
        return vocab.tokens[id].score;
    };
    merge_symbols<float, std::less<float>>(symbols, token_score); // highest score first

    // Every merged symbol is a token; a single character that is not becomes byte tokens.
    // (llama.cpp's rev_merge re-segmentation never triggers for the same reason.)
    for (int i = symbols.empty() ? -1 : 0; i != -1; i = symbols[i].next) {
        const Symbol &s = symbols[i];
        const std::string_view piece(s.text, s.n);
        const int32_t id = vocab.find(piece);
        if (id >= 0) {
            out.push_back(id);
            continue;
        }
        for (char c : piece) {
            int32_t byte_id = vocab.spm_byte_token(static_cast<uint8_t>(c));
            if (byte_id < 0) byte_id = vocab.unk; // llama.cpp would throw here
            if (byte_id < 0) {
                throw rf::Error("tokenizer: no token for byte " +
                                std::to_string(static_cast<uint8_t>(c)) +
                                " and no unknown token in the vocabulary");
            }
            out.push_back(byte_id);
        }
    }
}

} // namespace

void build_spm_char_pairs(Vocab &vocab) {
    for (const TokenData &t : vocab.tokens) {
        const std::string &s = t.text;
        size_t prev = 0, prev_len = 0;
        for (size_t offs = 0; offs < s.size();) {
            const size_t len = std::min(utf8_len(s[offs]), s.size() - offs);
            if (offs > 0) {
                vocab.spm_char_pairs.insert(
                    (uint64_t(pack_char(s.data() + prev, prev_len)) << 32) |
                    pack_char(s.data() + offs, len));
            }
            prev = offs;
            prev_len = len;
            offs += len;
        }
    }
}

// Long texts are cut where two adjacent characters never appear next to each other inside any
// token: no merge can cross such a point, and merges on either side happen in the same relative
// order as in one big queue, so the result is identical to llama.cpp's single pass (which is
// O(n log n) on one huge heap and slow on megabyte inputs).
void spm_tokenize(const Vocab &vocab, std::string_view text, std::vector<int32_t> &out) {
    size_t seg_start = 0, prev = 0, prev_len = 0;
    for (size_t offs = 0; offs < text.size();) {
        const size_t len = std::min(utf8_len(text[offs]), text.size() - offs);
        if (offs > 0) {
            const uint64_t pair = (uint64_t(pack_char(text.data() + prev, prev_len)) << 32) |
                                  pack_char(text.data() + offs, len);
            if (!vocab.spm_char_pairs.count(pair)) {
                tokenize_segment(vocab, text.substr(seg_start, offs - seg_start), out);
                seg_start = offs;
            }
        }
        prev = offs;
        prev_len = len;
        offs += len;
    }
    if (seg_start < text.size()) tokenize_segment(vocab, text.substr(seg_start), out);
}

} // namespace rf::tok
