// The vocabulary as llama.cpp's llama_vocab::impl sees it after load(): tokens, attributes,
// special ids, flags and BPE merge ranks, read from GGUF metadata (vocab_load.cpp).
#pragma once
#include "pretokenize.h"
#include "rocmforge/tokenizer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace rf::gguf {
class File;
}

namespace rf::tok {

// Transparent hashing so lookups by string_view do not allocate.
struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenIndex = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

struct TokenData {
    std::string text;
    float score = 0.0f;
    uint32_t attr = kAttrNormal;
};

struct Vocab {
    Tokenizer::Kind kind = Tokenizer::Kind::SentencePiece;
    std::string model; // tokenizer.ggml.model
    std::string pre;   // tokenizer.ggml.pre

    std::vector<TokenData> tokens;
    TokenIndex token_to_id;
    TokenIndex merge_rank; // "left right" -> rank (BPE)
    std::unique_ptr<PreTokenizer> pre_tokenizer; // BPE

    int32_t bos = 1, eos = 2, eot = -1, eom = -1, unk = 0, sep = -1, pad = -1, mask = -1;
    int32_t fim_pre = -1, fim_suf = -1, fim_mid = -1, fim_pad = -1, fim_rep = -1, fim_sep = -1;
    int32_t linefeed = -1;

    bool add_space_prefix = false;
    bool add_bos = false;
    bool add_eos = false;
    bool add_sep = false;
    bool ignore_merges = false;
    bool clean_spaces = false;
    size_t max_token_len = 0; // bytes of the longest token text (WordPiece's longest match)

    std::vector<int32_t> eog;            // sorted
    std::vector<int32_t> special_tokens; // control/user-defined/unknown, longest text first
    std::vector<std::string> pieces;     // token_to_piece(id, special = true)
    // SentencePiece: every pair of adjacent characters inside some token (see spm.cpp).
    std::unordered_set<uint64_t> spm_char_pairs;

    int32_t find(std::string_view text) const {
        auto it = token_to_id.find(text);
        return it == token_to_id.end() ? -1 : it->second;
    }
    int32_t merge(std::string_view key) const {
        auto it = merge_rank.find(key);
        return it == merge_rank.end() ? -1 : it->second;
    }
    bool valid(int32_t id) const { return id >= 0 && id < static_cast<int32_t>(tokens.size()); }
    // llama_vocab::byte_to_token for SentencePiece: <0xXX>, else the byte itself; -1 if neither.
    int32_t spm_byte_token(uint8_t byte) const;
    // The uncached llama_vocab::impl::token_to_piece(id, lstrip = 0, special).
    std::string compute_piece(int32_t id, bool special) const;
};

std::unique_ptr<Vocab> load_vocab(const gguf::File &file);

// Packs one UTF-8 character (1-4 bytes) big-endian; the lead byte makes the value unique.
inline uint32_t pack_char(const char *p, size_t n) {
    uint32_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
    return v;
}
void build_spm_char_pairs(Vocab &vocab);

// Algorithms (spm.cpp, bpe.cpp, wpm.cpp): append the tokens of one raw text fragment to `out`.
void spm_tokenize(const Vocab &vocab, std::string_view text, std::vector<int32_t> &out);
void bpe_tokenize(const Vocab &vocab, std::string_view text, std::vector<int32_t> &out);
void wpm_tokenize(const Vocab &vocab, std::string_view text, std::vector<int32_t> &out);

} // namespace rf::tok
