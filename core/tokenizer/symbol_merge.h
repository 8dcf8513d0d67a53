// The merge loop shared by the SentencePiece and byte-level BPE tokenizers (llama.cpp's
// llm_tokenizer_spm_session / llm_tokenizer_bpe_session): start from one symbol per UTF-8
// character and repeatedly merge the best adjacent pair; the two differ only in how a pair is
// ranked (merge rank vs token score).
#pragma once
#include <algorithm>
#include <optional>
#include <queue>
#include <string_view>
#include <vector>

#include "unicode.h"

namespace rf::tok {

// A run of whole characters of the text, linked to its neighbours (n == 0: merged away).
struct Symbol {
    int prev, next;
    const char *text;
    size_t n;
};

// One symbol per UTF-8 character (a truncated last character keeps its remaining bytes).
inline std::vector<Symbol> split_into_chars(std::string_view text) {
    std::vector<Symbol> symbols;
    symbols.reserve(text.size());
    for (size_t offs = 0; offs < text.size();) {
        const size_t len = std::min(utf8_len(text[offs]), text.size() - offs);
        const int index = static_cast<int>(symbols.size());
        symbols.push_back({index - 1, offs + len == text.size() ? -1 : index + 1, text.data() + offs,
                           len});
        offs += len;
    }
    return symbols;
}

// Merges adjacent symbols until no pair ranks. rank_pair(left, right) returns the pair's rank
// (std::nullopt: the pair never merges); the pair whose rank is not Worse than any other goes
// first, the leftmost among equal ranks.
template <class Rank, class Worse, class RankPair>
void merge_symbols(std::vector<Symbol> &symbols, RankPair rank_pair) {
    struct Bigram {
        int left, right;
        Rank rank;
        size_t size;
    };
    struct BigramOrder {
        bool operator()(const Bigram &l, const Bigram &r) const {
            return Worse{}(l.rank, r.rank) || (l.rank == r.rank && l.left > r.left);
        }
    };
    std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
    auto try_add = [&](int left, int right) {
        if (left == -1 || right == -1) return;
        const std::optional<Rank> rank = rank_pair(symbols[left], symbols[right]);
        if (!rank) return;
        queue.push({left, right, *rank, symbols[left].n + symbols[right].n});
    };
    for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

    while (!queue.empty()) {
        const Bigram b = queue.top();
        queue.pop();
        Symbol &left = symbols[b.left];
        Symbol &right = symbols[b.right];
        // Symbols only grow by absorbing their right neighbour, so an unchanged total size
        // means an unchanged pair (llama.cpp compares the texts).
        if (left.n == 0 || right.n == 0 || left.n + right.n != b.size) continue;
        left.n += right.n;
        right.n = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = b.left;
        try_add(left.prev, b.left);
        try_add(b.left, left.next);
    }
}

} // namespace rf::tok
