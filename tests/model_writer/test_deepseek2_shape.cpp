// mkmodel's deepseek2 shapes: the converter's latent-attention tensors and keys.
#include <catch2/catch.hpp>

#include <map>

#include "model_writer_test_util.h"
#include "rocmforge/model_shapes.h"
#include "rocmforge/model_writer.h"
#include "rocmforge/types.h"

namespace {

std::map<std::string, std::vector<int64_t>> tensors_of(const char *name) {
    const rf::ModelShape *s = rf::find_model_shape(name);
    REQUIRE(s != nullptr);
    std::map<std::string, std::vector<int64_t>> by_name;
    for (const auto &t : rf::shape_tensors(*s)) by_name[t.name] = t.ne;
    return by_name;
}

} // namespace

TEST_CASE("mkmodel: deepseek2 shapes have the converter's latent-attention and expert tensors", "[mkmodel][deepseek2]") {
    using V = std::vector<int64_t>;
    const auto lite = tensors_of("deepseek-v2-lite");
    CHECK(lite.at("blk.0.attn_q.weight") == V{2048, 16 * 192});
    CHECK(lite.count("blk.0.attn_q_a.weight") == 0);
    CHECK(lite.at("blk.5.attn_kv_a_mqa.weight") == V{2048, 576});
    CHECK(lite.at("blk.5.attn_kv_a_norm.weight") == V{512});
    CHECK(lite.at("blk.5.attn_k_b.weight") == V{128, 512, 16});
    CHECK(lite.at("blk.5.attn_v_b.weight") == V{512, 128, 16});
    CHECK(lite.at("blk.5.attn_output.weight") == V{2048, 2048});
    CHECK(lite.at("blk.0.ffn_gate.weight") == V{2048, 10944}); // the one leading dense layer
    CHECK(lite.count("blk.1.ffn_gate.weight") == 0);
    CHECK(lite.at("blk.1.ffn_gate_exps.weight") == V{2048, 1408, 64});
    CHECK(lite.at("blk.26.ffn_up_shexp.weight") == V{2048, 2 * 1408});
    CHECK(lite.count("blk.1.exp_probs_b.bias") == 0); // softmax routing, no selection bias
    const auto v3 = tensors_of("deepseek-v3");
    CHECK(v3.at("blk.0.attn_q_a.weight") == V{7168, 1536});
    CHECK(v3.at("blk.0.attn_q_a_norm.weight") == V{1536});
    CHECK(v3.at("blk.0.attn_q_b.weight") == V{1536, 128 * 192});
    CHECK(v3.at("blk.2.ffn_down.weight") == V{18432, 7168});
    CHECK(v3.at("blk.3.ffn_down_exps.weight") == V{2048, 7168, 256});
    CHECK(v3.at("blk.60.exp_probs_b.bias") == V{256});
    CHECK(v3.at("blk.60.ffn_down_shexp.weight") == V{2048, 7168});
    // Parameters: V2-Lite 15.7B, V3 671B (the checkpoint's, less its prediction layer).
    uint64_t n_lite = 0, n_v3 = 0;
    for (const auto &[name, ne] : lite) {
        uint64_t n = 1;
        for (int64_t d : ne) n *= (uint64_t)d;
        n_lite += n;
    }
    for (const auto &[name, ne] : v3) {
        uint64_t n = 1;
        for (int64_t d : ne) n *= (uint64_t)d;
        n_v3 += n;
    }
    CHECK(n_lite / 100000000 == 157);
    CHECK(n_v3 / 1000000000 == 671);
}

TEST_CASE("mkmodel tiny-deepseek2 writes the family's keys", "[mkmodel][deepseek2]") {
    mw_test::TempDir dir;
    rf::MakeModelOptions opt;
    opt.shape = "tiny-deepseek2";
    opt.mix = rf::QuantMix::Q8_0;
    opt.vocab_path = mw_test::llama_vocab();
    opt.output_path = dir.file("ds.gguf");
    opt.seed = 1;
    opt.n_threads = 2;
    rf::make_model(opt);
    auto f = rf::gguf::File::open(opt.output_path);
    CHECK(f->get_string("general.architecture") == "deepseek2");
    CHECK(f->get_int("deepseek2.attention.head_count_kv", -1) == 1);
    CHECK(f->get_int("deepseek2.attention.kv_lora_rank", -1) == 64);
    CHECK(f->get_int("deepseek2.attention.q_lora_rank", -1) == 64);
    CHECK(f->get_int("deepseek2.attention.key_length", -1) == 96);
    CHECK(f->get_int("deepseek2.attention.value_length", -1) == 64);
    CHECK(f->get_int("deepseek2.attention.key_length_mla", -1) == 64);
    CHECK(f->get_int("deepseek2.attention.value_length_mla", -1) == 32);
    CHECK(f->get_int("deepseek2.rope.dimension_count", -1) == 32);
    CHECK(f->get_int("deepseek2.leading_dense_block_count", -1) == 1);
    CHECK(f->get_int("deepseek2.expert_gating_func", -1) == 2);
    CHECK(f->get_int("deepseek2.expert_group_count", -1) == 4);
    CHECK(f->get_int("deepseek2.expert_group_used_count", -1) == 2);
    CHECK(f->get_string("deepseek2.rope.scaling.type") == "yarn");
    const rf::gguf::TensorInfo *b = f->find_tensor("blk.1.exp_probs_b.bias");
    REQUIRE(b != nullptr);
    CHECK(b->type == RF_TYPE_F32);
    CHECK(f->find_tensor("blk.2.attn_k_b.weight")->type == RF_TYPE_Q8_0);
}
