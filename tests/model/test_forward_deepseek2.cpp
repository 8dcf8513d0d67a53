// deepseek2 (DeepSeek-V2/V3 layout) on the CPU backend: the absorbed latent attention with its
// compressed cache, leading dense layers, shared experts and the routing variants against the
// float64 reference of tiny_deepseek2.cpp (plain multi-head attention over decompressed heads),
// batch = token by token, and files lacking what the family needs refused by name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/inference.h"
#include "rocmforge/kv_cache.h"
#include "rocmforge/model.h"
#include "tiny_deepseek2.h"
#include "tiny_model.h"

using namespace rf;
using namespace rf_test;

namespace {

const std::vector<int32_t> kTokens = {1, 15, 42, 7, 88, 3, 60, 60, 21, 96, 0, 33, 5, 71, 19, 50, 2, 44, 9, 90};

struct Loaded {
    std::unique_ptr<Runtime> rt;
    std::unique_ptr<Model> model;
    DeepSeek2Weights weights;
};

Loaded load(const DeepSeek2Spec &spec, const std::string &file) {
    Loaded s;
    const std::string path = temp_path(file);
    s.weights = write_tiny_deepseek2(path, spec);
    s.rt = cpu_runtime();
    s.model = Model::load(path, *s.rt);
    return s;
}

ContextParams params(int cache_type) {
    ContextParams p;
    p.n_ctx = 128;
    p.n_batch = 64;
    p.page_size = 16;
    p.type_k = p.type_v = cache_type;
    return p;
}

std::vector<float> run(InferenceContext &ctx, const std::vector<int32_t> &tokens, bool one_by_one) {
    std::vector<float> all;
    if (!one_by_one) {
        Batch b;
        for (int32_t t : tokens) b.add(t, 0, true);
        return ctx.decode(b);
    }
    for (int32_t t : tokens) {
        Batch b;
        b.add(t, 0, true);
        const auto &l = ctx.decode(b);
        all.insert(all.end(), l.begin(), l.end());
    }
    return all;
}

// Prefill (f32 cache) against the reference; token by token (f16 cache, as generation runs)
// against the prefill.
void check_spec(const DeepSeek2Spec &spec, const std::string &file) {
    Loaded s = load(spec, file);
    const int64_t V = spec.n_vocab;
    const auto ref = deepseek2_reference(s.weights, kTokens);
    InferenceContext a(*s.model, *s.rt, params(RF_TYPE_F32));
    const auto logits = run(a, kTokens, false);
    REQUIRE(logits.size() == kTokens.size() * (size_t)V);
    for (size_t t = 0; t < kTokens.size(); ++t) {
        INFO("position " << t);
        CHECK(rel_diff(logits.data() + t * V, ref[t].data(), V) < 2e-3);
    }
    InferenceContext b(*s.model, *s.rt, params(RF_TYPE_F16));
    const auto step = run(b, kTokens, true);
    REQUIRE(step.size() == logits.size());
    for (size_t t = 0; t < kTokens.size(); ++t) {
        INFO("decode position " << t);
        CHECK(rel_diff(step.data() + t * V, logits.data() + t * V, V) < 2e-3);
    }
}

void check_rejected(const DeepSeek2Spec &spec, const std::string &file, const std::string &message) {
    auto rt = cpu_runtime();
    const std::string path = temp_path(file);
    write_tiny_deepseek2(path, spec);
    INFO(file);
    CHECK_THROWS_WITH(Model::load(path, *rt), Catch::Contains(message));
}

} // namespace

TEST_CASE("deepseek2 (V3 routing): q lora, latent attention, sigmoid grouped top-k with bias, norm and scale",
          "[model][moe][deepseek2]") {
    const DeepSeek2Spec spec;
    Loaded s = load(spec, "ds2_hp.gguf");
    const ModelHparams &hp = s.model->hparams();
    CHECK(hp.arch == ModelArch::DeepSeek2);
    CHECK(hp.rope_mode == RF_ROPE_NORMAL);
    CHECK(hp.head_dim == 48); // the cache row: latent 32 + rope 16
    CHECK(hp.n_head_kv == 1);
    CHECK(hp.ds.n_head_k == 32);
    CHECK(hp.ds.n_head_v == 24);
    CHECK(hp.ds.n_group == 4);
    CHECK(hp.ds.sigmoid_gating);
    CHECK(hp.n_ff_shexp == 20);
    CHECK(hp.yarn.attn_factor == Approx(1.0 / (1.0 + 0.1 * std::log(4.0))));
    CHECK(s.model->layers[0].ffn_gate != nullptr); // the leading dense layer
    CHECK(s.model->layers[1].ffn_exp_probs_b != nullptr);
    // The cache holds K rows alone: latent + rope per token and layer.
    InferenceContext ctx(*s.model, *s.rt, params(RF_TYPE_F16));
    CHECK(ctx.cache().bytes_per_token() == (uint64_t)(3 * 48 * 2));
    check_spec(spec, "ds2_v3.gguf");
    DeepSeek2Spec f16 = spec;
    f16.matrix_type = RF_TYPE_F16;
    check_spec(f16, "ds2_v3_f16.gguf");
}

TEST_CASE("deepseek2 (V2-Lite): attn_q, softmax top-k without norm, attn_kv_b of older converters, no YaRN",
          "[model][moe][deepseek2]") {
    DeepSeek2Spec spec;
    spec.q_lora = 0;
    spec.sigmoid = false;
    spec.probs_bias = false;
    spec.weights_norm = false;
    spec.weights_scale = 1.0f;
    spec.n_group = 0;
    spec.yarn_factor = 0;
    spec.mla_layout = false;
    spec.n_shared = 2;
    check_spec(spec, "ds2_lite_kvb.gguf");
    spec.mla_layout = true; // the same model in the newer layout
    check_spec(spec, "ds2_lite_mla.gguf");
    // Both layouts of one seed give the same model.
    Loaded a = load(spec, "ds2_lite_a.gguf");
    DeepSeek2Spec old = spec;
    old.mla_layout = false;
    Loaded b = load(old, "ds2_lite_b.gguf");
    InferenceContext ca(*a.model, *a.rt, params(RF_TYPE_F32)), cb(*b.model, *b.rt, params(RF_TYPE_F32));
    const auto la = run(ca, kTokens, false), lb = run(cb, kTokens, false);
    for (size_t t = 0; t < kTokens.size(); ++t) CHECK(rel_diff(la.data() + t * 97, lb.data() + t * 97, 97) < 1e-4);
}

TEST_CASE("deepseek2 files without a tensor or key the family needs are refused by name", "[model][moe][deepseek2]") {
    for (const char *name : {"blk.0.attn_kv_a_mqa.weight", "blk.1.attn_kv_a_norm.weight", "blk.2.attn_q_b.weight",
                             "blk.1.attn_v_b.weight", "blk.2.ffn_up_shexp.weight", "blk.0.ffn_gate.weight",
                             "blk.1.ffn_down_exps.weight"}) {
        DeepSeek2Spec missing;
        missing.skip_tensors = {name};
        check_rejected(missing, "ds2_missing.gguf", std::string("missing tensor '") + name + "'");
    }
    DeepSeek2Spec no_kb;
    no_kb.skip_tensors = {"blk.1.attn_k_b.weight"};
    check_rejected(no_kb, "ds2_nokb.gguf", "missing tensor 'blk.1.attn_k_b.weight' (or 'blk.1.attn_kv_b.weight')");
    for (const char *key : {"attention.kv_lora_rank", "leading_dense_block_count", "expert_shared_count", "expert_weights_scale",
                            "expert_feed_forward_length"}) {
        DeepSeek2Spec missing;
        missing.skip_keys = {key};
        check_rejected(missing, "ds2_nokey.gguf", std::string("missing metadata key 'deepseek2.") + key + "'");
    }
    DeepSeek2Spec no_rope;
    no_rope.skip_keys = {"rope.dimension_count"};
    check_rejected(no_rope, "ds2_norope.gguf", "deepseek2.rope.dimension_count");
    DeepSeek2Spec bad_groups;
    bad_groups.n_group = 3; // does not divide 8 experts
    check_rejected(bad_groups, "ds2_groups.gguf", "deepseek2.expert_group_count");
}

// A GPU-like backend (device memory, without the deepseek2 ops, as the HIP one): the weights stay
// there, the compressed cache, latent attention and the new ops run on the CPU, the logits as on
// the CPU alone.
TEST_CASE("deepseek2 with its weights on a GPU-like backend: cache and latent attention on the CPU", "[model][moe][deepseek2]") {
    auto rt = gpulike_runtime();
    const DeepSeek2Spec spec;
    const std::string path = temp_path("ds2_gpulike.gguf");
    write_tiny_deepseek2(path, spec);
    auto model = Model::load(path, *rt);
    REQUIRE(model->backend().name() == "gpulike");
    CHECK(kv_cache_backend(*rt, model->backend(), model->hparams()).name() == "cpu");
    InferenceContext gpu(*model, *rt, params(RF_TYPE_F16));
    Loaded cpu = load(spec, "ds2_cpu.gguf");
    InferenceContext ref(*cpu.model, *cpu.rt, params(RF_TYPE_F16));
    const auto a = run(gpu, kTokens, false), b = run(ref, kTokens, false);
    REQUIRE(a.size() == b.size());
    CHECK(rel_diff(a.data(), b.data(), (int64_t)a.size()) < 1e-5);
    const auto sa = run(gpu, {5, 6, 7}, true), sb = run(ref, {5, 6, 7}, true);
    CHECK(rel_diff(sa.data(), sb.data(), (int64_t)sa.size()) < 1e-5);
}

// Two sequences in one batch equal each run alone; a prefix copied into another sequence (the
// page copy of the K-only cache) continues as the original does.
TEST_CASE("deepseek2: batched sequences and a copied prefix over the compressed cache", "[model][moe][deepseek2]") {
    const DeepSeek2Spec spec;
    Loaded s = load(spec, "ds2_seqs.gguf");
    ContextParams p = params(RF_TYPE_F16);
    p.n_seq_max = 2;
    InferenceContext both(*s.model, *s.rt, p), alone(*s.model, *s.rt, params(RF_TYPE_F16));
    const std::vector<int32_t> a(kTokens.begin(), kTokens.begin() + 11), b(kTokens.begin() + 4, kTokens.end());
    Batch batch;
    for (int32_t t : a) batch.add(t, 0, true);
    for (int32_t t : b) batch.add(t, 1, true);
    const std::vector<float> joint = both.decode(batch);
    const int64_t V = spec.n_vocab;
    const std::vector<float> la = run(alone, a, false);
    alone.clear_sequence(0);
    const std::vector<float> lb = run(alone, b, false);
    for (size_t i = 0; i < a.size(); ++i) CHECK(rel_diff(joint.data() + i * V, la.data() + i * V, V) < 1e-5);
    for (size_t i = 0; i < b.size(); ++i) CHECK(rel_diff(joint.data() + (a.size() + i) * V, lb.data() + i * V, V) < 1e-5);
    // Sequence 1 becomes a copy of sequence 0's 11 positions; the same next token on both.
    both.cache().copy_prefix(0, 1, (int64_t)a.size());
    Batch next;
    next.add(77, 0, true);
    next.add(77, 1, true);
    const std::vector<float> l = both.decode(next);
    CHECK(rel_diff(l.data(), l.data() + V, V) == 0.0);
    Batch more;
    more.add(77, 0, true);
    alone.clear_sequence(0);
    run(alone, a, false);
    const std::vector<float> l2 = alone.decode(more);
    CHECK(rel_diff(l.data(), l2.data(), V) < 1e-5);
}

// Greedy generation: each next token the argmax of the last logits, fed back one at a time (f16
// cache); the tokens are those the float64 reference picks on the growing sequence.
TEST_CASE("deepseek2: greedy generation picks the reference's tokens", "[model][moe][deepseek2]") {
    const DeepSeek2Spec spec;
    Loaded s = load(spec, "ds2_greedy.gguf");
    InferenceContext ctx(*s.model, *s.rt, params(RF_TYPE_F16));
    std::vector<int32_t> seq = {1, 15, 42, 7, 88};
    const int64_t V = spec.n_vocab;
    std::vector<float> last = run(ctx, seq, false);
    last.erase(last.begin(), last.end() - V);
    for (int step = 0; step < 10; ++step) {
        const int32_t next = (int32_t)(std::max_element(last.begin(), last.end()) - last.begin());
        seq.push_back(next);
        last = run(ctx, {next}, true);
    }
    const auto ref = deepseek2_reference(s.weights, seq);
    for (size_t t = 4; t + 1 < seq.size(); ++t) {
        INFO("position " << t);
        CHECK(std::max_element(ref[t].begin(), ref[t].end()) - ref[t].begin() == seq[t + 1]);
    }
}

// A file whose last block is a multi-token-prediction layer (nextn_predict_layers = 1): the model
// is the blocks before it, as the reference of those blocks alone.
TEST_CASE("deepseek2: nextn_predict_layers are not run", "[model][moe][deepseek2]") {
    DeepSeek2Spec spec;
    spec.nextn = 1;
    Loaded s = load(spec, "ds2_nextn.gguf");
    CHECK(s.model->hparams().n_layer == 2);
    DeepSeek2Weights first = s.weights;
    first.spec.n_layer = 2;
    const auto ref = deepseek2_reference(first, kTokens);
    InferenceContext ctx(*s.model, *s.rt, params(RF_TYPE_F32));
    const auto logits = run(ctx, kTokens, false);
    for (size_t t = 0; t < kTokens.size(); ++t) CHECK(rel_diff(logits.data() + t * 97, ref[t].data(), 97) < 2e-3);
    DeepSeek2Spec all = spec;
    all.nextn = 3;
    check_rejected(all, "ds2_nextn_all.gguf", "deepseek2.nextn_predict_layers");
}
