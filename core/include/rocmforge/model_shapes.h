// Named shapes of real models (hyperparameters only, no weights), used by `rocmforge mkmodel` to
// write random-weight models with the exact tensor layout of the real thing: tiny,
// tinyllama-1.1b, llama2-7b, llama3-8b, qwen2-0.5b, qwen3-0.6b, qwen3-8b, gemma2-2b, gemma3-1b,
// phi3-mini, mixtral-8x7b, qwen3-30b-a3b, the embedding encoders bge-small (bert) and nomic-embed
// (nomic-bert), deepseek-v2-lite and deepseek-v3, and tiny-qwen3 / tiny-gemma2 / tiny-gemma3 /
// tiny-phi3 / tiny-mixtral / tiny-qwen3moe / tiny-bert / tiny-nomic-bert / tiny-deepseek2 for tests.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rf {

struct ModelShape {
    std::string name;          // "llama2-7b"
    std::string arch;          // general.architecture: llama, qwen2, qwen3, gemma2, gemma3, phi3, qwen3moe,
                               // qwen2moe, gpt-oss, bert, nomic-bert
    std::string display_name;  // general.name written into the file
    int64_t n_embd = 0;
    int64_t n_layer = 0;
    int64_t n_head = 0;
    int64_t n_head_kv = 0;
    int64_t n_ff = 0;
    int64_t n_vocab = 0;       // 0: whatever the vocab file has (tiny)
    int64_t n_ctx = 0;         // context_length
    float rope_freq_base = 10000.0f;
    float rms_eps = 1e-5f;
    bool qkv_bias = false;     // attn_q/k/v.bias (qwen2)
    bool tied_embeddings = false; // no output.weight: token_embd doubles as the output matrix
    int64_t key_length = 0;    // attention.key_length = value_length (qwen3, gemma); 0: n_embd / n_head
    bool qk_norm = false;      // attn_q_norm / attn_k_norm [head_dim] (qwen3, gemma3)
    bool post_norms = false;   // post_attention_norm / post_ffw_norm (gemma2/3)
    bool fused = false;        // attn_qkv, and ffn_up holding gate and up (phi3)
    int64_t sliding_window = 0; // attention.sliding_window (gemma)
    float attn_softcap = 0.0f, final_softcap = 0.0f; // gemma2's logit soft-capping
    // Mixture of experts (Mixtral: llama with experts; qwen3moe): expert_count, expert_used_count;
    // ffn_gate_inp + ffn_{gate,up,down}_exps replace the dense FFN. n_ff_exp: one expert's width
    // (expert_feed_forward_length, qwen3moe; 0: n_ff).
    int64_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0;
    // qwen2moe's shared expert: expert_shared_feed_forward_length, ffn_gate_inp_shexp [n_embd]
    // and ffn_{gate,up,down}_shexp; 0: none.
    int64_t n_ff_shexp = 0;
    // YaRN (rope.scaling.type yarn, factor, original_context_length: gpt-oss); 0: none.
    float yarn_factor = 0.0f;
    int64_t yarn_orig_ctx = 0;
    // gpt-oss: attn_output.bias, attn_sinks, post_attention_norm as the FFN norm, router and
    // expert biases; its experts are MXFP4 in every quantized file (as the converter writes them).
    bool gpt_oss() const { return arch == "gpt-oss"; }
    // deepseek2 (DeepSeek-V2/V3; model_writer/deepseek2_shape.cpp): latent attention (q lora 0:
    // attn_q), the leading dense layers (n_ff) and the experts' routing keys.
    struct DeepSeek2 {
        int64_t q_lora = 0, kv_lora = 0, nope = 0, rope = 0, v_head = 0, n_dense_lead = 0, n_shared = 0;
        int64_t n_group = 0, n_group_used = 0;
        float weights_scale = 0.0f, yarn_log_mul = 0.0f;
        bool weights_norm = false, sigmoid = false;
    } ds;
    bool deepseek2() const { return arch == "deepseek2"; }
    // Encoders (bert, nomic-bert): attention.layer_norm_epsilon, pooling_type (llama.cpp's: 1
    // mean, 2 cls), token types (token_types rows).
    float norm_eps = 1e-12f;
    int pooling_type = 0;
    int64_t n_token_types = 2;

    bool encoder() const { return arch == "bert" || arch == "nomic-bert"; }
    // Qwen3.5 (qwen35, qwen35moe; model_shapes_qwen35.cpp): DeltaNet layers (ssm.*) with every
    // full_attn_interval-th layer gated full attention of n_rot rotated dims.
    int64_t ssm_conv = 0, ssm_state = 0, ssm_groups = 0, ssm_v_heads = 0, full_attn_interval = 0, n_rot = 0;
    bool qwen35() const { return arch == "qwen35" || arch == "qwen35moe" || arch == "qwen3next"; }

    int64_t head_dim() const { return key_length ? key_length : n_embd / n_head; }
    int64_t n_embd_q() const { return head_dim() * n_head; }
    int64_t n_embd_kv() const { return head_dim() * n_head_kv; }
    int64_t expert_ff() const { return n_ff_exp ? n_ff_exp : n_ff; }
};

// nullptr for unknown names (case-insensitive).
const ModelShape *find_model_shape(std::string_view name);
std::vector<std::string> model_shape_names();

// One tensor of a model of shape `s`: GGUF name and ne (ne[0] = row length), in the order
// llama.cpp's tensor-type rules expect (layers ascending).
struct ShapeTensor {
    std::string name;
    std::vector<int64_t> ne;
};
std::vector<ShapeTensor> shape_tensors(const ModelShape &s);

} // namespace rf
