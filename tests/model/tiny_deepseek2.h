// A tiny random deepseek2 (DeepSeek-V2/V3 layout) file as llama.cpp's converter writes it, and
// an independent float64 reference of its forward pass in the non-absorbed form (every head's
// K and V decompressed from the latent through attn_kv_b, plain multi-head attention), which the
// graph's absorbed form must match.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rf_test {

struct DeepSeek2Spec {
    int64_t n_embd = 64, n_layer = 3, n_head = 4, n_ff = 96, n_vocab = 97, n_ctx_train = 256;
    int64_t q_lora = 48;   // attention.q_lora_rank; 0: attn_q (V2-Lite), the key not written
    int64_t kv_lora = 32;  // attention.kv_lora_rank
    int64_t nope = 16, rope = 16, v_head = 24;
    int64_t n_dense_lead = 1;
    int64_t n_expert = 8, n_expert_used = 3, n_ff_exp = 20, n_shared = 1;
    bool sigmoid = true;   // expert_gating_func 2 (V3), else 1 (softmax)
    bool probs_bias = true; // exp_probs_b.bias
    bool weights_norm = true;
    float weights_scale = 2.5f;
    int64_t n_group = 4, n_group_used = 2; // 0: keys not written
    bool mla_layout = true; // attn_k_b / attn_v_b with the _mla keys; false: attn_kv_b alone
    float yarn_factor = 4.0f; // 0: no rope scaling keys
    int64_t yarn_orig_ctx = 64;
    float yarn_log_mul = 0.1f;
    int64_t nextn = 0; // nextn_predict_layers (0: not written): the last ones are not run
    float rope_base = 10000.0f, rms_eps = 1e-6f;
    int matrix_type = 0; // RF_TYPE_F32 or RF_TYPE_F16 for the 2-D weights
    uint32_t seed = 4321;
    std::vector<std::string> skip_tensors, skip_keys;
};

struct DeepSeek2Weights {
    DeepSeek2Spec spec;
    std::map<std::string, std::vector<float>> t; // by GGUF name; blk.N.attn_kv_b.weight always
};

DeepSeek2Weights write_tiny_deepseek2(const std::string &path, const DeepSeek2Spec &spec);

// Logits [tokens.size()][n_vocab] of one sequence, every position.
std::vector<std::vector<double>> deepseek2_reference(const DeepSeek2Weights &w, const std::vector<int32_t> &tokens);

} // namespace rf_test
