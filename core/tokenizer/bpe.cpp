// Byte-level BPE, as llama.cpp's llm_tokenizer_bpe_session: pre-tokenize into words, then merge
// each word's characters pairwise by merge rank (lowest rank first, leftmost on ties).
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
    int rank;
    size_t size;
};

struct BigramOrder {
    bool operator()(const Bigram &l, const Bigram &r) const {
        return l.rank > r.rank || (l.rank == r.rank && l.left > r.left);
    }
};

void tokenize_word(const Vocab &vocab, const std::string &word, std::vector<int32_t> &out) {
    if (vocab.ignore_merges) {
        const int32_t id = vocab.find(word);
        if (id >= 0) {
            out.push_back(id);
            return;
        }
    }

    std::vector<Symbol> symbols;
    for (size_t offs = 0; offs < word.size();) {
        const size_t len = std::min(utf8_len(word[offs]), word.size() - offs);
        const int index = static_cast<int>(symbols.size());
        symbols.push_back({index - 1, offs + len == word.size() ? -1 : index + 1, word.data() + offs,
                           len});
        offs += len;
    }

    std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
    std::string key;
    auto try_add = [&](int left, int right) {
        if (left == -1 || right == -1) return;
        key.assign(symbols[left].text, symbols[left].n);
        key += ' ';
        key.append(symbols[right].text, symbols[right].n);
        const int32_t rank = vocab.merge(key);
        if (rank < 0) return;
        queue.push({left, right, rank, symbols[left].n + symbols[right].n});
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

    for (const Symbol &s : symbols) {
        if (s.n == 0) continue;
        const std::string_view piece(s.text, s.n);
        const int32_t id = vocab.find(piece);
        if (id >= 0) {
            out.push_back(id);
            continue;
        }
        // llama.cpp looks each raw byte of the (byte-encoded) piece up as a one-byte token and
        // silently drops the bytes that are not tokens.
        for (char c : piece) {
            const int32_t byte_id = vocab.find(std::string_view(&c, 1));
            if (byte_id >= 0) out.push_back(byte_id);
        }
    }
}

} // namespace

void bpe_tokenize(const Vocab &vocab, std::string_view text, std::vector<int32_t> &out) {
    // Words repeat a lot in long texts; their tokens depend on the word alone.
    std::unordered_map<std::string, std::vector<int32_t>> cache;
    std::vector<int32_t> ids;
    for (const std::string &word : vocab.pre_tokenizer->split(text)) {
        auto it = cache.find(word);
        if (it == cache.end()) {
            ids.clear();
            tokenize_word(vocab, word, ids);
            if (cache.size() < 65536) it = cache.emplace(word, ids).first;
            else {
                out.insert(out.end(), ids.begin(), ids.end());
                continue;
            }
        }
        out.insert(out.end(), it->second.begin(), it->second.end());
    }
}

} // namespace rf::tok
