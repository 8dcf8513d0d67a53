// BPE pre-tokenization: splits text into words the way llama.cpp's unicode_regex_split does for
// the regex list of a `tokenizer.ggml.pre` type, then maps each word's bytes to GPT-2's printable
// stand-ins.
#pragma once
#include "regex.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rf::tok {

// Vocabulary flags llama.cpp derives from the pre-tokenizer name (llama_vocab::impl::load).
struct PreTokenizerConfig {
    std::string name;                // canonical name, for messages
    std::vector<std::string> regexes; // applied in order, each one splitting the previous pieces
    bool clean_spaces = true;        // detokenize's clean_up_tokenization_spaces
    bool ignore_merges = false;      // a word that is a token is not merged further
    bool add_bos = false;            // default when tokenizer.ggml.add_bos_token is absent
    bool bos_disabled = false;       // chatglm: no default BOS id
};

// Looks up `tokenizer.ggml.pre` (empty = llama.cpp's "default"). Throws rf::Error for names this
// implementation does not know.
PreTokenizerConfig pre_tokenizer_config(const std::string &pre);

class PreTokenizer {
public:
    explicit PreTokenizer(const std::vector<std::string> &regexes);
    ~PreTokenizer();
    // Words in order, each byte-encoded with byte_to_unicode().
    std::vector<std::string> split(std::string_view text) const;

private:
    struct Step {
        enum Kind { Gpt2, Llama3, Generic } kind = Generic;
        bool collapsed = false;
        std::unique_ptr<Regex> regex;
    };
    std::vector<Step> steps_;
    bool need_collapsed_ = false;
};

// The hand-written splitters llama.cpp uses for these two exact patterns. `cpts` is the whole
// text; `lengths` are the current pieces (in code points), replaced by the finer split.
std::vector<size_t> split_gpt2(const std::vector<uint32_t> &cpts,
                               const std::vector<size_t> &lengths);
std::vector<size_t> split_llama3(const std::vector<uint32_t> &cpts,
                                 const std::vector<size_t> &lengths);

// Exposed for tests: llama.cpp's collapsed text (one stand-in per non-ASCII code point) and the
// std::regex-style split of `lengths` pieces by `re` over `text`.
std::vector<uint32_t> collapse_codepoints(const std::vector<uint32_t> &cpts);
std::vector<size_t> split_regex(const Regex &re, const std::vector<uint32_t> &text,
                                const std::vector<size_t> &lengths);

} // namespace rf::tok
