// The forward pass of deepseek2 (DeepSeek-V2/V3), op for op as llama.cpp's llm_build_deepseek2
// with multi-head latent attention in the absorbed form, for prefill and decode alike:
//   per layer: h = rms_norm(x) * attn_norm;
//              q = W_q h, or W_qb (rms_norm(W_qa h) * q_a_norm); per head q_nope, q_pe = rope(q_pe);
//              c = rms_norm(W_kv_a,latent h) * kv_a_norm; k_pe = rope(W_kv_a,pe h) (one head);
//              cache row <- [c | k_pe] (the compressed cache: kv_lora_rank + n_rot per token);
//              Q_h = [W_kb,h^T q_nope,h | q_pe,h]: one KV head, keys [c | k_pe], values c;
//              a_h = attention(Q_h) (latent space, kv_lora_rank); o_h = W_vb,h a_h; x += W_o o;
//              h = rms_norm(x) * ffn_norm; the first leading_dense_block_count layers: a SwiGLU
//              FFN; the others: experts and the shared expert (llama.cpp's build_moe_ffn):
//              p = softmax or sigmoid of the router logits, s = p + exp_probs_b (the selection
//              bias, for choosing only), with expert groups the best expert_group_used_count
//              groups of s kept, the top-k of s chosen, w_j = p[e_j] (divided by their sum when
//              expert_weights_norm), times expert_weights_scale; x += sum_j w_j FFN_ej(h) +
//              FFN_shexp(h)
//   logits = W_out (rms_norm(x) * output_norm), only for the rows asked for.
// W_kb and W_vb are per-head matrices: MATMUL_ID with each head as its own "expert".
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "forward_graph.h"

namespace rf {

namespace {

Tensor *rms_norm_mul(Graph &g, Tensor *x, Tensor *w, float eps, const std::string &label) {
    return g.mul(g.rms_norm(x, eps, (label + "_rms").c_str()), w, label.c_str());
}

// The ids [H, T] of MATMUL_ID that make head h use slice h of a per-head weight. Any T tokens'
// ids are the start of a longer array's, so one array per H serves every graph of the process:
// a larger T gets one of twice the tokens, the old ones staying alive (graphs hold their address).
const int32_t *head_ids(int64_t H, int64_t T) {
    static std::mutex mu;
    static std::map<int64_t, std::vector<std::unique_ptr<std::vector<int32_t>>>> arrays;
    std::lock_guard<std::mutex> lock(mu);
    auto &all = arrays[H];
    if (all.empty() || (int64_t)all.back()->size() < H * T) {
        const int64_t tokens = std::max<int64_t>(T, all.empty() ? 64 : 2 * (int64_t)all.back()->size() / H);
        all.push_back(std::make_unique<std::vector<int32_t>>((size_t)(H * tokens)));
        for (int64_t i = 0; i < H * tokens; ++i) (*all.back())[(size_t)i] = (int32_t)(i % H);
    }
    return all.back()->data();
}

// The routed experts of h [n_embd, T] as llama.cpp's build_moe_ffn for deepseek2: [n_embd, T].
Tensor *deepseek2_moe(Graph &g, const LayerWeights &w, const ModelHparams &hp, Tensor *h) {
    const ModelHparams::DeepSeek2 &ds = hp.ds;
    const int64_t T = h->ne(1);
    Tensor *logits = g.matmul(w.ffn_gate_inp, h, "ffn_gate_inp");
    Tensor *probs = ds.sigmoid_gating ? g.sigmoid(logits, "ffn_moe_probs") : g.softmax(logits, 1.0f, "ffn_moe_probs");
    Tensor *select = w.ffn_exp_probs_b ? g.add(probs, w.ffn_exp_probs_b, "ffn_moe_probs_biased") : probs;
    if (ds.n_group > 1) select = g.moe_group_mask(select, ds.n_group, ds.n_group_used, "ffn_moe_group_mask");
    Tensor *ids = g.topk(select, hp.n_expert_used, "ffn_moe_topk");
    Tensor *weights = ds.weights_norm ? g.moe_weights_of_probs(probs, ids, "ffn_moe_weights") : g.gather(probs, ids, "ffn_moe_weights");
    if (ds.weights_scale != 0.0f) weights = g.scale(weights, ds.weights_scale, "ffn_moe_weights_scaled");
    Tensor *x = g.reshape(h, {hp.n_embd, 1, T});
    Tensor *gate = g.matmul_id(w.ffn_gate_exps, x, ids, "ffn_gate_exps");
    Tensor *up = g.matmul_id(w.ffn_up_exps, x, ids, "ffn_up_exps");
    Tensor *down = g.matmul_id(w.ffn_down_exps, g.swiglu(gate, up, "ffn_moe_swiglu"), ids, "ffn_down_exps");
    return g.moe_sum(down, weights, "ffn_moe_sum");
}

Tensor *swiglu_ffn(Graph &g, Tensor *gate_w, Tensor *up_w, Tensor *down_w, Tensor *h, const std::string &n) {
    Tensor *act = g.swiglu(g.matmul(gate_w, h, ("ffn_gate" + n).c_str()), g.matmul(up_w, h, ("ffn_up" + n).c_str()),
                           ("ffn_swiglu" + n).c_str());
    return g.matmul(down_w, act, ("ffn_down" + n).c_str());
}

} // namespace

Tensor *build_deepseek2_graph(Graph &g, const Model &model, KvCache &cache, const ForwardInputs &in, ForwardGraphInputs *inputs) {
    const ModelHparams &hp = model.hparams();
    const ModelHparams::DeepSeek2 &ds = hp.ds;
    const int64_t T = (int64_t)in.tokens.size(), H = hp.n_head, R = ds.n_lora_kv, rope = hp.n_rot, nope = ds.n_head_k - rope;
    const bool want_logits = !in.output_rows.empty();
    const ForwardGraphInputs gi = add_graph_inputs(g, hp, in);
    if (inputs) *inputs = gi;
    auto select_rows = [&](Tensor *t) { return select_output_rows(g, gi, in, t); };
    Tensor *heads = g.input("head_ids", RF_TYPE_I32, {H, T}, head_ids(H, T));
    auto rotate = [&](Tensor *t, const char *n) {
        return g.rope(t, gi.positions, nullptr, hp.rope_mode, (int)rope, hp.rope_freq_base, hp.rope_freq_scale, n, gi.rope_angles[0],
                      hp.rope_yarn ? &hp.yarn : nullptr);
    };

    Tensor *x = g.get_rows(model.tok_embd, gi.tokens, "token_embd");
    for (int64_t l = 0; l < hp.n_layer; ++l) {
        const LayerWeights &w = model.layers[(size_t)l];
        const bool last = l == hp.n_layer - 1;
        g.set_prefix("blk." + std::to_string(l) + ".");
        Tensor *h = rms_norm_mul(g, x, w.attn_norm, hp.rms_eps, "attn_norm");

        // The cache row first: the normed latent and the roped k_pe of this token.
        Tensor *latent = rms_norm_mul(g, g.matmul(w.wkv_a_latent, h, "attn_kv_a_latent"), w.attn_kv_a_norm, hp.rms_eps, "attn_kv_a_norm");
        Tensor *k_pe = rotate(g.reshape(g.matmul(w.wkv_a_pe, h, "attn_kv_a_pe"), {rope, 1, T}), "rope_k");
        Tensor *k_row = g.concat(latent, g.reshape(k_pe, {rope, T}), "attn_k_row");
        Tensor *pool = g.set_rows(cache.k(l), k_row, gi.slots, "cache_k_append");
        if (last && !want_logits) {
            g.set_prefix("");
            return nullptr;
        }

        Tensor *qin = w.wq_a ? rms_norm_mul(g, g.matmul(w.wq_a, h, "attn_q_a"), w.attn_q_a_norm, hp.rms_eps, "attn_q_a_norm") : h;
        Tensor *q_nope = g.reshape(g.matmul(w.wq_nope, qin, "attn_q_nope"), {nope, H, T});
        Tensor *q_pe = rotate(g.reshape(g.matmul(w.wq_pe, qin, "attn_q_pe"), {rope, H, T}), "rope_q");
        // Absorbed: q_nope through W_kb into the latent space, where the cached c is the key.
        Tensor *q_latent = g.matmul_id(w.wk_b, q_nope, heads, "attn_q_absorbed");
        Tensor *q = g.concat(q_latent, q_pe, "attn_q_full");
        Graph::AttentionLimits limits;
        limits.v_head_size = R; // the values are the latent, at the start of each cached row
        Tensor *a = g.attention(q, pool, pool, gi.slot_table, gi.token_info, ds.kq_scale, limits, "attention", in.single_rows);
        Tensor *o = g.matmul_id(w.wv_b, g.reshape(a, {R, H, T}), heads, "attn_v_up");
        Tensor *attn = g.matmul(w.wo, g.reshape(o, {ds.n_head_v * H, T}), "attn_output");
        if (last) {
            attn = select_rows(attn);
            x = select_rows(x);
        }
        x = g.add(x, attn, "attn_residual");

        h = rms_norm_mul(g, x, w.ffn_norm, hp.rms_eps, "ffn_norm");
        Tensor *ffn;
        if (l < ds.n_dense_lead) {
            ffn = swiglu_ffn(g, w.ffn_gate, w.ffn_up, w.ffn_down, h, "");
        } else {
            ffn = deepseek2_moe(g, w, hp, h);
            if (w.ffn_gate_shexp) ffn = g.add(ffn, swiglu_ffn(g, w.ffn_gate_shexp, w.ffn_up_shexp, w.ffn_down_shexp, h, "_shexp"), "ffn_out");
        }
        x = g.add(x, ffn, "ffn_residual");
    }

    g.set_prefix("");
    Tensor *h = rms_norm_mul(g, x, model.output_norm, hp.rms_eps, "output_norm");
    if (in.hidden) return h;
    return g.matmul(model.output, h, "output");
}

} // namespace rf
