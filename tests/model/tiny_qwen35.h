// A tiny random Qwen3.5 (qwen35, qwen35moe) written as llama.cpp's converter lays it out, and an
// independent float64 forward pass of one sequence (plain loops, from llama.cpp's qwen35 /
// qwen35moe graphs) to check the graph against.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rf_test {

struct Q35Spec {
    bool moe = false; // qwen35moe: experts plus a shared expert instead of the dense FFN
    // qwen3next (moe must be set): key head h / (Hv / Hk) for value head h, the fused ssm_ba,
    // no rope sections; legacy_ssm_in: the older files' fused ssm_in instead of attn_qkv / attn_gate.
    bool next = false, legacy_ssm_in = false;
    int64_t n_embd = 48, n_layer = 4, n_head = 4, n_head_kv = 2, head_dim = 16, n_rot = 8, n_ff = 80, n_vocab = 67;
    int64_t interval = 2; // full_attention_interval: layers 1 and 3 are full attention
    int64_t conv_kernel = 4, state_size = 8, n_k_heads = 2, n_v_heads = 4; // ssm.*; inner = n_v_heads * state_size
    int64_t n_expert = 6, n_expert_used = 2, n_ff_exp = 24, n_ff_shexp = 40;
    int64_t nextn_layers = 0; // MTP blocks appended (blk.n_layer..), ignored by the runtime
    float rms_eps = 1e-6f, rope_base = 10000.0f;
    int matrix_type = 0; // RF_TYPE_F32 or RF_TYPE_F16
    uint32_t seed = 35;
    std::vector<std::string> skip_tensors, skip_keys; // bad-file tests
};

struct Q35Weights {
    Q35Spec spec;
    std::map<std::string, std::vector<float>> t; // as the file holds them (attn_q split: .q / .gate)
};

Q35Weights write_tiny_qwen35(const std::string &path, const Q35Spec &spec);

// Logits [tokens.size()][n_vocab] of one sequence, every position.
std::vector<std::vector<double>> reference_qwen35(const Q35Weights &w, const std::vector<int32_t> &tokens);

} // namespace rf_test
