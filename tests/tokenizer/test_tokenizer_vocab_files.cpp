// llama.cpp's reference cases (tests/data/vocab/*.gguf.inp -> .out) for both vocabularies.
#include "rocmforge/error.h"
#include "tokenizer_test_util.h"

#include <algorithm>

#include <catch2/catch.hpp>

using rf_test::data_path;

namespace {

const char *const kVocabs[] = {"vocab/ggml-vocab-llama-spm.gguf", "vocab/ggml-vocab-gpt-2.gguf"};

bool cleanup_applies(const std::string &s) {
    for (const char *p : {" ?", " !", " .", " ,", " '"}) {
        if (s.find(p) != std::string::npos) return true;
    }
    return false;
}

} // namespace

TEST_CASE("every reference case encodes to llama.cpp's ids", "[tokenizer][vocab]") {
    for (const char *vocab : kVocabs) {
        const std::string path = data_path(vocab);
        auto tok = rf_test::load_tokenizer(path);
        const auto cases = rf_test::read_vocab_cases(path);
        REQUIRE(cases.size() == 46);
        for (size_t i = 0; i < cases.size(); ++i) {
            INFO(vocab << " case " << i << ": '" << cases[i].text << "'");
            CHECK(tok->encode(cases[i].text, false, true) == cases[i].ids);
            CHECK(tok->encode(cases[i].text, false, false) == cases[i].ids);
        }
    }
}

TEST_CASE("reference cases round-trip through decode", "[tokenizer][vocab]") {
    for (const char *vocab : kVocabs) {
        auto tok = rf_test::load_tokenizer(data_path(vocab));
        const bool spm = tok->kind() == rf::Tokenizer::Kind::SentencePiece;
        for (const auto &c : rf_test::read_vocab_cases(data_path(vocab))) {
            INFO(vocab << ": '" << c.text << "'");
            const auto ids = tok->encode(c.text, false, true);
            // Concatenated pieces give the text back (SentencePiece adds one leading space).
            std::string pieces;
            for (int32_t id : ids) pieces += tok->token_to_piece(id, false);
            CHECK(pieces == (spm && !c.text.empty() ? " " + c.text : c.text));
            if (!tok->clean_spaces() || !cleanup_applies(c.text)) CHECK(tok->decode(ids) == c.text);
        }
    }
}

TEST_CASE("BOS/EOS, special ids and flags come from the metadata", "[tokenizer][vocab]") {
    auto spm = rf_test::load_tokenizer(data_path("vocab/ggml-vocab-llama-spm.gguf"));
    CHECK(spm->kind() == rf::Tokenizer::Kind::SentencePiece);
    CHECK(spm->n_vocab() == 32000);
    CHECK(spm->bos() == 1);
    CHECK(spm->eos() == 2);
    CHECK(spm->unk() == 0);
    CHECK(spm->add_bos_default());
    CHECK(spm->add_space_prefix());
    CHECK(spm->is_eog(2));
    CHECK_FALSE(spm->is_eog(1));
    CHECK(spm->nl() == spm->find_token("<0x0A>"));
    CHECK(spm->token_attr(3 + 'A') == rf::kAttrByte); // <0x41>

    auto bpe = rf_test::load_tokenizer(data_path("vocab/ggml-vocab-gpt-2.gguf"));
    CHECK(bpe->kind() == rf::Tokenizer::Kind::BytePairEncoding);
    CHECK(bpe->n_vocab() == 50257);
    CHECK(bpe->eos() == 50256);
    CHECK(bpe->is_eog(50256));
    CHECK(bpe->clean_spaces());
    CHECK(bpe->nl() == 198);
}

TEST_CASE("add_special puts BOS in front as the vocab asks", "[tokenizer][special]") {
    auto spm = rf_test::load_tokenizer(data_path("vocab/ggml-vocab-llama-spm.gguf"));
    CHECK(spm->encode("Hello world", true, true) == std::vector<int32_t>{1, 15043, 3186});
    CHECK(spm->encode("", true, true) == std::vector<int32_t>{1});
    CHECK(spm->encode("", false, true).empty());
}

TEST_CASE("control tokens in the text are parsed only with parse_special", "[tokenizer][special]") {
    auto spm = rf_test::load_tokenizer(data_path("vocab/ggml-vocab-llama-spm.gguf"));
    // After a special token SentencePiece adds the space prefix again.
    const auto with = spm->encode("Hello</s>world", false, true);
    CHECK(with == std::vector<int32_t>{15043, 2, 3186});
    const auto without = spm->encode("Hello</s>world", false, false);
    CHECK(std::find(without.begin(), without.end(), 2) == without.end());
    CHECK(spm->decode(with, false, true) == "Hello</s> world");
    CHECK(spm->decode(with) == "Hello world");

    auto bpe = rf_test::load_tokenizer(data_path("vocab/ggml-vocab-gpt-2.gguf"));
    const auto ids = bpe->encode("Hi<|endoftext|>Hi", false, true);
    REQUIRE(ids.size() == 3);
    CHECK(ids[1] == 50256);
    CHECK(ids[0] == ids[2]);
    CHECK(bpe->encode("<|endoftext|>", false, false).size() > 1);
    CHECK(bpe->token_to_piece(50256, true) == "<|endoftext|>");
    CHECK(bpe->token_to_piece(50256, false).empty());
}

TEST_CASE("decode applies llama.cpp's clean-up for byte-level vocabs", "[tokenizer][decode]") {
    auto bpe = rf_test::load_tokenizer(data_path("vocab/ggml-vocab-gpt-2.gguf"));
    const auto ids = bpe->encode("Hello , world ! It ' s me 's", false, true);
    CHECK(bpe->decode(ids) == "Hello, world! It's me's");
}

TEST_CASE("StreamDecoder never splits a UTF-8 character", "[tokenizer][decode]") {
    for (const char *vocab : kVocabs) {
        auto tok = rf_test::load_tokenizer(data_path(vocab));
        const std::string text = "нещо 🦙 Äpfel 我想在apple工作 😶‍🌫️";
        const auto ids = tok->encode(text, false, true);
        rf::StreamDecoder stream(*tok);
        std::string all;
        size_t held_back = 0;
        for (int32_t id : ids) {
            const std::string part = stream.push(id);
            if (part.empty()) ++held_back;
            // Each part is complete UTF-8: it never ends inside a character.
            if (!part.empty()) {
                const unsigned char last = static_cast<unsigned char>(part.back());
                CHECK((last < 0x80 || (last & 0xC0) == 0x80));
            }
            all += part;
        }
        all += stream.flush();
        CHECK(held_back > 0); // the emoji are split over byte tokens in both vocabs
        const bool spm = tok->kind() == rf::Tokenizer::Kind::SentencePiece;
        CHECK(all == (spm ? " " + text : text));
    }
}

TEST_CASE("bad token ids are reported", "[tokenizer][errors]") {
    auto spm = rf_test::load_tokenizer(data_path("vocab/ggml-vocab-llama-spm.gguf"));
    CHECK_THROWS_AS(spm->token_to_piece(32000, false), rf::Error);
    CHECK_THROWS_AS(spm->token_to_piece(-1, false), rf::Error);
    CHECK_THROWS_AS(spm->decode({5, 99999}), rf::Error);
}
