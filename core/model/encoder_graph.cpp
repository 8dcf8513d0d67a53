// The forward pass of the encoders, op for op as llama.cpp's llm_build_bert:
//   x = token_embd[tokens] + token_types[0] (+ position_embd[positions]: bert)
//   x = LayerNorm(x) * token_embd_norm + bias
//   per layer: q, k, v = W x + b (rotated, NeoX: nomic-bert); cache[k, v] <- k, v;
//              a = bidirectional attention(q, cache) over the sequence's tokens in the batch;
//              x = LayerNorm(x + Wo a + bo) * attn_output_norm + bias;
//              f = W_down gelu(W_up x + b_up) + b_down (bert) or W_down (silu(W_gate x) * W_up x);
//              x = LayerNorm(x + f) * layer_output_norm + bias
//   out = x of the rows asked for (the hidden states pooled into embeddings; no logits).
// The K/V rows go through the paged cache like a decoder's, so batching and the ATTENTION op are
// shared; every sequence must arrive in one graph (embedding.cpp checks n_batch).
#include <string>

#include "forward_graph.h"
#include "rocmforge/error.h"

namespace rf {

namespace {

// LayerNorm of each row of x, then the weight and bias.
Tensor *layer_norm_affine(Graph &g, Tensor *x, Tensor *w, Tensor *b, float eps, const std::string &label) {
    Tensor *n = g.layer_norm(x, eps, (label + "_ln").c_str());
    n = g.mul(n, w, (label + "_w").c_str());
    return g.add(n, b, label.c_str());
}

Tensor *add_bias(Graph &g, Tensor *x, Tensor *b, const std::string &label) {
    return b ? g.add(x, b, label.c_str()) : x;
}

// Every token is of type 0 ("sentence A"), as llama.cpp hard-codes it: one id for all of them.
const int32_t kTokenTypeZero = 0;

} // namespace

Tensor *build_encoder_graph(Graph &g, const Model &model, KvCache &cache, const ForwardInputs &in,
                            ForwardGraphInputs *inputs) {
    const ModelHparams &hp = model.hparams();
    if (!in.hidden)
        throw Error(hp.arch_name + " is an embedding model: it has no logits to generate from (use embed or /v1/embeddings)");
    const int64_t T = (int64_t)in.tokens.size(), D = hp.head_dim, E = hp.n_embd;
    const bool all_rows = (int64_t)in.output_rows.size() == T;

    const ForwardGraphInputs gi = add_graph_inputs(g, hp, in);
    if (inputs) *inputs = gi;
    Tensor *const tokens = gi.tokens, *const positions = gi.positions, *const slots = gi.slots, *const slot_table = gi.slot_table,
                 *const token_info = gi.token_info, *const out_ids = gi.out_ids, *const angles = gi.rope_angles[0];

    Tensor *x = g.get_rows(model.tok_embd, tokens, "token_embd");
    if (model.type_embd) {
        Tensor *type0 = g.get_rows(model.type_embd, g.input("token_type", RF_TYPE_I32, {1}, &kTokenTypeZero), "token_types");
        x = g.add(x, type0, "token_types_add");
    }
    if (model.pos_embd) x = g.add(x, g.get_rows(model.pos_embd, positions, "position_embd"), "position_embd_add");
    x = layer_norm_affine(g, x, model.tok_norm, model.tok_norm_b, hp.norm_eps, "token_embd_norm");

    const bool rotary = hp.arch == ModelArch::NomicBert;
    for (int64_t l = 0; l < hp.n_layer; ++l) {
        const LayerWeights &w = model.layers[(size_t)l];
        g.set_prefix("blk." + std::to_string(l) + ".");
        auto project = [&](Tensor *W, Tensor *b, const std::string &n) {
            Tensor *t = add_bias(g, g.matmul(W, x, ("attn_" + n).c_str()), b, "attn_" + n + "_bias");
            t = g.reshape(t, {D, hp.n_head, T});
            if (!rotary) return t;
            return g.rope(t, positions, nullptr, hp.rope_mode, (int)hp.n_rot, hp.rope_freq_base, hp.rope_freq_scale,
                          ("rope_" + n).c_str(), angles);
        };
        Tensor *q = project(w.wq, w.bq, "q");
        Tensor *k = project(w.wk, w.bk, "k");
        Tensor *v = add_bias(g, g.matmul(w.wv, x, "attn_v"), w.bv, "attn_v_bias");
        Tensor *k_pool = g.set_rows(cache.k(l), g.reshape(k, {E, T}), slots, "cache_k_append");
        Tensor *v_pool = g.set_rows(cache.v(l), v, slots, "cache_v_append");
        Graph::AttentionLimits limits;
        limits.bidirectional = true;
        Tensor *a = g.attention(q, k_pool, v_pool, slot_table, token_info, hp.attn_scale, limits, "attention");
        a = add_bias(g, g.matmul(w.wo, a, "attn_output"), w.bo, "attn_output_bias");
        x = layer_norm_affine(g, g.add(a, x, "attn_residual"), w.attn_out_norm, w.attn_out_norm_b, hp.norm_eps,
                              "attn_output_norm");

        Tensor *f = nullptr;
        if (w.ffn_gate) {
            Tensor *gate = g.matmul(w.ffn_gate, x, "ffn_gate");
            Tensor *up = g.matmul(w.ffn_up, x, "ffn_up");
            f = g.swiglu(gate, up, "ffn_swiglu");
        } else {
            f = g.gelu(add_bias(g, g.matmul(w.ffn_up, x, "ffn_up"), w.ffn_up_b, "ffn_up_bias"), "ffn_gelu");
        }
        f = add_bias(g, g.matmul(w.ffn_down, f, "ffn_down"), w.ffn_down_b, "ffn_down_bias");
        x = layer_norm_affine(g, g.add(f, x, "ffn_residual"), w.layer_out_norm, w.layer_out_norm_b, hp.norm_eps,
                              "layer_output_norm");
    }
    g.set_prefix("");
    if (in.output_rows.empty()) return nullptr;
    if (all_rows) return x;
    if (out_ids) return g.get_rows(x, out_ids, "select_output_rows");
    return g.rows(x, in.output_rows.front(), (int64_t)in.output_rows.size());
}

} // namespace rf
