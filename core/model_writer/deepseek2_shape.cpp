// deepseek2 shapes: DeepSeek-V2-Lite (16B, deepseek-ai/DeepSeek-V2-Lite config.json),
// DeepSeek-V3 (671B, declared for memory planning: it does not fit one H200) and a tiny one.
// Tensors and keys in the newer converter's latent-attention layout (attn_k_b / attn_v_b,
// key_length = kv_lora_rank + rope, value_length = kv_lora_rank, one KV head, the _mla lengths).
#include "deepseek2_shape.h"

#include <string>

namespace rf {

void add_deepseek2_shapes(std::vector<ModelShape> &t) {
    ModelShape s;
    // V2-Lite: no q lora, 64 experts of 1408, 6 per token, 2 shared, softmax without norm,
    // routed scale 1, one dense layer first; YaRN factor 40 over 4096 (mscale_all_dim 0.707:
    // the converter writes 0.1 * it as the log multiplier).
    s.name = "deepseek-v2-lite"; s.arch = "deepseek2"; s.display_name = "DeepSeek V2 Lite";
    s.n_embd = 2048; s.n_layer = 27; s.n_head = 16; s.n_head_kv = 1; s.n_ff = 10944;
    s.n_vocab = 102400; s.n_ctx = 163840; s.rope_freq_base = 10000.0f; s.rms_eps = 1e-6f;
    s.n_expert = 64; s.n_expert_used = 6; s.n_ff_exp = 1408;
    s.yarn_factor = 40.0f; s.yarn_orig_ctx = 4096;
    s.ds.q_lora = 0; s.ds.kv_lora = 512; s.ds.nope = 128; s.ds.rope = 64; s.ds.v_head = 128; s.ds.n_dense_lead = 1;
    s.ds.n_shared = 2; s.ds.weights_scale = 1.0f; s.ds.yarn_log_mul = 0.0707f;
    t.push_back(s);
    // V3: q lora 1536, 256 experts of 2048, 8 per token in 4 of 8 groups, sigmoid with the
    // selection bias, normalised, routed scale 2.5, three dense layers first. The multi-token
    // prediction layer of the checkpoint is not written.
    s = {};
    s.name = "deepseek-v3"; s.arch = "deepseek2"; s.display_name = "DeepSeek V3";
    s.n_embd = 7168; s.n_layer = 61; s.n_head = 128; s.n_head_kv = 1; s.n_ff = 18432;
    s.n_vocab = 129280; s.n_ctx = 163840; s.rope_freq_base = 10000.0f; s.rms_eps = 1e-6f;
    s.n_expert = 256; s.n_expert_used = 8; s.n_ff_exp = 2048;
    s.yarn_factor = 40.0f; s.yarn_orig_ctx = 4096;
    s.ds.q_lora = 1536; s.ds.kv_lora = 512; s.ds.nope = 128; s.ds.rope = 64; s.ds.v_head = 128; s.ds.n_dense_lead = 3;
    s.ds.n_shared = 1; s.ds.weights_scale = 2.5f; s.ds.weights_norm = true; s.ds.sigmoid = true; s.ds.n_group = 8;
    s.ds.n_group_used = 4; s.ds.yarn_log_mul = 0.1f;
    t.push_back(s);
    // tiny: V3's routing (4 groups of 4, 2 kept, 4 of 16 per token), widths that every block type
    // fits (multiples of 32; 64-wide rows), YaRN over 256 positions.
    s.name = "tiny-deepseek2"; s.display_name = "ROCmForge Tiny deepseek2";
    s.n_embd = 128; s.n_layer = 3; s.n_head = 4; s.n_ff = 256; s.n_vocab = 0; s.n_ctx = 2048; s.yarn_orig_ctx = 256;
    s.n_expert = 16; s.n_expert_used = 4; s.n_ff_exp = 64;
    s.ds.q_lora = 64; s.ds.kv_lora = 64; s.ds.nope = 32; s.ds.rope = 32; s.ds.v_head = 32; s.ds.n_dense_lead = 1;
    s.ds.n_group = 4; s.ds.n_group_used = 2;
    t.push_back(s);
}

std::vector<ShapeTensor> deepseek2_tensors(const ModelShape &s) {
    const ModelShape::DeepSeek2 &d = s.ds;
    const int64_t E = s.n_embd, H = s.n_head, R = d.kv_lora, Dk = d.nope + d.rope;
    std::vector<ShapeTensor> t;
    t.push_back({"token_embd.weight", {E, s.n_vocab}});
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        t.push_back({p + "attn_norm.weight", {E}});
        if (d.q_lora > 0) {
            t.push_back({p + "attn_q_a.weight", {E, d.q_lora}});
            t.push_back({p + "attn_q_a_norm.weight", {d.q_lora}});
            t.push_back({p + "attn_q_b.weight", {d.q_lora, H * Dk}});
        } else {
            t.push_back({p + "attn_q.weight", {E, H * Dk}});
        }
        t.push_back({p + "attn_kv_a_mqa.weight", {E, R + d.rope}});
        t.push_back({p + "attn_kv_a_norm.weight", {R}});
        t.push_back({p + "attn_k_b.weight", {d.nope, R, H}});
        t.push_back({p + "attn_v_b.weight", {R, d.v_head, H}});
        t.push_back({p + "attn_output.weight", {H * d.v_head, E}});
        t.push_back({p + "ffn_norm.weight", {E}});
        if (l < d.n_dense_lead) {
            t.push_back({p + "ffn_gate.weight", {E, s.n_ff}});
            t.push_back({p + "ffn_up.weight", {E, s.n_ff}});
            t.push_back({p + "ffn_down.weight", {s.n_ff, E}});
            continue;
        }
        const int64_t X = s.n_expert, FX = s.n_ff_exp, FS = s.n_ff_exp * d.n_shared;
        t.push_back({p + "ffn_gate_inp.weight", {E, X}});
        if (d.sigmoid) t.push_back({p + "exp_probs_b.bias", {X}}); // V3's e_score_correction_bias
        t.push_back({p + "ffn_gate_exps.weight", {E, FX, X}});
        t.push_back({p + "ffn_down_exps.weight", {FX, E, X}});
        t.push_back({p + "ffn_up_exps.weight", {E, FX, X}});
        if (FS > 0) {
            t.push_back({p + "ffn_gate_shexp.weight", {E, FS}});
            t.push_back({p + "ffn_down_shexp.weight", {FS, E}});
            t.push_back({p + "ffn_up_shexp.weight", {E, FS}});
        }
    }
    t.push_back({"output_norm.weight", {E}});
    t.push_back({"output.weight", {E, s.n_vocab}});
    return t;
}

void set_deepseek2_keys(gguf::Writer &w, const ModelShape &s) {
    using gguf::Value;
    const ModelShape::DeepSeek2 &d = s.ds;
    const std::string a = s.arch + ".";
    w.set(a + "vocab_size", Value::from_u32(uint32_t(s.n_vocab)));
    if (d.q_lora > 0) w.set(a + "attention.q_lora_rank", Value::from_u32(uint32_t(d.q_lora)));
    w.set(a + "attention.kv_lora_rank", Value::from_u32(uint32_t(d.kv_lora)));
    w.set(a + "attention.key_length", Value::from_u32(uint32_t(d.kv_lora + d.rope)));
    w.set(a + "attention.value_length", Value::from_u32(uint32_t(d.kv_lora)));
    w.set(a + "attention.key_length_mla", Value::from_u32(uint32_t(d.nope + d.rope)));
    w.set(a + "attention.value_length_mla", Value::from_u32(uint32_t(d.v_head)));
    w.set(a + "rope.dimension_count", Value::from_u32(uint32_t(d.rope)));
    w.set(a + "leading_dense_block_count", Value::from_u32(uint32_t(d.n_dense_lead)));
    w.set(a + "expert_count", Value::from_u32(uint32_t(s.n_expert)));
    w.set(a + "expert_used_count", Value::from_u32(uint32_t(s.n_expert_used)));
    w.set(a + "expert_feed_forward_length", Value::from_u32(uint32_t(s.n_ff_exp)));
    w.set(a + "expert_shared_count", Value::from_u32(uint32_t(d.n_shared)));
    w.set(a + "expert_weights_scale", Value::from_f32(d.weights_scale));
    w.set(a + "expert_weights_norm", Value::from_bool(d.weights_norm));
    w.set(a + "expert_gating_func", Value::from_u32(d.sigmoid ? 2 : 1));
    if (d.n_group > 0) {
        w.set(a + "expert_group_count", Value::from_u32(uint32_t(d.n_group)));
        w.set(a + "expert_group_used_count", Value::from_u32(uint32_t(d.n_group_used)));
    }
    if (s.yarn_factor > 0) {
        w.set(a + "rope.scaling.type", Value::from_string("yarn"));
        w.set(a + "rope.scaling.factor", Value::from_f32(s.yarn_factor));
        w.set(a + "rope.scaling.original_context_length", Value::from_u32(uint32_t(s.yarn_orig_ctx)));
        w.set(a + "rope.scaling.yarn_log_multiplier", Value::from_f32(d.yarn_log_mul));
    }
}

} // namespace rf
