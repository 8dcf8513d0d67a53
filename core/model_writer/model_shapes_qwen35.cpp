// Qwen3.5's mkmodel shapes: tiny-qwen35 and tiny-qwen35moe for tests, and Qwen3-Next's
// (qwen3-next-80b-a3b, tiny-qwen3next), laid out as llama.cpp's converter writes the family (the
// DeltaNet layers' attn_qkv, attn_gate, ssm_* (qwen3next: ssm_ba for beta and alpha); the full-
// attention layers' attn_q holding query and gate per head). No real Qwen3.5 shape is declared:
// its published configs were not at hand to state every ssm.* size from.
#include "qwen35_shapes.h"

#include <string>

namespace rf {

void add_qwen35_shapes(std::vector<ModelShape> &t) {
    ModelShape s;
    s.name = "tiny-qwen35"; s.arch = "qwen35"; s.display_name = "ROCmForge Tiny qwen35";
    // Three DeltaNet layers then one full-attention layer (interval 4, as the real ones); heads of
    // 64 with a quarter rotated (partial RoPE), 4 value heads over 2 key heads of 32.
    s.n_embd = 128; s.n_layer = 4; s.n_head = 4; s.n_head_kv = 2; s.n_ff = 256; s.n_vocab = 0; s.n_ctx = 2048;
    s.key_length = 64; s.qk_norm = true; s.rope_freq_base = 10000000.0f; s.rms_eps = 1e-6f;
    s.ssm_conv = 4; s.ssm_state = 32; s.ssm_groups = 2; s.ssm_v_heads = 4; s.full_attn_interval = 4; s.n_rot = 16;
    t.push_back(s);
    s.name = "tiny-qwen35moe"; s.arch = "qwen35moe"; s.display_name = "ROCmForge Tiny qwen35moe";
    s.n_expert = 8; s.n_expert_used = 4; s.n_ff_exp = 64; s.n_ff_shexp = 128;
    t.push_back(s);
    s.name = "tiny-qwen3next"; s.arch = "qwen3next"; s.display_name = "ROCmForge Tiny qwen3next";
    t.push_back(s);

    // Qwen/Qwen3-Next-80B-A3B config.json: 2048 wide, 48 layers (every 4th full attention), 16
    // heads of 256 over 2 KV heads, a quarter rotated, 16 key / 32 value DeltaNet heads of 128,
    // conv kernel 4, 512 experts of 512 (10 per token) and a shared expert of 512, FFN 5120,
    // vocab 151936, 262144 positions, RoPE base 1e7, separate output.
    s = {};
    s.name = "qwen3-next-80b-a3b"; s.arch = "qwen3next"; s.display_name = "Qwen3 Next 80B A3B";
    s.n_embd = 2048; s.n_layer = 48; s.n_head = 16; s.n_head_kv = 2; s.n_ff = 5120; s.n_vocab = 151936;
    s.n_ctx = 262144; s.key_length = 256; s.qk_norm = true; s.rope_freq_base = 10000000.0f; s.rms_eps = 1e-6f;
    s.ssm_conv = 4; s.ssm_state = 128; s.ssm_groups = 16; s.ssm_v_heads = 32; s.full_attn_interval = 4; s.n_rot = 64;
    s.n_expert = 512; s.n_expert_used = 10; s.n_ff_exp = 512; s.n_ff_shexp = 512;
    t.push_back(s);
}

std::vector<ShapeTensor> qwen35_tensors(const ModelShape &s) {
    const int64_t E = s.n_embd, Q = s.n_embd_q(), KV = s.n_embd_kv(), D = s.head_dim(), V = s.n_vocab;
    const int64_t inner = s.ssm_v_heads * s.ssm_state, C = 2 * s.ssm_groups * s.ssm_state + inner, Hv = s.ssm_v_heads;
    std::vector<ShapeTensor> t;
    t.push_back({"token_embd.weight", {E, V}});
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        t.push_back({p + "attn_norm.weight", {E}});
        if ((l + 1) % s.full_attn_interval != 0) {
            t.push_back({p + "attn_qkv.weight", {E, C}});
            t.push_back({p + "attn_gate.weight", {E, inner}});
            t.push_back({p + "ssm_conv1d.weight", {s.ssm_conv, C}}); // kept f32 (never quantized)
            t.push_back({p + "ssm_dt.bias", {Hv}});
            t.push_back({p + "ssm_a", {Hv}});
            if (s.arch == "qwen3next") {
                t.push_back({p + "ssm_ba.weight", {E, 2 * Hv}}); // per key head: beta rows, then alpha rows
            } else {
                t.push_back({p + "ssm_beta.weight", {E, Hv}});
                t.push_back({p + "ssm_alpha.weight", {E, Hv}});
            }
            t.push_back({p + "ssm_norm.weight", {s.ssm_state}});
            t.push_back({p + "ssm_out.weight", {inner, E}});
        } else {
            t.push_back({p + "attn_q.weight", {E, 2 * Q}});
            t.push_back({p + "attn_k.weight", {E, KV}});
            t.push_back({p + "attn_v.weight", {E, KV}});
            t.push_back({p + "attn_q_norm.weight", {D}});
            t.push_back({p + "attn_k_norm.weight", {D}});
            t.push_back({p + "attn_output.weight", {Q, E}});
        }
        t.push_back({p + "post_attention_norm.weight", {E}});
        if (s.n_expert > 0) {
            const int64_t X = s.n_expert, FX = s.n_ff_exp, FS = s.n_ff_shexp;
            t.push_back({p + "ffn_gate_inp.weight", {E, X}});
            t.push_back({p + "ffn_gate_exps.weight", {E, FX, X}});
            t.push_back({p + "ffn_down_exps.weight", {FX, E, X}});
            t.push_back({p + "ffn_up_exps.weight", {E, FX, X}});
            t.push_back({p + "ffn_gate_inp_shexp.weight", {E}});
            t.push_back({p + "ffn_gate_shexp.weight", {E, FS}});
            t.push_back({p + "ffn_down_shexp.weight", {FS, E}});
            t.push_back({p + "ffn_up_shexp.weight", {E, FS}});
        } else {
            t.push_back({p + "ffn_gate.weight", {E, s.n_ff}});
            t.push_back({p + "ffn_up.weight", {E, s.n_ff}});
            t.push_back({p + "ffn_down.weight", {s.n_ff, E}});
        }
    }
    t.push_back({"output_norm.weight", {E}});
    t.push_back({"output.weight", {E, V}});
    return t;
}

void set_qwen35_keys(gguf::Writer &w, const ModelShape &s) {
    using gguf::Value;
    const std::string a = s.arch + ".";
    const int32_t quarter = (int32_t)(s.n_rot / 2 / 3); // text positions make the split immaterial
    w.set(a + "rope.dimension_count", Value::from_u32(uint32_t(s.n_rot)));
    if (s.arch != "qwen3next") // Qwen3-Next's RoPE has no sections
        w.set(a + "rope.dimension_sections", Value::from_i32s({(int32_t)(s.n_rot / 2) - 2 * quarter, quarter, quarter, 0}));
    w.set(a + "ssm.conv_kernel", Value::from_u32(uint32_t(s.ssm_conv)));
    w.set(a + "ssm.state_size", Value::from_u32(uint32_t(s.ssm_state)));
    w.set(a + "ssm.group_count", Value::from_u32(uint32_t(s.ssm_groups)));
    w.set(a + "ssm.time_step_rank", Value::from_u32(uint32_t(s.ssm_v_heads)));
    w.set(a + "ssm.inner_size", Value::from_u32(uint32_t(s.ssm_v_heads * s.ssm_state)));
    w.set(a + "full_attention_interval", Value::from_u32(uint32_t(s.full_attn_interval)));
}

} // namespace rf
