// `rocmforge tokenize` output format (llama-tokenize's) and argument errors.
#include "cmd_tokenize.h"
#include "rocmforge/error.h"
#include "tokenizer_test_util.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace {

std::string run(std::vector<std::string> args) {
    args.insert(args.begin(), "tokenize");
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    std::FILE *out = std::tmpfile();
    REQUIRE(out != nullptr);
    const int rc = cmd_tokenize_to(static_cast<int>(argv.size()), argv.data(), out);
    CHECK(rc == 0);
    std::rewind(out);
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, out)) > 0) text.append(buf, n);
    std::fclose(out);
    return text;
}

} // namespace

TEST_CASE("tokenize --ids prints llama-tokenize's list", "[tokenizer][cli]") {
    const std::string spm = rf_test::data_path("vocab/ggml-vocab-llama-spm.gguf");
    CHECK(run({"-m", spm, "-p", "Hello world", "--ids"}) == "[1, 15043, 3186]\n");
    CHECK(run({"-m", spm, "-p", "Hello world", "--ids", "--no-bos"}) == "[15043, 3186]\n");
    CHECK(run({"-m", spm, "-p", "</s>", "--ids", "--no-bos"}) == "[2]\n");
    CHECK(run({"-m", spm, "-p", "</s>", "--ids", "--no-bos", "--no-parse-special"}) != "[2]\n");
    CHECK(run({"-m", spm, "-p", "", "--ids", "--no-bos"}) == "[]\n");
}

TEST_CASE("tokenize -f reads the file byte for byte", "[tokenizer][cli]") {
    const std::string gpt2 = rf_test::data_path("vocab/ggml-vocab-gpt-2.gguf");
    const std::string path = "/tmp/rf_tok_cli_" + std::to_string(::getpid()) + ".txt";
    {
        std::FILE *f = std::fopen(path.c_str(), "wb");
        REQUIRE(f);
        std::fputs("Hello world\n", f);
        std::fclose(f);
    }
    CHECK(run({"-m", gpt2, "-f", path, "--ids"}) == "[15496, 995, 198]\n");
    CHECK(run({"-m", gpt2, "-f", path}) ==
          " 15496 -> 'Hello'\n   995 -> ' world'\n   198 -> '\n'\n");
    std::remove(path.c_str());
}

TEST_CASE("tokenize rejects bad command lines", "[tokenizer][cli][errors]") {
    const std::string spm = rf_test::data_path("vocab/ggml-vocab-llama-spm.gguf");
    CHECK_THROWS_AS(run({"-m", spm}), rf::UsageError);
    CHECK_THROWS_AS(run({"-m", spm, "-p", "x", "-f", "y"}), rf::UsageError);
    CHECK_THROWS_AS(run({"-m", spm, "--bogus"}), rf::UsageError);
    CHECK_THROWS_AS(run({"-m", spm, "-p"}), rf::UsageError);
    CHECK_THROWS_AS(run({"-m", "/nonexistent.gguf", "-p", "x"}), rf::Error);
    CHECK_THROWS_AS(run({"-m", spm, "-f", "/nonexistent.txt"}), rf::Error);
}

TEST_CASE("tokenize without -m uses the default model, as the other commands", "[tokenizer][cli]") {
    const std::string spm = rf_test::data_path("vocab/ggml-vocab-llama-spm.gguf");
    ::setenv("ROCMFORGE_DEFAULT_MODEL", spm.c_str(), 1);
    CHECK(run({"-p", "Hello world", "--ids"}) == "[1, 15043, 3186]\n");
    ::setenv("ROCMFORGE_DEFAULT_MODEL", "/nonexistent/default.gguf", 1);
    CHECK_THROWS_AS(run({"-p", "x"}), rf::UsageError);
    ::unsetenv("ROCMFORGE_DEFAULT_MODEL");
}
