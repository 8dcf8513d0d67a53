// The forward pass, op for op as llama.cpp's llm_build_llama / qwen2 / qwen3 / gemma2_iswa /
// gemma3_iswa / phi3 (one builder; the architecture's hparams switch its additions on):
//   x = token_embd[tokens]                                        (* sqrt(n_embd): gemma)
//   per layer: h = rms_norm(x) * attn_norm; q,k,v = W h (+ bias: qwen2);
//              q,k = rms_norm per head * attn_q/k_norm (qwen3, gemma3); rope(q), rope(k)
//              (local layers of gemma3: their own base); cache[k,v] <- k,v;
//              a = attention(q, cache) (sliding window on local layers, soft cap: gemma2);
//              x += post_norm(Wo a) (post norms: gemma);
//              h = rms_norm(x) * ffn_norm; x += post_norm(W_down (act(W_gate h) * (W_up h)))
//              with act = silu, or gelu-tanh (gemma); mixture of experts (mixtral, qwen3moe):
//              r = W_gate_inp h, the top-k experts e_j of r weighted by the softmax over their
//              logits, x += sum_j w_j W_down[e_j] (silu(W_gate[e_j] h) * (W_up[e_j] h));
//              qwen2moe: w_j the chosen entries of the softmax over all experts, plus a shared
//              expert sigmoid(W_gate_inp_shexp h) * FFN_shexp(h); gpt-oss (llm_build_openai_moe_iswa):
//              Q/K/V/O biases, YaRN RoPE, sinks in every head's softmax, the window on even
//              layers, router and expert biases, w_j the softmax of the chosen logits, and the
//              clamped SwiGLU of ggml's swiglu_oai
//   logits = W_out (rms_norm(x) * output_norm) (soft-capped: gemma2), only for the rows asked for.
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

Tensor *layer_ffn(Graph &g, const LayerWeights &w, const ModelHparams &hp, Tensor *h) {
    if (hp.is_moe()) {
        Tensor *ffn = moe_ffn(g, w, hp, h);
        return w.ffn_gate_inp_shexp ? g.add(ffn, shared_expert_ffn(g, w, h), "ffn_out") : ffn;
    }
    Tensor *gate = g.matmul(w.ffn_gate, h, "ffn_gate");
    Tensor *up = g.matmul(w.ffn_up, h, "ffn_up");
    Tensor *act = hp.ffn_gelu ? g.geglu(gate, up, "ffn_geglu") : g.swiglu(gate, up, "ffn_swiglu");
    return g.matmul(w.ffn_down, act, "ffn_down");
}

Tensor *select_output_rows(Graph &g, const ForwardGraphInputs &gi, const ForwardInputs &in, Tensor *t) {
    if (in.output_rows.size() == in.tokens.size()) return t;
    if (gi.out_ids) return g.get_rows(t, gi.out_ids, "select_output_rows");
    return g.rows(t, in.output_rows.front(), (int64_t)in.output_rows.size());
}

ForwardGraphInputs add_graph_inputs(Graph &g, const ModelHparams &hp, const ForwardInputs &in) {
    const int64_t T = (int64_t)in.tokens.size();
    ForwardGraphInputs gi;
    gi.tokens = g.input("tokens", RF_TYPE_I32, {T}, in.tokens.data());
    gi.positions = g.input("positions", RF_TYPE_I32, {T}, in.positions.data());
    gi.slots = g.input("kv_slots", RF_TYPE_I32, {T}, in.slots.data());
    gi.slot_table = g.input("kv_slot_table", RF_TYPE_I32, {in.n_kv_max, in.n_seq}, in.slot_table.data());
    gi.token_info = g.input("kv_token_info", RF_TYPE_I32, {2, T}, in.token_info.data());
    if (!in.output_rows.empty() && (int64_t)in.output_rows.size() != T && !is_contiguous_range(in.output_rows))
        gi.out_ids = g.input("output_rows", RF_TYPE_I32, {(int64_t)in.output_rows.size()}, in.output_rows.data());
    if (hp.hybrid()) gi.state_rows = g.input("state_rows", RF_TYPE_I32, {in.n_seq}, in.state_rows.data());
    for (int i = 0; i < 2; ++i)
        if (!in.rope_angles[i].empty())
            gi.rope_angles[i] =
                g.input(i ? "rope_angles_swa" : "rope_angles", RF_TYPE_F32, {2, hp.n_rot / 2, T}, in.rope_angles[i].data());
    return gi;
}

ForwardKey forward_key(const ForwardInputs &in) {
    ForwardKey k;
    k.n_tokens = (int64_t)in.tokens.size();
    k.n_kv_max = in.n_kv_max;
    k.n_seq = in.n_seq;
    k.n_outputs = (int64_t)in.output_rows.size();
    k.single_rows = in.single_rows;
    k.top_k = in.top_k;
    k.hidden = in.hidden;
    for (int i = 0; i < 2; ++i) k.rope_angles[i] = !in.rope_angles[i].empty();
    if (in.output_rows.empty()) k.out_mode = 0;
    else if (k.n_outputs == k.n_tokens) k.out_mode = 1;
    else if (is_contiguous_range(in.output_rows)) k.out_mode = 2, k.out_first = in.output_rows.front();
    else k.out_mode = 3;
    return k;
}

int64_t leading_single_rows(const std::vector<int32_t> &token_info, int64_t n_seq) {
    const int64_t T = (int64_t)token_info.size() / 2;
    if (T == n_seq) return 0; // one token per sequence (a decode step): no count needed on this hot path
    std::vector<int32_t> tokens_of(n_seq, 0);
    for (int64_t t = 0; t < T; ++t) ++tokens_of[(size_t)token_info[2 * t]];
    int64_t n = 0;
    while (n < T && tokens_of[(size_t)token_info[2 * n]] == 1) ++n;
    return n == T ? 0 : n;
}

void ForwardGraphInputs::bind(const ForwardInputs &in) const {
    tokens->host_data = in.tokens.data();
    positions->host_data = in.positions.data();
    slots->host_data = in.slots.data();
    slot_table->host_data = in.slot_table.data();
    token_info->host_data = in.token_info.data();
    if (out_ids) out_ids->host_data = in.output_rows.data();
    if (state_rows) state_rows->host_data = in.state_rows.data();
    for (int i = 0; i < 2; ++i)
        if (rope_angles[i]) rope_angles[i]->host_data = in.rope_angles[i].data();
}

namespace {

// x / rms(x) * w over each row of x (w broadcasts over heads and tokens).
Tensor *rms_norm_mul(Graph &g, Tensor *x, Tensor *w, float eps, const std::string &label) {
    return g.mul(g.rms_norm(x, eps, (label + "_rms").c_str()), w, label.c_str());
}

// The frequency factors every layer's RoPE reads: Llama 3's rope_freqs, or phi3's long factors
// when the context exceeds the original one (short ones otherwise), as llama.cpp chooses them;
// with the file's name of that tensor.
struct RopeFactors {
    Tensor *tensor;
    const char *name;
};
RopeFactors rope_factors(const Model &model, const KvCache &cache) {
    if (model.rope_freqs) return {model.rope_freqs, "rope_freqs.weight"};
    if (model.rope_factors_long && cache.n_ctx() > model.hparams().n_ctx_orig)
        return {model.rope_factors_long, "rope_factors_long.weight"};
    if (model.rope_factors_short) return {model.rope_factors_short, "rope_factors_short.weight"};
    return {nullptr, nullptr};
}

} // namespace

// The experts' FFN of h [n_embd, T] (llama.cpp's build_moe_ffn with softmax gating; the top-k
// weights normalised as llama and qwen3moe call it, not for qwen2moe): [n_embd, T].
// gpt-oss adds the router's and each chosen expert's biases (ggml_add, ggml_add_id), takes the
// softmax of the chosen logits alone (SOFTMAX_WEIGHT gating) and the clamped SwiGLU.
Tensor *moe_ffn(Graph &g, const LayerWeights &w, const ModelHparams &hp, Tensor *h) {
    const int64_t T = h->ne(1);
    Tensor *logits = g.matmul(w.ffn_gate_inp, h, "ffn_gate_inp");
    if (w.ffn_gate_inp_b) logits = g.add(logits, w.ffn_gate_inp_b, "ffn_gate_inp_bias");
    Tensor *ids = g.topk(logits, hp.n_expert_used, "ffn_moe_topk");
    Tensor *weights = nullptr;
    if (hp.arch == ModelArch::GptOss) weights = g.moe_weights_of_chosen(logits, ids, "ffn_moe_weights");
    else weights = g.moe_weights(logits, ids, hp.arch != ModelArch::Qwen2Moe, "ffn_moe_weights");
    Tensor *x = g.reshape(h, {hp.n_embd, 1, T}); // one activation row per token, shared by its experts
    Tensor *gate = g.matmul_id(w.ffn_gate_exps, x, ids, "ffn_gate_exps");
    if (w.ffn_gate_exps_b) gate = g.add_id(gate, w.ffn_gate_exps_b, ids, "ffn_gate_exps_bias");
    Tensor *up = g.matmul_id(w.ffn_up_exps, x, ids, "ffn_up_exps");
    if (w.ffn_up_exps_b) up = g.add_id(up, w.ffn_up_exps_b, ids, "ffn_up_exps_bias");
    Tensor *act = hp.swiglu_limit > 0 ? g.swiglu_oai(gate, up, hp.swiglu_alpha, hp.swiglu_limit, "ffn_moe_swiglu_oai")
                                      : g.swiglu(gate, up, "ffn_moe_swiglu");
    Tensor *down = g.matmul_id(w.ffn_down_exps, act, ids, "ffn_down_exps");
    if (w.ffn_down_exps_b) down = g.add_id(down, w.ffn_down_exps_b, ids, "ffn_down_exps_bias");
    return g.moe_sum(down, weights, "ffn_moe_sum");
}

// qwen2moe's shared expert of h [n_embd, T], as llm_build_qwen2moe: a SwiGLU FFN times its gate
// sigmoid(ffn_gate_inp_shexp . h) ([1, T], broadcast over the rows): [n_embd, T]. llama.cpp
// writes the sigmoid as silu(x) / x; SIGMOID is 1 / (1 + exp(-x)) (equal but for the last bits,
// and no 0 / 0 at x = 0).
Tensor *shared_expert_ffn(Graph &g, const LayerWeights &w, Tensor *h) {
    Tensor *gate_logit = g.matmul(w.ffn_gate_inp_shexp, h, "ffn_shexp_gate_inp");
    Tensor *gate = g.sigmoid(gate_logit, "ffn_shexp_gate");
    Tensor *act = g.swiglu(g.matmul(w.ffn_gate_shexp, h, "ffn_gate_shexp"), g.matmul(w.ffn_up_shexp, h, "ffn_up_shexp"),
                           "ffn_shexp_swiglu");
    Tensor *ffn = g.matmul(w.ffn_down_shexp, act, "ffn_down_shexp");
    return g.mul(ffn, gate, "ffn_shexp_out");
}

bool rope_params(const Model &model, const KvCache &cache, bool local, RopeParams *p) {
    const ModelHparams &hp = model.hparams();
    p->n_rot = (int)hp.n_rot;
    p->freq_base = local ? hp.rope_freq_base_swa : hp.rope_freq_base;
    p->freq_scale = local ? hp.rope_freq_scale_swa : hp.rope_freq_scale;
    p->factors = nullptr;
    p->yarn = hp.rope_yarn;
    p->yarn_params = hp.yarn;
    const RopeFactors f = rope_factors(model, cache);
    if (!f.tensor) return true;
    // The factors' host bytes from the file (the tensor itself may be device memory).
    const gguf::TensorInfo *ti = model.file().find_tensor(f.name);
    if (!ti || ti->type != RF_TYPE_F32 || ti->n_elements() < hp.n_rot / 2) return false;
    p->factors = reinterpret_cast<const float *>(model.file().tensor_data(*ti));
    return true;
}

Tensor *build_forward_graph(Graph &g, const Model &model, KvCache &cache, const ForwardInputs &in,
                            ForwardGraphInputs *inputs) {
    const ModelHparams &hp = model.hparams();
    if (hp.encoder) return build_encoder_graph(g, model, cache, in, inputs);
    if (hp.is_mla()) return build_deepseek2_graph(g, model, cache, in, inputs);
    if (hp.hybrid()) return build_qwen35_graph(g, model, cache, in, inputs);
    const int64_t T = (int64_t)in.tokens.size();
    const int64_t D = hp.head_dim;
    const bool want_logits = !in.output_rows.empty();

    const ForwardGraphInputs gi = add_graph_inputs(g, hp, in);
    if (inputs) *inputs = gi;
    Tensor *const tokens = gi.tokens, *const positions = gi.positions, *const slots = gi.slots, *const slot_table = gi.slot_table,
                 *const token_info = gi.token_info, *const *angles = gi.rope_angles;
    auto select_rows = [&](Tensor *t) { return select_output_rows(g, gi, in, t); };

    // phi3's attn_factor scales RoPE's output, hence Q and K: the scores by its square.
    const float kq_scale = hp.attn_scale * hp.rope_attn_factor * hp.rope_attn_factor;
    Tensor *factors = rope_factors(model, cache).tensor;
    Tensor *x = g.get_rows(model.tok_embd, tokens, "token_embd");
    if (hp.embd_scale) x = g.scale(x, std::sqrt((float)hp.n_embd), "token_embd_scale");

    for (int64_t l = 0; l < hp.n_layer; ++l) {
        const LayerWeights &w = model.layers[(size_t)l];
        const bool last = l == hp.n_layer - 1;
        const bool local = hp.is_swa(l); // sliding-window layer: its own RoPE base and window
        const float rope_base = local ? hp.rope_freq_base_swa : hp.rope_freq_base;
        const float rope_scale = local ? hp.rope_freq_scale_swa : hp.rope_freq_scale;
        g.set_prefix("blk." + std::to_string(l) + ".");

        Tensor *h = rms_norm_mul(g, x, w.attn_norm, hp.rms_eps, "attn_norm");
        // W h (+ bias) as heads [D, H, T]; then each head RMS-normed when the model has Q/K
        // norms, and rotated.
        auto project_heads = [&](Tensor *W, Tensor *bias, int64_t H, const std::string &n) {
            Tensor *t = g.matmul(W, h, ("attn_" + n).c_str());
            if (bias) t = g.add(t, bias, ("attn_" + n + "_bias").c_str());
            return g.reshape(t, {D, H, T});
        };
        auto head_norm = [&](Tensor *t, Tensor *weight, const std::string &n) {
            return rms_norm_mul(g, t, weight, hp.rms_eps, "attn_" + n + "_norm");
        };
        auto rotate = [&](Tensor *t, const std::string &n) {
            return g.rope(t, positions, factors, hp.rope_mode, (int)hp.n_rot, rope_base, rope_scale, ("rope_" + n).c_str(),
                          angles[local ? 1 : 0], hp.rope_yarn ? &hp.yarn : nullptr);
        };
        // Q next to K and V (before the appends): a backend can run the three projections of the
        // same vector as one launch (the HIP backend's rf_mvq_proj, which also takes the ropes
        // right after their products, and an append of a final output right after the run).
        // With head norms the three products come first and V's append after them, then the
        // norms, the two ropes and K's append (one launch of both ropes and the append). Nothing after
        // the last layer's appends is needed when no logits are.
        const bool appends_only = last && !want_logits;
        auto project_v = [&] {
            Tensor *v = g.matmul(w.wv, h, "attn_v");
            return w.bv ? g.add(v, w.bv, "attn_v_bias") : v;
        };
        Tensor *k, *v, *q = nullptr, *k_pool, *v_pool;
        if (!w.attn_k_norm && !w.attn_q_norm) {
            k = rotate(project_heads(w.wk, w.bk, hp.n_head_kv, "k"), "k");
            v = project_v();
            if (!appends_only) q = rotate(project_heads(w.wq, w.bq, hp.n_head, "q"), "q");
            k_pool = g.set_rows(cache.k(l), g.reshape(k, {hp.n_embd_kv(), T}), slots, "cache_k_append");
            v_pool = g.set_rows(cache.v(l), v, slots, "cache_v_append");
        } else {
            k = project_heads(w.wk, w.bk, hp.n_head_kv, "k");
            v = project_v();
            if (!appends_only) q = project_heads(w.wq, w.bq, hp.n_head, "q");
            v_pool = g.set_rows(cache.v(l), v, slots, "cache_v_append");
            if (w.attn_k_norm) k = head_norm(k, w.attn_k_norm, "k");
            if (q && w.attn_q_norm) q = head_norm(q, w.attn_q_norm, "q");
            k = rotate(k, "k");
            if (q) q = rotate(q, "q");
            k_pool = g.set_rows(cache.k(l), g.reshape(k, {hp.n_embd_kv(), T}), slots, "cache_k_append");
        }
        if (appends_only) {
            g.set_prefix("");
            return nullptr;
        }

        Graph::AttentionLimits limits{local ? hp.n_swa : 0, hp.attn_softcap};
        limits.sinks = w.attn_sinks;
        Tensor *attn = g.attention(q, k_pool, v_pool, slot_table, token_info, kq_scale, limits, "attention", in.single_rows);
        attn = g.matmul(w.wo, attn, "attn_output");
        if (w.bo) attn = g.add(attn, w.bo, "attn_output_bias");
        if (last) {
            // As llama.cpp: the last layer's FFN only runs for the rows whose logits are wanted.
            attn = select_rows(attn);
            x = select_rows(x);
        }
        if (w.attn_post_norm) attn = rms_norm_mul(g, attn, w.attn_post_norm, hp.rms_eps, "attn_post_norm");
        x = g.add(x, attn, "attn_residual");

        h = rms_norm_mul(g, x, w.ffn_norm, hp.rms_eps, "ffn_norm");
        Tensor *ffn = layer_ffn(g, w, hp, h);
        if (w.ffn_post_norm) ffn = rms_norm_mul(g, ffn, w.ffn_post_norm, hp.rms_eps, "ffn_post_norm");
        x = g.add(x, ffn, "ffn_residual");
    }

    g.set_prefix("");
    Tensor *h = rms_norm_mul(g, x, model.output_norm, hp.rms_eps, "output_norm");
    if (in.hidden) return h;
    Tensor *logits = g.matmul(model.output, h, "output");
    if (hp.final_softcap > 0) logits = g.softcap(logits, hp.final_softcap, "output_softcap");
    return logits;
}

} // namespace rf
