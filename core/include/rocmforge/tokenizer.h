// Tokenizers read from GGUF metadata, reproducing llama.cpp's tokenization (src/llama-vocab.cpp)
// token for token:
//   tokenizer.ggml.model = "llama": SentencePiece BPE (llm_tokenizer_spm): spaces escaped to U+2581,
//       a space prefix, bigram merges by score, <0xXX> byte fallback.
//   tokenizer.ggml.model = "gpt2":  byte-level BPE (llm_tokenizer_bpe): a pre-tokenizer chosen by
//       tokenizer.ggml.pre, merges by rank from tokenizer.ggml.merges.
//   tokenizer.ggml.model = "bert":  WordPiece (llm_tokenizer_wpm): lowercased words, each prefixed
//       with U+2581, cut into the longest vocabulary entries; add_special adds [CLS] and [SEP].
// Control / user-defined tokens written in the text are matched as single tokens when
// parse_special is set (llama.cpp's tokenizer_st_partition).
//
// Streaming detokenization: generated tokens can end in the middle of a UTF-8 character (byte
// tokens, byte-level BPE). Feed ids to StreamDecoder, which holds back an incomplete trailing
// sequence until the bytes that complete it arrive. Tokenizer is immutable after from_gguf and
// safe to use from several threads.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rf {

namespace gguf {
class File;
}

namespace tok {
struct Vocab;
}

// Token attributes, the same bits as llama.cpp's llama_token_attr.
enum TokenAttr : uint32_t {
    kAttrUndefined = 0,
    kAttrUnknown = 1u << 0,
    kAttrUnused = 1u << 1,
    kAttrNormal = 1u << 2,
    kAttrControl = 1u << 3,
    kAttrUserDefined = 1u << 4,
    kAttrByte = 1u << 5,
    kAttrNormalized = 1u << 6,
    kAttrLstrip = 1u << 7,
    kAttrRstrip = 1u << 8,
    kAttrSingleWord = 1u << 9,
};

class Tokenizer {
public:
    enum class Kind { SentencePiece, BytePairEncoding, WordPiece };
    static constexpr int32_t kNoToken = -1;

    // Reads tokenizer.ggml.* metadata. Throws rf::Error naming the key for missing or malformed
    // metadata and for tokenizer models / pre-tokenizers this implementation does not support.
    static std::unique_ptr<Tokenizer> from_gguf(const gguf::File &file);
    ~Tokenizer();
    Tokenizer(const Tokenizer &) = delete;
    Tokenizer &operator=(const Tokenizer &) = delete;

    // llama_tokenize(text, add_special, parse_special): add_special adds BOS (and EOS) when the
    // vocabulary asks for them (add_bos_default() / add_eos_default()); parse_special matches
    // control tokens written in the text (user-defined tokens are always matched).
    std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

    // llama_token_to_piece(id, lstrip = 0, special): the bytes of one token. Control and unknown
    // tokens give "" unless `special`. Throws rf::Error for ids outside [0, n_vocab()).
    std::string token_to_piece(int32_t id, bool special) const;
    // The piece printed while generating (special = false); may be a partial UTF-8 character.
    std::string decode_token(int32_t id) const { return token_to_piece(id, false); }

    // llama_detokenize(ids, remove_special, unparse_special): concatenated pieces; for
    // SentencePiece the first piece loses one leading space (the prefix encode added) unless the
    // sequence starts with BOS; remove_special drops a leading BOS / trailing EOS when the vocab
    // adds them; byte-level vocabularies with clean_spaces apply llama.cpp's clean-up of " ." " ,"
    // " 's" etc. (clean_spaces(): true for gpt-2, llama3, default; false for qwen2, deepseek).
    // decode(encode(x, false, ...)) == x for SentencePiece and whenever no clean-up applies.
    std::string decode(const std::vector<int32_t> &ids, bool remove_special = false,
                       bool unparse_special = false) const;

    int n_vocab() const;
    Kind kind() const;
    const std::string &pre_tokenizer() const; // tokenizer.ggml.pre ("" for SentencePiece)

    int32_t bos() const; // kNoToken when the vocab has none
    int32_t eos() const;
    int32_t eot() const;
    int32_t eom() const;
    int32_t unk() const;
    int32_t pad() const;
    int32_t sep() const;
    int32_t nl() const; // the newline token
    bool add_bos_default() const;
    bool add_eos_default() const;
    bool add_space_prefix() const;
    bool clean_spaces() const;

    bool is_eog(int32_t id) const; // end of generation: EOS, EOT, EOM, <|im_end|>, ...
    const std::vector<int32_t> &eog_ids() const;
    bool is_control(int32_t id) const;

    const std::string &token_text(int32_t id) const; // raw vocabulary text
    float token_score(int32_t id) const;
    uint32_t token_attr(int32_t id) const; // TokenAttr bits
    int32_t find_token(std::string_view text) const; // exact vocabulary text, or kNoToken

private:
    explicit Tokenizer(std::unique_ptr<tok::Vocab> vocab);
    std::unique_ptr<tok::Vocab> vocab_;
};

// Turns a stream of generated ids into text without splitting UTF-8 characters.
class StreamDecoder {
public:
    explicit StreamDecoder(const Tokenizer &tokenizer, bool special = false)
        : tokenizer_(tokenizer), special_(special) {}
    // Appends the token's piece and returns every complete character now available.
    std::string push(int32_t id);
    // Returns what is still held back (an incomplete sequence at the end of the stream).
    std::string flush();

private:
    const Tokenizer &tokenizer_;
    bool special_;
    std::string pending_;
};

} // namespace rf
