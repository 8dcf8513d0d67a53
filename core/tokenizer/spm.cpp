// SentencePiece BPE, as llama.cpp's llm_tokenizer_spm_session: start from UTF-8 characters and
// repeatedly merge the adjacent pair whose concatenation is the highest-scoring token.
#include "rocmforge/error.h"
#include "unicode.h"
#include "vocab.h"

#include <queue>

namespace rf::tok {

namespace {

struct Symbol {
    int prev, next;
    const char *text;
    size_t n;
};

struct Bigram {
    int left, right;
    float score;
    size_t size;
};

// Highest score first; among equal scores the leftmost pair.
struct BigramOrder {
    bool operator()(const Bigram &l, const Bigram &r) const {
        return l.score < r.score || (l.score == r.score && l.left > r.left);
    }
};

void tokenize_segment(const Vocab &vocab, std::string_view text, std::vector<int32_t> &out) {
    std::vector<Symbol> symbols;
    symbols.reserve(text.size());
    for (size_t offs = 0; offs < text.size();) {
        const size_t len = std::min(utf8_len(text[offs]), text.size() - offs);
        const int index = static_cast<int>(symbols.size());
        symbols.push_back({index - 1, offs + len == text.size() ? -1 : index + 1, text.data() + offs,
                           len});
        offs += len;
    }

    std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
    auto try_add = [&](int left, int right) {
        if (left == -1 || right == -1) return;
        const std::string_view pair(symbols[left].text, symbols[left].n + symbols[right].n);
        const int32_t id = vocab.find(pair);
        if (id < 0) return;
        queue.push({left, right, vocab.tokens[id].score, pair.size()});
    };
    for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

    while (!queue.empty()) {
        const Bigram b = queue.top();
        queue.pop();
        Symbol &left = symbols[b.left];
        Symbol &right = symbols[b.right];
        // Skip pairs that a previous merge changed.
        if (left.n == 0 || right.n == 0 || left.n + right.n != b.size) continue;
        left.n += right.n;
        right.n = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = b.left;
        try_add(left.prev, b.left);
        try_add(b.left, left.next);
    }

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
