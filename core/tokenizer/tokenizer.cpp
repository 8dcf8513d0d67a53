// Tokenizer: special-token partitioning (llama.cpp's tokenizer_st_partition), dispatch to the
// SentencePiece / BPE / WordPiece algorithms, and detokenization (token_to_piece, detokenize).
#include "rocmforge/tokenizer.h"

#include "rocmforge/error.h"
#include "unicode.h"
#include "vocab.h"

#include <algorithm>
#include <cctype>

namespace rf {

namespace {

struct Fragment {
    int32_t token; // -1 for raw text
    size_t offset, length;
};

bool is_c_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Splits raw-text fragments at every occurrence of each special token, longest tokens first,
// exactly as llama.cpp does (including LSTRIP/RSTRIP whitespace swallowing).
std::vector<Fragment> partition(const tok::Vocab &v, std::string_view text, bool parse_special) {
    std::vector<Fragment> frags;
    if (text.empty()) return frags;
    frags.push_back({-1, 0, text.size()});
    std::vector<Fragment> next;
    for (int32_t id : v.special_tokens) {
        const tok::TokenData &t = v.tokens[id];
        if (!parse_special && (t.attr & (kAttrControl | kAttrUnknown))) continue;
        const std::string &special = t.text;
        bool changed = false;
        next.clear();
        for (const Fragment &f : frags) {
            if (f.token >= 0) {
                next.push_back(f);
                continue;
            }
            size_t base = f.offset, len = f.length;
            while (true) {
                const size_t match = text.substr(0, base + len).find(special, base);
                if (match == std::string_view::npos) {
                    next.push_back({-1, base, len});
                    break;
                }
                changed = true;
                if (match > base) {
                    size_t left_len = match - base;
                    if (t.attr & kAttrLstrip) {
                        while (left_len > 0 && is_c_space(text[base + left_len - 1])) --left_len;
                    }
                    if (left_len > 0) next.push_back({-1, base, left_len});
                }
                next.push_back({id, 0, 0});
                if (match + special.size() >= base + len) break;
                size_t right = match + special.size();
                size_t right_len = base + len - right;
                if (t.attr & kAttrRstrip) {
                    while (right_len > 0 && is_c_space(text[right])) ++right, --right_len;
                }
                if (right_len == 0) break;
                base = right;
                len = right_len;
            }
        }
        if (changed) frags.swap(next);
    }
    return frags;
}

} // namespace

Tokenizer::Tokenizer(std::unique_ptr<tok::Vocab> vocab) : vocab_(std::move(vocab)) {}
Tokenizer::~Tokenizer() = default;

std::unique_ptr<Tokenizer> Tokenizer::from_gguf(const gguf::File &file) {
    return std::unique_ptr<Tokenizer>(new Tokenizer(tok::load_vocab(file)));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special,
                                       bool parse_special) const {
    const tok::Vocab &v = *vocab_;
    std::vector<int32_t> out;
    const std::vector<Fragment> frags = partition(v, text, parse_special);
    if (v.kind == Kind::WordPiece) {
        // llama.cpp adds [CLS] ... [SEP] on add_special alone.
        if (add_special && (v.bos < 0 || v.sep < 0))
            throw rf::Error("tokenizer: the WordPiece vocabulary has no [CLS] (BOS) or [SEP] token to add");
        if (v.unk < 0) throw rf::Error("tokenizer: the WordPiece vocabulary has no unknown token");
        if (add_special) out.push_back(v.bos);
        for (const Fragment &f : frags) {
            if (f.token >= 0) out.push_back(f.token);
            else tok::wpm_tokenize(v, text.substr(f.offset, f.length), out);
        }
        if (add_special) out.push_back(v.sep);
        return out;
    }
    if (add_special && v.add_bos) out.push_back(v.bos);

    if (v.kind == Kind::SentencePiece) {
        bool prev_special = true; // the first fragment gets the space prefix
        std::string escaped;
        for (const Fragment &f : frags) {
            if (f.token >= 0) {
                out.push_back(f.token);
                prev_special = true;
                continue;
            }
            escaped.clear();
            if (v.add_space_prefix && prev_special) escaped = "\xE2\x96\x81";
            for (char c : text.substr(f.offset, f.length)) {
                if (c == ' ') escaped += "\xE2\x96\x81";
                else escaped += c;
            }
            tok::spm_tokenize(v, escaped, out);
            prev_special = false;
        }
    } else {
        for (const Fragment &f : frags) {
            if (f.token >= 0) out.push_back(f.token);
            else tok::bpe_tokenize(v, text.substr(f.offset, f.length), out);
        }
    }

    if (add_special && v.add_eos) out.push_back(v.eos);
    return out;
}

std::string Tokenizer::token_to_piece(int32_t id, bool special) const {
    const tok::Vocab &v = *vocab_;
    if (!v.valid(id)) {
        throw rf::Error("tokenizer: token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                        std::to_string(v.tokens.size()) + ")");
    }
    if (!special && (v.tokens[id].attr & (kAttrUnknown | kAttrControl))) return {};
    return v.pieces[id];
}

std::string Tokenizer::decode(const std::vector<int32_t> &ids, bool remove_special,
                              bool unparse_special) const {
    const tok::Vocab &v = *vocab_;
    size_t first = 0, last = ids.size();
    bool remove_space = v.add_space_prefix;
    if (remove_special && v.add_bos && last > first && ids[first] == v.bos) {
        remove_space = false; // llama.cpp keeps the space after a removed BOS
        ++first;
    }
    if (remove_special && v.add_eos && last > first && ids[last - 1] == v.eos) --last;

    std::string text;
    for (size_t i = first; i < last; ++i) {
        std::string piece = token_to_piece(ids[i], unparse_special);
        if (remove_space && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
        remove_space = false;
        text += piece;
    }
    if (!v.clean_spaces || text.empty()) return text;

    // llama.cpp's clean_up_tokenization_spaces, pass for pass.
    // 1: " ?", " !", " .", " ," lose the space.
    size_t total = 1;
    for (size_t i = 1; i < text.size(); ++i) {
        const char x = text[i];
        if (text[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --total;
        text[total++] = x;
    }
    text.resize(total);
    // 2: " ' " -> "'".
    const size_t total2 = text.size();
    total = 1;
    for (size_t i = 1; i < total2; ++i) {
        const char x = text[i];
        if (x == '\'' && i + 1 < total2 && text[i - 1] == ' ' && text[i + 1] == ' ') {
            --total;
            text[++i] = '\0';
        }
        text[total++] = x;
    }
    text.resize(total);
    // 3: " 's", " 'm", " 're", " 've" lose the space.
    const size_t total3 = text.size();
    total = 1;
    for (size_t i = 1; i < total3; ++i) {
        const char x = text[i];
        if (text[i - 1] == ' ' && x == '\'' && i + 1 < total3) {
            const char x1 = text[i + 1];
            if (x1 == 's' || x1 == 'm') {
                --total;
            } else if (x1 != 't' && x1 != 'd' && i + 2 < total3) {
                const char x2 = text[i + 2];
                if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) --total;
            }
        }
        text[total++] = x;
    }
    text.resize(total);
    return text;
}

int Tokenizer::n_vocab() const { return static_cast<int>(vocab_->tokens.size()); }
Tokenizer::Kind Tokenizer::kind() const { return vocab_->kind; }
const std::string &Tokenizer::pre_tokenizer() const { return vocab_->pre; }
int32_t Tokenizer::bos() const { return vocab_->bos; }
int32_t Tokenizer::eos() const { return vocab_->eos; }
int32_t Tokenizer::eot() const { return vocab_->eot; }
int32_t Tokenizer::eom() const { return vocab_->eom; }
int32_t Tokenizer::unk() const { return vocab_->unk; }
int32_t Tokenizer::pad() const { return vocab_->pad; }
int32_t Tokenizer::sep() const { return vocab_->sep; }
int32_t Tokenizer::nl() const { return vocab_->linefeed; }
bool Tokenizer::add_bos_default() const { return vocab_->add_bos; }
bool Tokenizer::add_eos_default() const { return vocab_->add_eos; }
bool Tokenizer::add_space_prefix() const { return vocab_->add_space_prefix; }
bool Tokenizer::clean_spaces() const { return vocab_->clean_spaces; }

bool Tokenizer::is_eog(int32_t id) const {
    return std::binary_search(vocab_->eog.begin(), vocab_->eog.end(), id);
}
const std::vector<int32_t> &Tokenizer::eog_ids() const { return vocab_->eog; }

bool Tokenizer::is_control(int32_t id) const { return token_attr(id) & kAttrControl; }

const std::string &Tokenizer::token_text(int32_t id) const {
    if (!vocab_->valid(id)) throw rf::Error("tokenizer: token id " + std::to_string(id) + " out of range");
    return vocab_->tokens[id].text;
}
float Tokenizer::token_score(int32_t id) const {
    if (!vocab_->valid(id)) throw rf::Error("tokenizer: token id " + std::to_string(id) + " out of range");
    return vocab_->tokens[id].score;
}
uint32_t Tokenizer::token_attr(int32_t id) const {
    if (!vocab_->valid(id)) throw rf::Error("tokenizer: token id " + std::to_string(id) + " out of range");
    return vocab_->tokens[id].attr;
}
int32_t Tokenizer::find_token(std::string_view text) const { return vocab_->find(text); }

std::string StreamDecoder::push(int32_t id) {
    pending_ += tokenizer_.token_to_piece(id, special_);
    const size_t keep = tok::incomplete_utf8_tail(pending_);
    std::string ready = pending_.substr(0, pending_.size() - keep);
    pending_.erase(0, pending_.size() - keep);
    return ready;
}

std::string StreamDecoder::flush() {
    std::string rest;
    rest.swap(pending_);
    return rest;
}

} // namespace rf
