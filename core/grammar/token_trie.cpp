// The vocabulary as a trie of the bytes each token prints, so a grammar state's allowed tokens
// come from one walk that leaves a subtree at its first refused byte.
#include <algorithm>
#include <numeric>

#include "rocmforge/grammar.h"
#include "rocmforge/tokenizer.h"

namespace rf::grammar {

TokenTrie::TokenTrie(const Tokenizer &tok) {
    pieces_.resize((size_t)tok.n_vocab());
    for (int32_t id = 0; id < tok.n_vocab(); ++id) {
        if (tok.is_eog(id)) continue; // allowed only where the grammar may end
        pieces_[(size_t)id] = tok.decode_token(id); // control tokens print "" and stay out
    }
    eog_ = tok.eog_ids();
    build();
}

TokenTrie::TokenTrie(const std::vector<std::string> &pieces, std::vector<int32_t> eog) : pieces_(pieces), eog_(std::move(eog)) {
    for (int32_t t : eog_) pieces_.at((size_t)t).clear();
    build();
}

// Tokens sorted by bytes: each node's tokens and children are then contiguous runs, built in one
// pass (children of a node are laid out together so a walk reads them in order).
void TokenTrie::build() {
    std::vector<int32_t> order;
    for (int32_t id = 0; id < (int32_t)pieces_.size(); ++id)
        if (!pieces_[(size_t)id].empty()) order.push_back(id);
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        return pieces_[(size_t)a] < pieces_[(size_t)b] || (pieces_[(size_t)a] == pieces_[(size_t)b] && a < b);
    });
    nodes_.assign(1, Node{});
    // Breadth first: the tokens order[lo, hi) share their first `depth` bytes and end at `node`.
    struct Span {
        uint32_t node;
        size_t lo, hi, depth;
    };
    std::vector<Span> queue{{0, 0, order.size(), 0}};
    for (size_t q = 0; q < queue.size(); ++q) {
        const Span s = queue[q];
        size_t i = s.lo;
        Node &n = nodes_[s.node];
        n.token_begin = (uint32_t)tokens_.size();
        while (i < s.hi && pieces_[(size_t)order[i]].size() == s.depth) tokens_.push_back(order[i++]);
        nodes_[s.node].token_end = (uint32_t)tokens_.size();
        nodes_[s.node].child_begin = (uint32_t)child_bytes_.size();
        while (i < s.hi) {
            const uint8_t b = (uint8_t)pieces_[(size_t)order[i]][s.depth];
            size_t j = i;
            while (j < s.hi && (uint8_t)pieces_[(size_t)order[j]][s.depth] == b) ++j;
            const uint32_t child = (uint32_t)nodes_.size();
            nodes_.push_back(Node{});
            child_bytes_.push_back(b);
            child_nodes_.push_back(child);
            queue.push_back({child, i, j, s.depth + 1});
            i = j;
        }
        nodes_[s.node].child_end = (uint32_t)child_bytes_.size();
    }
}

} // namespace rf::grammar
