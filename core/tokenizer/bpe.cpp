// Byte-level BPE, as llama.cpp's llm_tokenizer_bpe_session: pre-tokenize into words, then merge
// each word's characters pairwise by merge rank (lowest rank first, leftmost on ties).
#include "symbol_merge.h"
#include "vocab.h"

#include <functional>

namespace rf::tok {

namespace {

void tokenize_word(const Vocab &vocab, const std::string &word, std::vector<int32_t> &out) {
    if (vocab.ignore_merges) {
        const int32_t id = vocab.find(word);
        if (id >= 0) {
            out.push_back(id);
            return;
        }
    }

    std::vector<Symbol> symbols = split_into_chars(word);
    std::string key;
    const auto merge_rank = [&](const Symbol &l, const Symbol &r) -> std::optional<int32_t> {
        key.assign(l.text, l.n);
        key += ' ';
        key.append(r.text, r.n);
        const int32_t rank = vocab.merge(key);
        if (rank < 0) return std::nullopt;
        return rank;
    };
    merge_symbols<int32_t, std::greater<int32_t>>(symbols, merge_rank); // lowest rank first

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
