#include "pretokenize.h"

#include "rocmforge/error.h"
#include "rocmforge/escape.h"
#include "unicode.h"

#include <initializer_list>

namespace rf::tok {

namespace {

// Regexes copied from llama.cpp src/llama-vocab.cpp (llm_tokenizer_bpe). Characters whose NFC
// form differs (U+1F7D, U+1FBE, U+1FD3, U+1FDB, U+2126, U+212A) are written as escapes so that
// editors and copy/paste cannot normalise them into different code points.
const char *const kGpt2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const char *const kLlama3 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char *const kLlama3Original =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char *const kQwen2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char *const kQwen35 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|"
    "\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char *const kSeedCoder =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char *const kBailing =
    "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+";
const char *const kTekken =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|[^\\r\\n\\p{L}\\p{N}]?"
    "((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|"
    "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char *const kGpt4o =
    "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|"
    "'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])"
    "([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const char *const kPoro = " ?[^(\\s|.,!?…。，、।۔،)]+";

struct Entry {
    std::initializer_list<const char *> names;
    std::initializer_list<const char *> regexes;
    bool clean_spaces;
    bool ignore_merges;
    bool add_bos;
};

// Names -> regexes and flags, following llama_vocab::impl::load and llm_tokenizer_bpe.
const Entry kEntries[] = {
    {{"default"},
     {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"}, true, false, false},
    {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
      "jina-v5-nano"},
     {kLlama3}, true, true, true},
    {{"dbrx", "smaug-bpe"}, {kLlama3}, true, false, false},
    {{"chatglm-bpe", "glm4"}, {kLlama3}, true, false, false},
    {{"deepseek-llm"},
     {"[\r\n]",
      "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-" "\u1F7D" "ᾀ-ᾴᾶ-ᾼ" "\u1FBE" "ῂ-ῄῆ-ῌῐ-" "\u1FD3" "ῖ-" "\u1FDB" "ῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ" "\u2126" "ℨ" "\u212A" "-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
      "\\s?[!-/:-~！-／：-～‘-‟　-。]+", "\\s+$", "[一-龥ࠀ-一가-퟿]+", "\\p{N}+"},
     false, false, false},
    {{"deepseek-coder"},
     {"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[一-龥ࠀ-一가-퟿]+", "\\p{N}"}, false, false, false},
    {{"falcon"},
     {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "[0-9][0-9][0-9]"}, true, false, false},
    {{"starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2"},
     {"\\p{N}", kGpt2}, true, false, false},
    {{"command-r", "smollm"}, {"\\p{N}", kGpt2}, false, false, false},
    {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0",
      "mellum", "modern-bert", "exaone4", "mpt", "olmo", "jais"},
     {kGpt2}, true, false, false},
    {{"trillion", "granite-docling"}, {kGpt2}, false, false, false},
    {{"qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open"},
     {kQwen2}, false, false, false},
    {{"stablelm2", "megrez"}, {kQwen2}, true, false, false},
    {{"qwen35"}, {kQwen35}, false, false, false},
    {{"seed-coder"}, {kSeedCoder}, false, false, false},
    {{"bailingmoe", "bailingmoe2", "llada-moe"}, {kBailing}, false, false, false},
    {{"tekken"}, {kTekken}, false, true, true},
    {{"gpt-4o", "llama4"}, {kGpt4o}, false, false, false},
    {{"poro-chat"}, {kPoro}, false, false, false},
    {{"bloom", "gpt3-finnish"}, {kPoro}, true, false, false},
    {{"viking"}, {kPoro, "\\p{N}"}, false, false, false},
};

// llama.cpp runs a regex on the collapsed text when it names one of these categories.
bool uses_categories(const std::string &re) {
    for (const char *cat : {"\\p{N}", "\\p{L}", "\\p{P}", "\\p{M}", "\\p{S}", "\\p{Lu}", "\\p{Ll}",
                            "\\p{Lt}", "\\p{Lm}", "\\p{Lo}"}) {
        if (re.find(cat) != std::string::npos) return true;
    }
    return false;
}

// llama.cpp's collapsed text: ASCII as is, whitespace -> U+000B, other code points -> one byte
// per category (0xD1 number, 0xD2 letter, 0xD3 punctuation, 0xD4 mark, 0xD5 symbol, 0xD0 rest).
uint32_t collapse(uint32_t c) {
    if (c < 128) return c;
    const CptFlags f = cpt_flags(c);
    if (f.whitespace) return 0x0B;
    switch (f.category) {
    case UnicodeCategory::NUMBER: return 0xD1;
    case UnicodeCategory::LETTER: return 0xD2;
    case UnicodeCategory::PUNCTUATION: return 0xD3;
    case UnicodeCategory::MARK: return 0xD4;
    case UnicodeCategory::SYMBOL: return 0xD5;
    default: return 0xD0;
    }
}

// std::wregex sees raw code points, except non-ASCII whitespace which becomes U+000B.
uint32_t widen(uint32_t c) { return (c > 0x7F && cpt_flags(c).whitespace) ? 0x0B : c; }

// unicode_regex_split_stl: matches and the gaps between them become pieces.
} // namespace

std::vector<size_t> split_regex(const Regex &re, const std::vector<uint32_t> &text,
                                  const std::vector<size_t> &lengths) {
    std::vector<size_t> out;
    out.reserve(lengths.size());
    size_t start = 0;
    for (size_t length : lengths) {
        const size_t end = start + length;
        size_t at = start, from = start, mb = 0, me = 0; // at: end of the last emitted piece
        while (from < end && re.search(text.data(), start, end, from, mb, me)) {
            if (me == mb) { // none of the supported patterns matches empty; skip such matches
                from = mb + 1;
                continue;
            }
            if (mb > at) out.push_back(mb - at);
            out.push_back(me - mb);
            at = from = me;
        }
        if (at < end) out.push_back(end - at);
        start = end;
    }
    return out;
}

std::vector<uint32_t> collapse_codepoints(const std::vector<uint32_t> &cpts) {
    std::vector<uint32_t> out(cpts.size());
    for (size_t i = 0; i < cpts.size(); ++i) out[i] = collapse(cpts[i]);
    return out;
}

PreTokenizerConfig pre_tokenizer_config(const std::string &pre) {
    const std::string key = pre.empty() ? "default" : pre;
    for (const Entry &e : kEntries) {
        for (const char *name : e.names) {
            if (key != name) continue;
            PreTokenizerConfig cfg;
            cfg.name = key;
            for (const char *r : e.regexes) cfg.regexes.emplace_back(r);
            cfg.clean_spaces = e.clean_spaces;
            cfg.ignore_merges = e.ignore_merges;
            cfg.add_bos = e.add_bos;
            cfg.bos_disabled = key == "chatglm-bpe" || key == "glm4";
            return cfg;
        }
    }
    throw rf::Error("tokenizer: unsupported pre-tokenizer type tokenizer.ggml.pre = " + rf::quote_name(pre));
}

PreTokenizer::PreTokenizer(const std::vector<std::string> &regexes) {
    for (const std::string &r : regexes) {
        Step step;
        if (r == kGpt2) {
            step.kind = Step::Gpt2;
        } else if (r == kLlama3 || r == kLlama3Original) {
            step.kind = Step::Llama3;
        } else {
            step.collapsed = uses_categories(r);
            step.regex = std::make_unique<Regex>(
                r, step.collapsed ? Regex::Mode::Collapsed : Regex::Mode::Codepoints);
            need_collapsed_ |= step.collapsed;
        }
        steps_.push_back(std::move(step));
    }
}

PreTokenizer::~PreTokenizer() = default;

std::vector<std::string> PreTokenizer::split(std::string_view text) const {
    const std::vector<uint32_t> cpts = utf8_to_cpts(text);
    std::vector<uint32_t> collapsed, wide;
    std::vector<size_t> lengths{cpts.size()};
    for (const Step &step : steps_) {
        switch (step.kind) {
        case Step::Gpt2: lengths = split_gpt2(cpts, lengths); break;
        case Step::Llama3: lengths = split_llama3(cpts, lengths); break;
        case Step::Generic:
            if (step.collapsed) {
                if (collapsed.empty()) collapsed = collapse_codepoints(cpts);
                lengths = split_regex(*step.regex, collapsed, lengths);
            } else {
                if (wide.empty()) {
                    wide.resize(cpts.size());
                    for (size_t i = 0; i < cpts.size(); ++i) wide[i] = widen(cpts[i]);
                }
                lengths = split_regex(*step.regex, wide, lengths);
            }
            break;
        }
    }

    // Re-encode each word (invalid input bytes became U+FFFD) and map bytes to stand-ins.
    std::vector<std::string> words;
    words.reserve(lengths.size());
    std::string utf8;
    size_t start = 0;
    for (size_t len : lengths) {
        utf8.clear();
        for (size_t i = start; i < start + len; ++i) append_utf8(utf8, cpts[i]);
        start += len;
        std::string word;
        word.reserve(utf8.size() * 2);
        for (char ch : utf8) word += byte_to_unicode(static_cast<uint8_t>(ch));
        words.push_back(std::move(word));
    }
    return words;
}

} // namespace rf::tok
