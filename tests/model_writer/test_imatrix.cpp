// Importance-matrix files (GGUF and legacy .dat) and `quantize` with one: round trips, the
// weights llama-quantize derives, clear errors for malformed files, missing tensors and sizes,
// and that the i-quant tensors get their rows' importance.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "model_writer_test_util.h"
#include "rocmforge/error.h"
#include "rocmforge/gguf.h"
#include "rocmforge/imatrix.h"
#include "rocmforge/model_writer.h"
#include "rocmforge/types.h"

using mw_test::TempDir;

namespace {

void put_i32(std::ofstream &o, int32_t v) { o.write(reinterpret_cast<const char *>(&v), 4); }

// llama.cpp's legacy layout: one entry of nval values computed with ncall calls.
void write_dat(const std::string &path, const std::string &name, int32_t ncall, const std::vector<float> &v,
               bool trailer = true) {
    std::ofstream o(path, std::ios::binary);
    put_i32(o, 1);
    put_i32(o, int32_t(name.size()));
    o.write(name.data(), std::streamsize(name.size()));
    put_i32(o, ncall);
    put_i32(o, int32_t(v.size()));
    o.write(reinterpret_cast<const char *>(v.data()), std::streamsize(v.size() * 4));
    if (trailer) {
        put_i32(o, 7);
        put_i32(o, 4);
        o.write("wiki", 4);
    }
}

// The imatrix entries a tiny model needs: every blk.* matrix, weight 1 + column/100.
rf::Imatrix tiny_imatrix(const std::string &model) {
    auto f = rf::gguf::File::open(model);
    rf::Imatrix m;
    m.datasets = {"synthetic.txt"};
    m.chunk_count = 1;
    m.chunk_size = 512;
    for (const auto &t : f->tensors()) {
        if (t.n_dims < 2 || t.name.compare(0, 4, "blk.") != 0) continue;
        rf::ImatrixEntry e;
        e.n_cols = t.ne[0];
        e.counts = {512.0f};
        for (int64_t i = 0; i < t.ne[0]; ++i) e.sum2.push_back(512.0f * (1.0f + float(i) / 100));
        m.entries[t.name] = e;
    }
    return m;
}

} // namespace

TEST_CASE("imatrix GGUF round trip and llama-quantize's weights", "[imatrix]") {
    TempDir dir;
    rf::Imatrix m;
    m.datasets = {"a.txt", "b.txt"};
    m.chunk_count = 3;
    m.chunk_size = 512;
    rf::ImatrixEntry e;
    e.n_cols = 2;
    e.sum2 = {4, 8, 1, 1};
    e.sum = {1, 2, 3, 4};
    e.counts = {2, 0}; // the second expert never saw input
    m.entries["blk.0.ffn_down_exps.weight"] = e;
    const std::string path = dir.file("im.gguf");
    rf::write_imatrix(m, path);

    auto f = rf::gguf::File::open(path);
    CHECK(f->get_string("general.type") == "imatrix");
    CHECK(f->get_int("imatrix.chunk_count", -1) == 3);
    CHECK(f->get_int("imatrix.chunk_size", -1) == 512);
    REQUIRE(f->find_tensor("blk.0.ffn_down_exps.weight.in_sum2"));
    CHECK(f->find_tensor("blk.0.ffn_down_exps.weight.in_sum2")->ne[1] == 2);
    CHECK(f->find_tensor("blk.0.ffn_down_exps.weight.counts")->ne[0] == 1);

    const rf::Imatrix r = rf::read_imatrix(path);
    CHECK(r.datasets == m.datasets);
    CHECK(r.chunk_count == 3);
    const rf::ImatrixEntry &g = r.entries.at("blk.0.ffn_down_exps.weight");
    CHECK(g.sum2 == e.sum2);
    CHECK(g.sum == e.sum);
    CHECK(g.weights() == std::vector<float>{2, 4, 1, 1});
}

TEST_CASE("legacy .dat importance matrices", "[imatrix]") {
    TempDir dir;
    write_dat(dir.file("a.dat"), "blk.0.attn_q.weight", 10, {20, 30});
    rf::Imatrix m = rf::read_imatrix(dir.file("a.dat"));
    CHECK(m.chunk_count == 7);
    CHECK(m.datasets == std::vector<std::string>{"wiki"});
    CHECK(m.entries.at("blk.0.attn_q.weight").weights() == std::vector<float>{2, 3}); // values / ncall
    write_dat(dir.file("b.dat"), "blk.0.attn_q.weight", 0, {20, 30}, false);
    CHECK(rf::read_imatrix(dir.file("b.dat")).entries.at("blk.0.attn_q.weight").weights() ==
          std::vector<float>{20, 30});

    // Malformed files: truncated values, garbage, missing counts, a model file.
    write_dat(dir.file("c.dat"), "blk.0.attn_q.weight", 1, {1, 2}, false);
    {
        auto bytes = mw_test::read_bytes(dir.file("c.dat"));
        bytes.resize(bytes.size() - 3);
        std::ofstream(dir.file("c.dat"), std::ios::binary).write(reinterpret_cast<const char *>(bytes.data()),
                                                                 std::streamsize(bytes.size()));
    }
    CHECK_THROWS_WITH(rf::read_imatrix(dir.file("c.dat")), Catch::Contains("truncated"));
    mw_test::write_text(dir.file("d.dat"), "hello world, not an imatrix");
    CHECK_THROWS_AS(rf::read_imatrix(dir.file("d.dat")), rf::Error);
    CHECK_THROWS_WITH(rf::read_imatrix(dir.file("missing.dat")), Catch::Contains("cannot open"));
    rf::gguf::Writer w;
    w.set("general.type", rf::gguf::Value::from_string("imatrix"));
    const float v[2] = {1, 2};
    w.add_tensor("blk.0.attn_q.weight.in_sum2", RF_TYPE_F32, {2, 1}, v);
    w.write(dir.file("e.gguf"));
    CHECK_THROWS_WITH(rf::read_imatrix(dir.file("e.gguf")), Catch::Contains("has no 'blk.0.attn_q.weight.counts'"));
    rf::gguf::Writer model;
    model.set("general.architecture", rf::gguf::Value::from_string("llama"));
    model.write(dir.file("model.gguf"));
    CHECK_THROWS_WITH(rf::read_imatrix(dir.file("model.gguf")), Catch::Contains("not an importance matrix"));
}

TEST_CASE("quantize with an importance matrix", "[imatrix]") {
    TempDir dir;
    const std::string model = dir.file("tiny.gguf");
    rf::MakeModelOptions mk;
    mk.shape = "tiny";
    mk.mix = rf::QuantMix::F16;
    mk.vocab_path = mw_test::llama_vocab();
    mk.output_path = model;
    mk.seed = 3;
    mk.n_threads = 2;
    rf::make_model(mk);

    rf::QuantizeOptions q;
    q.input_path = model;
    q.output_path = dir.file("iq2.gguf");
    q.mix = rf::QuantMix::IQ2_XXS;
    q.n_threads = 2;
    // Without one: the IQ2_XXS tensors refuse (a usage error, exit code 2).
    try {
        rf::quantize_model(q);
        FAIL("quantized IQ2_XXS without an importance matrix");
    } catch (const rf::Error &e) {
        CHECK(e.exit_code() == 2);
        CHECK(std::string(e.what()).find("needs an importance matrix") != std::string::npos);
    }

    rf::Imatrix im = tiny_imatrix(model);
    q.imatrix_path = dir.file("im.gguf");
    rf::write_imatrix(im, q.imatrix_path);
    rf::quantize_model(q);
    auto out = rf::gguf::File::open(q.output_path);
    const rf::gguf::TensorInfo *t = out->find_tensor("blk.1.ffn_gate.weight");
    REQUIRE(t);
    CHECK(t->type == RF_TYPE_IQ2_XXS);
    // The tensor's bytes are rf::quantize_row_weighted's with the entry's weights, row by row.
    {
        auto in = rf::gguf::File::open(model);
        const rf::gguf::TensorInfo *s = in->find_tensor("blk.1.ffn_gate.weight");
        const std::vector<float> w = im.entries.at("blk.1.ffn_gate.weight").weights();
        std::vector<float> row(size_t(s->ne[0]));
        const size_t rs = rf::row_size(RF_TYPE_IQ2_XXS, s->ne[0]);
        std::vector<uint8_t> expect(rs);
        for (int64_t r = 0; r < s->ne[1]; r += 37) {
            rf::dequantize_row(s->type, in->tensor_data(*s) + r * rf::row_size(s->type, s->ne[0]), row.data(), s->ne[0]);
            rf::quantize_row_weighted(RF_TYPE_IQ2_XXS, row.data(), expect.data(), s->ne[0], w.data());
            CHECK(std::memcmp(expect.data(), out->tensor_data(*t) + r * rs, rs) == 0);
        }
    }

    // A tensor missing from the imatrix, or of the wrong size: clear errors, no output.
    q.output_path = dir.file("bad.gguf");
    rf::Imatrix missing = im;
    missing.entries.erase("blk.2.attn_q.weight");
    rf::write_imatrix(missing, q.imatrix_path);
    CHECK_THROWS_WITH(rf::quantize_model(q), Catch::Contains("blk.2.attn_q.weight") && Catch::Contains("missing"));
    rf::Imatrix wrong = im;
    wrong.entries.at("blk.2.attn_q.weight").sum2.push_back(1.0f);
    wrong.entries.at("blk.2.attn_q.weight").n_cols += 1;
    rf::write_imatrix(wrong, q.imatrix_path);
    CHECK_THROWS_WITH(rf::quantize_model(q), Catch::Contains("values for"));
    CHECK_FALSE(std::filesystem::exists(q.output_path));
}
