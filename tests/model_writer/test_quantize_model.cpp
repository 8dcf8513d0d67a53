// `quantize` library: per-tensor types under mixes, accuracy against the f32 original, metadata,
// requantization policy, overrides, atomic output.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <map>

#include "model_writer_test_util.h"
#include "rocmforge/error.h"
#include "rocmforge/model_writer.h"

using mw_test::TempDir;

namespace {

// A tiny f32 model to quantize (written once per test case into `dir`).
std::string make_f32_model(const TempDir &dir, uint64_t seed = 11) {
    rf::MakeModelOptions opt;
    opt.shape = "tiny";
    opt.mix = rf::QuantMix::F32;
    opt.vocab_path = mw_test::llama_vocab();
    opt.output_path = dir.file("f32.gguf");
    opt.seed = seed;
    opt.n_threads = 2;
    rf::make_model(opt);
    return opt.output_path;
}

rf::QuantizeOptions quantize_options(const std::string &in, const std::string &out, rf::QuantMix mix) {
    rf::QuantizeOptions q;
    q.input_path = in;
    q.output_path = out;
    q.mix = mix;
    q.n_threads = 2;
    return q;
}

// The message of the rf::UsageError `f` throws, "" when it throws none (other errors escape).
template <class F> std::string usage_error(F f) {
    try {
        f();
    } catch (const rf::UsageError &e) {
        return e.what();
    }
    return "";
}

// RMS of (a - b) relative to RMS of a.
double relative_rms_error(const std::vector<float> &a, const std::vector<float> &b) {
    REQUIRE(a.size() == b.size());
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        num += double(a[i] - b[i]) * double(a[i] - b[i]);
        den += double(a[i]) * double(a[i]);
    }
    return std::sqrt(num / den);
}

} // namespace

TEST_CASE("quantize f32 -> Q8_0: every matrix q8_0, norms f32, values close", "[quantize]") {
    TempDir dir;
    const std::string in = make_f32_model(dir);
    const std::string out = dir.file("q8.gguf");
    std::vector<rf::TensorWriteEvent> events;
    auto q = quantize_options(in, out, rf::QuantMix::Q8_0);
    q.on_tensor = [&](const rf::TensorWriteEvent &ev) { events.push_back(ev); };
    const rf::ModelWriteTotals totals = rf::quantize_model(q);

    auto src = rf::gguf::File::open(in);
    auto dst = rf::gguf::File::open(out);
    REQUIRE(dst->tensors().size() == src->tensors().size());
    REQUIRE(events.size() == src->tensors().size());
    // tiny: embeddings + output (256 x 32000 each), 4 layers, output norm.
    const int64_t per_layer = 2 * 256 * 256 + 2 * 256 * 128 + 3 * 256 * 768 + 2 * 256;
    CHECK(totals.n_params == 2 * 256 * 32000 + 4 * per_layer + 256);
    CHECK(totals.src_bytes == uint64_t(totals.n_params) * 4);
    CHECK(events[0].index == 1);
    CHECK(events.back().index == events.size());
    CHECK(dst->get_int("general.file_type", -1) == 7);
    CHECK(dst->get_int("general.quantization_version", -1) == 2);
    // Metadata other than the file type is copied.
    CHECK(dst->get_string("tokenizer.ggml.model") == src->get_string("tokenizer.ggml.model"));
    CHECK(dst->get_int("llama.block_count", -1) == 4);
    CHECK(dst->get_string("general.name") == src->get_string("general.name"));

    for (const auto &t : dst->tensors()) {
        INFO(t.name);
        CHECK(t.type == (t.n_dims == 1 ? RF_TYPE_F32 : RF_TYPE_Q8_0));
        const auto a = mw_test::dequantize_tensor(*src, t.name);
        const auto b = mw_test::dequantize_tensor(*dst, t.name);
        if (t.n_dims == 1) {
            const bool copied_exactly = a == b;
            CHECK(copied_exactly);
        } else {
            CHECK(relative_rms_error(a, b) < 0.01);
        }
    }
}

TEST_CASE("quantize f32 -> Q4_K_M follows llama.cpp's rules", "[quantize]") {
    TempDir dir;
    const std::string in = make_f32_model(dir);
    const std::string out = dir.file("q4km.gguf");
    rf::quantize_model(quantize_options(in, out, rf::QuantMix::Q4_K_M));
    auto src = rf::gguf::File::open(in);
    auto dst = rf::gguf::File::open(out);
    CHECK(dst->get_int("general.file_type", -1) == 15);
    // 4 layers: use_more_bits(i, 4) is true for layers 2 and 3.
    const std::map<std::string, int> expect = {
        {"token_embd.weight", RF_TYPE_Q4_K},       {"output.weight", RF_TYPE_Q6_K},
        {"output_norm.weight", RF_TYPE_F32},       {"blk.0.attn_q.weight", RF_TYPE_Q4_K},
        {"blk.0.attn_k.weight", RF_TYPE_Q4_K},     {"blk.0.attn_v.weight", RF_TYPE_Q4_K},
        {"blk.1.attn_v.weight", RF_TYPE_Q4_K},     {"blk.2.attn_v.weight", RF_TYPE_Q6_K},
        {"blk.3.attn_v.weight", RF_TYPE_Q6_K},     {"blk.0.ffn_down.weight", RF_TYPE_Q4_K},
        {"blk.2.ffn_down.weight", RF_TYPE_Q6_K},   {"blk.3.ffn_down.weight", RF_TYPE_Q6_K},
        {"blk.3.ffn_gate.weight", RF_TYPE_Q4_K},   {"blk.3.ffn_up.weight", RF_TYPE_Q4_K},
        {"blk.1.attn_output.weight", RF_TYPE_Q4_K}, {"blk.1.attn_norm.weight", RF_TYPE_F32},
    };
    for (const auto &[name, type] : expect) {
        INFO(name);
        REQUIRE(dst->find_tensor(name) != nullptr);
        CHECK(dst->find_tensor(name)->type == type);
    }
    for (const char *name : {"blk.0.attn_q.weight", "blk.3.ffn_down.weight", "output.weight"}) {
        INFO(name);
        const double err = relative_rms_error(mw_test::dequantize_tensor(*src, name),
                                              mw_test::dequantize_tensor(*dst, name));
        CHECK(err > 0.0);
        CHECK(err < 0.12); // q4_K on normal data: ~9% RMS; q6_K ~2%
    }
}

TEST_CASE("quantize --pure and the type overrides", "[quantize]") {
    TempDir dir;
    const std::string in = make_f32_model(dir);
    auto q = quantize_options(in, dir.file("pure.gguf"), rf::QuantMix::Q4_K_M);
    q.pure = true;
    q.token_embedding_type = RF_TYPE_Q8_0;
    rf::quantize_model(q);
    auto f = rf::gguf::File::open(q.output_path);
    CHECK(f->find_tensor("output.weight")->type == RF_TYPE_Q4_K);
    CHECK(f->find_tensor("blk.3.attn_v.weight")->type == RF_TYPE_Q4_K);
    CHECK(f->find_tensor("token_embd.weight")->type == RF_TYPE_Q8_0);

    auto o = quantize_options(in, dir.file("out16.gguf"), rf::QuantMix::Q4_0);
    o.output_tensor_type = RF_TYPE_F16;
    rf::quantize_model(o);
    auto g = rf::gguf::File::open(o.output_path);
    CHECK(g->find_tensor("output.weight")->type == RF_TYPE_F16);
    CHECK(g->find_tensor("blk.0.ffn_up.weight")->type == RF_TYPE_Q4_0);
    CHECK(g->get_int("general.file_type", -1) == 2);
}

TEST_CASE("quantize refuses requantizing unless allowed", "[quantize]") {
    TempDir dir;
    const std::string in = make_f32_model(dir);
    const std::string q8 = dir.file("q8.gguf");
    rf::quantize_model(quantize_options(in, q8, rf::QuantMix::Q8_0));

    const std::string out = dir.file("q4.gguf");
    try {
        rf::quantize_model(quantize_options(q8, out, rf::QuantMix::Q4_0));
        FAIL("requantization accepted");
    } catch (const rf::Error &e) {
        CHECK(e.exit_code() == rf::kExitUsage);
        CHECK_THAT(e.what(), Catch::Contains("--allow-requantize") && Catch::Contains("q8_0"));
    }
    CHECK(!std::filesystem::exists(out));

    // Same type in and out is a plain copy, allowed without the flag.
    rf::quantize_model(quantize_options(q8, dir.file("same.gguf"), rf::QuantMix::Q8_0));
    {
        auto a = rf::gguf::File::open(q8), b = rf::gguf::File::open(dir.file("same.gguf"));
        const auto *ta = a->find_tensor("blk.1.ffn_up.weight");
        const auto *tb = b->find_tensor("blk.1.ffn_up.weight");
        CHECK(std::memcmp(a->tensor_data(*ta), b->tensor_data(*tb), ta->nbytes) == 0);
    }

    auto allowed = quantize_options(q8, out, rf::QuantMix::Q4_0);
    allowed.allow_requantize = true;
    rf::quantize_model(allowed);
    auto f = rf::gguf::File::open(out);
    CHECK(f->find_tensor("blk.0.attn_q.weight")->type == RF_TYPE_Q4_0);
}

TEST_CASE("quantize: bad input and failures never leave a truncated output", "[quantize]") {
    TempDir dir;
    const std::string out = dir.file("out.gguf");
    mw_test::write_text(out, "old");

    SECTION("unreadable input: data error") {
        try {
            rf::quantize_model(quantize_options(dir.file("missing.gguf"), out, rf::QuantMix::Q8_0));
            FAIL("missing input accepted");
        } catch (const rf::Error &e) {
            CHECK(e.exit_code() == rf::kExitData);
        }
        mw_test::write_text(dir.file("junk.gguf"), "this is not a gguf file at all");
        CHECK_THROWS_AS(rf::quantize_model(quantize_options(dir.file("junk.gguf"), out, rf::QuantMix::Q8_0)),
                        rf::Error);
    }
    SECTION("override type that does not fit the row length") {
        const std::string in = make_f32_model(dir);
        auto q = quantize_options(in, out, rf::QuantMix::Q8_0);
        q.output_tensor_type = RF_TYPE_I32; // no quantizer for it
        CHECK_THROWS_AS(rf::quantize_model(q), rf::UsageError);
    }
    SECTION("failure in the middle of the data") {
        const std::string in = make_f32_model(dir);
        auto q = quantize_options(in, out, rf::QuantMix::Q4_K_M);
        q.on_tensor = [](const rf::TensorWriteEvent &ev) {
            if (ev.index == 20) throw rf::Error("simulated failure");
        };
        CHECK_THROWS_WITH(rf::quantize_model(q), Catch::Contains("simulated failure"));
    }
    CHECK(mw_test::read_text(out) == "old");
    CHECK(!std::filesystem::exists(out + ".tmp"));
}

TEST_CASE("quantize refuses to replace its input unless asked", "[quantize]") {
    TempDir dir;
    const std::string in = make_f32_model(dir);
    const auto original = mw_test::read_text(in);
    std::filesystem::create_symlink(in, dir.file("sym.gguf"));
    std::filesystem::create_hard_link(in, dir.file("hard.gguf"));
    for (const std::string &out : {in, dir.file("sym.gguf"), dir.file("hard.gguf"), dir.path.string() + "/./f32.gguf"}) {
        INFO("output " << out);
        auto q = quantize_options(in, out, rf::QuantMix::Q8_0);
        q.on_tensor = [](const rf::TensorWriteEvent &) { FAIL("converted a tensor before refusing"); };
        CHECK_THAT(usage_error([&] { rf::quantize_model(q); }),
                   Catch::Contains("is the input file") && Catch::Contains("--overwrite-input"));
    }
    CHECK(mw_test::read_text(in) == original);

    auto q = quantize_options(in, in, rf::QuantMix::Q8_0);
    q.overwrite_input = true;
    rf::quantize_model(q);
    CHECK(mw_test::read_text(in) != original);
}

TEST_CASE("quantize and mkmodel check the output path before any work", "[quantize][mkmodel]") {
    TempDir dir;
    const std::string in = make_f32_model(dir);
    std::filesystem::create_directory(dir.file("adir"));
    const std::pair<std::string, std::string> bad[] = {
        {dir.file("adir"), "is a directory"},
        {dir.file("nofolder/out.gguf"), "does not exist"},
        {"", "empty"},
    };
    for (const auto &[out, why] : bad) {
        INFO("output " << out);
        auto q = quantize_options(in, out, rf::QuantMix::Q8_0);
        q.on_tensor = [](const rf::TensorWriteEvent &) { FAIL("converted a tensor before refusing"); };
        CHECK_THAT(usage_error([&] { rf::quantize_model(q); }), Catch::Contains(why));

        rf::MakeModelOptions m;
        m.shape = "tiny";
        m.vocab_path = mw_test::llama_vocab();
        m.output_path = out;
        m.on_tensor = [](const rf::TensorWriteEvent &) { FAIL("generated a tensor before refusing"); };
        CHECK_THAT(usage_error([&] { rf::make_model(m); }), Catch::Contains(why));
    }
}
