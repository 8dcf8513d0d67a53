// The forward graph on the CPU backend against itself (batched vs token by token, several
// sequences vs one) and against the float64 reference in tiny_model.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/inference.h"
#include "forward_graph.h"
#include "rocmforge/model.h"
#include "decode_steps.h"
#include "tiny_model.h"

using namespace rf;
using namespace rf_test;

namespace {

struct Setup {
    std::unique_ptr<Runtime> rt;
    std::unique_ptr<Model> model;
    TinyWeights weights;
};

Setup load(const TinySpec &spec, const std::string &file) {
    Setup s;
    const std::string path = temp_path(file);
    s.weights = write_tiny_model(path, spec);
    s.rt = cpu_runtime();
    s.model = Model::load(path, *s.rt);
    return s;
}

ContextParams ctx_params(int64_t n_ctx = 128, int n_seq = 1, int cache_type = RF_TYPE_F16) {
    ContextParams p;
    p.n_ctx = n_ctx;
    p.n_batch = 64;
    p.n_seq_max = n_seq;
    p.page_size = 16;
    p.type_k = p.type_v = cache_type;
    return p;
}

const std::vector<int32_t> kPrompt = {1, 15, 42, 7, 88, 3, 60, 60, 21, 96, 0, 33, 5, 71, 19, 50, 2, 44};

void check_against_reference(const TinySpec &spec, const std::string &file, int64_t n_ctx = 128) {
    Setup s = load(spec, file);
    InferenceContext ctx(*s.model, *s.rt, ctx_params(n_ctx, 1, RF_TYPE_F32));
    const auto logits = prefill(ctx, kPrompt);
    const auto ref = reference_forward(s.weights, kPrompt, n_ctx);
    const int64_t V = spec.n_vocab;
    REQUIRE(logits.size() == kPrompt.size() * (size_t)V);
    for (size_t t = 0; t < kPrompt.size(); ++t) {
        INFO("position " << t);
        CHECK(rel_diff(logits.data() + t * V, ref[t].data(), V) < 2e-3);
    }
}

// The batch and the token-by-token paths agree (f16 cache, as generation runs).
void check_decoding_matches_prefill(const TinySpec &spec, const std::string &file) {
    Setup s = load(spec, file);
    InferenceContext a(*s.model, *s.rt, ctx_params());
    InferenceContext b(*s.model, *s.rt, ctx_params());
    check_rows_close(prefill(a, kPrompt), one_by_one(b, kPrompt), spec.n_vocab, 1e-3);
}

TinySpec qwen3_spec() {
    TinySpec spec;
    spec.arch = "qwen3";
    spec.head_dim = 24; // Q = 96 wide while n_embd = 64, as Qwen3-0.6B (2048 vs 1024)
    spec.rope_base = 1000000.0f;
    return spec;
}

TinySpec gemma2_spec() {
    TinySpec spec;
    spec.arch = "gemma2";
    spec.head_dim = 32;
    spec.tied_output = true;
    spec.sliding_window = 5;  // layer 0 local (window 5 of an 18-token prompt), layer 1 global
    spec.attn_softcap = 2.0f; // small caps so that both bend the tiny model's scores and logits
    spec.final_softcap = 3.0f;
    return spec;
}

TinySpec gemma3_spec() {
    TinySpec spec;
    spec.arch = "gemma3";
    spec.n_layer = 7; // layers 0-4 and 6 local, 5 global
    spec.n_embd = 48;
    spec.head_dim = 16;
    spec.tied_output = true;
    spec.sliding_window = 4;
    spec.rope_base = 1000000.0f;   // global layers; local ones use 10000
    spec.rope_scale_factor = 2.0f; // global layers only
    return spec;
}

TinySpec phi3_spec() {
    TinySpec spec;
    spec.arch = "phi3";
    spec.n_head_kv = 4;
    spec.rope_factors = true;
    return spec;
}

// Mixtral: a llama file with experts (8 experts, 2 per token; a 96-wide FFN each).
TinySpec mixtral_spec() {
    TinySpec spec;
    spec.n_expert = 8;
    spec.n_expert_used = 2;
    return spec;
}

// Qwen3-MoE: qwen3 attention, 6 experts of width 40 (expert_feed_forward_length), 3 per token.
TinySpec qwen3moe_spec() {
    TinySpec spec = qwen3_spec();
    spec.arch = "qwen3moe";
    spec.n_expert = 6;
    spec.n_expert_used = 3;
    spec.n_ff_exp = 40;
    return spec;
}

// Qwen2-MoE: qwen2's attention (biases, NeoX RoPE, no Q/K norms), 8 experts of width 40, 3 per
// token with unnormalised weights, and a shared expert 72 wide behind its sigmoid gate.
TinySpec qwen2moe_spec() {
    TinySpec spec;
    spec.arch = "qwen2moe";
    spec.rope_base = 1000000.0f;
    spec.n_expert = 8;
    spec.n_expert_used = 3;
    spec.n_ff_exp = 40;
    spec.n_ff_shexp = 72;
    return spec;
}

// gpt-oss: 8 heads of 16 (Q 128 wide over n_embd 64) on 2 KV heads, Q/K/V/O biases, sinks,
// YaRN (factor 4 over an original context of 64), a window of 5 on layers 0 and 2, 8 experts of
// width 40 with biases, 4 per token, the clamped SwiGLU.
TinySpec gpt_oss_spec() {
    TinySpec spec;
    spec.arch = "gpt-oss";
    spec.n_layer = 3;
    spec.n_head = 8;
    spec.head_dim = 16;
    spec.sliding_window = 5;
    spec.rope_base = 150000.0f;
    spec.yarn_factor = 4.0f;
    spec.yarn_orig_ctx = 64;
    spec.n_expert = 8;
    spec.n_expert_used = 4;
    spec.n_ff_exp = 40;
    return spec;
}

void check_rejected(const TinySpec &spec, const std::string &file, const std::string &message) {
    auto rt = cpu_runtime();
    const std::string path = temp_path(file);
    write_tiny_model(path, spec);
    INFO(file);
    CHECK_THROWS_WITH(Model::load(path, *rt), Catch::Contains(message));
}

} // namespace

TEST_CASE("mixtral (llama with experts): router, top-2 of 8, normalised weights; matches the reference and its decoding", "[model][moe]") {
    const TinySpec spec = mixtral_spec();
    Setup s = load(spec, "mixtral_hp.gguf");
    const ModelHparams &hp = s.model->hparams();
    CHECK(hp.arch == ModelArch::Llama);
    CHECK(hp.n_expert == 8);
    CHECK(hp.n_expert_used == 2);
    CHECK(hp.n_ff_exp == 96);
    CHECK(s.model->layers[1].ffn_gate_exps->ne(2) == 8);
    CHECK(s.model->layers[1].ffn_gate == nullptr);
    check_against_reference(spec, "mixtral_ref.gguf");
    check_decoding_matches_prefill(spec, "mixtral_bt.gguf");
    TinySpec f16 = spec;
    f16.matrix_type = RF_TYPE_F16;
    check_against_reference(f16, "mixtral_f16.gguf");
}

TEST_CASE("qwen3moe: Q/K norms and experts of their own width; matches the reference and its decoding", "[model][moe]") {
    const TinySpec spec = qwen3moe_spec();
    Setup s = load(spec, "qwen3moe_hp.gguf");
    const ModelHparams &hp = s.model->hparams();
    CHECK(hp.arch == ModelArch::Qwen3Moe);
    CHECK(hp.qk_norm);
    CHECK(hp.rope_mode == RF_ROPE_NEOX);
    CHECK(hp.n_ff_exp == 40);
    CHECK(s.model->layers[0].ffn_down_exps->ne(0) == 40);
    check_against_reference(spec, "qwen3moe_ref.gguf");
    check_decoding_matches_prefill(spec, "qwen3moe_bt.gguf");
    // Without expert_feed_forward_length an expert is n_ff / n_expert_used wide (llama.cpp).
    TinySpec no_key = spec;
    no_key.n_ff_exp = 0;
    no_key.n_ff = 96; // 32 per expert
    Setup d = load(no_key, "qwen3moe_nokey.gguf");
    CHECK(d.model->hparams().n_ff_exp == 32);
    check_against_reference(no_key, "qwen3moe_nokey_ref.gguf");
}

TEST_CASE("qwen2moe: unnormalised top-k and a gated shared expert; matches the reference and its decoding", "[model][moe]") {
    const TinySpec spec = qwen2moe_spec();
    Setup s = load(spec, "qwen2moe_hp.gguf");
    const ModelHparams &hp = s.model->hparams();
    CHECK(hp.arch == ModelArch::Qwen2Moe);
    CHECK_FALSE(hp.qk_norm);
    CHECK(hp.rope_mode == RF_ROPE_NEOX);
    CHECK(hp.n_ff_exp == 40);
    CHECK(hp.n_ff_shexp == 72);
    const LayerWeights &w = s.model->layers[1];
    CHECK(w.bq != nullptr);
    CHECK(w.ffn_gate_inp_shexp->ne(0) == 64);
    CHECK(w.ffn_gate_inp_shexp->ne(1) == 1);
    CHECK(w.ffn_down_shexp->ne(0) == 72);
    check_against_reference(spec, "qwen2moe_ref.gguf");
    check_decoding_matches_prefill(spec, "qwen2moe_bt.gguf");
    TinySpec f16 = spec;
    f16.matrix_type = RF_TYPE_F16;
    check_against_reference(f16, "qwen2moe_f16.gguf");
    // Without the width keys: experts n_ff / n_expert_used (32), the shared expert n_ff (96)
    // (llama.cpp); the gate as [n_embd, 1] reads the same.
    TinySpec no_keys = spec;
    no_keys.n_ff_exp = 0;
    no_keys.n_ff_shexp = 0;
    no_keys.shexp_gate_2d = true;
    Setup d = load(no_keys, "qwen2moe_nokey.gguf");
    CHECK(d.model->hparams().n_ff_exp == 32);
    CHECK(d.model->hparams().n_ff_shexp == 96);
    check_against_reference(no_keys, "qwen2moe_nokey_ref.gguf");
}

TEST_CASE("qwen2moe files without their shared expert or experts are refused by name", "[model][moe]") {
    TinySpec no_gate = qwen2moe_spec();
    no_gate.skip_tensors = {"blk.1.ffn_gate_inp_shexp.weight"};
    check_rejected(no_gate, "q2moe_nogate.gguf", "missing tensor 'blk.1.ffn_gate_inp_shexp.weight'");
    TinySpec no_up = qwen2moe_spec();
    no_up.skip_tensors = {"blk.0.ffn_up_shexp.weight"};
    check_rejected(no_up, "q2moe_noup.gguf", "missing tensor 'blk.0.ffn_up_shexp.weight'");
    TinySpec dense = qwen2moe_spec();
    dense.n_expert = 0;
    dense.n_expert_used = 0;
    check_rejected(dense, "q2moe_dense.gguf", "missing metadata key 'qwen2moe.expert_count'");
}

TEST_CASE("gpt-oss: sinks, YaRN, alternating windows, biases, clamped SwiGLU; matches the reference and its decoding",
          "[model][moe][gpt-oss]") {
    const TinySpec spec = gpt_oss_spec();
    Setup s = load(spec, "gptoss_hp.gguf");
    const ModelHparams &hp = s.model->hparams();
    CHECK(hp.arch == ModelArch::GptOss);
    CHECK(hp.rope_mode == RF_ROPE_NEOX);
    CHECK(hp.head_dim == 16);
    CHECK(hp.n_swa == 5);
    CHECK(hp.is_swa(0));
    CHECK_FALSE(hp.is_swa(1));
    CHECK(hp.is_swa(2));
    CHECK(hp.rope_yarn);
    CHECK(hp.yarn.n_ctx_orig == 64);
    CHECK(hp.yarn.ext_factor == 1.0f);
    CHECK(hp.rope_freq_scale == 0.25f);
    CHECK(hp.n_ff_exp == 40);
    const LayerWeights &w = s.model->layers[1];
    CHECK(w.attn_sinks->ne(0) == 8);
    CHECK(w.bo->ne(0) == 64);
    CHECK(w.ffn_gate_inp_b->ne(0) == 8);
    CHECK(w.ffn_down_exps_b->ne(0) == 64);
    CHECK(w.ffn_down_exps_b->ne(1) == 8);
    check_against_reference(spec, "gptoss_ref.gguf");
    check_decoding_matches_prefill(spec, "gptoss_bt.gguf");
    TinySpec f16 = spec;
    f16.matrix_type = RF_TYPE_F16;
    check_against_reference(f16, "gptoss_f16.gguf");
}

TEST_CASE("gpt-oss files without a tensor or key the family needs are refused by name", "[model][moe][gpt-oss]") {
    for (const char *name : {"blk.1.attn_sinks.weight", "blk.0.attn_output.bias", "blk.2.ffn_gate_inp.bias",
                             "blk.1.ffn_up_exps.bias", "blk.0.ffn_down_exps.bias", "blk.1.post_attention_norm.weight",
                             "blk.0.attn_k.bias"}) {
        TinySpec missing = gpt_oss_spec();
        missing.skip_tensors = {name};
        check_rejected(missing, "gptoss_missing.gguf", std::string("missing tensor '") + name + "'");
    }
    TinySpec no_window = gpt_oss_spec();
    no_window.sliding_window = 0;
    check_rejected(no_window, "gptoss_nowindow.gguf", "missing metadata key 'gpt-oss.attention.sliding_window'");
    TinySpec no_width = gpt_oss_spec();
    no_width.n_ff_exp = 0;
    check_rejected(no_width, "gptoss_nowidth.gguf", "missing metadata key 'gpt-oss.expert_feed_forward_length'");
}

TEST_CASE("mixture-of-experts files with missing or inconsistent experts are refused by name", "[model][moe]") {
    TinySpec missing = mixtral_spec();
    missing.skip_tensors = {"blk.1.ffn_up_exps.weight"};
    check_rejected(missing, "moe_missing.gguf", "missing tensor 'blk.1.ffn_up_exps.weight'");
    TinySpec no_router = qwen3moe_spec();
    no_router.skip_tensors = {"blk.0.ffn_gate_inp.weight"};
    check_rejected(no_router, "moe_norouter.gguf", "blk.0.ffn_gate_inp.weight");
    TinySpec too_many = mixtral_spec();
    too_many.n_expert_used = 9;
    check_rejected(too_many, "moe_used.gguf", "llama.expert_used_count = 9 must be in 1..8");
    TinySpec no_used = mixtral_spec();
    no_used.n_expert_used = 0;
    check_rejected(no_used, "moe_noused.gguf", "missing metadata key 'llama.expert_used_count'");
    TinySpec count = mixtral_spec();
    count.expert_count_key = 4; // tensors hold 8 experts
    check_rejected(count, "moe_count.gguf", "tensor 'blk.0.ffn_gate_inp.weight' has shape [64, 8, 1, 1], expected [64, 4, 1, 1]");
    TinySpec dense = qwen3moe_spec();
    dense.n_expert = 0;
    dense.n_expert_used = 0;
    dense.n_ff_exp = 0;
    check_rejected(dense, "moe_dense.gguf", "missing metadata key 'qwen3moe.expert_count'");
    TinySpec qwen2 = mixtral_spec(); // experts in a family without an expert graph
    qwen2.arch = "qwen2";
    check_rejected(qwen2, "moe_qwen2.gguf", "mixture-of-experts qwen2 models (qwen2.expert_count = 8) are not supported");
}

TEST_CASE("qwen3: per-head Q/K norms, explicit head size; matches the reference and its decoding", "[model][qwen3]") {
    const TinySpec spec = qwen3_spec();
    Setup s = load(spec, "qwen3_hp.gguf");
    const ModelHparams &hp = s.model->hparams();
    CHECK(hp.arch == ModelArch::Qwen3);
    CHECK(hp.head_dim == 24);
    CHECK(hp.n_embd_q() == 96);
    CHECK(hp.rope_mode == RF_ROPE_NEOX);
    CHECK(s.model->layers[1].attn_q_norm != nullptr);
    CHECK(s.model->layers[1].bq == nullptr);
    check_against_reference(spec, "qwen3_ref.gguf");
    check_decoding_matches_prefill(spec, "qwen3_bt.gguf");

    TinySpec no_norm = spec;
    no_norm.skip_tensors = {"blk.1.attn_k_norm.weight"};
    const std::string path = temp_path("qwen3_nonorm.gguf");
    write_tiny_model(path, no_norm);
    CHECK_THROWS_WITH(Model::load(path, *s.rt), Catch::Contains("blk.1.attn_k_norm.weight"));
}

TEST_CASE("gemma2: soft caps, sliding window on even layers, post norms, GeGLU; matches the reference", "[model][gemma]") {
    const TinySpec spec = gemma2_spec();
    Setup s = load(spec, "gemma2_hp.gguf");
    const ModelHparams &hp = s.model->hparams();
    CHECK(hp.arch == ModelArch::Gemma2);
    CHECK(hp.n_swa == 5);
    CHECK(hp.is_swa(0));
    CHECK_FALSE(hp.is_swa(1));
    CHECK(hp.attn_softcap == 2.0f);
    CHECK(hp.final_softcap == 3.0f);
    CHECK(hp.attn_scale == Approx(1.0f / std::sqrt(32.0f)));
    CHECK(s.model->tied_output);
    check_against_reference(spec, "gemma2_ref.gguf");
    check_decoding_matches_prefill(spec, "gemma2_bt.gguf");

    // The 27B shape (46 layers) scales queries by 1/sqrt(n_embd / n_head), as llama.cpp; without
    // the soft-capping keys gemma2 caps at llama.cpp's defaults.
    TinySpec big = spec;
    big.n_layer = 46;
    big.attn_softcap = big.final_softcap = 0.0f; // keys not written
    Setup s27 = load(big, "gemma2_27b.gguf");
    CHECK(s27.model->hparams().attn_scale == Approx(1.0f / std::sqrt(64.0f / 4.0f)));
    CHECK(s27.model->hparams().attn_softcap == 50.0f);
    CHECK(s27.model->hparams().final_softcap == 30.0f);
}

TEST_CASE("gemma3: 5 local : 1 global layers with their own RoPE, Q/K norms; matches the reference", "[model][gemma]") {
    const TinySpec spec = gemma3_spec();
    Setup s = load(spec, "gemma3_hp.gguf");
    const ModelHparams &hp = s.model->hparams();
    CHECK(hp.arch == ModelArch::Gemma3);
    for (int64_t l = 0; l < 7; ++l) CHECK(hp.is_swa(l) == (l != 5));
    CHECK(hp.rope_freq_base_swa == 10000.0f);
    CHECK(hp.rope_freq_scale_swa == 1.0f);
    CHECK(hp.rope_freq_scale == 0.5f);
    CHECK(hp.attn_softcap == 0.0f);
    check_against_reference(spec, "gemma3_ref.gguf");
    check_decoding_matches_prefill(spec, "gemma3_bt.gguf");
}

TEST_CASE("phi3: fused QKV and gate+up, long/short RoPE factors by context; matches the reference", "[model][phi3]") {
    const TinySpec spec = phi3_spec();
    Setup s = load(spec, "phi3_hp.gguf");
    CHECK(s.model->hparams().arch == ModelArch::Phi3);
    CHECK(s.model->hparams().rope_attn_factor == 1.25f);
    CHECK(s.model->rope_factors_long != nullptr);
    CHECK(s.model->layers[0].wk->ne(1) == 64); // rows 64..127 of attn_qkv
    // Counted once however the fused tensors are split.
    uint64_t file_params = 0;
    for (const auto &t : s.model->file().tensors()) file_params += (uint64_t)t.n_elements();
    CHECK(s.model->n_params() == file_params);
    check_against_reference(spec, "phi3_long.gguf", 128);  // 128 > original 64: long factors
    TinySpec short_ctx = spec;
    short_ctx.n_ctx_orig = 256;
    check_against_reference(short_ctx, "phi3_short.gguf", 128);
    TinySpec separate = spec; // phi3 files with attn_q/k/v and ffn_gate load too
    separate.fused = false;
    separate.rope_factors = false;
    check_against_reference(separate, "phi3_separate.gguf");
    check_decoding_matches_prefill(spec, "phi3_bt.gguf");
}

TEST_CASE("hyperparameters come from the <arch>.* keys", "[model]") {
    TinySpec spec;
    spec.rope_scale_factor = 4.0f;
    Setup s = load(spec, "hp.gguf");
    const ModelHparams &hp = s.model->hparams();
    CHECK(hp.arch == ModelArch::Llama);
    CHECK(hp.n_embd == 64);
    CHECK(hp.n_layer == 2);
    CHECK(hp.n_head == 4);
    CHECK(hp.n_head_kv == 2);
    CHECK(hp.head_dim == 16);
    CHECK(hp.n_rot == 16);
    CHECK(hp.n_vocab == 97);
    CHECK(hp.n_ff == 96);
    CHECK(hp.rope_mode == RF_ROPE_NORMAL);
    CHECK(hp.rope_freq_scale == Approx(0.25f));
    CHECK_FALSE(s.model->tied_output);
    CHECK(s.model->layers.size() == 2);
}

TEST_CASE("llama: batched prefill equals token-by-token decoding", "[model]") {
    Setup s = load(TinySpec{}, "llama_bt.gguf");
    InferenceContext a(*s.model, *s.rt, ctx_params());
    InferenceContext b(*s.model, *s.rt, ctx_params());
    const auto batched = prefill(a, kPrompt);
    const auto single = one_by_one(b, kPrompt);
    check_rows_close(batched, single, 97, 1e-3);
    CHECK(a.seq_length(0) == (int64_t)kPrompt.size());
}

TEST_CASE("llama: matches the float64 reference", "[model]") {
    check_against_reference(TinySpec{}, "llama_ref.gguf");
}

TEST_CASE("llama 3 style (rope_freqs, tied output, f16 weights) matches the reference", "[model]") {
    TinySpec spec;
    spec.rope_freqs = true;
    spec.tied_output = true;
    spec.rope_base = 500000.0f;
    spec.matrix_type = RF_TYPE_F16;
    check_against_reference(spec, "llama3_ref.gguf");
}

TEST_CASE("mistral-named file with linear rope scaling matches the reference", "[model]") {
    TinySpec spec;
    spec.arch = "mistral";
    spec.rope_scale_factor = 2.0f;
    check_against_reference(spec, "mistral_ref.gguf");
}

TEST_CASE("qwen2 (QKV bias, NeoX rope) matches the reference and its own decoding", "[model]") {
    TinySpec spec;
    spec.arch = "qwen2";
    check_against_reference(spec, "qwen2_ref.gguf");
    Setup s = load(spec, "qwen2_bt.gguf");
    CHECK(s.model->hparams().rope_mode == RF_ROPE_NEOX);
    CHECK(s.model->layers[0].bq != nullptr);
    InferenceContext a(*s.model, *s.rt, ctx_params());
    InferenceContext b(*s.model, *s.rt, ctx_params());
    check_rows_close(prefill(a, kPrompt), one_by_one(b, kPrompt), 97, 1e-3);
}

TEST_CASE("only the requested rows produce logits; batches split at n_batch", "[model]") {
    Setup s = load(TinySpec{}, "rows.gguf");
    const int64_t V = 97;
    InferenceContext full(*s.model, *s.rt, ctx_params());
    const auto all = prefill(full, kPrompt);

    ContextParams small = ctx_params();
    small.n_batch = 5; // 18 tokens -> 4 graphs
    InferenceContext split(*s.model, *s.rt, small);
    Batch b;
    for (size_t i = 0; i < kPrompt.size(); ++i) b.add(kPrompt[i], 0, i == 3 || i == 9 || i + 1 == kPrompt.size());
    const auto some = split.decode(b);
    REQUIRE(some.size() == 3 * (size_t)V);
    CHECK(rel_diff(some.data(), all.data() + 3 * V, V) < 1e-3);
    CHECK(rel_diff(some.data() + V, all.data() + 9 * V, V) < 1e-3);
    CHECK(rel_diff(some.data() + 2 * V, all.data() + (kPrompt.size() - 1) * V, V) < 1e-3);

    // No output at all still fills the cache: the next token sees the whole prefix.
    InferenceContext silent(*s.model, *s.rt, ctx_params());
    Batch prefix;
    for (size_t i = 0; i + 1 < kPrompt.size(); ++i) prefix.add(kPrompt[i], 0, false);
    CHECK(silent.decode(prefix).empty());
    Batch last;
    last.add(kPrompt.back(), 0, true);
    const auto l = silent.decode(last);
    CHECK(rel_diff(l.data(), all.data() + (kPrompt.size() - 1) * V, V) < 1e-3);
}

TEST_CASE("parallel sequences give the same logits as each alone", "[model]") {
    Setup s = load(TinySpec{}, "parallel.gguf");
    const int64_t V = 97;
    const std::vector<std::vector<int32_t>> prompts = {
        {1, 5, 9, 13, 17, 21, 25},
        {1, 90, 80, 70},
        {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, // spans two pages
    };
    const std::vector<int32_t> next = {40, 41, 42};

    std::vector<std::vector<float>> alone;
    for (size_t i = 0; i < prompts.size(); ++i) {
        InferenceContext ctx(*s.model, *s.rt, ctx_params());
        std::vector<int32_t> seq = prompts[i];
        seq.push_back(next[i]);
        alone.push_back(prefill(ctx, seq));
    }

    InferenceContext ctx(*s.model, *s.rt, ctx_params(128, 3));
    // All prompts in one batch (interleaved), then one decode step with a token per sequence.
    Batch b;
    for (size_t j = 0; j < 20; ++j)
        for (size_t i = 0; i < prompts.size(); ++i)
            if (j < prompts[i].size()) b.add(prompts[i][j], (int)i, true);
    const auto pre = ctx.decode(b);
    size_t row = 0;
    for (size_t j = 0; j < 20; ++j)
        for (size_t i = 0; i < prompts.size(); ++i)
            if (j < prompts[i].size()) {
                INFO("seq " << i << " pos " << j);
                CHECK(rel_diff(pre.data() + row * V, alone[i].data() + j * V, V) < 1e-3);
                ++row;
            }
    Batch step;
    for (size_t i = 0; i < prompts.size(); ++i) step.add(next[i], (int)i, true);
    const auto dec = ctx.decode(step);
    for (size_t i = 0; i < prompts.size(); ++i) {
        INFO("decode seq " << i);
        CHECK(rel_diff(dec.data() + i * V, alone[i].data() + prompts[i].size() * V, V) < 1e-3);
    }
    CHECK(ctx.seq_length(2) == 21);

    // Clearing one sequence and running it again reuses pages without disturbing the others.
    ctx.clear_sequence(1);
    const auto again = prefill(ctx, {prompts[1][0], prompts[1][1], prompts[1][2], prompts[1][3], next[1]}, 1);
    check_rows_close(again, alone[1], V, 1e-3);
}

TEST_CASE("submit() then collect() gives decode()'s logits; misuse is refused", "[model]") {
    Setup s = load(TinySpec{}, "submit.gguf");
    const int64_t V = 97;
    ContextParams p = ctx_params();
    p.n_batch = 8;
    InferenceContext plain(*s.model, *s.rt, p), split(*s.model, *s.rt, p);
    Batch prompt; // 18 tokens: submit() runs its three graphs at once, collect() returns them
    for (size_t i = 0; i < kPrompt.size(); ++i) prompt.add(kPrompt[i], 0, i % 5 == 0 || i + 1 == kPrompt.size());
    const std::vector<float> want = plain.decode(prompt);
    split.submit(prompt);
    CHECK_THROWS_WITH(split.submit(prompt), Catch::Contains("not collected"));
    CHECK_THROWS_WITH(split.decode(prompt), Catch::Contains("not collected"));
    const std::vector<float> *last = &split.collect();
    CHECK(*last == want);
    CHECK_THROWS_WITH(split.collect(), Catch::Contains("without a submitted batch"));
    // Decode steps of one graph each: while one runs, the previous logits stay as they were.
    for (int32_t t : {40, 41, 42}) {
        Batch step;
        step.add(t, 0, true);
        const std::vector<float> want_step = plain.decode(step), before = *last;
        split.submit(step);
        CHECK(*last == before);
        last = &split.collect();
        REQUIRE(last->size() == (size_t)V);
        CHECK(*last == want_step);
    }
    CHECK(split.seq_length(0) == plain.seq_length(0));
}

TEST_CASE("output top-k: each output row's k best logits, in batches split at n_batch and through submit()", "[model]") {
    Setup s = load(TinySpec{}, "topk.gguf");
    const int64_t V = 97, k = 9;
    ContextParams p = ctx_params(128, 2);
    p.n_batch = 5; // 18 tokens -> 4 graphs
    InferenceContext plain(*s.model, *s.rt, p), cand(*s.model, *s.rt, p);
    CHECK_THROWS_WITH(cand.set_output_top_k(V + 1), Catch::Contains("outside 0..97"));
    CHECK_THROWS(cand.set_output_top_k(-1));
    cand.set_output_top_k(k);
    CHECK_FALSE(cand.candidates_pay_off(k)); // the CPU backend: whole rows are as cheap
    Batch b;
    for (size_t i = 0; i < kPrompt.size(); ++i) b.add(kPrompt[i], 0, i == 3 || i == 9 || i + 1 == kPrompt.size());
    b.add(7, 1, true);
    const std::vector<float> want = plain.decode(b);
    const auto check_rows = [&](const std::vector<float> &logits, size_t rows) {
        const Candidates &c = cand.candidates();
        REQUIRE(c.k == k);
        REQUIRE(c.ids.size() == rows * (size_t)k);
        for (size_t r = 0; r < rows; ++r) {
            const float *l = logits.data() + r * (size_t)V;
            std::vector<int32_t> order((size_t)V);
            for (int32_t i = 0; i < (int32_t)V; ++i) order[(size_t)i] = i;
            std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) { return l[x] > l[y]; });
            for (int64_t j = 0; j < k; ++j) {
                INFO("row " << r << " candidate " << j);
                CHECK(c.ids[r * (size_t)k + (size_t)j] == order[(size_t)j]);
                CHECK(c.logits[r * (size_t)k + (size_t)j] == l[order[(size_t)j]]);
            }
        }
    };
    CHECK(cand.decode(b).empty());
    check_rows(want, 4);
    Batch step;
    step.add(40, 0, true);
    step.add(41, 1, true);
    const std::vector<float> want_step = plain.decode(step);
    cand.submit(step);
    CHECK(cand.collect().empty());
    check_rows(want_step, 2);
    {
        const ScopedOutputTopK whole(cand, 0); // back to whole rows for a scope
        Batch again;
        again.add(42, 0, true);
        CHECK(cand.decode(again) == plain.decode(again));
    }
    CHECK(cand.output_top_k() == k);
}

TEST_CASE("q8_0 cache stays close to f16", "[model]") {
    TinySpec spec;
    spec.n_head = 2; // head size 32: one q8_0 block per head
    spec.n_head_kv = 1;
    Setup s = load(spec, "q8cache.gguf");
    InferenceContext f16(*s.model, *s.rt, ctx_params(128, 1, RF_TYPE_F16));
    InferenceContext q8(*s.model, *s.rt, ctx_params(128, 1, RF_TYPE_Q8_0));
    CHECK(q8.cache().bytes_per_token() < f16.cache().bytes_per_token());
    check_rows_close(prefill(q8, kPrompt), prefill(f16, kPrompt), 97, 5e-2);

    Setup small_heads = load(TinySpec{}, "q8cache16.gguf"); // head size 16
    CHECK_THROWS_WITH(InferenceContext(*small_heads.model, *small_heads.rt, ctx_params(128, 1, RF_TYPE_Q8_0)),
                      Catch::Contains("multiple of 32"));
}

TEST_CASE("a full context is reported and changes nothing", "[model]") {
    Setup s = load(TinySpec{}, "full.gguf");
    InferenceContext ctx(*s.model, *s.rt, ctx_params(16));
    CHECK(ctx.cache().pages().n_slots() == 16);
    std::vector<int32_t> p15(kPrompt.begin(), kPrompt.begin() + 15);
    prefill(ctx, p15);
    CHECK_THROWS_AS(prefill(ctx, {3, 4}), ContextFullError);
    CHECK(ctx.seq_length(0) == 15);
    const auto l = prefill(ctx, {kPrompt[15]}); // the last slot still works
    CHECK(l.size() == 97);
    CHECK_THROWS_AS(prefill(ctx, {3}), ContextFullError);

    // -c 20 rounds the pool up to two pages, but a sequence still stops at 20 positions.
    InferenceContext c20(*s.model, *s.rt, ctx_params(20));
    CHECK(c20.cache().pages().n_slots() == 32);
    prefill(c20, std::vector<int32_t>(kPrompt.begin(), kPrompt.begin() + 18));
    CHECK_THROWS_AS(prefill(c20, {1, 2, 3}), ContextFullError);
    prefill(c20, {1, 2});
    CHECK_THROWS_WITH(prefill(c20, {1}), Catch::Contains("context size of 20"));

    // -c is shared: three sequences fill 40 tokens in any split, whatever their partial pages.
    InferenceContext c40(*s.model, *s.rt, ctx_params(40, 3));
    prefill(c40, std::vector<int32_t>(14, 5), 0);
    prefill(c40, std::vector<int32_t>(13, 6), 1);
    prefill(c40, std::vector<int32_t>(13, 7), 2);
    CHECK_THROWS_AS(prefill(c40, {8}, 1), ContextFullError);
    c40.clear_sequence(0);
    CHECK(prefill(c40, {8}, 1).size() == 97);
}

TEST_CASE("bad files and bad batches are rejected by name", "[model]") {
    auto rt = cpu_runtime();
    TinySpec missing;
    missing.skip_tensors = {"blk.1.ffn_up.weight"};
    const std::string p1 = temp_path("missing.gguf");
    write_tiny_model(p1, missing);
    REQUIRE_THROWS_WITH(Model::load(p1, *rt), Catch::Contains("blk.1.ffn_up.weight"));

    TinySpec qwen_no_bias;
    qwen_no_bias.arch = "qwen2";
    qwen_no_bias.skip_tensors = {"blk.0.attn_k.bias"};
    const std::string p2 = temp_path("qwen_nobias.gguf");
    write_tiny_model(p2, qwen_no_bias);
    REQUIRE_THROWS_WITH(Model::load(p2, *rt), Catch::Contains("blk.0.attn_k.bias"));

    TinySpec gpt;
    gpt.arch = "gpt2";
    const std::string p3 = temp_path("gpt2.gguf");
    write_tiny_model(p3, gpt);
    // One line naming the architecture and what is supported.
    REQUIRE_THROWS_WITH(Model::load(p3, *rt), Catch::Contains("unsupported model architecture 'gpt2' (supported: llama, "
                                                              "mistral, qwen2, qwen3, gemma2, gemma3, phi3, qwen3moe, qwen2moe, gpt-oss, bert, nomic-bert, deepseek2, "
                                                              "qwen35, qwen35moe, qwen3next)"));

    Setup s = load(TinySpec{}, "badbatch.gguf");
    InferenceContext ctx(*s.model, *s.rt, ctx_params());
    CHECK_THROWS_WITH(prefill(ctx, {5, 97}), Catch::Contains("97"));
    CHECK_THROWS_WITH(prefill(ctx, {5}, 1), Catch::Contains("sequence id 1"));
    CHECK(ctx.seq_length(0) == 0);
}

// The (cos, sin) rows a decode step gives every ROPE node (rope_angles.h; abi.h ROPE src3) are those
// of the node's own parameters: gemma3's local layers their own base and scale, phi3's long or short
// factors by context. Without rows in the inputs the nodes get none.
void check_rope_angles(const TinySpec &spec, const std::string &file, int64_t n_ctx, int expect_sets) {
    Setup s = load(spec, file);
    const ModelHparams &hp = s.model->hparams();
    KvCacheParams kp;
    kp.n_ctx = n_ctx;
    KvCache cache(s.model->backend(), hp.n_layer, hp.n_embd_kv(), kp);
    ForwardInputs in;
    in.tokens = {5, 9, 3};
    in.positions = {7, 0, (int32_t)n_ctx - 1};
    in.slots = {7, 0, (int32_t)n_ctx - 1};
    in.token_info = {0, 7, 0, 0, 0, (int32_t)n_ctx - 1};
    in.output_rows = {0, 1, 2};
    in.n_seq = 1;
    in.n_kv_max = n_ctx;
    in.slot_table.assign((size_t)n_ctx, 0);
    for (int with_rows = 0; with_rows < 2; ++with_rows) {
        INFO("angle rows given: " << with_rows);
        int sets = 0;
        for (int i = 0; i < 2; ++i) {
            in.rope_angles[i].clear();
            RopeParams p;
            if (!with_rows || (i == 1 && hp.n_swa == 0)) continue;
            REQUIRE(rope_params(*s.model, cache, i == 1, &p));
            RopeAngleCache(p, n_ctx).gather(in.positions.data(), 3, in.rope_angles[i]);
            ++sets;
        }
        CHECK(sets == (with_rows ? expect_sets : 0));
        Graph g;
        build_forward_graph(g, *s.model, cache, in);
        int ropes = 0, local = 0;
        for (size_t k = 0; k < g.nodes().size(); ++k) {
            const rf_node &n = g.nodes()[k];
            if (n.op != RF_OP_ROPE) continue;
            ++ropes;
            const Tensor *rows = g.node_refs()[k].src[3];
            if (!with_rows) {
                CHECK(n.src[3] == nullptr);
                continue;
            }
            REQUIRE(rows != nullptr);
            local += rows->host_data == in.rope_angles[1].data() ? 1 : 0;
            // The node's parameters and factors (CPU backend: the weight's bytes are host memory).
            RopeParams np{n.iparams[1], n.fparams[0], n.fparams[1], n.src[2] ? (const float *)n.src[2]->data : nullptr};
            if (n.iparams[2] == 1) {
                np.yarn = true;
                np.yarn_params = RopeYarn{n.iparams[3], n.fparams[2], n.fparams[3], n.fparams[4], n.fparams[5]};
            }
            std::vector<float> want((size_t)n.iparams[1]);
            for (int t = 0; t < 3; ++t) {
                rope_angles_row(np, in.positions[(size_t)t], want.data());
                CHECK(std::memcmp(want.data(), (const float *)rows->host_data + t * n.iparams[1], want.size() * 4) == 0);
            }
        }
        CHECK(ropes > 0);
        if (with_rows && expect_sets == 2) CHECK((local > 0 && local < ropes));
    }
}

TEST_CASE("decode steps give each ROPE node the angle rows of its own parameters", "[model]") {
    check_rope_angles(TinySpec{}, "angles_llama.gguf", 128, 1);
    check_rope_angles(gemma3_spec(), "angles_gemma3.gguf", 128, 2);
    check_rope_angles(phi3_spec(), "angles_phi3_long.gguf", 128, 1); // 128 > the original 64: long factors
    TinySpec short_ctx = phi3_spec();
    short_ctx.n_ctx_orig = 256;
    check_rope_angles(short_ctx, "angles_phi3_short.gguf", 128, 1);
    check_rope_angles(gpt_oss_spec(), "angles_gptoss.gguf", 128, 2); // YaRN rows (local layers: the same parameters)
}

TEST_CASE("attention split hint: the decode rows ahead of a prompt chunk", "[model]") {
    // token_info pairs (batch sequence, position)
    CHECK(leading_single_rows({0, 7, 1, 3, 2, 0, 2, 1, 2, 2}, 3) == 2); // two decode rows, a 3-token chunk
    CHECK(leading_single_rows({0, 7, 1, 3, 2, 5}, 3) == 0);             // all decode rows: no split
    CHECK(leading_single_rows({0, 0, 0, 1, 1, 9}, 2) == 0);             // a chunk first
    CHECK(leading_single_rows({0, 4, 1, 0, 1, 1, 0, 5}, 2) == 0);       // sequence 0 again later
    CHECK(leading_single_rows({0, 4, 1, 0, 1, 1, 2, 6}, 3) == 1);       // a single row after the chunk is not counted
    CHECK(leading_single_rows({}, 0) == 0);
}

