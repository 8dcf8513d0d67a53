// WordPiece (tokenizer.ggml.model = "bert") on a hand-made vocabulary stored the way llama.cpp's
// convert_hf_to_gguf.py stores a BERT vocab: word-initial pieces carry U+2581, "##" pieces are
// stored without the "##", the bracketed specials are control tokens.
#include "rocmforge/error.h"
#include "tokenizer_test_util.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <unistd.h>

using rf::gguf::Value;
using rf::gguf::Writer;
using Ids = std::vector<int32_t>;

namespace {

constexpr int32_t kPad = 0, kUnk = 1, kCls = 2, kSep = 3, kMask = 4;
enum : int32_t { kHello = 5, kWorld, kUn, kAff, kAble, kUnaff, kComma, kBang, kCafe, kZhong, kWen, kDollar, kA, kB };

Writer bert_writer() {
    const std::vector<std::string> tokens = {
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
        "\u2581hello", "\u2581world", "\u2581un", "aff", "able", "\u2581unaff", "\u2581,", "\u2581!",
        "\u2581cafe", "\u2581\u4e2d", "\u2581\u6587", "\u2581$", "\u2581a", "b"};
    std::vector<int32_t> types(tokens.size(), 1);
    for (int32_t id : {kPad, kUnk, kCls, kSep, kMask}) types[(size_t)id] = 3;
    Writer w;
    w.set("tokenizer.ggml.model", Value::from_string("bert"));
    w.set("tokenizer.ggml.tokens", Value::from_strings(tokens));
    w.set("tokenizer.ggml.token_type", Value::from_i32s(types));
    w.set("tokenizer.ggml.bos_token_id", Value::from_u32(kCls));
    w.set("tokenizer.ggml.seperator_token_id", Value::from_u32(kSep));
    w.set("tokenizer.ggml.unknown_token_id", Value::from_u32(kUnk));
    w.set("tokenizer.ggml.padding_token_id", Value::from_u32(kPad));
    w.set("tokenizer.ggml.mask_token_id", Value::from_u32(kMask));
    return w;
}

std::unique_ptr<rf::Tokenizer> load(const Writer &w) {
    const std::string path = "/tmp/rf_wpm_test_" + std::to_string(::getpid()) + ".gguf";
    w.write(path);
    auto tok = rf_test::load_tokenizer(path);
    std::remove(path.c_str());
    return tok;
}

} // namespace

TEST_CASE("WordPiece: lowercase words, longest match, punctuation and CJK alone", "[tokenizer][wpm]") {
    auto tok = load(bert_writer());
    CHECK(tok->kind() == rf::Tokenizer::Kind::WordPiece);
    CHECK(tok->encode("Hello WORLD", false, false) == Ids{kHello, kWorld});
    CHECK(tok->encode("  hello\n\tworld  ", false, false) == Ids{kHello, kWorld});
    // The longest piece from the word's start wins: unaff + able, not un + aff + able.
    CHECK(tok->encode("unaffable", false, false) == Ids{kUnaff, kAble});
    CHECK(tok->encode("unable", false, false) == Ids{kUn, kAble});
    CHECK(tok->encode("ab", false, false) == Ids{kA, kB});
    CHECK(tok->encode("hello, world!", false, false) == Ids{kHello, kComma, kWorld, kBang});
    CHECK(tok->encode("hello,world", false, false) == Ids{kHello, kComma, kWorld});
    // Each ideograph is a word of its own.
    CHECK(tok->encode("\u4e2d\u6587", false, false) == Ids{kZhong, kWen});
    // ASCII symbols split; "5" has no piece.
    CHECK(tok->encode("$5", false, false) == Ids{kDollar, kUnk});
    // Control characters vanish.
    CHECK(tok->encode("hel\x01lo", false, false) == Ids{kHello});
}

TEST_CASE("WordPiece: accents go with llama.cpp's first-code-point NFD", "[tokenizer][wpm]") {
    auto tok = load(bert_writer());
    // U+00E9 decomposes to 'e' + U+0301 and llama.cpp keeps the first code point only.
    CHECK(tok->encode("caf\u00e9", false, false) == Ids{kCafe});
    CHECK(tok->encode("CAF\u00c9", false, false) == Ids{kCafe});
    // A decomposed accent (combining mark, category M) stays in the word: no piece has it.
    CHECK(tok->encode("cafe\u0301", false, false) == Ids{kUnk});
}

TEST_CASE("WordPiece: a word with an unmatched position is one [UNK]", "[tokenizer][wpm]") {
    auto tok = load(bert_writer());
    CHECK(tok->encode("hello xyz world", false, false) == Ids{kHello, kUnk, kWorld});
    // "a" + "b" match, then "c" does not: the pieces already found are dropped.
    CHECK(tok->encode("abc", false, false) == Ids{kUnk});
    // Non-ASCII symbols (U+00A9) do not split a word.
    CHECK(tok->encode("hello\u00a9", false, false) == Ids{kUnk});
}

TEST_CASE("WordPiece: [CLS]/[SEP] with add_special, specials in the text", "[tokenizer][wpm]") {
    auto tok = load(bert_writer());
    CHECK(tok->encode("hello", true, false) == Ids{kCls, kHello, kSep});
    CHECK(tok->encode("", true, false) == Ids{kCls, kSep});
    CHECK(tok->encode("[CLS] hello [SEP]", false, true) == Ids{kCls, kHello, kSep});
    // Without parse_special the brackets are punctuation and "cls" has no piece.
    CHECK(tok->encode("[SEP]", false, false) == Ids{kUnk, kUnk, kUnk});
    CHECK(tok->encode("[MASK]world", false, true) == Ids{kMask, kWorld});
    CHECK(tok->bos() == kCls);
    CHECK(tok->sep() == kSep);
    CHECK(tok->unk() == kUnk);
    CHECK(tok->pad() == kPad);
    CHECK(tok->add_bos_default());
    CHECK_FALSE(tok->add_space_prefix());
}

TEST_CASE("WordPiece: detokenize joins continuation pieces, cleans spaces", "[tokenizer][wpm]") {
    auto tok = load(bert_writer());
    CHECK(tok->token_to_piece(kHello, false) == " hello");
    CHECK(tok->token_to_piece(kAble, false) == "able");
    CHECK(tok->token_to_piece(kCls, false).empty());
    CHECK(tok->token_to_piece(kCls, true) == "[CLS]");
    CHECK(tok->decode(Ids{kUnaff, kAble}) == " unaffable");
    CHECK(tok->decode(Ids{kHello, kComma, kWorld, kBang}) == " hello, world!");
    // The leading [CLS] is removed with remove_special; [SEP] renders as nothing.
    CHECK(tok->decode(Ids{kCls, kHello, kSep}, true, false) == " hello");
    CHECK(tok->decode(Ids{kCls, kHello, kSep}, false, true) == "[CLS] hello[SEP]");
}

TEST_CASE("WordPiece: missing [SEP] refuses add_special", "[tokenizer][wpm]") {
    Writer w = bert_writer();
    w.set("tokenizer.ggml.seperator_token_id", Value::from_u32(1000)); // out of range: no SEP
    auto tok = load(w);
    CHECK(tok->encode("hello", false, false) == Ids{kHello});
    CHECK_THROWS_AS(tok->encode("hello", true, false), rf::Error);
}
