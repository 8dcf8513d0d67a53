// Tokenizers built from small synthetic GGUF files: metadata handling and errors.
#include "rocmforge/error.h"
#include "tokenizer_test_util.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <unistd.h>

using rf::gguf::Value;
using rf::gguf::Writer;

namespace {

struct TempGguf {
    std::string path;
    explicit TempGguf(const Writer &w) {
        path = "/tmp/rf_tok_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++) +
               ".gguf";
        w.write(path);
    }
    ~TempGguf() { std::remove(path.c_str()); }
    static int &counter() {
        static int n = 0;
        return n;
    }
};

// A byte-level vocabulary: the 256 byte stand-ins, then merged tokens, then <|im_end|>.
Writer bpe_writer(const std::string &pre) {
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) {
        // GPT-2's order: printable bytes map to themselves, the rest to U+0100...
        tokens.push_back("");
    }
    int n = 0;
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        const uint32_t c = printable ? b : 256 + n++;
        std::string s;
        if (c < 0x80) s += static_cast<char>(c);
        else { s += static_cast<char>(0xC0 | (c >> 6)); s += static_cast<char>(0x80 | (c & 0x3F)); }
        tokens[b] = s;
    }
    tokens.push_back("he");        // 256
    tokens.push_back("ll");        // 257
    tokens.push_back("hell");      // 258
    tokens.push_back("hello");     // 259
    tokens.push_back("<|im_end|>"); // 260
    std::vector<int32_t> types(tokens.size(), 1);
    types[260] = 3;
    Writer w;
    w.set("tokenizer.ggml.model", Value::from_string("gpt2"));
    if (!pre.empty()) w.set("tokenizer.ggml.pre", Value::from_string(pre));
    w.set("tokenizer.ggml.tokens", Value::from_strings(tokens));
    w.set("tokenizer.ggml.token_type", Value::from_i32s(types));
    w.set("tokenizer.ggml.merges", Value::from_strings({"h e", "l l", "he ll", "hell o"}));
    w.set("tokenizer.ggml.eos_token_id", Value::from_u32(260));
    return w;
}

std::unique_ptr<rf::Tokenizer> load(const Writer &w) {
    TempGguf f(w);
    return rf_test::load_tokenizer(f.path);
}

} // namespace

TEST_CASE("synthetic byte-level vocab: merges by rank, specials, eog", "[tokenizer][metadata]") {
    auto tok = load(bpe_writer("qwen2"));
    CHECK(tok->encode("hello", false, true) == std::vector<int32_t>{259});
    CHECK(tok->encode("hel", false, true) == std::vector<int32_t>{256, 'l'});
    CHECK(tok->encode("hello<|im_end|>", false, true) == std::vector<int32_t>{259, 260});
    CHECK(tok->is_eog(260));
    CHECK(tok->eos() == 260);
    CHECK_FALSE(tok->add_bos_default());
    CHECK_FALSE(tok->clean_spaces());
    CHECK(tok->decode(tok->encode("hello hello\n", false, true)) == "hello hello\n");
}

// Gemma's SentencePiece layout as its converter writes it: <pad> <eos> <bos> <unk> first, the
// turn markers as control tokens, no space prefix, BOS added.
TEST_CASE("synthetic Gemma vocab: turn markers, no space prefix, <end_of_turn> ends generation", "[tokenizer][metadata]") {
    const std::vector<std::string> tokens = {"<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>",
                                             "\xe2\x96\x81", "u", "s", "e", "r", "h", "i", "us", "er", "user", "hi",
                                             "\xe2\x96\x81hi"};
    std::vector<float> scores(tokens.size(), -10.f);
    for (size_t i = 13; i < tokens.size(); ++i) scores[i] = -1.f - (float)i / 100; // merged pieces win
    std::vector<int32_t> types(tokens.size(), 1);
    for (int i : {0, 1, 2, 4, 5}) types[(size_t)i] = 3; // control
    types[3] = 2;                                       // unknown
    Writer w;
    w.set("tokenizer.ggml.model", Value::from_string("llama"));
    w.set("tokenizer.ggml.tokens", Value::from_strings(tokens));
    w.set("tokenizer.ggml.scores", Value::from_f32s(scores));
    w.set("tokenizer.ggml.token_type", Value::from_i32s(types));
    w.set("tokenizer.ggml.bos_token_id", Value::from_u32(2));
    w.set("tokenizer.ggml.eos_token_id", Value::from_u32(1));
    w.set("tokenizer.ggml.unknown_token_id", Value::from_u32(3));
    w.set("tokenizer.ggml.padding_token_id", Value::from_u32(0));
    w.set("tokenizer.ggml.add_bos_token", Value::from_bool(true));
    w.set("tokenizer.ggml.add_space_prefix", Value::from_bool(false));
    auto tok = load(w);
    CHECK_FALSE(tok->add_space_prefix());
    CHECK(tok->encode("<start_of_turn>user hi<end_of_turn>", true, true) == std::vector<int32_t>{2, 4, 15, 17, 5});
    CHECK(tok->encode("user", false, true) == std::vector<int32_t>{15}); // not "▁" "user"
    CHECK(tok->is_eog(5));
    CHECK(tok->is_eog(1));
    CHECK(tok->decode({15, 17}) == "user hi");
}

TEST_CASE("add_bos_token and bos_token_id are honoured", "[tokenizer][metadata]") {
    Writer w = bpe_writer("llama-bpe");
    w.set("tokenizer.ggml.bos_token_id", Value::from_u32(259));
    auto tok = load(w);
    CHECK(tok->add_bos_default()); // llama3 pre-tokenizers add BOS by default
    CHECK(tok->encode("he", true, true) == std::vector<int32_t>{259, 256});
    w.set("tokenizer.ggml.add_bos_token", Value::from_bool(false));
    CHECK(load(w)->encode("he", true, true) == std::vector<int32_t>{256});
}

TEST_CASE("bad tokenizer metadata is reported with the key", "[tokenizer][metadata][errors]") {
    auto message = [](const Writer &w) {
        try {
            load(w);
        } catch (const rf::Error &e) {
            return std::string(e.what());
        }
        return std::string("<no error>");
    };
    Writer none;
    none.set("general.name", Value::from_string("x"));
    CHECK_THAT(message(none), Catch::Contains("tokenizer.ggml.model"));

    Writer t5 = bpe_writer("qwen2");
    t5.set("tokenizer.ggml.model", Value::from_string("t5"));
    CHECK_THAT(message(t5), Catch::Contains("unsupported tokenizer.ggml.model 't5'"));

    CHECK_THAT(message(bpe_writer("mystery-pre")), Catch::Contains("mystery-pre"));

    Writer no_merges = bpe_writer("qwen2");
    no_merges.set("tokenizer.ggml.merges", Value::from_u32(3));
    CHECK_THAT(message(no_merges), Catch::Contains("tokenizer.ggml.merges"));

    Writer short_types = bpe_writer("qwen2");
    short_types.set("tokenizer.ggml.token_type", Value::from_i32s({1, 1}));
    CHECK_THAT(message(short_types), Catch::Contains("tokenizer.ggml.token_type"));

    Writer dup;
    dup.set("tokenizer.ggml.model", Value::from_string("llama"));
    dup.set("tokenizer.ggml.tokens", Value::from_strings({"<unk>", "<s>", "</s>", "a", "a"}));
    CHECK_THAT(message(dup), Catch::Contains("duplicate token"));
}
