// Per-tensor type choice of llama.cpp's mixes for a LLaMA-style model.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/quant_mix.h"
#include "rocmforge/types.h"

namespace {

struct Tensor {
    std::string name;
    int64_t ne[4];
    int n_dims;
};

// A small LLaMA-7B-shaped model with n_layer layers, in GGUF (convert_hf_to_gguf) order.
std::vector<Tensor> llama_tensors(int n_layer, bool with_output = true, int64_t d = 4096, int64_t ff = 11008) {
    std::vector<Tensor> t;
    t.push_back({"token_embd.weight", {d, 32000, 1, 1}, 2});
    for (int i = 0; i < n_layer; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        t.push_back({p + "attn_norm.weight", {d, 1, 1, 1}, 1});
        t.push_back({p + "attn_q.weight", {d, d, 1, 1}, 2});
        t.push_back({p + "attn_k.weight", {d, d, 1, 1}, 2});
        t.push_back({p + "attn_v.weight", {d, d, 1, 1}, 2});
        t.push_back({p + "attn_output.weight", {d, d, 1, 1}, 2});
        t.push_back({p + "ffn_norm.weight", {d, 1, 1, 1}, 1});
        t.push_back({p + "ffn_gate.weight", {d, ff, 1, 1}, 2});
        t.push_back({p + "ffn_up.weight", {d, ff, 1, 1}, 2});
        t.push_back({p + "ffn_down.weight", {ff, d, 1, 1}, 2});
    }
    t.push_back({"output_norm.weight", {d, 1, 1, 1}, 1});
    if (with_output) t.push_back({"output.weight", {d, 32000, 1, 1}, 2});
    return t;
}

std::map<std::string, int> plan(const std::string &mix_name, const std::vector<Tensor> &tensors,
                                int n_layer, bool pure = false, int n_head = 32, int n_head_kv = 32,
                                bool imatrix = false) {
    rf::QuantMix mix;
    REQUIRE(rf::mix_from_name(mix_name, &mix));
    std::vector<std::string> names;
    for (const auto &t : tensors) names.push_back(t.name);
    rf::MixModelInfo info = rf::mix_model_info(names, n_layer, n_head, n_head_kv);
    info.has_imatrix = imatrix;
    rf::MixCounters counters;
    std::map<std::string, int> out;
    for (const auto &t : tensors)
        out[t.name] = rf::choose_tensor_type(mix, info, counters, t.name, t.ne, t.n_dims, RF_TYPE_F32, pure);
    return out;
}

bool more_bits(int i, int n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

} // namespace

TEST_CASE("mix names", "[mix]") {
    rf::QuantMix m;
    CHECK(rf::mix_from_name("q4_k_m", &m));
    CHECK(m == rf::QuantMix::Q4_K_M);
    CHECK(std::string(rf::mix_name(m)) == "Q4_K_M");
    CHECK(rf::mix_default_type(m) == RF_TYPE_Q4_K);
    CHECK(rf::mix_llama_ftype(m) == 15);
    CHECK(rf::mix_from_name("MXFP6_E3M2", &m));
    CHECK(rf::mix_llama_ftype(m) == -1);
    CHECK(rf::mix_from_name("IQ2_XXS", &m));
    CHECK(rf::mix_llama_ftype(m) == 19);
    CHECK(rf::mix_from_name("iq2_s", &m));
    CHECK(rf::mix_default_type(m) == RF_TYPE_IQ2_XS); // llama.cpp's IQ2_S is mostly IQ2_XS
    CHECK(rf::mix_from_name("IQ3_M", &m));
    CHECK(rf::mix_default_type(m) == RF_TYPE_IQ3_S);
    CHECK_FALSE(rf::mix_from_name("IQ3_XS", &m));
    CHECK_FALSE(rf::mix_from_name("Q2_K_S", &m));
    CHECK(rf::mix_needs_imatrix("iq2_xxs"));
    CHECK(rf::mix_needs_imatrix("IQ3_XXS"));
    CHECK(rf::mix_needs_imatrix("IQ1_M"));
    CHECK_FALSE(rf::mix_needs_imatrix("IQ3_M"));
    CHECK_FALSE(rf::mix_needs_imatrix("IQ3_S"));
    CHECK(rf::mix_needs_imatrix("Q2_K_S"));
    CHECK(rf::tensor_needs_imatrix("blk.0.attn_q.weight", RF_TYPE_IQ2_S));
    CHECK_FALSE(rf::tensor_needs_imatrix("output.weight", RF_TYPE_IQ2_XXS));
    CHECK_FALSE(rf::tensor_needs_imatrix("blk.0.attn_q.weight", RF_TYPE_IQ3_S));
    CHECK_FALSE(rf::mix_needs_imatrix("IQ4_XS"));
    CHECK_FALSE(rf::mix_needs_imatrix("Q4_K_M"));
    CHECK(rf::mix_from_name("iq4_xs", &m));
    CHECK(m == rf::QuantMix::IQ4_XS);
    CHECK(rf::mix_default_type(m) == RF_TYPE_IQ4_XS);
    CHECK(rf::mix_llama_ftype(m) == 30);
    CHECK(rf::llama_ftype_name(30) == "IQ4_XS");
    CHECK(rf::llama_ftype_name(37) == "TQ2_0");
    CHECK(rf::llama_ftype_name(19) == "IQ2_XXS");
    CHECK_FALSE(rf::mix_from_name("Q4_K_X", &m));
    CHECK_FALSE(rf::mix_from_name("", &m));
    for (const std::string &name : rf::mix_names()) CHECK(rf::mix_from_name(name, nullptr));
}

TEST_CASE("Q4_K_M on a 32-layer LLaMA", "[mix]") {
    const int n = 32;
    const auto p = plan("Q4_K_M", llama_tensors(n), n);
    CHECK(p.at("token_embd.weight") == RF_TYPE_Q4_K);
    CHECK(p.at("output.weight") == RF_TYPE_Q6_K);
    CHECK(p.at("output_norm.weight") == RF_TYPE_F32);
    int n_q6_v = 0, n_q6_down = 0;
    for (int i = 0; i < n; ++i) {
        const std::string b = "blk." + std::to_string(i) + ".";
        INFO("layer " << i);
        CHECK(p.at(b + "attn_norm.weight") == RF_TYPE_F32);
        CHECK(p.at(b + "attn_q.weight") == RF_TYPE_Q4_K);
        CHECK(p.at(b + "attn_k.weight") == RF_TYPE_Q4_K);
        CHECK(p.at(b + "attn_output.weight") == RF_TYPE_Q4_K);
        CHECK(p.at(b + "ffn_gate.weight") == RF_TYPE_Q4_K);
        CHECK(p.at(b + "ffn_up.weight") == RF_TYPE_Q4_K);
        const int expect = more_bits(i, n) ? RF_TYPE_Q6_K : RF_TYPE_Q4_K;
        CHECK(p.at(b + "attn_v.weight") == expect);
        CHECK(p.at(b + "ffn_down.weight") == expect);
        n_q6_v += p.at(b + "attn_v.weight") == RF_TYPE_Q6_K;
        n_q6_down += p.at(b + "ffn_down.weight") == RF_TYPE_Q6_K;
    }
    // layers 0-3, 28-31 and every third in between (6, 9, ..., 27): 16 of 32
    CHECK(n_q6_v == 16);
    CHECK(n_q6_down == 16);
    CHECK(p.at("blk.6.ffn_down.weight") == RF_TYPE_Q6_K);
    CHECK(p.at("blk.7.ffn_down.weight") == RF_TYPE_Q4_K);
}

TEST_CASE("other llama.cpp mixes", "[mix]") {
    const int n = 32;
    const auto t = llama_tensors(n);
    SECTION("Q4_K_S: first 4 attn_v and first n/8 ffn_down get Q5_K") {
        const auto p = plan("Q4_K_S", t, n);
        CHECK(p.at("blk.3.attn_v.weight") == RF_TYPE_Q5_K);
        CHECK(p.at("blk.4.attn_v.weight") == RF_TYPE_Q4_K);
        CHECK(p.at("blk.3.ffn_down.weight") == RF_TYPE_Q5_K);
        CHECK(p.at("blk.4.ffn_down.weight") == RF_TYPE_Q4_K);
        CHECK(p.at("output.weight") == RF_TYPE_Q6_K);
    }
    SECTION("Q3_K_M") {
        const auto p = plan("Q3_K_M", t, n);
        CHECK(p.at("blk.0.attn_v.weight") == RF_TYPE_Q5_K);
        CHECK(p.at("blk.1.attn_v.weight") == RF_TYPE_Q5_K);
        CHECK(p.at("blk.2.attn_v.weight") == RF_TYPE_Q4_K);
        CHECK(p.at("blk.1.ffn_down.weight") == RF_TYPE_Q5_K);
        CHECK(p.at("blk.2.ffn_down.weight") == RF_TYPE_Q4_K);
        CHECK(p.at("blk.5.attn_output.weight") == RF_TYPE_Q4_K);
        CHECK(p.at("blk.5.attn_q.weight") == RF_TYPE_Q3_K);
    }
    SECTION("Q2_K: attn_v Q3_K without GQA, Q4_K with n_gqa >= 4") {
        auto p = plan("Q2_K", t, n);
        CHECK(p.at("blk.0.attn_v.weight") == RF_TYPE_Q3_K);
        CHECK(p.at("blk.0.ffn_down.weight") == RF_TYPE_Q3_K);
        CHECK(p.at("blk.0.attn_output.weight") == RF_TYPE_Q3_K);
        CHECK(p.at("blk.0.attn_q.weight") == RF_TYPE_Q2_K);
        p = plan("Q2_K", t, n, false, 32, 8);
        CHECK(p.at("blk.0.attn_v.weight") == RF_TYPE_Q4_K);
    }
    SECTION("legacy and float mixes") {
        auto p = plan("Q4_0", t, n);
        CHECK(p.at("blk.0.attn_v.weight") == RF_TYPE_Q4_0);
        CHECK(p.at("token_embd.weight") == RF_TYPE_Q4_0);
        CHECK(p.at("output.weight") == RF_TYPE_Q6_K);
        p = plan("Q8_0", t, n);
        CHECK(p.at("output.weight") == RF_TYPE_Q8_0);
        p = plan("F16", t, n);
        CHECK(p.at("output.weight") == RF_TYPE_F16);
        CHECK(p.at("blk.0.ffn_down.weight") == RF_TYPE_F16);
        CHECK(p.at("blk.0.ffn_norm.weight") == RF_TYPE_F32);
    }
    SECTION("MX mixes") {
        auto p = plan("MXFP4_MOE", t, n);
        CHECK(p.at("blk.0.ffn_down.weight") == RF_TYPE_Q8_0); // dense: not an expert tensor
        CHECK(p.at("output.weight") == RF_TYPE_Q8_0);
        p = plan("MXFP6_E2M3", t, n);
        CHECK(p.at("blk.0.ffn_down.weight") == RF_TYPE_MXFP6_E2M3);
        CHECK(p.at("token_embd.weight") == RF_TYPE_MXFP6_E2M3);
        CHECK(p.at("output.weight") == RF_TYPE_Q8_0);
    }
    SECTION("IQ4_XS / IQ4_NL: output Q6_K, first n/8 ffn_down Q5_K, attn_v Q5_K with n_gqa >= 4") {
        for (const char *name : {"IQ4_XS", "IQ4_NL"}) {
            INFO(name);
            const int base = std::string(name) == "IQ4_XS" ? RF_TYPE_IQ4_XS : RF_TYPE_IQ4_NL;
            auto p = plan(name, t, n);
            CHECK(p.at("output.weight") == RF_TYPE_Q6_K);
            CHECK(p.at("token_embd.weight") == base);
            CHECK(p.at("blk.3.ffn_down.weight") == RF_TYPE_Q5_K);
            CHECK(p.at("blk.4.ffn_down.weight") == base);
            CHECK(p.at("blk.0.attn_v.weight") == base);
            CHECK(p.at("blk.0.attn_output.weight") == base);
            CHECK(p.at("blk.9.ffn_up.weight") == base);
            p = plan(name, t, n, false, 32, 8);
            CHECK(p.at("blk.0.attn_v.weight") == RF_TYPE_Q5_K);
            CHECK(p.at("blk.31.attn_v.weight") == RF_TYPE_Q5_K);
        }
    }
    SECTION("TQ1_0 / TQ2_0: token_embd Q4_K, output Q6_K, the rest ternary") {
        for (const char *name : {"TQ1_0", "TQ2_0"}) {
            INFO(name);
            const int base = std::string(name) == "TQ1_0" ? RF_TYPE_TQ1_0 : RF_TYPE_TQ2_0;
            const auto p = plan(name, t, n);
            CHECK(p.at("token_embd.weight") == RF_TYPE_Q4_K);
            CHECK(p.at("output.weight") == RF_TYPE_Q6_K);
            CHECK(p.at("blk.0.attn_v.weight") == base);
            CHECK(p.at("blk.0.ffn_down.weight") == base);
        }
    }
    SECTION("pure: one type everywhere except the unquantizable tensors") {
        const auto p = plan("Q4_K_M", t, n, true);
        CHECK(p.at("output.weight") == RF_TYPE_Q4_K);
        CHECK(p.at("blk.0.attn_v.weight") == RF_TYPE_Q4_K);
        CHECK(p.at("blk.0.ffn_down.weight") == RF_TYPE_Q4_K);
        CHECK(p.at("blk.0.attn_norm.weight") == RF_TYPE_F32);
    }
}

TEST_CASE("tied embeddings and row-length fallbacks", "[mix]") {
    SECTION("token_embd takes the output's type when there is no output.weight") {
        const auto p = plan("Q4_K_M", llama_tensors(4, false), 4);
        CHECK(p.at("token_embd.weight") == RF_TYPE_Q6_K);
    }
    SECTION("rows not a multiple of 256 fall back like llama.cpp") {
        // d = 288 (TinyStories-like): q4_K -> q5_0, q6_K -> q8_0; output -> q8_0
        const auto t = llama_tensors(8, true, 288, 768);
        auto p = plan("Q4_K_M", t, 8);
        CHECK(p.at("blk.1.attn_q.weight") == RF_TYPE_Q5_0);
        CHECK(p.at("blk.0.attn_v.weight") == RF_TYPE_Q8_0);     // Q6_K -> Q8_0
        CHECK(p.at("blk.0.ffn_down.weight") == RF_TYPE_Q6_K);   // rows of 768 = 3*256
        CHECK(p.at("blk.1.ffn_down.weight") == RF_TYPE_Q4_K);
        CHECK(p.at("output.weight") == RF_TYPE_Q8_0);
        p = plan("Q5_K_S", t, 8);
        CHECK(p.at("blk.1.attn_q.weight") == RF_TYPE_Q5_1);
        p = plan("Q3_K_S", t, 8);
        CHECK(p.at("blk.1.attn_q.weight") == RF_TYPE_Q4_0);
        p = plan("IQ4_XS", t, 8);
        CHECK(p.at("blk.1.attn_q.weight") == RF_TYPE_IQ4_NL); // IQ4_XS -> IQ4_NL (block 32)
        CHECK(p.at("blk.1.ffn_down.weight") == RF_TYPE_IQ4_XS);
        CHECK(p.at("output.weight") == RF_TYPE_Q8_0);
        p = plan("TQ2_0", t, 8);
        CHECK(p.at("blk.1.attn_q.weight") == RF_TYPE_Q4_0);
    }
    SECTION("rows that fit no block type") {
        rf::MixModelInfo info;
        info.n_layer = 2;
        rf::MixCounters c;
        const int64_t ne[4] = {100, 200, 1, 1};
        // k-quant -> block-32 fallback -> F16
        CHECK(rf::choose_tensor_type(rf::QuantMix::Q4_K_M, info, c, "blk.0.attn_q.weight", ne, 2,
                                     RF_TYPE_F32) == RF_TYPE_F16);
        CHECK(rf::choose_tensor_type(rf::QuantMix::MXFP4, info, c, "blk.0.attn_q.weight", ne, 2,
                                     RF_TYPE_F32) == RF_TYPE_F16);
        // output -> Q8_0, and Q8_0 (like Q4_0 ...) has no fallback in llama.cpp: an error
        CHECK_THROWS_AS(rf::choose_tensor_type(rf::QuantMix::Q4_K_M, info, c, "output.weight", ne, 2,
                                               RF_TYPE_F32),
                        rf::Error);
        CHECK_THROWS_WITH(rf::choose_tensor_type(rf::QuantMix::Q4_0, info, c, "blk.0.attn_q.weight",
                                                 ne, 2, RF_TYPE_F32),
                          Catch::Contains("blk.0.attn_q.weight") && Catch::Contains("100"));
    }
    SECTION("MoE layer index comes from the name") {
        rf::MixModelInfo info;
        info.n_layer = 4;
        info.n_expert = 8;
        rf::MixCounters c;
        const int64_t ne[4] = {256, 256, 8, 1};
        CHECK(rf::choose_tensor_type(rf::QuantMix::Q4_K_M, info, c, "blk.3.ffn_down_exps.weight", ne,
                                     3, RF_TYPE_F32) == RF_TYPE_Q6_K);
        CHECK(rf::choose_tensor_type(rf::QuantMix::MXFP4_MOE, info, c, "blk.3.ffn_down_exps.weight",
                                     ne, 3, RF_TYPE_F32) == RF_TYPE_MXFP4);
        CHECK_THROWS_AS(rf::choose_tensor_type(rf::QuantMix::Q4_K_M, info, c, "blk.9.ffn_up_exps.weight",
                                               ne, 3, RF_TYPE_F32),
                        rf::Error);
        CHECK_THROWS_AS(rf::choose_tensor_type(rf::QuantMix::Q4_K_M, info, c, "ffn_up_exps.weight", ne,
                                               3, RF_TYPE_F32),
                        rf::Error);
    }
    SECTION("unquantizable tensors keep their type") {
        CHECK_FALSE(rf::tensor_is_quantizable("blk.0.attn_norm.weight", 1));
        CHECK_FALSE(rf::tensor_is_quantizable("blk.0.ffn_gate_inp.weight", 2));
        CHECK_FALSE(rf::tensor_is_quantizable("blk.0.attn_q.bias", 2));
        CHECK_FALSE(rf::tensor_is_quantizable("rope_freqs.weight", 1));
        CHECK(rf::tensor_is_quantizable("blk.0.attn_q.weight", 2));
        rf::MixModelInfo info;
        rf::MixCounters c;
        const int64_t ne[4] = {4096, 1, 1, 1};
        CHECK(rf::choose_tensor_type(rf::QuantMix::Q4_K_M, info, c, "blk.0.attn_norm.weight", ne, 1,
                                     RF_TYPE_F16) == RF_TYPE_F16);
    }
}

// llama_tensor_get_type's i-quant branches (src/llama-quant.cpp), LLaMA-7B shaped (n_gqa 1).
TEST_CASE("i-quant mixes on a 32-layer LLaMA", "[mix]") {
    const int n = 32;
    const auto t = llama_tensors(n);
    SECTION("IQ2_XXS with an imatrix: Q2_K token_embd, attn_v, first ffn_downs; Q5_K output") {
        const auto p = plan("IQ2_XXS", t, n, false, 32, 32, true);
        CHECK(p.at("token_embd.weight") == RF_TYPE_Q2_K);
        CHECK(p.at("output.weight") == RF_TYPE_Q5_K);
        CHECK(p.at("blk.0.attn_q.weight") == RF_TYPE_IQ2_XXS);
        CHECK(p.at("blk.9.attn_v.weight") == RF_TYPE_Q2_K);
        CHECK(p.at("blk.3.ffn_down.weight") == RF_TYPE_Q2_K);
        CHECK(p.at("blk.4.ffn_down.weight") == RF_TYPE_IQ2_XXS);
        CHECK(p.at("blk.4.attn_output.weight") == RF_TYPE_IQ2_XXS);
        CHECK(p.at("blk.4.ffn_gate.weight") == RF_TYPE_IQ2_XXS);
    }
    SECTION("IQ2_M: IQ2_S base, IQ3_S attn_v / attn_output / first ffn_downs / token_embd") {
        const auto p = plan("IQ2_M", t, n, false, 32, 32, true);
        CHECK(p.at("token_embd.weight") == RF_TYPE_IQ3_S);
        CHECK(p.at("blk.5.attn_q.weight") == RF_TYPE_IQ2_S);
        CHECK(p.at("blk.5.attn_v.weight") == RF_TYPE_IQ3_S);
        CHECK(p.at("blk.5.attn_output.weight") == RF_TYPE_IQ3_S);
        CHECK(p.at("blk.0.ffn_down.weight") == RF_TYPE_IQ3_S);
        CHECK(p.at("blk.10.ffn_down.weight") == RF_TYPE_IQ2_S);
    }
    SECTION("IQ1_S / IQ1_M: IQ2_XXS attn_output; GQA models get Q4_K attn_v") {
        auto p = plan("IQ1_M", t, n, false, 32, 32, true);
        CHECK(p.at("blk.1.attn_output.weight") == RF_TYPE_IQ2_XXS);
        CHECK(p.at("blk.1.ffn_up.weight") == RF_TYPE_IQ1_M);
        p = plan("IQ1_S", t, n, false, 32, 8, true);
        CHECK(p.at("blk.1.attn_v.weight") == RF_TYPE_Q4_K);
        CHECK(p.at("blk.1.ffn_up.weight") == RF_TYPE_IQ1_S);
    }
    SECTION("IQ3_XXS: IQ2_S attn_q/attn_k, IQ3_S attn_output; attn_v and ffn_down depend on the imatrix") {
        auto p = plan("IQ3_XXS", t, n, false, 32, 32, true);
        CHECK(p.at("token_embd.weight") == RF_TYPE_IQ3_S);
        CHECK(p.at("output.weight") == RF_TYPE_Q5_K);
        CHECK(p.at("blk.2.attn_q.weight") == RF_TYPE_IQ2_S);
        CHECK(p.at("blk.2.attn_k.weight") == RF_TYPE_IQ2_S);
        CHECK(p.at("blk.2.attn_output.weight") == RF_TYPE_IQ3_S);
        CHECK(p.at("blk.2.attn_v.weight") == RF_TYPE_IQ3_XXS);
        CHECK(p.at("blk.2.ffn_down.weight") == RF_TYPE_IQ3_XXS);
        p = plan("IQ3_XXS", t, n);
        CHECK(p.at("blk.2.attn_v.weight") == RF_TYPE_IQ3_S);
        CHECK(p.at("blk.2.ffn_down.weight") == RF_TYPE_Q4_K);
        CHECK(p.at("blk.20.ffn_down.weight") == RF_TYPE_Q3_K);
    }
    SECTION("IQ3_S / IQ3_M") {
        auto p = plan("IQ3_S", t, n);
        CHECK(p.at("output.weight") == RF_TYPE_Q6_K);
        CHECK(p.at("blk.2.attn_v.weight") == RF_TYPE_IQ3_S);
        p = plan("IQ3_M", t, n);
        CHECK(p.at("blk.2.attn_v.weight") == RF_TYPE_Q4_K);
        CHECK(p.at("blk.2.attn_output.weight") == RF_TYPE_Q4_K);
        CHECK(p.at("blk.3.ffn_down.weight") == RF_TYPE_Q4_K);
        CHECK(p.at("blk.4.ffn_down.weight") == RF_TYPE_IQ3_S);
        CHECK(p.at("blk.4.ffn_gate.weight") == RF_TYPE_IQ3_S);
    }
    SECTION("IQ4_XS and Q4_0 with an imatrix") {
        CHECK(plan("IQ4_XS", t, n).at("blk.0.ffn_down.weight") == RF_TYPE_Q5_K);
        CHECK(plan("IQ4_XS", t, n, false, 32, 32, true).at("blk.0.ffn_down.weight") == RF_TYPE_IQ4_XS);
        CHECK(plan("Q4_0", t, n, false, 32, 32, true).at("blk.0.ffn_down.weight") == RF_TYPE_Q4_1);
        CHECK(plan("Q4_0", t, n).at("blk.0.ffn_down.weight") == RF_TYPE_Q4_0);
    }
    SECTION("rows that are not a multiple of 256 fall back to IQ4_NL") {
        const auto p = plan("IQ2_XXS", llama_tensors(4, true, 4096, 11008 + 32), 4, false, 32, 32, true);
        CHECK(p.at("blk.1.ffn_down.weight") == RF_TYPE_IQ4_NL);
    }
}
