// Reads the vocabulary from GGUF metadata following llama_vocab::impl::load step by step.
#include "rocmforge/error.h"
#include "rocmforge/escape.h"
#include "rocmforge/gguf.h"
#include "unicode.h"
#include "vocab.h"

#include <algorithm>
#include <cstdlib>

namespace rf::tok {

namespace {

const gguf::Value *find_array(const gguf::File &f, const char *key, gguf::ValueType elem,
                              bool required) {
    const gguf::Value *v = f.find(key);
    if (!v) {
        if (required) throw rf::Error(f.path() + ": tokenizer metadata '" + key + "' is missing");
        return nullptr;
    }
    if (!v->is_array() || v->elem_type != elem) {
        throw rf::Error(f.path() + ": tokenizer metadata '" + key + "' must be an array of " +
                        gguf::value_type_name(elem) + ", found " + gguf::value_type_name(v->type));
    }
    return v;
}

// An optional integer key holding a token id; `id` keeps its default when absent or invalid.
void read_token_id(const gguf::File &f, const char *key, int32_t &id, size_t n_tokens) {
    if (id >= 0 && static_cast<size_t>(id) >= n_tokens) id = -1; // default out of range
    const gguf::Value *v = f.find(key);
    if (!v) return;
    if (!v->is_integer()) {
        throw rf::Error(f.path() + ": tokenizer metadata '" + key + "' must be an integer");
    }
    const int64_t value = v->as_int();
    if (value >= 0 && static_cast<uint64_t>(value) < n_tokens) id = static_cast<int32_t>(value);
}

void read_bool(const gguf::File &f, const char *key, bool &out) {
    const gguf::Value *v = f.find(key);
    if (!v) return;
    if (v->type != gguf::ValueType::BOOL && !v->is_integer()) {
        throw rf::Error(f.path() + ": tokenizer metadata '" + key + "' must be a bool");
    }
    out = v->as_int() != 0;
}

uint32_t attr_from_type(int64_t type) {
    switch (type) { // LLAMA_TOKEN_TYPE_* -> LLAMA_TOKEN_ATTR_*
    case 1: return kAttrNormal;
    case 2: return kAttrUnknown;
    case 3: return kAttrControl;
    case 4: return kAttrUserDefined;
    case 5: return kAttrUnused;
    case 6: return kAttrByte;
    default: return kAttrUndefined;
    }
}

bool one_of(const std::string &s, std::initializer_list<const char *> list) {
    for (const char *x : list) {
        if (s == x) return true;
    }
    return false;
}

void read_tokens(const gguf::File &f, Vocab &v) {
    const gguf::Value *list = find_array(f, "tokenizer.ggml.tokens", gguf::ValueType::STRING, true);
    const size_t n = list->arr.size();
    if (n == 0 || n > static_cast<size_t>(INT32_MAX)) {
        throw rf::Error(f.path() + ": tokenizer.ggml.tokens has " + std::to_string(n) + " tokens");
    }

    const gguf::Value *scores = f.find("tokenizer.ggml.scores");
    if (scores) {
        if (!scores->is_array() || (scores->elem_type != gguf::ValueType::FLOAT32 &&
                                    scores->elem_type != gguf::ValueType::INT32)) {
            throw rf::Error(f.path() + ": tokenizer.ggml.scores must be an array of float32 or int32");
        }
        if (scores->arr.size() < n) {
            throw rf::Error(f.path() + ": tokenizer.ggml.scores has " +
                            std::to_string(scores->arr.size()) + " entries for " +
                            std::to_string(n) + " tokens");
        }
    }
    const gguf::Value *types =
        find_array(f, "tokenizer.ggml.token_type", gguf::ValueType::INT32, false);
    if (types && types->arr.size() < n) {
        throw rf::Error(f.path() + ": tokenizer.ggml.token_type has " +
                        std::to_string(types->arr.size()) + " entries for " + std::to_string(n) +
                        " tokens");
    }

    v.tokens.resize(n);
    v.token_to_id.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        TokenData &t = v.tokens[i];
        t.text = list->arr[i].s;
        if (t.text.empty()) t.text = "[EMPTY_" + std::to_string(i) + "]";
        if (!v.token_to_id.emplace(t.text, static_cast<int32_t>(i)).second) {
            throw rf::Error(f.path() + ": duplicate token in tokenizer.ggml.tokens: " + rf::quote_name(t.text) +
                            " has ids " + std::to_string(v.token_to_id.find(t.text)->second) +
                            " and " + std::to_string(i));
        }
        if (scores) {
            const gguf::Value &s = scores->arr[i];
            t.score = scores->elem_type == gguf::ValueType::FLOAT32 ? static_cast<float>(s.f)
                                                                      : static_cast<float>(s.i);
        }
        t.attr = types ? attr_from_type(types->arr[i].as_int()) : kAttrNormal;
    }
}

void read_merges(const gguf::File &f, Vocab &v) {
    const gguf::Value *merges =
        find_array(f, "tokenizer.ggml.merges", gguf::ValueType::STRING, true);
    v.merge_rank.reserve(merges->arr.size());
    for (size_t i = 0; i < merges->arr.size(); ++i) {
        const std::string &word = merges->arr[i].s;
        // llama.cpp splits at the first space after the first byte; a line without one becomes
        // the pair ("", "").
        const size_t pos = word.find(' ', 1);
        std::string key = pos == std::string::npos ? std::string(" ") : word;
        v.merge_rank.emplace(std::move(key), static_cast<int32_t>(i));
    }
}

// EOT/EOM/FIM tokens recognised by their text when the metadata does not name them; the token
// becomes a control token (llama.cpp scans its hash map; we scan ids in order).
void detect_special_by_text(Vocab &v) {
    struct Rule {
        int32_t *id;
        std::initializer_list<const char *> texts;
    };
    const Rule rules[] = {
        {&v.eot, {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
                  "<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>",
                  "<end_of_utterance>"}},
        {&v.eom, {"<|eom_id|>"}},
        {&v.fim_pre, {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>",
                      "▁<PRE>", "<|code_prefix|>", "<|prefix|>"}},
        {&v.fim_suf, {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>",
                      "▁<SUF>", "<|code_suffix|>", "<|suffix|>"}},
        {&v.fim_mid, {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>",
                      "▁<MID>", "<|code_middle|>", "<|middle|>"}},
        {&v.fim_pad, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}},
        {&v.fim_rep, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
        {&v.fim_sep, {"<|file_sep|>"}},
    };
    for (size_t id = 0; id < v.tokens.size(); ++id) {
        TokenData &t = v.tokens[id];
        for (const Rule &r : rules) {
            if (*r.id == -1 && one_of(t.text, r.texts)) {
                *r.id = static_cast<int32_t>(id);
                t.attr |= kAttrControl;
            }
        }
    }
    // Control tokens named "...unused..." are unused.
    for (TokenData &t : v.tokens) {
        if ((t.attr & kAttrControl) && t.text.find("unused") != std::string::npos) {
            t.attr |= kAttrUnused;
        }
    }
}

void build_eog(Vocab &v) {
    std::vector<int32_t> eog;
    for (int32_t id : {v.fim_pad, v.fim_rep, v.fim_sep}) {
        if (id >= 0) eog.push_back(id);
    }
    for (size_t id = 0; id < v.tokens.size(); ++id) {
        TokenData &t = v.tokens[id];
        if (one_of(t.text, {"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>",
                            "<|flush|>", "<|calls|>", "<end_of_turn>", "<|endoftext|>", "</s>",
                            "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
                            "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
                            "<｜end▁of▁sentence｜>", "[e~["})) {
            eog.push_back(static_cast<int32_t>(id));
            t.attr |= kAttrControl;
        }
    }
    // gpt-oss: these are always rendered.
    for (TokenData &t : v.tokens) {
        if (one_of(t.text, {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"})) {
            t.attr = kAttrUserDefined;
        }
    }
    for (int32_t id : {v.eos, v.eot, v.eom}) {
        if (id >= 0) eog.push_back(id);
    }
    std::sort(eog.begin(), eog.end());
    eog.erase(std::unique(eog.begin(), eog.end()), eog.end());

    auto find_text = [&](std::initializer_list<const char *> texts) {
        for (int32_t id : eog) {
            if (one_of(v.tokens[id].text, texts)) return id;
        }
        return -1;
    };
    // o200k_harmony / solar-open: <|end|> is not end of generation when <|return|>/<|call|> are.
    const int32_t end_id = find_text({"<|end|>"});
    const bool has_return = find_text({"<|return|>"}) >= 0;
    const bool has_call = find_text({"<|call|>", "<|calls|>"}) >= 0;
    const bool has_flush = find_text({"<|flush|>"}) >= 0;
    if (end_id >= 0 && ((has_return && has_call) || (has_call && has_flush))) {
        eog.erase(std::find(eog.begin(), eog.end(), end_id));
        v.tokens[end_id].attr = kAttrUserDefined;
    }
    // gemma4 / paddleocr: </s> is not end of generation next to <|tool_response>.
    const int32_t s_id = find_text({"</s>"});
    if (s_id >= 0 && find_text({"<|tool_response>"}) >= 0) {
        eog.erase(std::find(eog.begin(), eog.end(), s_id));
        v.tokens[s_id].attr = kAttrNormal;
    }
    v.eog = std::move(eog);
}

} // namespace

std::unique_ptr<Vocab> load_vocab(const gguf::File &f) {
    auto v = std::make_unique<Vocab>();
    v->model = f.get_string("tokenizer.ggml.model", "");
    if (v->model.empty()) {
        throw rf::Error(f.path() + ": tokenizer metadata 'tokenizer.ggml.model' is missing");
    }

    PreTokenizerConfig pre;
    if (v->model == "llama") {
        v->kind = Tokenizer::Kind::SentencePiece;
        v->bos = 1, v->eos = 2, v->unk = 0;
        v->add_space_prefix = true;
        v->add_bos = true;
        v->clean_spaces = false;
    } else if (v->model == "gpt2") {
        v->kind = Tokenizer::Kind::BytePairEncoding;
        v->pre = f.get_string("tokenizer.ggml.pre", "");
        pre = pre_tokenizer_config(v->pre);
        v->bos = pre.bos_disabled ? -1 : 11;
        v->eos = 11, v->unk = -1;
        v->add_space_prefix = false;
        v->add_bos = pre.add_bos;
        v->clean_spaces = pre.clean_spaces;
        v->ignore_merges = pre.ignore_merges;
    } else if (v->model == "bert") {
        v->kind = Tokenizer::Kind::WordPiece;
        v->bos = 101, v->eos = -1, v->unk = 100, v->sep = 102, v->pad = 0, v->mask = 103;
        v->add_space_prefix = false;
        v->add_bos = true;
        v->add_sep = true;
        v->clean_spaces = true;
    } else {
        throw rf::Error(f.path() + ": unsupported tokenizer.ggml.model " + rf::quote_name(v->model) +
                        " (supported: llama, gpt2, bert)");
    }
    read_bool(f, "tokenizer.ggml.add_space_prefix", v->add_space_prefix);

    read_tokens(f, *v);
    if (v->kind == Tokenizer::Kind::BytePairEncoding) {
        read_merges(f, *v);
        v->pre_tokenizer = std::make_unique<PreTokenizer>(pre.regexes);
    }

    const size_t n = v->tokens.size();
    const std::pair<const char *, int32_t *> ids[] = {
        {"tokenizer.ggml.bos_token_id", &v->bos},
        {"tokenizer.ggml.eos_token_id", &v->eos},
        {"tokenizer.ggml.eot_token_id", &v->eot},
        {"tokenizer.ggml.eom_token_id", &v->eom},
        {"tokenizer.ggml.unknown_token_id", &v->unk},
        {"tokenizer.ggml.seperator_token_id", &v->sep}, // sic: llama.cpp's key
        {"tokenizer.ggml.padding_token_id", &v->pad},
        {"tokenizer.ggml.mask_token_id", &v->mask},
        {"tokenizer.ggml.fim_pre_token_id", &v->fim_pre},
        {"tokenizer.ggml.fim_suf_token_id", &v->fim_suf},
        {"tokenizer.ggml.fim_mid_token_id", &v->fim_mid},
        {"tokenizer.ggml.fim_pad_token_id", &v->fim_pad},
        {"tokenizer.ggml.fim_rep_token_id", &v->fim_rep},
        {"tokenizer.ggml.fim_sep_token_id", &v->fim_sep},
        {"tokenizer.ggml.prefix_token_id", &v->fim_pre}, // deprecated names
        {"tokenizer.ggml.suffix_token_id", &v->fim_suf},
        {"tokenizer.ggml.middle_token_id", &v->fim_mid},
    };
    for (const auto &[key, id] : ids) read_token_id(f, key, *id, n);
    // WordPiece's [CLS] is its BOS; converters that name only the CLS id are read through it.
    if (v->kind == Tokenizer::Kind::WordPiece && !f.find("tokenizer.ggml.bos_token_id"))
        read_token_id(f, "tokenizer.ggml.cls_token_id", v->bos, n);

    read_bool(f, "tokenizer.ggml.add_bos_token", v->add_bos);
    read_bool(f, "tokenizer.ggml.add_eos_token", v->add_eos);
    read_bool(f, "tokenizer.ggml.add_sep_token", v->add_sep);
    // WordPiece adds [CLS] and [SEP] whatever these flags say (as llama.cpp); encode checks them.
    const bool wpm = v->kind == Tokenizer::Kind::WordPiece;
    if (!wpm && v->add_bos && v->bos < 0) {
        throw rf::Error(f.path() + ": tokenizer.ggml.add_bos_token is true but there is no BOS token");
    }
    if (!wpm && v->add_eos && v->eos < 0) {
        throw rf::Error(f.path() + ": tokenizer.ggml.add_eos_token is true but there is no EOS token");
    }

    detect_special_by_text(*v);
    build_eog(*v);

    for (size_t id = 0; id < n; ++id) {
        if (v->tokens[id].attr & (kAttrControl | kAttrUserDefined | kAttrUnknown)) {
            v->special_tokens.push_back(static_cast<int32_t>(id));
        }
    }
    // Longest first (llama.cpp uses an unstable sort; equal lengths keep id order here).
    std::stable_sort(v->special_tokens.begin(), v->special_tokens.end(),
                     [&](int32_t a, int32_t b) {
                         return v->tokens[a].text.size() > v->tokens[b].text.size();
                     });

    v->pieces.resize(n);
    for (size_t id = 0; id < n; ++id) v->pieces[id] = v->compute_piece(static_cast<int32_t>(id), true);

    // Phi-3: special tokens swallow the whitespace after them (llama.cpp's per-model attributes).
    std::string name = f.get_string("general.name", "");
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
        for (int32_t id : v->special_tokens) v->tokens[id].attr |= kAttrRstrip;
        for (const char *text : {"</s>"}) {
            if (int32_t id = v->find(text); id >= 0) v->tokens[id].attr |= kAttrRstrip;
        }
        for (const char *text : {"<unk>", "<s>", "<|endoftext|>"}) {
            if (int32_t id = v->find(text); id >= 0) v->tokens[id].attr &= ~kAttrRstrip;
        }
    }

    if (v->kind == Tokenizer::Kind::SentencePiece) build_spm_char_pairs(*v);

    for (const TokenData &t : v->tokens) v->max_token_len = std::max(v->max_token_len, t.text.size());

    // The newline token.
    if (wpm) {
        v->linefeed = v->pad;
    } else if (v->kind == Tokenizer::Kind::SentencePiece) {
        v->linefeed = v->spm_byte_token('\n');
        if (v->linefeed < 0) v->linefeed = v->pad;
    } else {
        std::vector<int32_t> nl;
        bpe_tokenize(*v, "\n", nl);
        v->linefeed = nl.empty() ? v->pad : nl[0];
    }
    return v;
}

int32_t Vocab::spm_byte_token(uint8_t byte) const {
    static const char *hex = "0123456789ABCDEF";
    const char buf[6] = {'<', '0', 'x', hex[byte >> 4], hex[byte & 15], '>'};
    const int32_t id = find(std::string_view(buf, 6));
    if (id >= 0) return id;
    const char single = static_cast<char>(byte);
    return find(std::string_view(&single, 1));
}

std::string Vocab::compute_piece(int32_t id, bool special) const {
    const TokenData &t = tokens[id];
    constexpr uint32_t kSpecial = kAttrUnknown | kAttrControl;
    if (!special && (t.attr & kSpecial)) return {};
    if (t.attr & (kSpecial | kAttrUserDefined)) return t.text;
    if (!(t.attr & kAttrNormal)) {
        if (t.attr & kAttrByte) {
            // <0xXX>: llama.cpp parses text[3..4] as hex.
            const std::string hex = t.text.size() >= 5 ? t.text.substr(3, 2) : std::string();
            return std::string(1, static_cast<char>(std::strtol(hex.c_str(), nullptr, 16)));
        }
        return {};
    }
    if (kind != Tokenizer::Kind::BytePairEncoding) {
        // U+2581 -> ' '
        std::string out;
        out.reserve(t.text.size());
        for (size_t i = 0; i < t.text.size();) {
            if (t.text.compare(i, 3, "\xE2\x96\x81") == 0) {
                out += ' ';
                i += 3;
            } else {
                out += t.text[i++];
            }
        }
        return out;
    }
    // Byte-level BPE: every character is a byte stand-in.
    std::string out;
    for (uint32_t cpt : utf8_to_cpts(t.text)) {
        const std::string utf8 = cpt_to_utf8(cpt);
        const int byte = unicode_to_byte(utf8);
        if (byte >= 0) {
            out += static_cast<char>(byte);
        } else { // llama_decode_text's marker for characters that are not stand-ins
            out += "[UNK_BYTE_0x";
            static const char *hex = "0123456789abcdef";
            for (unsigned char c : utf8) {
                out += hex[c >> 4];
                out += hex[c & 15];
            }
            out += t.text + "]";
        }
    }
    return out;
}

} // namespace rf::tok
