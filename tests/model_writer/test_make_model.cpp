// `mkmodel` library: tensor layout, metadata, per-tensor types, value statistics, determinism.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <map>

#include "model_writer_test_util.h"
#include "rocmforge/error.h"
#include "rocmforge/model_shapes.h"
#include "rocmforge/model_writer.h"
#include "rocmforge/types.h"

using mw_test::TempDir;

namespace {

rf::MakeModelOptions tiny_options(const std::string &out, rf::QuantMix mix, uint64_t seed) {
    rf::MakeModelOptions opt;
    opt.shape = "tiny";
    opt.mix = mix;
    opt.vocab_path = mw_test::llama_vocab();
    opt.output_path = out;
    opt.seed = seed;
    opt.n_threads = 2;
    return opt;
}

// The tensors of built-in shape `name` (rf::shape_tensors), name -> ne.
std::map<std::string, std::vector<int64_t>> tensors_of(const char *name) {
    const rf::ModelShape *s = rf::find_model_shape(name);
    REQUIRE(s != nullptr);
    std::map<std::string, std::vector<int64_t>> by_name;
    for (const auto &t : rf::shape_tensors(*s)) by_name[t.name] = t.ne;
    return by_name;
}

// Writes built-in shape `shape` with `mix` (seed 1) to dir/file and opens the result.
std::unique_ptr<rf::gguf::File> write_shape(const TempDir &dir, const std::string &file, const char *shape, rf::QuantMix mix) {
    rf::MakeModelOptions opt = tiny_options(dir.file(file), mix, 1);
    opt.shape = shape;
    rf::make_model(opt);
    return rf::gguf::File::open(opt.output_path);
}

struct Stats {
    double mean = 0, stddev = 0;
    bool finite = true;
};

Stats stats_of(const std::vector<float> &v) {
    Stats s;
    double sum = 0, sq = 0;
    for (float x : v) {
        if (!std::isfinite(x)) s.finite = false;
        sum += x;
    }
    s.mean = sum / double(v.size());
    for (float x : v) sq += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(sq / double(v.size()));
    return s;
}

} // namespace

TEST_CASE("mkmodel tiny writes llama.cpp's tensor names, shapes and metadata", "[mkmodel]") {
    TempDir dir;
    const std::string out = dir.file("tiny.gguf");
    rf::make_model(tiny_options(out, rf::QuantMix::Q8_0, 42));
    auto f = rf::gguf::File::open(out);
    auto vocab = rf::gguf::File::open(mw_test::llama_vocab());
    const int64_t n_vocab = int64_t(vocab->find("tokenizer.ggml.tokens")->arr.size());

    CHECK(f->get_string("general.architecture") == "llama");
    CHECK(f->get_int("llama.block_count", -1) == 4);
    CHECK(f->get_int("llama.embedding_length", -1) == 256);
    CHECK(f->get_int("llama.feed_forward_length", -1) == 768);
    CHECK(f->get_int("llama.attention.head_count", -1) == 8);
    CHECK(f->get_int("llama.attention.head_count_kv", -1) == 4);
    CHECK(f->get_int("llama.context_length", -1) == 2048);
    CHECK(f->get_int("llama.rope.dimension_count", -1) == 32);
    CHECK(f->get_int("llama.vocab_size", -1) == n_vocab);
    CHECK(f->get_float("llama.rope.freq_base", 0) == Approx(10000.0));
    CHECK(f->get_float("llama.attention.layer_norm_rms_epsilon", 0) == Approx(1e-5));
    CHECK(f->get_int("general.file_type", -1) == 7);          // LLAMA_FTYPE_MOSTLY_Q8_0
    CHECK(f->get_int("general.quantization_version", -1) == 2);
    // Every tokenizer key of the vocab is copied verbatim.
    int copied = 0;
    for (const auto &kv : vocab->metadata()) {
        if (kv.key.rfind("tokenizer.", 0) != 0) continue;
        const rf::gguf::Value *v = f->find(kv.key);
        REQUIRE(v != nullptr);
        CHECK(v->to_string(1u << 30) == kv.value.to_string(1u << 30));
        ++copied;
    }
    CHECK(copied >= 3);

    REQUIRE(f->tensors().size() == 2 + 4 * 9 + 1);
    std::map<std::string, std::vector<int64_t>> expect = {
        {"token_embd.weight", {256, n_vocab}}, {"output_norm.weight", {256}},
        {"output.weight", {256, n_vocab}},     {"blk.3.attn_norm.weight", {256}},
        {"blk.0.attn_q.weight", {256, 256}},   {"blk.0.attn_k.weight", {256, 128}},
        {"blk.2.attn_v.weight", {256, 128}},   {"blk.1.attn_output.weight", {256, 256}},
        {"blk.1.ffn_norm.weight", {256}},      {"blk.3.ffn_gate.weight", {256, 768}},
        {"blk.3.ffn_up.weight", {256, 768}},   {"blk.0.ffn_down.weight", {768, 256}},
    };
    for (const auto &[name, ne] : expect) {
        INFO(name);
        const rf::gguf::TensorInfo *t = f->find_tensor(name);
        REQUIRE(t != nullptr);
        REQUIRE(t->n_dims == int(ne.size()));
        for (size_t d = 0; d < ne.size(); ++d) CHECK(t->ne[d] == ne[d]);
        CHECK(t->type == (ne.size() == 1 ? RF_TYPE_F32 : RF_TYPE_Q8_0));
    }
}

TEST_CASE("mkmodel picks the mix's per-tensor types", "[mkmodel]") {
    TempDir dir;
    SECTION("Q4_K_M: output q6_K, attn_v/ffn_down q6_K on layers use_more_bits picks (2, 3 of 4)") {
        const std::string out = dir.file("q4km.gguf");
        rf::make_model(tiny_options(out, rf::QuantMix::Q4_K_M, 1));
        auto f = rf::gguf::File::open(out);
        CHECK(f->get_int("general.file_type", -1) == 15);
        CHECK(f->find_tensor("output.weight")->type == RF_TYPE_Q6_K);
        CHECK(f->find_tensor("token_embd.weight")->type == RF_TYPE_Q4_K);
        CHECK(f->find_tensor("blk.0.attn_q.weight")->type == RF_TYPE_Q4_K);
        CHECK(f->find_tensor("blk.0.attn_v.weight")->type == RF_TYPE_Q4_K);
        CHECK(f->find_tensor("blk.1.ffn_down.weight")->type == RF_TYPE_Q4_K);
        CHECK(f->find_tensor("blk.2.attn_v.weight")->type == RF_TYPE_Q6_K);
        CHECK(f->find_tensor("blk.3.ffn_down.weight")->type == RF_TYPE_Q6_K);
        CHECK(f->find_tensor("blk.3.ffn_norm.weight")->type == RF_TYPE_F32);
    }
    SECTION("IQ4_XS: general.file_type 30, the i-quant on most tensors, values decode") {
        const std::string out = dir.file("iq4xs.gguf");
        rf::make_model(tiny_options(out, rf::QuantMix::IQ4_XS, 1));
        auto f = rf::gguf::File::open(out);
        CHECK(f->get_int("general.file_type", -1) == 30);
        const rf::gguf::TensorInfo *q = f->find_tensor("blk.1.attn_q.weight");
        CHECK(q->type == RF_TYPE_IQ4_XS);
        CHECK(f->find_tensor("output.weight")->type == RF_TYPE_Q6_K);
        std::vector<float> row(size_t(q->ne[0]));
        rf::dequantize_row(q->type, f->tensor_data(*q), row.data(), q->ne[0]);
        double s = 0;
        for (float v : row) s += double(v) * v;
        CHECK(std::isfinite(s));
        CHECK(s > 0);
    }
    SECTION("F32 and MXFP6 (no llama.cpp file type: general.file_type omitted)") {
        rf::make_model(tiny_options(dir.file("f32.gguf"), rf::QuantMix::F32, 1));
        auto f = rf::gguf::File::open(dir.file("f32.gguf"));
        CHECK(f->get_int("general.file_type", -1) == 0);
        CHECK(f->find_tensor("blk.0.ffn_up.weight")->type == RF_TYPE_F32);
        rf::make_model(tiny_options(dir.file("mx.gguf"), rf::QuantMix::MXFP6_E2M3, 1));
        auto m = rf::gguf::File::open(dir.file("mx.gguf"));
        CHECK(m->find("general.file_type") == nullptr);
        CHECK(m->find_tensor("blk.0.ffn_up.weight")->type == RF_TYPE_MXFP6_E2M3);
        CHECK(m->find_tensor("output.weight")->type == RF_TYPE_Q8_0);
    }
}

TEST_CASE("mkmodel weights have sensible scales", "[mkmodel]") {
    TempDir dir;
    for (rf::QuantMix mix : {rf::QuantMix::F16, rf::QuantMix::Q4_K_M}) {
        INFO(rf::mix_name(mix));
        const std::string out = dir.file(std::string(rf::mix_name(mix)) + ".gguf");
        rf::make_model(tiny_options(out, mix, 3));
        auto f = rf::gguf::File::open(out);
        const Stats q = stats_of(mw_test::dequantize_tensor(*f, "blk.1.attn_q.weight"));
        CHECK(q.finite);
        CHECK(std::fabs(q.mean) < 0.002);
        CHECK(q.stddev == Approx(0.02).epsilon(0.1));
        const Stats n = stats_of(mw_test::dequantize_tensor(*f, "blk.1.ffn_norm.weight"));
        CHECK(n.mean == Approx(1.0).epsilon(0.01));
        CHECK(n.stddev > 0.005);
        CHECK(n.stddev < 0.05);
        // Output rows spread logits (std ~2 for unit-RMS hidden states): 2 / sqrt(256).
        const Stats o = stats_of(mw_test::dequantize_tensor(*f, "output.weight"));
        CHECK(o.stddev == Approx(0.125).epsilon(0.1));
    }
}

TEST_CASE("mkmodel: same seed same bytes, any thread count; other seed other bytes", "[mkmodel]") {
    TempDir dir;
    for (rf::QuantMix mix : {rf::QuantMix::Q8_0, rf::QuantMix::Q4_K_M}) {
        INFO(rf::mix_name(mix));
        auto a = tiny_options(dir.file("a.gguf"), mix, 7);
        a.n_threads = 1;
        auto b = tiny_options(dir.file("b.gguf"), mix, 7);
        b.n_threads = 3;
        auto c = tiny_options(dir.file("c.gguf"), mix, 8);
        rf::make_model(a);
        rf::make_model(b);
        rf::make_model(c);
        const auto ba = mw_test::read_bytes(a.output_path), bb = mw_test::read_bytes(b.output_path),
                   bc = mw_test::read_bytes(c.output_path);
        REQUIRE(ba.size() > 1000000);
        const bool same_seed_same_bytes = ba == bb; // (not CHECK(ba == bb): Catch would print MiBs)
        CHECK(same_seed_same_bytes);
        REQUIRE(ba.size() == bc.size()); // the layout does not depend on the seed
        const bool other_seed_other_bytes = ba != bc;
        CHECK(other_seed_other_bytes);
        // Different seeds differ in the tensors, not just a metadata string.
        auto fa = rf::gguf::File::open(a.output_path), fc = rf::gguf::File::open(c.output_path);
        const auto *ta = fa->find_tensor("blk.0.ffn_gate.weight");
        const auto *tc = fc->find_tensor("blk.0.ffn_gate.weight");
        CHECK(std::memcmp(fa->tensor_data(*ta), fc->tensor_data(*tc), ta->nbytes) != 0);
    }
}

TEST_CASE("mkmodel adopts the vocab's size and honours --ctx", "[mkmodel]") {
    TempDir dir;
    rf::MakeModelOptions opt = tiny_options(dir.file("g.gguf"), rf::QuantMix::Q8_0, 1);
    opt.shape = "tinyllama-1.1b"; // 32000 tokens; gpt-2 vocab has 50257
    opt.vocab_path = mw_test::gpt2_vocab();
    opt.n_ctx = 512;
    std::vector<std::string> notes;
    opt.on_note = [&](const std::string &n) { notes.push_back(n); };
    // A missing vocab file is a data error, reported before anything is written.
    rf::MakeModelOptions bad = opt;
    bad.vocab_path = dir.file("missing.gguf");
    CHECK_THROWS_AS(rf::make_model(bad), rf::Error);
    CHECK(notes.empty());
    // The note comes before any tensor is written: stop there rather than write 1.1B weights.
    rf::MakeModelOptions big = opt;
    big.on_note = [&](const std::string &n) {
        notes.push_back(n);
        throw std::runtime_error("stop after the note");
    };
    CHECK_THROWS_WITH(rf::make_model(big), "stop after the note");
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], Catch::Contains("32000") && Catch::Contains("50257"));
    CHECK(!std::filesystem::exists(opt.output_path));
    notes.clear();
    // ...then the tiny shape with the gpt-2 vocab: no note (tiny has no vocab size of its own).
    opt.shape = "tiny";
    rf::make_model(opt);
    CHECK(notes.empty());
    auto f = rf::gguf::File::open(opt.output_path);
    CHECK(f->find_tensor("token_embd.weight")->ne[1] == 50257);
    CHECK(f->get_int("llama.context_length", -1) == 512);
    CHECK(f->get_string("tokenizer.ggml.model") == "gpt2");
}

TEST_CASE("qwen2-0.5b shape: biases, tied embeddings, no rope.dimension_count", "[mkmodel]") {
    const rf::ModelShape *s = rf::find_model_shape("Qwen2-0.5B");
    REQUIRE(s != nullptr);
    CHECK(s->arch == "qwen2");
    const auto tensors = rf::shape_tensors(*s);
    std::map<std::string, std::vector<int64_t>> by_name;
    for (const auto &t : tensors) by_name[t.name] = t.ne;
    CHECK(by_name.count("output.weight") == 0);
    CHECK(by_name.at("blk.23.attn_k.bias") == std::vector<int64_t>{128});
    CHECK(by_name.at("blk.0.attn_q.bias") == std::vector<int64_t>{896});
    CHECK(by_name.at("blk.0.ffn_down.weight") == std::vector<int64_t>{4864, 896});
    CHECK(by_name.at("token_embd.weight") == std::vector<int64_t>{896, 151936});
    CHECK(tensors.size() == size_t(1 + 24 * 12 + 1));

    const rf::ModelShape *l3 = rf::find_model_shape("llama3-8b");
    REQUIRE(l3 != nullptr);
    CHECK(l3->n_embd_kv() == 1024);
    CHECK(l3->rope_freq_base == 500000.0f);
    CHECK(rf::find_model_shape("llama9-1t") == nullptr);
}

TEST_CASE("qwen3, gemma2, gemma3, phi3 shapes: llama.cpp's tensor names and sizes", "[mkmodel]") {
    using V = std::vector<int64_t>;
    const auto q06 = tensors_of("qwen3-0.6b"); // head_dim 128: Q is 2048 wide, n_embd 1024
    CHECK(q06.at("blk.27.attn_q.weight") == V{1024, 2048});
    CHECK(q06.at("blk.27.attn_output.weight") == V{2048, 1024});
    CHECK(q06.at("blk.0.attn_k_norm.weight") == V{128});
    CHECK(q06.count("output.weight") == 0);
    CHECK(q06.count("blk.0.attn_q.bias") == 0);
    CHECK(q06.size() == size_t(1 + 28 * 11 + 1));
    CHECK(tensors_of("qwen3-8b").at("output.weight") == V{4096, 151936});

    const auto g2 = tensors_of("gemma2-2b");
    CHECK(g2.at("blk.25.attn_q.weight") == V{2304, 2048});
    CHECK(g2.at("blk.25.attn_k.weight") == V{2304, 1024});
    CHECK(g2.at("blk.0.post_attention_norm.weight") == V{2304});
    CHECK(g2.at("blk.0.post_ffw_norm.weight") == V{2304});
    CHECK(g2.count("blk.0.attn_q_norm.weight") == 0);
    CHECK(g2.size() == size_t(1 + 26 * 11 + 1));
    const auto g3 = tensors_of("gemma3-1b");
    CHECK(g3.at("blk.0.attn_q_norm.weight") == V{256});
    CHECK(g3.at("blk.0.attn_k.weight") == V{1152, 256});
    CHECK(g3.at("token_embd.weight") == V{1152, 262144});

    const auto phi = tensors_of("phi3-mini");
    CHECK(phi.at("blk.31.attn_qkv.weight") == V{3072, 9216});
    CHECK(phi.at("blk.31.ffn_up.weight") == V{3072, 16384});
    CHECK(phi.count("blk.0.ffn_gate.weight") == 0);
    CHECK(phi.count("blk.0.attn_q.weight") == 0);
    CHECK(phi.size() == size_t(1 + 32 * 6 + 2));
}

TEST_CASE("mkmodel: mixture-of-experts shapes have the converter's expert tensors", "[mkmodel]") {
    using V = std::vector<int64_t>;
    const auto mx = tensors_of("mixtral-8x7b");
    CHECK(mx.at("blk.31.ffn_gate_inp.weight") == V{4096, 8});
    CHECK(mx.at("blk.31.ffn_gate_exps.weight") == V{4096, 14336, 8});
    CHECK(mx.at("blk.31.ffn_up_exps.weight") == V{4096, 14336, 8});
    CHECK(mx.at("blk.31.ffn_down_exps.weight") == V{14336, 4096, 8});
    CHECK(mx.at("blk.0.attn_k.weight") == V{4096, 1024});
    CHECK(mx.count("blk.0.ffn_gate.weight") == 0);
    CHECK(mx.count("blk.0.ffn_down.weight") == 0);
    CHECK(mx.size() == size_t(1 + 32 * 10 + 2));
    const auto q = tensors_of("qwen3-30b-a3b");
    CHECK(q.at("blk.47.ffn_gate_inp.weight") == V{2048, 128});
    CHECK(q.at("blk.47.ffn_gate_exps.weight") == V{2048, 768, 128});
    CHECK(q.at("blk.47.ffn_down_exps.weight") == V{768, 2048, 128});
    CHECK(q.at("blk.0.attn_q.weight") == V{2048, 4096});
    CHECK(q.at("blk.0.attn_q_norm.weight") == V{128});
    CHECK(q.size() == size_t(1 + 48 * 12 + 2));
}

TEST_CASE("mkmodel tiny-qwen3moe writes the expert keys and every expert's rows", "[mkmodel]") {
    TempDir dir;
    auto f = write_shape(dir, "q3m.gguf", "tiny-qwen3moe", rf::QuantMix::Q4_K_M);
    CHECK(f->get_string("general.architecture") == "qwen3moe");
    CHECK(f->get_int("qwen3moe.expert_count", -1) == 16);
    CHECK(f->get_int("qwen3moe.expert_used_count", -1) == 4);
    CHECK(f->get_int("qwen3moe.expert_feed_forward_length", -1) == 64);
    const rf::gguf::TensorInfo *router = f->find_tensor("blk.0.ffn_gate_inp.weight");
    REQUIRE(router != nullptr);
    CHECK(router->type == RF_TYPE_F32); // llama.cpp keeps the router unquantized
    const rf::gguf::TensorInfo *up = f->find_tensor("blk.2.ffn_up_exps.weight");
    REQUIRE(up != nullptr);
    CHECK(up->ne[2] == 16);
    // The last expert's rows are written (not left zero): its last block differs from zeros.
    const uint8_t *data = f->tensor_data(*up);
    const uint64_t row = up->nbytes / uint64_t(up->ne[1] * up->ne[2]);
    bool nonzero = false;
    for (uint64_t i = up->nbytes - row; i < up->nbytes; ++i) nonzero |= data[i] != 0;
    CHECK(nonzero);
}

TEST_CASE("mkmodel: qwen2moe shapes have the converter's expert and shared-expert tensors", "[mkmodel]") {
    using V = std::vector<int64_t>;
    const auto a = tensors_of("qwen1.5-moe-a2.7b");
    CHECK(a.at("blk.23.ffn_gate_inp.weight") == V{2048, 60});
    CHECK(a.at("blk.23.ffn_gate_exps.weight") == V{2048, 1408, 60});
    CHECK(a.at("blk.23.ffn_down_exps.weight") == V{1408, 2048, 60});
    CHECK(a.at("blk.23.ffn_gate_inp_shexp.weight") == V{2048});
    CHECK(a.at("blk.23.ffn_gate_shexp.weight") == V{2048, 5632});
    CHECK(a.at("blk.23.ffn_up_shexp.weight") == V{2048, 5632});
    CHECK(a.at("blk.23.ffn_down_shexp.weight") == V{5632, 2048});
    CHECK(a.at("blk.0.attn_q.bias") == V{2048});
    CHECK(a.size() == size_t(1 + 24 * 17 + 2));
    const auto b = tensors_of("qwen2-57b-a14b");
    CHECK(b.at("blk.27.ffn_gate_exps.weight") == V{3584, 2560, 64});
    CHECK(b.at("blk.27.ffn_down_shexp.weight") == V{20480, 3584});
    CHECK(b.at("blk.0.attn_k.weight") == V{3584, 512});
    CHECK(b.at("blk.0.attn_k.bias") == V{512});
}

TEST_CASE("mkmodel tiny-qwen2moe writes the shared-expert key and keeps its gate f32", "[mkmodel]") {
    TempDir dir;
    auto f = write_shape(dir, "q2m.gguf", "tiny-qwen2moe", rf::QuantMix::Q8_0);
    CHECK(f->get_string("general.architecture") == "qwen2moe");
    CHECK(f->get_int("qwen2moe.expert_count", -1) == 8);
    CHECK(f->get_int("qwen2moe.expert_used_count", -1) == 4);
    CHECK(f->get_int("qwen2moe.expert_feed_forward_length", -1) == 64);
    CHECK(f->get_int("qwen2moe.expert_shared_feed_forward_length", -1) == 192);
    const rf::gguf::TensorInfo *gate = f->find_tensor("blk.2.ffn_gate_inp_shexp.weight");
    REQUIRE(gate != nullptr);
    CHECK(gate->type == RF_TYPE_F32);
    CHECK(gate->n_dims == 1);
    const rf::gguf::TensorInfo *down = f->find_tensor("blk.2.ffn_down_shexp.weight");
    REQUIRE(down != nullptr);
    CHECK(down->type == RF_TYPE_Q8_0);
    CHECK(down->ne[0] == 192);
}

TEST_CASE("mkmodel: gpt-oss shapes have the converter's biases, sinks and experts", "[mkmodel]") {
    using V = std::vector<int64_t>;
    const auto a = tensors_of("gpt-oss-20b");
    CHECK(a.at("token_embd.weight") == V{2880, 201088});
    CHECK(a.at("output.weight") == V{2880, 201088});
    CHECK(a.at("blk.0.attn_q.weight") == V{2880, 4096}); // 64 heads of 64
    CHECK(a.at("blk.0.attn_q.bias") == V{4096});
    CHECK(a.at("blk.0.attn_k.weight") == V{2880, 512});  // 8 KV heads
    CHECK(a.at("blk.0.attn_output.weight") == V{4096, 2880});
    CHECK(a.at("blk.0.attn_output.bias") == V{2880});
    CHECK(a.at("blk.23.attn_sinks.weight") == V{64});
    CHECK(a.at("blk.23.post_attention_norm.weight") == V{2880});
    CHECK(a.count("blk.0.ffn_norm.weight") == 0);
    CHECK(a.at("blk.23.ffn_gate_inp.weight") == V{2880, 32});
    CHECK(a.at("blk.23.ffn_gate_inp.bias") == V{32});
    CHECK(a.at("blk.23.ffn_gate_exps.weight") == V{2880, 2880, 32});
    CHECK(a.at("blk.23.ffn_gate_exps.bias") == V{2880, 32});
    CHECK(a.at("blk.23.ffn_down_exps.bias") == V{2880, 32});
    CHECK(a.size() == size_t(1 + 24 * 19 + 2));
    const auto b = tensors_of("gpt-oss-120b");
    CHECK(b.at("blk.35.ffn_up_exps.weight") == V{2880, 2880, 128});
    CHECK(b.at("blk.35.ffn_up_exps.bias") == V{2880, 128});
    CHECK(b.size() == size_t(1 + 36 * 19 + 2));
}

TEST_CASE("mkmodel tiny-gpt-oss: the family's keys, MXFP4 experts, f32 biases", "[mkmodel]") {
    TempDir dir;
    auto f = write_shape(dir, "go.gguf", "tiny-gpt-oss", rf::QuantMix::Q8_0);
    CHECK(f->get_string("general.architecture") == "gpt-oss");
    CHECK(f->get_int("gpt-oss.expert_count", -1) == 8);
    CHECK(f->get_int("gpt-oss.expert_used_count", -1) == 4);
    CHECK(f->get_int("gpt-oss.expert_feed_forward_length", -1) == 64);
    CHECK(f->get_int("gpt-oss.attention.sliding_window", -1) == 8);
    CHECK(f->get_int("gpt-oss.attention.key_length", -1) == 64);
    CHECK(f->get_string("gpt-oss.rope.scaling.type") == "yarn");
    CHECK(f->get_int("gpt-oss.rope.scaling.original_context_length", -1) == 256);
    const rf::gguf::TensorInfo *up = f->find_tensor("blk.2.ffn_up_exps.weight");
    REQUIRE(up != nullptr);
    CHECK(up->type == RF_TYPE_MXFP4); // as the converter keeps the checkpoint's experts
    const rf::gguf::TensorInfo *q = f->find_tensor("blk.2.attn_q.weight");
    REQUIRE(q != nullptr);
    CHECK(q->type == RF_TYPE_Q8_0);
    for (const char *bias : {"blk.1.ffn_up_exps.bias", "blk.1.ffn_gate_inp.bias", "blk.1.attn_output.bias", "blk.1.attn_sinks.weight"}) {
        INFO(bias);
        const rf::gguf::TensorInfo *t = f->find_tensor(bias);
        REQUIRE(t != nullptr);
        CHECK(t->type == RF_TYPE_F32);
    }
    auto g = write_shape(dir, "go16.gguf", "tiny-gpt-oss", rf::QuantMix::F16);
    CHECK(g->find_tensor("blk.0.ffn_down_exps.weight")->type == RF_TYPE_F16); // float files stay float
}

TEST_CASE("mkmodel encoder shapes: bge-small (bert) and nomic-embed (nomic-bert) tensors", "[mkmodel]") {
    using V = std::vector<int64_t>;
    const auto b = tensors_of("bge-small");
    CHECK(b.at("token_embd.weight") == V{384, 30522});
    CHECK(b.at("position_embd.weight") == V{384, 512});
    CHECK(b.at("token_types.weight") == V{384, 2});
    CHECK(b.at("blk.11.attn_q.bias") == V{384});
    CHECK(b.at("blk.11.ffn_up.weight") == V{384, 1536});
    CHECK(b.at("blk.11.ffn_down.bias") == V{384});
    CHECK(b.at("blk.11.layer_output_norm.bias") == V{384});
    CHECK(b.count("output_norm.weight") == 0);
    CHECK(b.size() == size_t(5 + 12 * 16));
    const auto n = tensors_of("nomic-embed");
    CHECK(n.at("blk.0.attn_qkv.weight") == V{768, 2304});
    CHECK(n.at("blk.0.ffn_gate.weight") == V{768, 3072});
    CHECK(n.count("position_embd.weight") == 0);
    CHECK(n.count("blk.0.attn_output.bias") == 0);
    CHECK(n.size() == size_t(4 + 12 * 9));
}

TEST_CASE("mkmodel tiny-bert writes the encoder keys", "[mkmodel]") {
    TempDir dir;
    auto f = write_shape(dir, "bert.gguf", "tiny-bert", rf::QuantMix::F16);
    CHECK(f->get_string("general.architecture") == "bert");
    CHECK(f->get_int("bert.pooling_type", -1) == 2);
    CHECK(f->get_int("bert.context_length", -1) == 512);
    CHECK(f->get_int("bert.attention.head_count", -1) == 4);
    REQUIRE(f->find("bert.attention.layer_norm_epsilon") != nullptr);
    CHECK(f->find("bert.attention.head_count_kv") == nullptr);
    CHECK(f->find_tensor("position_embd.weight")->ne[1] == 512);
    CHECK(f->find_tensor("blk.0.attn_q.weight")->type == RF_TYPE_F16);
    auto nomic = write_shape(dir, "nomic.gguf", "tiny-nomic-bert", rf::QuantMix::F16);
    CHECK(nomic->get_int("nomic-bert.pooling_type", -1) == 1);
    REQUIRE(nomic->find("nomic-bert.rope.freq_base") != nullptr);
    CHECK(nomic->find("nomic-bert.rope.freq_base")->as_float() == 1000.0);
}

TEST_CASE("mkmodel tiny-gemma2 writes the family's keys", "[mkmodel]") {
    TempDir dir;
    auto f = write_shape(dir, "g2.gguf", "tiny-gemma2", rf::QuantMix::Q8_0);
    CHECK(f->get_string("general.architecture") == "gemma2");
    CHECK(f->get_int("gemma2.attention.key_length", -1) == 64);
    CHECK(f->get_int("gemma2.attention.value_length", -1) == 64);
    CHECK(f->get_int("gemma2.attention.sliding_window", -1) == 8);
    CHECK(f->find("gemma2.attn_logit_softcapping")->as_float() == 50.0);
    CHECK(f->find("gemma2.final_logit_softcapping")->as_float() == 30.0);
    CHECK(f->find_tensor("blk.2.post_ffw_norm.weight") != nullptr);
    CHECK(f->find_tensor("output.weight") == nullptr);
}

TEST_CASE("mkmodel: an error mid-write leaves no output and no temp file", "[mkmodel]") {
    TempDir dir;
    const std::string out = dir.file("keep.gguf");
    mw_test::write_text(out, "previous contents");
    rf::MakeModelOptions opt = tiny_options(out, rf::QuantMix::Q8_0, 1);
    opt.on_tensor = [](const rf::TensorWriteEvent &ev) {
        if (ev.index == 5) throw rf::Error("simulated failure at tensor 5");
    };
    CHECK_THROWS_WITH(rf::make_model(opt), Catch::Contains("simulated failure"));
    CHECK(mw_test::read_text(out) == "previous contents");
    CHECK(!std::filesystem::exists(out + ".tmp"));

    rf::MakeModelOptions unknown = tiny_options(dir.file("x.gguf"), rf::QuantMix::Q8_0, 1);
    unknown.shape = "llama9-1t";
    try {
        rf::make_model(unknown);
        FAIL("unknown shape accepted");
    } catch (const rf::Error &e) {
        CHECK(e.exit_code() == rf::kExitUsage);
    }
    CHECK(!std::filesystem::exists(dir.file("x.gguf")));
}

TEST_CASE("mkmodel tiny-qwen35 / tiny-qwen35moe: DeltaNet and gated attention layers, their keys", "[mkmodel][qwen35]") {
    using V = std::vector<int64_t>;
    const auto d = tensors_of("tiny-qwen35");
    // Layers 0..2 DeltaNet (channels 2 * 2 * 32 + 4 * 32 = 256), layer 3 full attention (query and
    // gate rows of 4 heads of 64 in attn_q).
    CHECK(d.at("blk.0.attn_qkv.weight") == V{128, 256});
    CHECK(d.at("blk.0.attn_gate.weight") == V{128, 128});
    CHECK(d.at("blk.2.ssm_conv1d.weight") == V{4, 256});
    CHECK(d.at("blk.1.ssm_a") == V{4});
    CHECK(d.at("blk.1.ssm_beta.weight") == V{128, 4});
    CHECK(d.at("blk.1.ssm_norm.weight") == V{32});
    CHECK(d.at("blk.3.attn_q.weight") == V{128, 512});
    CHECK(d.count("blk.3.attn_qkv.weight") == 0);
    CHECK(d.count("blk.0.attn_q.weight") == 0);
    CHECK(d.at("blk.3.post_attention_norm.weight") == V{128});
    CHECK(d.size() == size_t(3 + 3 * 14 + 11)); // embeddings, norm, output; 14 a DeltaNet layer, 11 the attention one
    const auto m = tensors_of("tiny-qwen35moe");
    CHECK(m.at("blk.0.ffn_gate_exps.weight") == V{128, 64, 8});
    CHECK(m.at("blk.3.ffn_gate_inp_shexp.weight") == V{128});
    CHECK(m.count("blk.0.ffn_gate.weight") == 0);
    TempDir dir;
    auto f = write_shape(dir, "q35.gguf", "tiny-qwen35", rf::QuantMix::Q8_0);
    CHECK(f->get_string("general.architecture") == "qwen35");
    CHECK(f->get_int("qwen35.ssm.conv_kernel", -1) == 4);
    CHECK(f->get_int("qwen35.ssm.state_size", -1) == 32);
    CHECK(f->get_int("qwen35.ssm.group_count", -1) == 2);
    CHECK(f->get_int("qwen35.ssm.time_step_rank", -1) == 4);
    CHECK(f->get_int("qwen35.ssm.inner_size", -1) == 128);
    CHECK(f->get_int("qwen35.full_attention_interval", -1) == 4);
    CHECK(f->get_int("qwen35.rope.dimension_count", -1) == 16);
    CHECK(f->find_tensor("blk.0.ssm_conv1d.weight")->type == RF_TYPE_F32); // never quantized
    CHECK(f->find_tensor("blk.0.attn_qkv.weight")->type == RF_TYPE_Q8_0);
    const rf::gguf::TensorInfo *a = f->find_tensor("blk.0.ssm_a");
    REQUIRE(a != nullptr);
    const float *av = reinterpret_cast<const float *>(f->tensor_data(*a));
    for (int i = 0; i < 4; ++i) CHECK(av[i] < 0.0f); // a decay: -exp(A_log)
    const auto n = tensors_of("tiny-qwen3next");
    CHECK(n.at("blk.0.ssm_ba.weight") == V{128, 8});
    CHECK(n.count("blk.0.ssm_beta.weight") == 0);
    // Qwen3-Next-80B-A3B: conv channels 2 * 16 * 128 + 32 * 128, 16 query + gate heads of 256.
    const auto big = tensors_of("qwen3-next-80b-a3b");
    CHECK(big.at("blk.0.attn_qkv.weight") == V{2048, 8192});
    CHECK(big.at("blk.0.ssm_ba.weight") == V{2048, 64});
    CHECK(big.at("blk.0.ssm_conv1d.weight") == V{4, 8192});
    CHECK(big.at("blk.3.attn_q.weight") == V{2048, 8192});
    CHECK(big.at("blk.3.attn_k.weight") == V{2048, 512});
    CHECK(big.at("blk.47.ffn_gate_exps.weight") == V{2048, 512, 512});
    CHECK(big.at("blk.47.ffn_down_shexp.weight") == V{512, 2048});
    CHECK(big.at("output.weight") == V{2048, 151936});
    auto g = write_shape(dir, "q3n.gguf", "tiny-qwen3next", rf::QuantMix::F16);
    CHECK(g->get_string("general.architecture") == "qwen3next");
    CHECK(g->find("qwen3next.rope.dimension_sections") == nullptr);
    CHECK(g->get_int("qwen3next.expert_shared_feed_forward_length", -1) == 128);
}
