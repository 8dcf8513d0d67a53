// Qwen3.5 (qwen35, qwen35moe) on the CPU backend: the hybrid stack against the float64
// reference of tiny_qwen35.cpp, the recurrent state carried across graphs (prompt then decode =
// token by token), sequences independent of each other in one batch, greedy generation, the
// state cache's copy and its refusals, a GPU-like backend without the recurrent ops (the CPU
// runs them), and files missing what the family needs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/inference.h"
#include "rocmforge/model.h"
#include "decode_steps.h"
#include "tiny_model.h"
#include "tiny_qwen35.h"

using namespace rf;
using namespace rf_test;

namespace {

struct Q35 {
    std::unique_ptr<Runtime> rt;
    std::unique_ptr<Model> model;
    Q35Weights weights;
};

Q35 load_q35(const Q35Spec &spec, const std::string &file, std::unique_ptr<Runtime> rt = nullptr) {
    Q35 s;
    const std::string path = temp_path(file);
    s.weights = write_tiny_qwen35(path, spec);
    s.rt = rt ? std::move(rt) : cpu_runtime();
    s.model = Model::load(path, *s.rt);
    return s;
}

ContextParams params(int n_seq = 1, int cache_type = RF_TYPE_F32) {
    ContextParams p;
    p.n_ctx = 128;
    p.n_batch = 64;
    p.n_seq_max = n_seq;
    p.page_size = 16;
    p.type_k = p.type_v = cache_type;
    return p;
}

const std::vector<int32_t> kPrompt = {1, 15, 42, 7, 58, 3, 60, 60, 21, 66, 0, 33, 5};
const std::vector<int32_t> kOther = {9, 9, 40, 2, 17, 63, 28};

void check_reference(const Q35 &s, const std::vector<float> &logits, const std::vector<int32_t> &tokens, double tol) {
    const auto ref = reference_qwen35(s.weights, tokens);
    const int64_t V = s.weights.spec.n_vocab;
    REQUIRE(logits.size() == tokens.size() * (size_t)V);
    for (size_t t = 0; t < tokens.size(); ++t) {
        INFO("position " << t);
        CHECK(rel_diff(logits.data() + t * V, ref[t].data(), V) < tol);
    }
}

} // namespace

TEST_CASE("qwen35: DeltaNet and gated attention layers match the float64 reference", "[model][qwen35]") {
    Q35Spec spec;
    Q35 s = load_q35(spec, "qwen35.gguf");
    const ModelHparams &hp = s.model->hparams();
    CHECK(hp.hybrid());
    CHECK(hp.n_layer_kv() == 2);
    CHECK((hp.is_recurrent(0) && !hp.is_recurrent(1) && hp.is_recurrent(2) && !hp.is_recurrent(3)));
    InferenceContext ctx(*s.model, *s.rt, params());
    check_reference(s, prefill(ctx, kPrompt), kPrompt, 1e-4);
    CHECK(ctx.cache().summary().find("recurrent state: 2 layers") != std::string::npos);

    SECTION("f16 weights") {
        Q35Spec f16 = spec;
        f16.matrix_type = RF_TYPE_F16;
        Q35 h = load_q35(f16, "qwen35_f16.gguf");
        InferenceContext c(*h.model, *h.rt, params());
        check_reference(h, prefill(c, kPrompt), kPrompt, 1e-2); // activations rounded to f16 as ggml does
    }
    SECTION("MTP blocks after the stack are not run") {
        Q35Spec mtp = spec;
        mtp.nextn_layers = 1;
        Q35 m = load_q35(mtp, "qwen35_mtp.gguf");
        CHECK(m.model->hparams().n_layer == 4);
        InferenceContext c(*m.model, *m.rt, params());
        check_reference(m, prefill(c, kPrompt), kPrompt, 1e-4);
    }
}

TEST_CASE("qwen35moe: experts, normalised top-k and the gated shared expert match the reference", "[model][qwen35][moe]") {
    Q35Spec spec;
    spec.moe = true;
    Q35 s = load_q35(spec, "qwen35moe.gguf");
    CHECK(s.model->hparams().n_ff_shexp == 40);
    InferenceContext ctx(*s.model, *s.rt, params());
    check_reference(s, prefill(ctx, kPrompt), kPrompt, 1e-4);
    InferenceContext a(*s.model, *s.rt, params()), b(*s.model, *s.rt, params());
    check_rows_close(prefill(a, kPrompt), one_by_one(b, kPrompt), spec.n_vocab, 1e-4);
}

TEST_CASE("qwen3next: key heads repeated over their value heads, fused ssm_ba, older files' ssm_in; match the reference",
          "[model][qwen35][moe]") {
    for (bool legacy : {false, true}) {
        INFO("ssm_in " << legacy);
        Q35Spec spec;
        spec.moe = spec.next = true;
        spec.legacy_ssm_in = legacy;
        Q35 s = load_q35(spec, legacy ? "qwen3next_in.gguf" : "qwen3next.gguf");
        CHECK(s.model->hparams().ssm_heads_interleaved());
        InferenceContext ctx(*s.model, *s.rt, params());
        check_reference(s, prefill(ctx, kPrompt), kPrompt, 1e-4);
        InferenceContext a(*s.model, *s.rt, params()), b(*s.model, *s.rt, params());
        check_rows_close(prefill(a, kPrompt), one_by_one(b, kPrompt), spec.n_vocab, 1e-4);
    }
    Q35Spec spec; // without its ssm_ba: refused by name
    spec.moe = spec.next = true;
    spec.skip_tensors = {"blk.0.ssm_ba.weight"};
    auto rt = cpu_runtime();
    const std::string path = temp_path("qwen3next_noba.gguf");
    write_tiny_qwen35(path, spec);
    CHECK_THROWS_WITH(Model::load(path, *rt), Catch::Contains("missing tensor 'blk.0.ssm_ba.weight'"));
}

TEST_CASE("qwen35: the state carries across graphs, sequences are independent, greedy generation runs",
          "[model][qwen35]") {
    Q35Spec spec;
    Q35 s = load_q35(spec, "qwen35_state.gguf");
    const int64_t V = spec.n_vocab;

    SECTION("prompt of N then decode = every token alone (f16 cache)") {
        InferenceContext a(*s.model, *s.rt, params(1, RF_TYPE_F16));
        InferenceContext b(*s.model, *s.rt, params(1, RF_TYPE_F16));
        const std::vector<int32_t> head(kPrompt.begin(), kPrompt.begin() + 8), tail(kPrompt.begin() + 8, kPrompt.end());
        std::vector<float> split = prefill(a, head);
        const std::vector<float> rest = one_by_one(a, tail);
        split.insert(split.end(), rest.begin(), rest.end());
        check_rows_close(split, one_by_one(b, kPrompt), V, 1e-4);
        // A prompt split over graphs of 5 tokens (n_batch) continues the state between them.
        ContextParams p5 = params(1, RF_TYPE_F16);
        p5.n_batch = 5;
        InferenceContext c(*s.model, *s.rt, p5);
        InferenceContext d(*s.model, *s.rt, params(1, RF_TYPE_F16));
        check_rows_close(prefill(c, kPrompt), one_by_one(d, kPrompt), V, 1e-4);
    }
    SECTION("two sequences in one batch = each alone; a cleared sequence starts afresh") {
        InferenceContext two(*s.model, *s.rt, params(2));
        Batch b; // interleaved prompts
        for (size_t i = 0; i < std::max(kPrompt.size(), kOther.size()); ++i) {
            if (i < kPrompt.size()) b.add(kPrompt[i], 0, true);
            if (i < kOther.size()) b.add(kOther[i], 1, true);
        }
        const std::vector<float> both = two.decode(b);
        std::vector<float> s0, s1;
        for (size_t i = 0, r = 0; i < b.size(); ++i, ++r)
            (b.seq[i] == 0 ? s0 : s1).insert((b.seq[i] == 0 ? s0 : s1).end(), both.begin() + (long)(r * V), both.begin() + (long)((r + 1) * V));
        InferenceContext alone(*s.model, *s.rt, params());
        check_rows_close(s0, prefill(alone, kPrompt), V, 1e-4);
        alone.clear_sequence(0);
        const std::vector<float> other_alone = prefill(alone, kOther); // over kPrompt's stale state
        check_rows_close(s1, other_alone, V, 1e-4);
        check_reference(s, other_alone, kOther, 1e-4);
        // Decode steps of both at once = the same steps alone.
        Batch step;
        step.add(11, 0, true);
        step.add(12, 1, true);
        const std::vector<float> stepped = two.decode(step);
        InferenceContext a0(*s.model, *s.rt, params());
        std::vector<int32_t> p0 = kPrompt, p1 = kOther;
        p0.push_back(11), p1.push_back(12);
        const std::vector<float> r0 = prefill(a0, p0);
        a0.clear_sequence(0);
        const std::vector<float> r1 = prefill(a0, p1);
        CHECK(rel_diff(stepped.data(), r0.data() + (p0.size() - 1) * V, V) < 1e-4);
        CHECK(rel_diff(stepped.data() + V, r1.data() + (p1.size() - 1) * V, V) < 1e-4);
        // A server's mixed step: sequence 0's decode row ahead of a new prompt on sequence 1.
        two.clear_sequence(1);
        Batch mixed;
        mixed.add(13, 0, true);
        for (int32_t t : kOther) mixed.add(t, 1, true);
        const std::vector<float> m = two.decode(mixed);
        p0.push_back(13);
        a0.clear_sequence(0);
        const std::vector<float> r2 = prefill(a0, p0);
        CHECK(rel_diff(m.data(), r2.data() + (p0.size() - 1) * V, V) < 1e-4);
        check_rows_close(std::vector<float>(m.begin() + V, m.end()), other_alone, V, 1e-4);
    }
    SECTION("greedy generation follows the reference's argmax") {
        InferenceContext ctx(*s.model, *s.rt, params(1, RF_TYPE_F16));
        std::vector<int32_t> toks = {1, 15, 42};
        std::vector<float> last = prefill(ctx, toks);
        last.erase(last.begin(), last.end() - V);
        for (int step = 0; step < 12; ++step) {
            const int32_t next = (int32_t)(std::max_element(last.begin(), last.end()) - last.begin());
            toks.push_back(next);
            Batch b;
            b.add(next, 0, true);
            last = ctx.decode(b);
        }
        const auto ref = reference_qwen35(s.weights, toks);
        for (size_t t = 2; t + 1 < toks.size(); ++t) { // every chosen token is the reference's (when not a near tie)
            std::vector<double> r = ref[t];
            const auto best = std::max_element(r.begin(), r.end()) - r.begin();
            std::vector<double> sorted = r;
            std::sort(sorted.rbegin(), sorted.rend());
            if (sorted[0] - sorted[1] > 1e-3) CHECK(toks[t + 1] == best);
        }
    }
    SECTION("copy of a whole sequence carries its state; partial copies and cuts are refused") {
        InferenceContext ctx(*s.model, *s.rt, params(2));
        prefill(ctx, kPrompt, 0);
        ctx.cache().copy_prefix(0, 1, (int64_t)kPrompt.size());
        Batch b;
        b.add(4, 0, true);
        b.add(4, 1, true);
        const std::vector<float> out = ctx.decode(b);
        CHECK(rel_diff(out.data(), out.data() + V, V) < 1e-6);
        CHECK_THROWS_WITH(ctx.cache().copy_prefix(0, 1, 5), Catch::Contains("recurrent layers"));
        CHECK_THROWS_WITH(ctx.cache().truncate(0, 5), Catch::Contains("cannot be rolled back"));
        ctx.cache().truncate(0, 0); // to the start: the next token at position 0 starts afresh
        CHECK(ctx.seq_length(0) == 0);
        ContextParams pc = params();
        pc.prefix_cache = true;
        CHECK_THROWS_WITH(InferenceContext(*s.model, *s.rt, pc), Catch::Contains("prefix caching is not supported for qwen35"));
    }
}

TEST_CASE("qwen35 on a GPU-like backend without the recurrent ops: the CPU runs them, or a one-line refusal",
          "[model][qwen35]") {
    Q35Spec spec;
    Q35 g = load_q35(spec, "qwen35_gpulike.gguf", gpulike_runtime({"gpulike", "cpu"}));
    REQUIRE(g.model->backend().name() == "gpulike");
    InferenceContext ctx(*g.model, *g.rt, params());
    check_reference(g, prefill(ctx, kPrompt), kPrompt, 1e-4);
    CHECK(ctx.cache().recurrent()->conv(0)->home->name() == "cpu");
    Q35 only = load_q35(spec, "qwen35_gpulike_only.gguf", gpulike_runtime({"gpulike"}));
    CHECK_THROWS_WITH(InferenceContext(*only.model, *only.rt, params()),
                      Catch::Contains("no backend started runs its Gated DeltaNet ops"));
}

TEST_CASE("qwen35 files without a tensor or key the family needs are refused by name", "[model][qwen35]") {
    auto rejected = [](Q35Spec spec, const std::string &file, const std::string &message) {
        auto rt = cpu_runtime();
        const std::string path = temp_path(file);
        write_tiny_qwen35(path, spec);
        INFO(file);
        CHECK_THROWS_WITH(Model::load(path, *rt), Catch::Contains(message));
    };
    const char *tensors[] = {"blk.0.ssm_conv1d.weight", "blk.0.ssm_a", "blk.0.ssm_dt.bias", "blk.2.ssm_beta.weight",
                             "blk.0.attn_gate.weight", "blk.1.attn_q.weight", "blk.3.post_attention_norm.weight", "blk.0.ssm_norm.weight"};
    for (const char *t : tensors) {
        Q35Spec spec;
        spec.skip_tensors = {t};
        rejected(spec, "q35_missing.gguf", std::string("missing tensor '") + t + "'");
    }
    for (const char *k : {"ssm.conv_kernel", "ssm.state_size", "ssm.group_count", "ssm.time_step_rank", "ssm.inner_size"}) {
        Q35Spec spec;
        spec.skip_keys = {k};
        rejected(spec, "q35_nokey.gguf", std::string("missing metadata key 'qwen35.") + k + "'");
    }
    Q35Spec moe;
    moe.moe = true;
    moe.skip_keys = {"expert_feed_forward_length"};
    rejected(moe, "q35moe_nokey.gguf", "missing metadata key 'qwen35moe.expert_feed_forward_length'");
    moe.skip_keys = {"expert_shared_feed_forward_length"};
    rejected(moe, "q35moe_noshexp.gguf", "(a shared expert) but no qwen35moe.expert_shared_feed_forward_length");
}
