// Qwen3.5's forward pass (qwen35, qwen35moe), op for op as llama.cpp's qwen35 / qwen35moe graphs
// (and llm_build_qwen3next's layer pattern):
//   x = token_embd[tokens]
//   per layer: h = rms_norm(x) * attn_norm;
//     Gated DeltaNet layers ((l + 1) % full_attention_interval != 0):
//       qkv = W_qkv h; z = W_gate h; beta = sigmoid(W_beta h);
//       g = softplus(W_alpha h + ssm_dt) * ssm_a (ssm_a = -exp(A_log), as converted);
//       c = silu(conv1d(qkv) over the sequence, with the state's last K-1 inputs);
//       o = gated delta rule(q, k, v of c (q, k L2-normed, q / sqrt(S_k)), g, beta) with the
//           sequence's state; o = rms_norm(o per head) * ssm_norm * silu(z); a = W_out o
//     full-attention layers: q, gate = the halves of W_q h per head; q, k = rms_norm per head *
//       attn_q/k_norm; NeoX RoPE of rope.dimension_count dims (multi-section RoPE with the
//       text's equal positions); a = W_o (attention(q, cache) * sigmoid(gate))
//     x += a; h = rms_norm(x) * post_attention_norm; x += FFN(h): SwiGLU, or (qwen35moe) the
//     normalised top-k experts plus the shared expert sigmoid(W_gate_inp_shexp h) * FFN_shexp(h)
//   logits = W_out (rms_norm(x) * output_norm), only for the rows asked for.
// The multi-token-prediction blocks (nextn_predict_layers) are not part of it.
#include <cmath>
#include <string>

#include "forward_graph.h"
#include "rocmforge/error.h"

namespace rf {

namespace {

Tensor *norm_mul(Graph &g, Tensor *x, Tensor *w, float eps, const std::string &label) {
    return g.mul(g.rms_norm(x, eps, (label + "_rms").c_str()), w, label.c_str());
}

// The DeltaNet mixer of h [n_embd, T]: [n_embd, T].
Tensor *delta_net_layer(Graph &g, const ModelHparams &hp, const LayerWeights &w, RecurrentState &rs, int64_t l, Tensor *h,
                        const ForwardGraphInputs &gi) {
    const int64_t T = h->ne(1), Hv = hp.ssm_dt_rank, Sv = hp.ssm_head_v_dim(), Sk = hp.ssm_d_state;
    Tensor *qkv = g.matmul(w.ssm_qkv, h, "attn_qkv");
    Tensor *z = g.matmul(w.ssm_z, h, "attn_gate");
    Tensor *beta = g.sigmoid(g.matmul(w.ssm_beta, h, "ssm_beta"), "ssm_beta_sigmoid");
    Tensor *alpha = g.add(g.matmul(w.ssm_alpha, h, "ssm_alpha"), w.ssm_dt, "ssm_alpha_dt");
    Tensor *decay = g.mul(g.softplus(alpha, "ssm_alpha_softplus"), w.ssm_a, "ssm_decay");
    Tensor *conv = g.ssm_conv(qkv, w.ssm_conv1d, rs.conv(l), gi.token_info, gi.state_rows, "ssm_conv");
    conv = g.silu(conv, "ssm_conv_silu");
    const Graph::DeltaNetHeads heads{hp.ssm_n_group, Sk, Hv, Sv, hp.ssm_heads_interleaved()};
    Tensor *o = g.gated_delta_net(conv, decay, beta, rs.delta(l), gi.token_info, gi.state_rows, heads, hp.rms_eps,
                                  1.0f / std::sqrt((float)Sk), "gated_delta_net");
    o = norm_mul(g, g.reshape(o, {Sv, Hv, T}), w.ssm_norm, hp.rms_eps, "ssm_norm");
    o = g.mul(o, g.silu(g.reshape(z, {Sv, Hv, T}), "attn_gate_silu"), "ssm_gated");
    return g.matmul(w.ssm_out, g.reshape(o, {Sv * Hv, T}), "ssm_out");
}

} // namespace

Tensor *build_qwen35_graph(Graph &g, const Model &model, KvCache &cache, const ForwardInputs &in, ForwardGraphInputs *inputs) {
    const ModelHparams &hp = model.hparams();
    RecurrentState *rs = cache.recurrent();
    if (!rs) throw Error(hp.arch_name + ": the KV cache has no recurrent state (InferenceContext attaches it)");
    const int64_t T = (int64_t)in.tokens.size(), D = hp.head_dim;
    const bool want_logits = !in.output_rows.empty();
    const ForwardGraphInputs gi = add_graph_inputs(g, hp, in);
    if (inputs) *inputs = gi;
    auto select_rows = [&](Tensor *t) { return select_output_rows(g, gi, in, t); };

    Tensor *x = g.get_rows(model.tok_embd, gi.tokens, "token_embd");
    for (int64_t l = 0; l < hp.n_layer; ++l) {
        const LayerWeights &w = model.layers[(size_t)l];
        const bool last = l == hp.n_layer - 1;
        g.set_prefix("blk." + std::to_string(l) + ".");
        Tensor *h = norm_mul(g, x, w.attn_norm, hp.rms_eps, "attn_norm");
        Tensor *a = nullptr;
        if (hp.is_recurrent(l)) {
            // Runs even when nothing after it is wanted: it carries the state on.
            a = delta_net_layer(g, hp, w, *rs, l, h, gi);
            if (last && !want_logits) break;
        } else {
            auto rotate = [&](Tensor *t, const char *n) {
                return g.rope(t, gi.positions, nullptr, hp.rope_mode, (int)hp.n_rot, hp.rope_freq_base, hp.rope_freq_scale, n,
                              gi.rope_angles[0], hp.rope_yarn ? &hp.yarn : nullptr);
            };
            const int64_t kv = hp.kv_layer(l);
            Tensor *k = g.reshape(g.matmul(w.wk, h, "attn_k"), {D, hp.n_head_kv, T});
            Tensor *v = g.matmul(w.wv, h, "attn_v");
            Tensor *v_pool = g.set_rows(cache.v(kv), v, gi.slots, "cache_v_append");
            k = rotate(norm_mul(g, k, w.attn_k_norm, hp.rms_eps, "attn_k_norm"), "rope_k");
            Tensor *k_pool = g.set_rows(cache.k(kv), g.reshape(k, {hp.n_embd_kv(), T}), gi.slots, "cache_k_append");
            if (last && !want_logits) break;
            Tensor *q = g.reshape(g.matmul(w.wq, h, "attn_q"), {D, hp.n_head, T});
            q = rotate(norm_mul(g, q, w.attn_q_norm, hp.rms_eps, "attn_q_norm"), "rope_q");
            Tensor *gate = g.sigmoid(g.matmul(w.attn_q_gate, h, "attn_q_gate"), "attn_q_gate_sigmoid");
            a = g.attention(q, k_pool, v_pool, gi.slot_table, gi.token_info, hp.attn_scale, Graph::AttentionLimits{}, "attention",
                            in.single_rows);
            a = g.matmul(w.wo, g.mul(a, gate, "attn_gated"), "attn_output");
        }
        if (last) { // as llama.cpp: the last layer's FFN only for the rows whose logits are wanted
            a = select_rows(a);
            x = select_rows(x);
        }
        x = g.add(x, a, "attn_residual");
        h = norm_mul(g, x, w.ffn_norm, hp.rms_eps, "post_attention_norm");
        x = g.add(x, layer_ffn(g, w, hp, h), "ffn_residual");
    }
    g.set_prefix("");
    if (!want_logits) return nullptr;
    Tensor *out = norm_mul(g, x, model.output_norm, hp.rms_eps, "output_norm");
    if (in.hidden) return out;
    return g.matmul(model.output, out, "output");
}

} // namespace rf
