// The `quantize` and `mkmodel` command lines: exit codes for bad names and inputs, and that a
// good command line produces a readable file.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cmd_mkmodel.h"
#include "cmd_quantize.h"
#include "model_writer_test_util.h"
#include "rocmforge/error.h"

using mw_test::TempDir;

namespace {

// Runs a subcommand like main() does: rf::Error becomes its exit code.
int run(int (*cmd)(int, char **), std::vector<std::string> args) {
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    try {
        return cmd(int(args.size()), argv.data());
    } catch (const rf::Error &e) {
        return e.exit_code();
    }
}

} // namespace

TEST_CASE("mkmodel and quantize command lines", "[cli]") {
    TempDir dir;
    const std::string model = dir.file("tiny.gguf");
    const std::string vocab = mw_test::llama_vocab();

    CHECK(run(cmd_mkmodel, {"mkmodel", "--shape", "tiny", "--type", "Q4_K_Q", "--vocab", vocab, "-o",
                            model, "--seed", "1"}) == 2);
    CHECK(run(cmd_mkmodel, {"mkmodel", "--shape", "llama-9t", "--type", "q8_0", "--vocab", vocab, "-o",
                            model, "--seed", "1"}) == 2);
    CHECK(run(cmd_mkmodel, {"mkmodel", "--shape", "tiny", "--type", "q8_0", "--vocab", vocab, "-o",
                            model, "--seed", "-3"}) == 2);
    CHECK(run(cmd_mkmodel, {"mkmodel", "--shape", "tiny", "--type", "q8_0", "--vocab", vocab, "-o",
                            model}) == 2); // no seed
    CHECK(run(cmd_mkmodel, {"mkmodel", "--shape", "tiny", "--type", "q8_0", "--vocab",
                            dir.file("none.gguf"), "-o", model, "--seed", "1"}) == 1);
    CHECK(!std::filesystem::exists(model));

    REQUIRE(run(cmd_mkmodel, {"mkmodel", "--shape", "TINY", "--type", "f16", "--vocab", vocab, "-o",
                              model, "--seed", "1", "-t", "2", "--ctx", "1024"}) == 0);
    CHECK(rf::gguf::File::open(model)->get_int("llama.context_length", -1) == 1024);

    const std::string out = dir.file("q.gguf");
    CHECK(run(cmd_quantize, {"quantize", model, out, "q4_k_xl"}) == 2);
    CHECK(run(cmd_quantize, {"quantize", model, out, "iq2_xxs"}) == 2); // needs an importance matrix
    CHECK(run(cmd_quantize, {"quantize", model, out, "iq2_xxs", "--imatrix"}) == 2);
    CHECK(run(cmd_quantize, {"quantize", model, out, "iq2_xxs", "--imatrix", dir.file("none.dat")}) == 1);
    CHECK(run(cmd_quantize, {"quantize", model, out, "iq3_xs", "--imatrix", dir.file("none.dat")}) == 2);
    // mkmodel's synthetic importance matrix (all ones).
    CHECK(run(cmd_mkmodel, {"mkmodel", "--shape", "tiny", "--type", "IQ1_M", "--vocab", vocab, "-o",
                            dir.file("iq1.gguf"), "--seed", "1"}) == 0);
    CHECK(rf::gguf::File::open(dir.file("iq1.gguf"))->find_tensor("blk.0.attn_q.weight")->type == RF_TYPE_IQ1_M);
    CHECK(run(cmd_quantize, {"quantize", model, out}) == 2);
    CHECK(run(cmd_quantize, {"quantize", model, out, "q8_0", "--output-tensor-type", "q9_0"}) == 2);
    CHECK(run(cmd_quantize, {"quantize", model, out, "q8_0", "-t", "zero"}) == 2);
    CHECK(run(cmd_quantize, {"quantize", dir.file("none.gguf"), out, "q8_0"}) == 1);
    CHECK(!std::filesystem::exists(out));

    REQUIRE(run(cmd_quantize, {"quantize", model, out, "q5_k_s", "-t", "2",
                               "--output-tensor-type", "Q8_0"}) == 0);
    auto f = rf::gguf::File::open(out);
    CHECK(f->get_int("general.file_type", -1) == 16);
    CHECK(f->find_tensor("output.weight")->type == RF_TYPE_Q8_0);
    CHECK(f->find_tensor("blk.0.attn_q.weight")->type == RF_TYPE_Q5_K);
}
