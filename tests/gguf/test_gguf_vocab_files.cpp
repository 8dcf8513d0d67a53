// The real vocab-only GGUF files from llama.cpp (tests/data/vocab) parse with their keys.
#include <catch2/catch.hpp>

#include "gguf_test_util.h"

using namespace gguf_test;
using rf::gguf::File;

namespace {
std::string vocab_path(const std::string &name) {
    const std::string dir = test_data_dir();
    REQUIRE_FALSE(dir.empty()); // set by meson test (RF_TEST_DATA)
    return dir + "/vocab/" + name;
}
} // namespace

TEST_CASE("gguf: llama.cpp GPT-2 vocab file", "[gguf][vocab]") {
    const auto f = File::open(vocab_path("ggml-vocab-gpt-2.gguf"));
    CHECK(f->version() == 3);
    CHECK(f->alignment() == 32);
    CHECK(f->tensors().empty());
    CHECK(f->metadata().size() == 16);
    CHECK(f->metadata().front().key == "general.architecture");
    CHECK(f->get_string("general.architecture") == "gpt2");
    CHECK(f->get_string("tokenizer.ggml.model") == "gpt2");
    CHECK(f->get_string("tokenizer.ggml.pre") == "gpt-2");
    CHECK(f->get_int("gpt2.context_length", 0) == 1024);
    CHECK(f->get_int("tokenizer.ggml.bos_token_id", -1) == 50256);
    CHECK(f->get_float("gpt2.attention.layer_norm_epsilon", 0) == Approx(1e-5));

    const auto *tokens = f->find("tokenizer.ggml.tokens");
    REQUIRE(tokens);
    REQUIRE(tokens->is_array());
    CHECK(tokens->elem_type == rf::gguf::ValueType::STRING);
    REQUIRE(tokens->arr.size() == 50257);
    CHECK(tokens->arr[0].s == "!");
    CHECK(tokens->arr[50256].s == "<|endoftext|>");
    const auto *types = f->find("tokenizer.ggml.token_type");
    REQUIRE(types);
    CHECK(types->elem_type == rf::gguf::ValueType::INT32);
    CHECK(types->arr.size() == 50257);
    const auto *merges = f->find("tokenizer.ggml.merges");
    REQUIRE(merges);
    REQUIRE(merges->arr.size() == 50000);
    CHECK(merges->arr[0].s == "\xc4\xa0 t"); // "Ġ t"
}

TEST_CASE("gguf: llama.cpp LLaMA SPM vocab file", "[gguf][vocab]") {
    const auto f = File::open(vocab_path("ggml-vocab-llama-spm.gguf"));
    CHECK(f->version() == 3);
    CHECK(f->tensors().empty());
    CHECK(f->metadata().size() == 22);
    CHECK(f->get_string("general.architecture") == "llama");
    CHECK(f->get_string("tokenizer.ggml.model") == "llama");
    CHECK(f->get_string("tokenizer.ggml.pre") == "default");
    CHECK(f->get_int("llama.vocab_size", 0) == 32000);
    CHECK(f->get_int("tokenizer.ggml.unknown_token_id", -1) == 0);
    CHECK(f->get_bool("tokenizer.ggml.add_bos_token", false));
    CHECK_FALSE(f->get_bool("tokenizer.ggml.add_eos_token", true));
    const auto *tokens = f->find("tokenizer.ggml.tokens");
    REQUIRE(tokens);
    REQUIRE(tokens->arr.size() == 32000);
    CHECK(tokens->arr[0].s == "<unk>");
    CHECK(tokens->arr[1].s == "<s>");
    const auto *scores = f->find("tokenizer.ggml.scores");
    REQUIRE(scores);
    CHECK(scores->elem_type == rf::gguf::ValueType::FLOAT32);
    CHECK(scores->arr.size() == 32000);
}

TEST_CASE("gguf: a vocab file re-written by the Writer is byte-identical", "[gguf][vocab]") {
    // llama.cpp's writer and ours agree on the layout of a tensor-less file.
    const std::string src = vocab_path("ggml-vocab-llama-spm.gguf");
    const auto f = File::open(src);
    rf::gguf::Writer w;
    for (const auto &kv : f->metadata()) w.set(kv.key, kv.value);
    TempDir dir;
    const std::string out = dir.file("copy.gguf");
    w.write(out);
    const Bytes a = read_file(src);
    Bytes b = read_file(out);
    // ggml does not pad a file without tensors; we pad to the alignment.
    REQUIRE(b.size() >= a.size());
    for (size_t k = a.size(); k < b.size(); ++k) REQUIRE(b[k] == 0);
    b.resize(a.size());
    CHECK(a == b);
}
