// LLaMA / Qwen2 forward pass, op for op as llama.cpp's llm_build_llama / llm_build_qwen2:
//   x = token_embd[tokens]
//   per layer: h = rms_norm(x) * attn_norm; q,k,v = W h (+ bias); rope(q), rope(k);
//              cache[k,v] <- k,v; a = attention(q, cache); x += Wo a;
//              h = rms_norm(x) * ffn_norm; x += W_down (silu(W_gate h) * (W_up h))
//   logits = W_out (rms_norm(x) * output_norm), only for the rows asked for.
#include <cmath>
#include <string>

#include "forward_graph.h"

namespace rf {

namespace {

bool is_contiguous_range(const std::vector<int32_t> &rows) {
    for (size_t i = 1; i < rows.size(); ++i)
        if (rows[i] != rows[0] + (int32_t)i) return false;
    return true;
}

} // namespace

ForwardKey forward_key(const ForwardInputs &in) {
    ForwardKey k;
    k.n_tokens = (int64_t)in.tokens.size();
    k.n_kv_max = in.n_kv_max;
    k.n_seq = in.n_seq;
    k.n_outputs = (int64_t)in.output_rows.size();
    if (in.output_rows.empty()) k.out_mode = 0;
    else if (k.n_outputs == k.n_tokens) k.out_mode = 1;
    else if (is_contiguous_range(in.output_rows)) k.out_mode = 2, k.out_first = in.output_rows.front();
    else k.out_mode = 3;
    return k;
}

void ForwardGraphInputs::bind(const ForwardInputs &in) const {
    tokens->host_data = in.tokens.data();
    positions->host_data = in.positions.data();
    slots->host_data = in.slots.data();
    slot_table->host_data = in.slot_table.data();
    token_info->host_data = in.token_info.data();
    if (out_ids) out_ids->host_data = in.output_rows.data();
}

Tensor *build_forward_graph(Graph &g, const Model &model, KvCache &cache, const ForwardInputs &in,
                            ForwardGraphInputs *inputs) {
    const ModelHparams &hp = model.hparams();
    const int64_t T = (int64_t)in.tokens.size();
    const int64_t D = hp.head_dim;
    const bool want_logits = !in.output_rows.empty();
    const bool all_rows = (int64_t)in.output_rows.size() == T;

    Tensor *tokens = g.input("tokens", RF_TYPE_I32, {T}, in.tokens.data());
    Tensor *positions = g.input("positions", RF_TYPE_I32, {T}, in.positions.data());
    Tensor *slots = g.input("kv_slots", RF_TYPE_I32, {T}, in.slots.data());
    Tensor *slot_table = g.input("kv_slot_table", RF_TYPE_I32, {in.n_kv_max, in.n_seq}, in.slot_table.data());
    Tensor *token_info = g.input("kv_token_info", RF_TYPE_I32, {2, T}, in.token_info.data());
    Tensor *out_ids = nullptr;
    if (want_logits && !all_rows && !is_contiguous_range(in.output_rows))
        out_ids = g.input("output_rows", RF_TYPE_I32, {(int64_t)in.output_rows.size()}, in.output_rows.data());
    if (inputs) *inputs = {tokens, positions, slots, slot_table, token_info, out_ids};
    // Keeps only the rows whose logits are wanted (row-wise ops after this see only those).
    auto select_rows = [&](Tensor *t) -> Tensor * {
        if (all_rows) return t;
        if (out_ids) return g.get_rows(t, out_ids, "select_output_rows");
        return g.rows(t, in.output_rows.front(), (int64_t)in.output_rows.size());
    };

    const float kq_scale = 1.0f / std::sqrt((float)D);
    Tensor *x = g.get_rows(model.tok_embd, tokens, "token_embd");

    for (int64_t l = 0; l < hp.n_layer; ++l) {
        const LayerWeights &w = model.layers[(size_t)l];
        const bool last = l == hp.n_layer - 1;
        g.set_prefix("blk." + std::to_string(l) + ".");

        Tensor *h = g.mul(g.rms_norm(x, hp.rms_eps, "attn_norm_rms"), w.attn_norm, "attn_norm");

        Tensor *k = g.matmul(w.wk, h, "attn_k");
        if (w.bk) k = g.add(k, w.bk, "attn_k_bias");
        k = g.rope(g.reshape(k, {D, hp.n_head_kv, T}), positions, model.rope_freqs, hp.rope_mode, (int)hp.n_rot,
                   hp.rope_freq_base, hp.rope_freq_scale, "rope_k");
        Tensor *v = g.matmul(w.wv, h, "attn_v");
        if (w.bv) v = g.add(v, w.bv, "attn_v_bias");
        Tensor *k_pool = g.set_rows(cache.k(l), g.reshape(k, {hp.n_embd_kv(), T}), slots, "cache_k_append");
        Tensor *v_pool = g.set_rows(cache.v(l), v, slots, "cache_v_append");
        if (last && !want_logits) {
            g.set_prefix("");
            return nullptr; // nothing after the last K/V append is needed
        }

        Tensor *q = g.matmul(w.wq, h, "attn_q");
        if (w.bq) q = g.add(q, w.bq, "attn_q_bias");
        q = g.rope(g.reshape(q, {D, hp.n_head, T}), positions, model.rope_freqs, hp.rope_mode, (int)hp.n_rot,
                   hp.rope_freq_base, hp.rope_freq_scale, "rope_q");

        Tensor *attn = g.attention(q, k_pool, v_pool, slot_table, token_info, kq_scale, "attention");
        attn = g.matmul(w.wo, attn, "attn_output");
        if (last) {
            // As llama.cpp: the last layer's FFN only runs for the rows whose logits are wanted.
            attn = select_rows(attn);
            x = select_rows(x);
        }
        x = g.add(x, attn, "attn_residual");

        h = g.mul(g.rms_norm(x, hp.rms_eps, "ffn_norm_rms"), w.ffn_norm, "ffn_norm");
        Tensor *gate = g.matmul(w.ffn_gate, h, "ffn_gate");
        Tensor *up = g.matmul(w.ffn_up, h, "ffn_up");
        Tensor *ffn = g.matmul(w.ffn_down, g.swiglu(gate, up, "ffn_swiglu"), "ffn_down");
        x = g.add(x, ffn, "ffn_residual");
    }

    g.set_prefix("");
    Tensor *h = g.mul(g.rms_norm(x, hp.rms_eps, "output_norm_rms"), model.output_norm, "output_norm");
    return g.matmul(model.output, h, "output");
}

} // namespace rf
