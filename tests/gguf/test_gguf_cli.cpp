// The `inspect` and `dump-tensor` command implementations (tools/cmd_*.cpp), called directly.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <functional>

#include <fcntl.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include "../../tools/cmd_dump_tensor.h"
#include "../../tools/cmd_inspect.h"
#include "gguf_test_util.h"
#include "rocmforge/abi.h"
#include "rocmforge/types.h"

using namespace gguf_test;
using Catch::Matchers::Contains;

namespace {

// Runs a command with argv built from `args`, capturing what it prints to stdout.
struct CommandResult {
    int rc = -1;
    std::string out;
};

CommandResult run_command(int (*cmd)(int, char **), std::vector<std::string> args,
                          const TempDir &dir) {
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string capture = dir.file("stdout.txt");
    std::fflush(stdout);
    const int saved = dup(STDOUT_FILENO);
    const int fd = ::open(capture.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE((saved >= 0 && fd >= 0));
    dup2(fd, STDOUT_FILENO);
    ::close(fd);
    CommandResult r;
    auto restore = [&] {
        std::fflush(stdout);
        dup2(saved, STDOUT_FILENO);
        ::close(saved);
    };
    try {
        r.rc = cmd(int(args.size()), argv.data());
    } catch (...) {
        restore();
        throw;
    }
    restore();
    const Bytes b = read_file(capture);
    r.out.assign(b.begin(), b.end());
    return r;
}

// A small model: an f32 matrix, an f16 vector, and a q8_0 matrix.
std::string write_model(const TempDir &dir, std::vector<float> &f32_values,
                        std::vector<float> &f16_values) {
    f32_values.clear();
    for (int k = 0; k < 4 * 3 * 2; ++k) f32_values.push_back(float(k) * 0.75f - 3);
    f16_values = {0.5f, -1.0f, 2.0f, 1024.0f, -0.125f, 3.0f, 0.0f, 7.5f};
    rf::gguf::Writer w;
    w.set("general.architecture", rf::gguf::Value::from_string("llama"));
    w.set("tokenizer.ggml.tokens",
          rf::gguf::Value::from_strings({"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}));
    w.add_tensor("blk.0.attn_q.weight", RF_TYPE_F32, {4, 3, 2}, f32_values.data());
    w.add_tensor("blk.0.attn_norm.weight", RF_TYPE_F16, {8}, [&](uint8_t *dst) {
        for (size_t k = 0; k < f16_values.size(); ++k) {
            const uint16_t h = rf::fp32_to_fp16(f16_values[k]);
            std::memcpy(dst + 2 * k, &h, 2);
        }
    });
    w.add_tensor("output.weight", RF_TYPE_Q8_0, {32, 2}, [](uint8_t *dst) {
        std::vector<float> src(64);
        for (int k = 0; k < 64; ++k) src[size_t(k)] = float(k % 9) - 4;
        rf::quantize_row(RF_TYPE_Q8_0, src.data(), dst, 32);
        rf::quantize_row(RF_TYPE_Q8_0, src.data() + 32, dst + rf::row_size(RF_TYPE_Q8_0, 32), 32);
    });
    // An i-quant (no quantizer here): d = 1, every 32-block scale 33 (ls - 32 = 1), nibble j of
    // byte j % 16, so the row is the IQ4_NL table repeated.
    w.add_tensor("blk.0.ffn_down.weight", RF_TYPE_IQ4_XS, {256, 1}, [](uint8_t *dst) {
        std::memset(dst, 0, 136);
        dst[1] = 0x3C;                                          // d = 1.0
        dst[2] = 0xAA;                                          // scales_h: high bits 10 for
        dst[3] = 0xAA;                                          // all 8 blocks
        for (int i = 0; i < 4; ++i) dst[4 + i] = 0x11;          // low nibbles 1
        for (int j = 0; j < 128; ++j) dst[8 + j] = uint8_t((j % 16) | ((15 - j % 16) << 4));
    });
    const std::string path = dir.file("model.gguf");
    w.write(path);
    return path;
}

std::vector<float> read_floats(const std::string &path) {
    const Bytes b = read_file(path);
    std::vector<float> v(b.size() / 4);
    std::memcpy(v.data(), b.data(), v.size() * 4);
    return v;
}

} // namespace

TEST_CASE("cli: dump-tensor writes dequantized float32 rows", "[gguf][cli]") {
    TempDir dir;
    std::vector<float> f32, f16;
    const std::string model = write_model(dir, f32, f16);
    const std::string out = dir.file("t.bin");

    auto r = run_command(cmd_dump_tensor,
                         {"dump-tensor", model, "blk.0.attn_q.weight", "-o", out}, dir);
    CHECK(r.rc == 0);
    CHECK(read_floats(out) == f32);
    CHECK_FALSE(std::filesystem::exists(out + ".tmp"));

    r = run_command(cmd_dump_tensor,
                    {"dump-tensor", model, "blk.0.attn_norm.weight", "--output=" + out}, dir);
    CHECK(r.rc == 0);
    CHECK(read_floats(out) == f16); // all exactly representable in f16

    r = run_command(cmd_dump_tensor, {"dump-tensor", "-o", out, model, "output.weight"}, dir);
    CHECK(r.rc == 0);
    const auto q = read_floats(out);
    REQUIRE(q.size() == 64);
    for (int k = 0; k < 64; ++k) CHECK(q[size_t(k)] == Approx(float(k % 9) - 4).margin(0.02));

    r = run_command(cmd_dump_tensor, {"dump-tensor", model, "blk.0.ffn_down.weight", "-o", out}, dir);
    CHECK(r.rc == 0);
    const auto iq = read_floats(out);
    REQUIRE(iq.size() == 256);
    const float table[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
    for (int k = 0; k < 256; ++k) {
        const int j = k % 32;
        CHECK(iq[size_t(k)] == (j < 16 ? table[j] : table[15 - (j - 16)]));
    }
}

TEST_CASE("cli: dump-tensor errors", "[gguf][cli]") {
    TempDir dir;
    std::vector<float> f32, f16;
    const std::string model = write_model(dir, f32, f16);
    const std::string out = dir.file("t.bin");

    CHECK(run_command(cmd_dump_tensor, {"dump-tensor", "--help"}, dir).rc == 0);
    CHECK(run_command(cmd_dump_tensor, {"dump-tensor", model, "output.weight"}, dir).rc == 2);
    CHECK(run_command(cmd_dump_tensor, {"dump-tensor", model, "-o", out}, dir).rc == 2);
    CHECK(run_command(cmd_dump_tensor, {"dump-tensor", model, "x", "-o"}, dir).rc == 2);
    CHECK(run_command(cmd_dump_tensor, {"dump-tensor", model, "x", "-o", out, "--bogus"}, dir)
              .rc == 2);

    CHECK_THROWS_WITH(
        run_command(cmd_dump_tensor, {"dump-tensor", model, "blk.0.attn_k.weight", "-o", out},
                    dir),
        Contains("no tensor named 'blk.0.attn_k.weight'") && Contains("'blk.0.attn_q.weight'"));
    CHECK_THROWS_AS(run_command(cmd_dump_tensor,
                                {"dump-tensor", dir.file("missing.gguf"), "a", "-o", out}, dir),
                    rf::Error);
    CHECK_FALSE(std::filesystem::exists(out));
    CHECK_FALSE(std::filesystem::exists(out + ".tmp"));
}

TEST_CASE("cli: inspect text and json", "[gguf][cli]") {
    TempDir dir;
    std::vector<float> f32, f16;
    const std::string model = write_model(dir, f32, f16);

    auto r = run_command(cmd_inspect, {"inspect", model}, dir);
    REQUIRE(r.rc == 0);
    CHECK_THAT(r.out, Contains("version:      3"));
    CHECK_THAT(r.out, Contains("alignment:    32"));
    CHECK_THAT(r.out, Contains("general.architecture"));
    CHECK_THAT(r.out, Contains("array[string]"));
    CHECK_THAT(r.out, Contains("(10 items)")); // elided after 8 items
    CHECK_THAT(r.out, Contains("blk.0.attn_q.weight"));
    CHECK_THAT(r.out, Contains("[4, 3, 2]"));
    CHECK_THAT(r.out, Contains("q8_0"));
    CHECK_THAT(r.out, Contains("iq4_xs"));
    // 24 + 8 + 64 + 256 params; 96 + 16 + 68 + 136 bytes; 316 * 8 / 352 bits per weight.
    CHECK_THAT(r.out, Contains("totals: 352 parameters, 316 bytes, 7.182 bits per weight"));

    r = run_command(cmd_inspect, {"inspect", "--json", model}, dir);
    REQUIRE(r.rc == 0);
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    REQUIRE_FALSE(doc.HasParseError());
    CHECK(doc["version"].GetUint() == 3);
    CHECK(doc["metadata"].Size() == 2);
    CHECK(std::string(doc["metadata"][1]["key"].GetString()) == "tokenizer.ggml.tokens");
    CHECK(doc["metadata"][1]["length"].GetUint() == 10);
    CHECK(doc["metadata"][1]["value"].Size() == 8);
    REQUIRE(doc["tensors"].Size() == 4);
    CHECK(std::string(doc["tensors"][2]["type"].GetString()) == "q8_0");
    CHECK(std::string(doc["tensors"][3]["type"].GetString()) == "iq4_xs");
    CHECK(doc["tensors"][0]["shape"][2].GetInt() == 2);
    CHECK(doc["totals"]["params"].GetInt64() == 352);
    CHECK(doc["totals"]["bytes"].GetUint64() == 316);
}

TEST_CASE("cli: inspect of the real vocab file and usage errors", "[gguf][cli]") {
    TempDir dir;
    const std::string vocab = test_data_dir() + "/vocab/ggml-vocab-gpt-2.gguf";
    auto r = run_command(cmd_inspect, {"inspect", vocab}, dir);
    REQUIRE(r.rc == 0);
    CHECK_THAT(r.out, Contains("tokenizer.ggml.model"));
    CHECK_THAT(r.out, Contains("(50257 items)"));
    CHECK_THAT(r.out, Contains("tensors (0)"));

    r = run_command(cmd_inspect, {"inspect", vocab, "--json"}, dir);
    REQUIRE(r.rc == 0);
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    REQUIRE_FALSE(doc.HasParseError());
    REQUIRE(doc["metadata"].Size() == 16);
    const auto &eps = doc["metadata"][7];
    CHECK(std::string(eps["key"].GetString()) == "gpt2.attention.layer_norm_epsilon");
    CHECK(eps["value"].GetDouble() == Approx(1e-5));
    CHECK_THAT(r.out, Contains("\"value\": 1e-05"));
    CHECK(doc["totals"]["tensors"].GetUint() == 0);

    CHECK(run_command(cmd_inspect, {"inspect", "--help"}, dir).rc == 0);
    CHECK(run_command(cmd_inspect, {"inspect"}, dir).rc == 2);
    CHECK(run_command(cmd_inspect, {"inspect", vocab, "extra"}, dir).rc == 2);
    CHECK(run_command(cmd_inspect, {"inspect", "--yaml", vocab}, dir).rc == 2);
    write_file(dir.file("junk.gguf"), {'G', 'G', 'U', 'F', 1, 0, 0, 0});
    CHECK_THROWS_WITH(run_command(cmd_inspect, {"inspect", dir.file("junk.gguf")}, dir),
                      Contains("version 1"));
}
