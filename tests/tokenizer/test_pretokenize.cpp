// Pre-tokenizer splits and the regex engine behind them (internal headers of core/tokenizer).
#include "pretokenize.h"
#include "regex.h"
#include "rocmforge/error.h"
#include "tokenizer_test_util.h"
#include "unicode.h"

#include <catch2/catch.hpp>

using rf::tok::PreTokenizer;
using rf::tok::Regex;

namespace {

// Undo the GPT-2 byte stand-ins so expectations can be written as plain text.
std::vector<std::string> plain_words(const std::string &pre, const std::string &text) {
    const PreTokenizer pt(rf::tok::pre_tokenizer_config(pre).regexes);
    std::vector<std::string> out;
    for (const std::string &w : pt.split(text)) {
        std::string plain;
        for (uint32_t c : rf::tok::utf8_to_cpts(w)) {
            const int b = rf::tok::unicode_to_byte(rf::tok::cpt_to_utf8(c));
            REQUIRE(b >= 0);
            plain += static_cast<char>(b);
        }
        out.push_back(plain);
    }
    return out;
}

std::vector<std::string> pieces(const std::vector<uint32_t> &cpts, const std::vector<size_t> &lens) {
    std::vector<std::string> out;
    size_t at = 0;
    for (size_t n : lens) {
        std::string s;
        for (size_t i = at; i < at + n; ++i) rf::tok::append_utf8(s, cpts[i]);
        out.push_back(s);
        at += n;
    }
    return out;
}

using V = std::vector<std::string>;

} // namespace

TEST_CASE("qwen2 pre-tokenizer follows its regex", "[tokenizer][pretokenize]") {
    CHECK(plain_words("qwen2", "Hello 123 world!!\n\n") ==
          V{"Hello", " ", "1", "2", "3", " world", "!!\n\n"});
    CHECK(plain_words("qwen2", "I'M  fine\t ok") == V{"I", "'M", " ", " fine", "\t", " ok"});
}

// gpt-oss's o200k (tokenizer.ggml.pre = "gpt-4o"): a word is an optional non-letter, a run of
// letters outside a-z, then letters outside A-Z (or the reverse), with its contraction attached;
// digits by three; punctuation keeps the newlines and slashes after it.
TEST_CASE("gpt-4o (o200k) pre-tokenizer follows its regex", "[tokenizer][pretokenize]") {
    CHECK(plain_words("gpt-4o", "HelloWorld JSONParser") == V{"Hello", "World", " JSONParser"});
    CHECK(plain_words("gpt-4o", "HELLO world") == V{"HELLO", " world"});
    CHECK(plain_words("gpt-4o", "don't I'M we'LL") == V{"don't", " I'M", " we'LL"});
    CHECK(plain_words("gpt-4o", "a 1234567") == V{"a", " ", "123", "456", "7"});
    CHECK(plain_words("gpt-4o", "hi!!!\n\nok") == V{"hi", "!!!\n\n", "ok"});
    CHECK(plain_words("gpt-4o", "path/to/file") == V{"path", "/to", "/file"});
    CHECK(plain_words("gpt-4o", "a  b\r\n\r\nc  ") == V{"a", " ", " b", "\r\n\r\n", "c", "  "});
    CHECK(plain_words("gpt-4o", "\u00dcn\u00efc\u00f6d\u00e9 \u00fcber") == V{"\u00dcn\u00efc\u00f6d\u00e9", " \u00fcber"});
    CHECK(plain_words("gpt-4o", "\u6211\u60f3\u5728apple\u5de5\u4f5c") == V{"\u6211\u60f3\u5728apple\u5de5\u4f5c"});
    CHECK(plain_words("gpt-4o", "x = f(y);") == V{"x", " =", " f", "(y", ");"});
    // The harmony format's markers are special tokens, matched before the pre-tokenizer; as
    // plain text they split at '<', '|' and '>'.
    CHECK(plain_words("gpt-4o", "<|start|>user") == V{"<|", "start", "|>", "user"});
}

TEST_CASE("llama3 pre-tokenizer groups digits by three", "[tokenizer][pretokenize]") {
    CHECK(plain_words("llama-bpe", "abc 1234567 x\r\n\n  y") ==
          V{"abc", " ", "123", "456", "7", " x", "\r\n\n", " ", " y"});
}

TEST_CASE("gpt2 and llama3 contractions", "[tokenizer][pretokenize]") {
    CHECK(plain_words("gpt-2", "I'd we'll it'S") == V{"I", "'d", " we", "'ll", " it", "'", "S"});
    CHECK(plain_words("llama3", "I'd we'LL it'S") == V{"I", "'d", " we", "'LL", " it", "'S"});
}

TEST_CASE("deepseek-coder pre-tokenizer applies its regexes in turn", "[tokenizer][pretokenize]") {
    CHECK(plain_words("deepseek-coder", "Hello 12 世界!\n") ==
          V{"Hello", " ", "1", "2", " ", "世界", "!", "\n"});
}

TEST_CASE("default pre-tokenizer splits punctuation runs and digit triples", "[tokenizer][pretokenize]") {
    CHECK(plain_words("", "a, b 12345") == V{"a", ",", " b", " ", "123", "45"});
}

TEST_CASE("every known pre-tokenizer compiles and keeps all bytes", "[tokenizer][pretokenize]") {
    const std::string text = "Hello, y'all! 123456 我想在apple工作 \t\n  Ünïcödé — ok?\r\n";
    for (const char *pre : {"", "default", "llama3", "llama-bpe", "dbrx", "chatglm-bpe",
                            "deepseek-llm", "deepseek-coder", "falcon", "starcoder", "refact",
                            "command-r", "gpt-2", "mpt", "trillion", "qwen2", "stablelm2", "qwen35",
                            "seed-coder", "bailingmoe", "tekken", "gpt-4o", "poro-chat", "bloom",
                            "viking"}) {
        INFO("pre = '" << pre << "'");
        std::string joined;
        for (const std::string &w : plain_words(pre, text)) {
            CHECK_FALSE(w.empty());
            joined += w;
        }
        CHECK(joined == text);
    }
}

TEST_CASE("unknown pre-tokenizers are rejected", "[tokenizer][pretokenize]") {
    CHECK_THROWS_AS(rf::tok::pre_tokenizer_config("no-such-pre"), rf::Error);
}

// The hand-written gpt2/llama3 splitters must agree with the general engine running the regexes
// they implement (llama.cpp's claim for them), on llama.cpp's reference strings.
TEST_CASE("regex engine agrees with the hand-written splitters", "[tokenizer][regex]") {
    const std::string gpt2 = rf::tok::pre_tokenizer_config("gpt-2").regexes.at(0);
    const std::string llama3 = rf::tok::pre_tokenizer_config("llama3").regexes.at(0);
    const Regex gpt2_re(gpt2, Regex::Mode::Collapsed);
    const Regex llama3_re(llama3, Regex::Mode::Collapsed);
    auto cases = rf_test::read_vocab_cases(rf_test::data_path("vocab/ggml-vocab-gpt-2.gguf"));
    cases.push_back({"x \u00A0\u3000 y\u2028z \t\n 'S'LL 12345 \x1c!", {}});
    for (const auto &c : cases) {
        INFO("'" << c.text << "'");
        const auto cpts = rf::tok::utf8_to_cpts(c.text);
        const auto collapsed = rf::tok::collapse_codepoints(cpts);
        const std::vector<size_t> all{cpts.size()};
        // gpt2's hand-written splitter also ends with \s+ (it implements "...|\s+(?!\S)|\s+").
        const Regex gpt2_full(gpt2 + "|\\s+", Regex::Mode::Collapsed);
        CHECK(pieces(cpts, rf::tok::split_gpt2(cpts, all)) ==
              pieces(cpts, rf::tok::split_regex(gpt2_full, collapsed, all)));
        CHECK(pieces(cpts, rf::tok::split_llama3(cpts, all)) ==
              pieces(cpts, rf::tok::split_regex(llama3_re, collapsed, all)));
    }
}

TEST_CASE("regex engine: ECMAScript priorities and backtracking", "[tokenizer][regex]") {
    auto first = [](const char *pattern, const std::string &text, Regex::Mode mode = Regex::Mode::Codepoints) {
        const Regex re(pattern, mode);
        const auto cpts = rf::tok::utf8_to_cpts(text);
        size_t b = 0, e = 0;
        if (!re.search(cpts.data(), 0, cpts.size(), 0, b, e)) return std::string("<none>");
        std::string s;
        for (size_t i = b; i < e; ++i) rf::tok::append_utf8(s, cpts[i]);
        return s;
    };
    CHECK(first("a|ab", "ab") == "a");              // first alternative wins, not the longest
    CHECK(first("\\s+(?!\\S)", "   x") == "  ");   // backtracks to leave one space
    CHECK(first("\\s+$", "a  b   ") == "   ");
    CHECK(first("[0-9]{1,3}", "12345") == "123");
    CHECK(first("(?:ab)+c", "ababc") == "ababc");
    CHECK(first("[一-龥]+", "ab世界c") == "世界");
    CHECK(first("x(?=y)", "xz xy") == "x");
    CHECK(first("\\p{L}+", "12 héllo", Regex::Mode::Collapsed) == "h"); // é is a stand-in here
    CHECK_THROWS_AS(Regex("a(?<n>b)", Regex::Mode::Codepoints), rf::Error);
    CHECK_THROWS_AS(Regex("[abc", Regex::Mode::Codepoints), rf::Error);
    CHECK_THROWS_AS(Regex("\\p{L}", Regex::Mode::Codepoints), rf::Error);
}

TEST_CASE("unicode helpers", "[tokenizer][unicode]") {
    using rf::tok::UnicodeCategory;
    CHECK(rf::tok::cpt_flags('a').category == UnicodeCategory::LETTER);
    CHECK(rf::tok::cpt_flags(0x4E16).category == UnicodeCategory::LETTER);
    CHECK(rf::tok::cpt_flags(0x0663).category == UnicodeCategory::NUMBER);
    CHECK(rf::tok::cpt_flags(0x0301).category == UnicodeCategory::MARK);
    CHECK(rf::tok::cpt_flags(0x3000).whitespace);
    CHECK_FALSE(rf::tok::cpt_flags(0x1C).whitespace);
    CHECK(rf::tok::utf8_to_cpts("a\xff\xe4\xb8") == std::vector<uint32_t>{'a', 0xFFFD, 0xFFFD, 0xFFFD});
    CHECK(rf::tok::byte_to_unicode(' ') == "\xC4\xA0"); // 'Ġ'
    CHECK(rf::tok::incomplete_utf8_tail("ab\xF0\x9F") == 2);
    CHECK(rf::tok::incomplete_utf8_tail("ab\xF0\x9F\xA6\x99") == 0);
}
