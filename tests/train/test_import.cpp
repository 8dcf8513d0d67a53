// `rocmforge import`: a tiny train.py-style output (manifest + float32 weights + tokenizer JSON)
// written here, imported in-process, and read back with rf::gguf::File / rf::Tokenizer.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "cmd_import.h"
#include "rocmforge/abi.h"
#include "rocmforge/error.h"
#include "rocmforge/gguf.h"
#include "rocmforge/tokenizer.h"
#include "rocmforge/types.h"

namespace fs = std::filesystem;

namespace {

// GPT-2's byte -> printable character map, UTF-8 encoded.
std::vector<std::string> byte_symbols() {
    std::vector<int> cp(256, -1);
    for (int b = '!'; b <= '~'; ++b) cp[b] = b;
    for (int b = 0xA1; b <= 0xAC; ++b) cp[b] = b;
    for (int b = 0xAE; b <= 0xFF; ++b) cp[b] = b;
    int n = 0;
    for (int b = 0; b < 256; ++b)
        if (cp[b] < 0) cp[b] = 256 + n++;
    std::vector<std::string> out;
    for (int c : cp) {
        std::string s;
        if (c < 0x80) s += char(c);
        else s += char(0xC0 | (c >> 6)), s += char(0x80 | (c & 0x3F));
        out.push_back(s);
    }
    return out;
}

std::string json_str(const std::string &s) {
    std::string r = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') r += '\\';
        r += c;
    }
    return r + "\"";
}

struct TinyTrained {
    int64_t n_vocab = 259, n_embd = 16, n_layer = 2, n_head = 4, n_head_kv = 2, head_dim = 4, n_ff = 24,
            n_ctx = 64;
    bool tied = true;
    std::vector<std::string> drop;                       // tensors left out of the manifest
    std::vector<std::pair<std::string, std::vector<int64_t>>> reshape; // manifest shape overrides
    int64_t truncate_weights_by = 0;

    std::string dir;
    std::vector<std::pair<std::string, std::vector<int64_t>>> tensors;
    std::vector<std::vector<float>> data;

    explicit TinyTrained(const std::string &tag) {
        dir = (fs::temp_directory_path() / ("rf_import_" + tag + "_" + std::to_string(::getpid()))).string();
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~TinyTrained() { fs::remove_all(dir); }

    std::string manifest() const { return dir + "/manifest.json"; }
    std::string tokenizer() const { return dir + "/tok.json"; }
    std::string output() const { return dir + "/out.gguf"; }

    void write() {
        const int64_t E = n_embd, Q = n_head * head_dim, KV = n_head_kv * head_dim;
        tensors = {{"token_embd.weight", {n_vocab, E}}};
        for (int64_t i = 0; i < n_layer; ++i) {
            const std::string p = "blk." + std::to_string(i) + ".";
            tensors.push_back({p + "attn_norm.weight", {E}});
            tensors.push_back({p + "attn_q.weight", {Q, E}});
            tensors.push_back({p + "attn_k.weight", {KV, E}});
            tensors.push_back({p + "attn_v.weight", {KV, E}});
            tensors.push_back({p + "attn_output.weight", {E, Q}});
            tensors.push_back({p + "ffn_norm.weight", {E}});
            tensors.push_back({p + "ffn_gate.weight", {n_ff, E}});
            tensors.push_back({p + "ffn_up.weight", {n_ff, E}});
            tensors.push_back({p + "ffn_down.weight", {E, n_ff}});
        }
        tensors.push_back({"output_norm.weight", {E}});
        if (!tied) tensors.push_back({"output.weight", {n_vocab, E}});

        std::string list;
        std::ofstream wf(dir + "/weights.f32", std::ios::binary);
        uint64_t offset = 0;
        data.clear();
        for (size_t t = 0; t < tensors.size(); ++t) {
            auto [name, shape] = tensors[t];
            int64_t n = 1;
            for (int64_t d : shape) n *= d;
            std::vector<float> v(static_cast<size_t>(n));
            for (int64_t k = 0; k < n; ++k) v[size_t(k)] = 0.1f * std::sin(0.37f * float(k) + float(t)) + 1e-4f * float(k % 7);
            wf.write(reinterpret_cast<const char *>(v.data()), std::streamsize(n * 4));
            data.push_back(v);
            bool skip = false;
            for (const auto &d : drop) skip = skip || d == name;
            for (const auto &[rn, rs] : reshape)
                if (rn == name) shape = rs;
            if (!skip) {
                std::string dims;
                for (int64_t d : shape) {
                    if (!dims.empty()) dims += ',';
                    dims += std::to_string(d);
                }
                list += std::string(list.empty() ? "" : ",\n") + "{\"name\": " + json_str(name) + ", \"shape\": [" +
                        dims + "], \"offset\": " + std::to_string(offset) + ", \"nbytes\": " + std::to_string(n * 4) + "}";
            }
            offset += uint64_t(n) * 4;
        }
        wf.close();
        if (truncate_weights_by) fs::resize_file(dir + "/weights.f32", offset - uint64_t(truncate_weights_by));

        std::ofstream mf(manifest());
        mf << "{\"format\": \"rocmforge-train-v1\", \"dtype\": \"f32\", \"weights_file\": \"weights.f32\",\n"
           << "\"hparams\": {\"n_vocab\": " << n_vocab << ", \"n_embd\": " << n_embd << ", \"n_layer\": " << n_layer
           << ", \"n_head\": " << n_head << ", \"n_head_kv\": " << n_head_kv << ", \"head_dim\": " << head_dim
           << ", \"n_ff\": " << n_ff << ", \"n_ctx\": " << n_ctx << ", \"rope_base\": 10000.0, \"rms_eps\": 1e-05"
           << ", \"tied\": " << (tied ? "true" : "false") << ", \"dropout\": 0.1},\n"
           << "\"tensors\": [" << list << "]}\n";
    }

    // 256 byte tokens, "ab" (merge "a b"), <s>, </s>.
    void write_tokenizer(int64_t extra_tokens = 0) const {
        std::vector<std::string> toks = byte_symbols();
        toks.push_back("ab");
        for (int64_t i = 0; i < extra_tokens; ++i) toks.push_back(std::string("x").append(std::to_string(i)));
        toks.push_back("<s>");
        toks.push_back("</s>");
        std::string t, types;
        for (size_t i = 0; i < toks.size(); ++i) {
            if (i) t += ',', types += ',';
            t += json_str(toks[i]);
            types += i + 2 >= toks.size() ? '3' : '1';
        }
        std::ofstream f(tokenizer());
        f << "{\"model\": \"gpt2\", \"pre\": \"gpt-2\", \"tokens\": [" << t << "], \"token_type\": [" << types
          << "], \"merges\": [\"a b\"], \"add_bos_token\": true, \"add_eos_token\": false, \"bos_token_id\": "
          << toks.size() - 2 << ", \"eos_token_id\": " << toks.size() - 1 << "}\n";
    }

    int run(std::vector<std::string> extra = {}) const {
        std::vector<std::string> args = {"import", "--manifest", manifest(), "--tokenizer", tokenizer(), "-o", output()};
        args.insert(args.end(), extra.begin(), extra.end());
        std::vector<char *> argv;
        for (auto &a : args) argv.push_back(a.data());
        return cmd_import(int(argv.size()), argv.data());
    }
};

int64_t get_int(const rf::gguf::File &f, const char *key) {
    const rf::gguf::Value *v = f.find(key);
    REQUIRE(v != nullptr);
    return v->as_int();
}

std::string error_of(const TinyTrained &m) {
    try {
        m.run();
    } catch (const rf::Error &e) {
        CHECK(e.exit_code() == rf::kExitData);
        return e.what();
    }
    FAIL("import accepted a bad input");
    return "";
}

} // namespace

TEST_CASE("import writes a llama GGUF: llama.cpp keys, F16 matrices, F32 norms", "[train][import]") {
    TinyTrained m("f16");
    m.write();
    m.write_tokenizer();
    REQUIRE(m.run() == 0);

    auto f = rf::gguf::File::open(m.output());
    CHECK(f->get_string("general.architecture") == "llama");
    CHECK(f->get_string("general.size_label").back() == 'K');
    CHECK(get_int(*f, "llama.block_count") == 2);
    CHECK(get_int(*f, "llama.context_length") == 64);
    CHECK(get_int(*f, "llama.embedding_length") == 16);
    CHECK(get_int(*f, "llama.feed_forward_length") == 24);
    CHECK(get_int(*f, "llama.attention.head_count") == 4);
    CHECK(get_int(*f, "llama.attention.head_count_kv") == 2);
    CHECK(get_int(*f, "llama.rope.dimension_count") == 4);
    CHECK(get_int(*f, "llama.vocab_size") == 259);
    CHECK(get_int(*f, "general.file_type") == 1);
    CHECK(f->find("llama.attention.key_length") == nullptr); // head_dim * n_head == n_embd
    CHECK(f->get_float("llama.rope.freq_base", 0) == 10000.0);
    CHECK(f->get_float("llama.attention.layer_norm_rms_epsilon", 0) == Approx(1e-5));
    CHECK(f->get_string("tokenizer.ggml.model") == "gpt2");
    CHECK(f->get_string("tokenizer.ggml.pre") == "gpt-2");

    REQUIRE(f->tensors().size() == m.tensors.size());
    for (size_t t = 0; t < m.tensors.size(); ++t) {
        const rf::gguf::TensorInfo &ti = f->tensors()[t];
        const auto &[name, shape] = m.tensors[t];
        INFO(name);
        CHECK(ti.name == name);
        REQUIRE(ti.n_dims == int(shape.size()));
        for (size_t d = 0; d < shape.size(); ++d) CHECK(ti.ne[d] == shape[shape.size() - 1 - d]);
        const uint8_t *p = f->tensor_data(ti);
        const std::vector<float> &src = m.data[t];
        if (shape.size() == 2) {
            REQUIRE(ti.type == RF_TYPE_F16);
            for (size_t k = 0; k < src.size(); ++k) {
                uint16_t h;
                std::memcpy(&h, p + 2 * k, 2);
                REQUIRE(h == rf::fp32_to_fp16(src[k]));
            }
        } else {
            REQUIRE(ti.type == RF_TYPE_F32);
            CHECK(std::memcmp(p, src.data(), src.size() * 4) == 0);
        }
    }
    CHECK(f->find_tensor("output.weight") == nullptr); // tied

    auto tok = rf::Tokenizer::from_gguf(*f);
    CHECK(tok->bos() == 257);
    CHECK(tok->eos() == 258);
    CHECK(tok->encode("ab", true, false) == std::vector<int32_t>{257, 256});
    CHECK(tok->is_control(257));
}

TEST_CASE("import --outtype f32, untied output, head_dim != n_embd / n_head", "[train][import]") {
    TinyTrained m("f32");
    m.tied = false;
    m.head_dim = 8; // 4 heads * 8 = 32 != n_embd 16: key_length / value_length are written
    m.write();
    m.write_tokenizer();
    REQUIRE(m.run({"--outtype", "f32", "--name", "tiny test"}) == 0);
    auto f = rf::gguf::File::open(m.output());
    CHECK(f->get_string("general.name") == "tiny test");
    CHECK(get_int(*f, "general.file_type") == 0);
    CHECK(get_int(*f, "llama.attention.key_length") == 8);
    CHECK(get_int(*f, "llama.attention.value_length") == 8);
    CHECK(get_int(*f, "llama.rope.dimension_count") == 8);
    const rf::gguf::TensorInfo *out = f->find_tensor("output.weight");
    REQUIRE(out != nullptr);
    CHECK(out->type == RF_TYPE_F32);
    CHECK(std::memcmp(f->tensor_data(*out), m.data.back().data(), m.data.back().size() * 4) == 0);
    const rf::gguf::TensorInfo *q = f->find_tensor("blk.1.attn_q.weight");
    REQUIRE(q != nullptr);
    CHECK(q->ne[0] == 16);
    CHECK(q->ne[1] == 32);
}

TEST_CASE("import names what is wrong with its inputs and writes nothing", "[train][import][errors]") {
    SECTION("missing tensor") {
        TinyTrained m("miss");
        m.drop = {"blk.1.attn_v.weight"};
        m.write();
        m.write_tokenizer();
        CHECK_THAT(error_of(m), Catch::Contains("missing tensor 'blk.1.attn_v.weight'"));
        CHECK_FALSE(fs::exists(m.output()));
    }
    SECTION("shape that the hparams do not give") {
        TinyTrained m("shape");
        m.reshape = {{"blk.0.ffn_up.weight", {16, 24}}};
        m.write();
        m.write_tokenizer();
        CHECK_THAT(error_of(m), Catch::Contains("'blk.0.ffn_up.weight' has shape [16, 24]"));
    }
    SECTION("weights file too short") {
        TinyTrained m("trunc");
        m.truncate_weights_by = 8;
        m.write();
        m.write_tokenizer();
        CHECK_THAT(error_of(m), Catch::Contains("past the end of"));
    }
    SECTION("tokenizer size differs from n_vocab") {
        TinyTrained m("vocab");
        m.write();
        m.write_tokenizer(3);
        CHECK_THAT(error_of(m), Catch::Contains("262 tokens, but the model's n_vocab is 259"));
    }
    SECTION("malformed manifest") {
        TinyTrained m("json");
        m.write();
        m.write_tokenizer();
        std::ofstream(m.manifest()) << "{\"format\": \"rocmforge-train-v1\", ";
        CHECK_THAT(error_of(m), Catch::Contains("invalid JSON at byte"));
        std::ofstream(m.manifest()) << "{\"format\": \"rocmforge-train-v1\", \"dtype\": \"f32\"}";
        CHECK_THAT(error_of(m), Catch::Contains("missing field 'hparams'"));
    }
    SECTION("bad command lines") {
        TinyTrained m("usage");
        CHECK_THROWS_AS(m.run({"--outtype", "q4_0"}), rf::UsageError);
        CHECK_THROWS_AS(m.run({"--bogus"}), rf::UsageError);
        CHECK_THROWS_AS(m.run({"--name"}), rf::UsageError);
        std::vector<std::string> args = {"import", "--manifest", m.manifest()};
        std::vector<char *> argv;
        for (auto &a : args) argv.push_back(a.data());
        CHECK_THROWS_AS(cmd_import(int(argv.size()), argv.data()), rf::UsageError);
    }
}
