// Decoder-only transformer models of the llama lineage (llama 1/2/3, mistral-style files, qwen2,
// qwen3, gemma2, gemma3, phi3, and the mixture-of-experts mixtral (llama with experts), qwen3moe,
// qwen2moe (with a shared expert), gpt-oss and deepseek2 (latent attention);
// docs/MODELS.md) and the embedding encoders bert and nomic-bert: hyperparameters read from GGUF
// metadata, weights
// placed on the runtime's primary backend straight from the mapped file.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/gguf.h"
#include "rocmforge/buffer_slab.h"
#include "rocmforge/graph.h"
#include "rocmforge/runtime.h"

namespace rf {

// Which graph recipe a file's `general.architecture` maps to.
enum class ModelArch { Llama, Qwen2, Qwen3, Gemma2, Gemma3, Phi3, Qwen3Moe, Qwen2Moe, GptOss, Bert, NomicBert, DeepSeek2, Qwen35,
                       Qwen35Moe, Qwen3Next };

struct ModelHparams {
    std::string arch_name;      // general.architecture as written in the file
    ModelArch arch = ModelArch::Llama;
    int64_t n_ctx_train = 0;    // <arch>.context_length
    int64_t n_embd = 0;         // <arch>.embedding_length
    int64_t n_layer = 0;        // <arch>.block_count
    int64_t n_ff = 0;           // <arch>.feed_forward_length
    int64_t n_head = 0;         // <arch>.attention.head_count
    int64_t n_head_kv = 0;      // <arch>.attention.head_count_kv (default n_head)
    int64_t head_dim = 0;       // <arch>.attention.key_length (default n_embd / n_head)
    int64_t n_rot = 0;          // <arch>.rope.dimension_count (default head_dim)
    int64_t n_vocab = 0;        // token_embd.weight rows
    float rms_eps = 1e-5f;      // <arch>.attention.layer_norm_rms_epsilon
    float rope_freq_base = 10000.0f;
    float rope_freq_scale = 1.0f; // 1 / <arch>.rope.scaling.factor (linear scaling)
    int rope_mode = RF_ROPE_NORMAL; // llama: NORMAL, the others: NEOX (llama.cpp's llama_model_rope_type)

    // What the architecture adds to the llama graph (set from general.architecture).
    bool qk_norm = false;       // qwen3, gemma3: per-head RMS norm of Q and K before RoPE
    bool post_norms = false;    // gemma2/3: attn_post_norm and ffn_post_norm on each block's output
    bool embd_scale = false;    // gemma2/3: token embeddings times sqrt(n_embd)
    bool ffn_gelu = false;      // gemma2/3: GeGLU (GELU-tanh gate) instead of SwiGLU
    float attn_scale = 0.0f;    // query scale: 1/sqrt(head_dim); gemma 27B: 1/sqrt(n_embd / n_head)
    float attn_softcap = 0.0f;  // <arch>.attn_logit_softcapping (gemma2, default 50); 0: none
    float final_softcap = 0.0f; // <arch>.final_logit_softcapping (gemma2, default 30; gemma3 0); 0: none
    int64_t n_swa = 0;          // <arch>.attention.sliding_window; 0: every layer is global
    int64_t swa_pattern = 0;    // layer l is local when l % swa_pattern < swa_pattern - 1
    float rope_freq_base_swa = 10000.0f; // RoPE of local layers (gemma3: 10000, scale 1)
    float rope_freq_scale_swa = 1.0f;
    int64_t n_ctx_orig = 0;     // <arch>.rope.scaling.original_context_length (phi3 long/short factors)
    float rope_attn_factor = 1.0f; // <arch>.rope.scaling.attn_factor: RoPE output scale (phi3 longrope)
    // YaRN (rope.scaling.type = yarn: gpt-oss): every layer's ROPE mixes interpolated and
    // extrapolated angles and scales cos / sin (rope_yarn.h; freq_scale = 1 / factor).
    bool rope_yarn = false;
    RopeYarn yarn;

    // gpt-oss: attention sinks (blk.N.attn_sinks), biases on Q/K/V/O, the router and the experts,
    // the clamped SwiGLU (alpha, limit) and the softmax of the chosen router logits.
    bool attn_sinks = false;
    float swiglu_alpha = 0.0f, swiglu_limit = 0.0f; // 0: plain SwiGLU

    // Encoders (bert, nomic-bert): bidirectional attention over the whole input in one graph,
    // post-norm LayerNorm blocks, hidden states out (no logits). bert adds absolute position
    // embeddings and a GELU FFN; nomic-bert rotates Q and K (NeoX) and has a SwiGLU FFN.
    bool encoder = false;
    float norm_eps = 1e-12f;    // <arch>.attention.layer_norm_epsilon (LayerNorm)

    // Mixture of experts (llama files with experts = Mixtral, qwen3moe): every layer's FFN is
    // n_expert experts of which each token takes the n_expert_used with the largest router logits,
    // weighted by the softmax over those (normalised top-k, both architectures in llama.cpp).
    int64_t n_expert = 0;       // <arch>.expert_count; 0: a dense FFN
    int64_t n_expert_used = 0;  // <arch>.expert_used_count
    int64_t n_ff_exp = 0;       // one expert's FFN width: <arch>.expert_feed_forward_length
                                // (qwen3moe, qwen2moe; default n_ff / n_expert_used), n_ff for llama
    // qwen2moe: beside the routed experts every token also runs one shared expert (a SwiGLU FFN
    // of this width), scaled by sigmoid(ffn_gate_inp_shexp . h) and added to their sum.
    int64_t n_ff_shexp = 0;     // <arch>.expert_shared_feed_forward_length (default n_ff); 0: none

    // deepseek2 (DeepSeek-V2/V3, deepseek2.cpp, forward_deepseek2.cpp): multi-head latent
    // attention in the absorbed form. The KV cache holds one "head" per token, the normed latent
    // and the roped k_pe: head_dim = kv_lora_rank + n_rot, n_head_kv = 1 (V: the latent).
    struct DeepSeek2 {
        int64_t n_lora_q = 0;      // attention.q_lora_rank; 0: one attn_q projection (V2-Lite)
        int64_t n_lora_kv = 0;     // attention.kv_lora_rank (the latent)
        int64_t n_head_k = 0;      // a query head: nope + rope (key_length_mla, else key_length)
        int64_t n_head_v = 0;      // a value head after W_vb (value_length_mla, else value_length)
        int64_t n_dense_lead = 0;  // leading_dense_block_count: layers with a dense FFN
        int64_t n_expert_shared = 0; // expert_shared_count (shared FFN of n_ff_exp * this)
        float weights_scale = 0.0f;  // expert_weights_scale (routed scaling factor; 0: none)
        bool weights_norm = false;   // expert_weights_norm
        bool sigmoid_gating = false; // expert_gating_func = 2 (V3); 1 or absent: softmax
        int64_t n_group = 0, n_group_used = 0; // expert_group_count / expert_group_used_count
        float kq_scale = 0.0f;       // mscale^2 / sqrt(n_head_k) (YaRN's log multiplier)
    } ds;
    bool is_mla() const { return arch == ModelArch::DeepSeek2; }
    // Qwen3.5 (qwen35, qwen35moe; hparams_qwen35.cpp): Gated DeltaNet layers, and every
    // full_attention_interval-th layer a gated full-attention one. 0: no recurrent layers.
    int64_t ssm_d_conv = 0;   // <arch>.ssm.conv_kernel
    int64_t ssm_d_inner = 0;  // <arch>.ssm.inner_size (value heads * their size)
    int64_t ssm_d_state = 0;  // <arch>.ssm.state_size (key head size)
    int64_t ssm_dt_rank = 0;  // <arch>.ssm.time_step_rank (value heads)
    int64_t ssm_n_group = 0;  // <arch>.ssm.group_count (key heads)
    int64_t full_attn_interval = 0; // <arch>.full_attention_interval (default 4)
    int64_t n_layer_nextn = 0; // <arch>.nextn_predict_layers: MTP blocks past the stack, not run
    bool hybrid() const { return ssm_d_conv > 0; }
    bool is_recurrent(int64_t layer) const { return hybrid() && (layer + 1) % full_attn_interval != 0; }
    // Layers with a K/V pool: all but the recurrent ones; kv_layer(l) is layer l's pool index.
    int64_t n_layer_kv() const { return hybrid() ? n_layer / full_attn_interval : n_layer; }
    int64_t kv_layer(int64_t layer) const { return hybrid() ? layer / full_attn_interval : layer; }
    int64_t ssm_head_v_dim() const { return ssm_dt_rank ? ssm_d_inner / ssm_dt_rank : 0; }
    int64_t ssm_conv_channels() const { return 2 * ssm_n_group * ssm_d_state + ssm_d_inner; }
    // qwen3next repeats each key head over its group of value heads (h / (Hv / Hk)); Qwen3.5's
    // converter orders the value heads so that they tile (h % Hk).
    bool ssm_heads_interleaved() const { return arch == ModelArch::Qwen3Next; }

    int64_t n_embd_q() const { return head_dim * n_head; }
    int64_t n_embd_kv() const { return head_dim * n_head_kv; }
    // Sliding-window (local) layer: attends to the last n_swa positions, with the local RoPE.
    bool is_swa(int64_t layer) const { return n_swa > 0 && swa_pattern > 0 && layer % swa_pattern < swa_pattern - 1; }
    bool is_moe() const { return n_expert > 0; }
};

// Reads and validates the hyperparameters. Throws rf::Error naming the key for a missing or bad
// value, and naming the architecture when it is not one of those listed above.
ModelHparams read_hparams(const gguf::File &file);
// Qwen3.5's keys (hparams_qwen35.cpp), called by read_hparams for qwen35 / qwen35moe.
void read_qwen35_keys(ModelHparams &hp, const gguf::File &file);

struct LayerWeights {
    // phi3's fused attn_qkv and ffn_up (gate and up) are split by rows into wq/wk/wv and
    // ffn_gate/ffn_up at load time.
    Tensor *attn_norm = nullptr;
    Tensor *wq = nullptr, *wk = nullptr, *wv = nullptr, *wo = nullptr;
    Tensor *bq = nullptr, *bk = nullptr, *bv = nullptr; // qwen2 (optional for llama; nullptr otherwise)
    Tensor *attn_q_norm = nullptr, *attn_k_norm = nullptr; // [head_dim]: qwen3, gemma3
    Tensor *attn_post_norm = nullptr;                      // gemma2/3
    Tensor *ffn_norm = nullptr;
    Tensor *ffn_gate = nullptr, *ffn_up = nullptr, *ffn_down = nullptr;
    Tensor *ffn_post_norm = nullptr;                       // gemma2/3
    // Encoders: output projection bias, LayerNorm (weight, bias) after the attention and after
    // the FFN residuals, FFN biases (bert).
    Tensor *bo = nullptr;
    Tensor *attn_out_norm = nullptr, *attn_out_norm_b = nullptr;
    Tensor *layer_out_norm = nullptr, *layer_out_norm_b = nullptr;
    Tensor *ffn_up_b = nullptr, *ffn_down_b = nullptr;
    // Mixture of experts (instead of ffn_gate/up/down): the router [n_embd, n_expert] and the
    // experts' matrices [n_embd, n_ff_exp, n_expert] (gate, up) and [n_ff_exp, n_embd, n_expert].
    Tensor *ffn_gate_inp = nullptr;
    Tensor *ffn_gate_exps = nullptr, *ffn_up_exps = nullptr, *ffn_down_exps = nullptr;
    // gpt-oss: per-head sink logits [n_head], the router's bias [n_expert], the experts' biases
    // [n_ff_exp, n_expert] (gate, up) and [n_embd, n_expert] (down); bo above is attn_output.bias.
    Tensor *attn_sinks = nullptr;
    Tensor *ffn_gate_inp_b = nullptr;
    Tensor *ffn_gate_exps_b = nullptr, *ffn_up_exps_b = nullptr, *ffn_down_exps_b = nullptr;
    // The shared expert (qwen2moe): its gate vector as a [n_embd, 1] weight, and its FFN
    // [n_embd, n_ff_shexp] (gate, up), [n_ff_shexp, n_embd] (down).
    Tensor *ffn_gate_inp_shexp = nullptr;
    Tensor *ffn_gate_shexp = nullptr, *ffn_up_shexp = nullptr, *ffn_down_shexp = nullptr;
    // deepseek2: Q as attn_q (wq above) or attn_q_a -> attn_q_a_norm -> attn_q_b, each split at
    // load into its nope and rope rows (per head); attn_kv_a_mqa split into the latent and k_pe
    // rows; per-head W_kb [nope, latent, H] and W_vb [latent, v, H] (attn_k_b / attn_v_b, or
    // taken from attn_kv_b); the experts' selection bias exp_probs_b.bias [n_expert].
    Tensor *wq_a = nullptr, *attn_q_a_norm = nullptr, *wq_nope = nullptr, *wq_pe = nullptr;
    Tensor *wkv_a_latent = nullptr, *wkv_a_pe = nullptr, *attn_kv_a_norm = nullptr, *wk_b = nullptr, *wv_b = nullptr;
    Tensor *ffn_exp_probs_b = nullptr;
    // Qwen3.5: the full-attention layers' output gate (the odd halves of attn_q's rows, per
    // head), and the DeltaNet layers' tensors (model_qwen35.cpp; ffn_norm holds
    // post_attention_norm, the FFN's input norm).
    Tensor *attn_q_gate = nullptr;
    Tensor *ssm_qkv = nullptr, *ssm_z = nullptr;         // attn_qkv [E, conv], attn_gate [E, inner]
    Tensor *ssm_conv1d = nullptr, *ssm_dt = nullptr, *ssm_a = nullptr;
    Tensor *ssm_beta = nullptr, *ssm_alpha = nullptr, *ssm_norm = nullptr, *ssm_out = nullptr;
};

struct ModelLoadOptions {
    // false: the weights are copied into memory of the backend's own instead of being served
    // from the mapped file (the file is still mapped while loading, for its metadata).
    bool use_mmap = true;
    // Called after each tensor with the share of weight bytes placed (0..1]; returning false
    // stops the load (rf::Error "model load cancelled").
    std::function<bool(float)> progress;
    // The backend instance the weights go to ("hip:1", "cpu"); empty: runtime.primary(), the
    // config's first. Nodes without weights then run there too, before the priority order.
    std::string backend;
};

class Model {
public:
    // Opens `path`, reads the hyperparameters and places every weight on options.backend, else
    // runtime.primary() (UsageError naming the backends started when options.backend is none).
    // Throws rf::Error for an unknown architecture or a missing / misshapen tensor (by name).
    static std::unique_ptr<Model> load(const std::string &path, Runtime &runtime,
                                       const ModelLoadOptions &options = {});
    ~Model();
    Model(const Model &) = delete;
    Model &operator=(const Model &) = delete;

    const ModelHparams &hparams() const { return hp_; }
    const gguf::File &file() const { return *file_; }
    Backend &backend() const { return *backend_; }

    Tensor *tok_embd = nullptr;    // [n_embd, n_vocab]
    Tensor *output_norm = nullptr; // [n_embd]
    Tensor *output = nullptr;      // [n_embd, n_vocab]; == tok_embd when the file ties them
    Tensor *rope_freqs = nullptr;  // [n_rot/2] f32 (Llama 3) or nullptr
    // phi3 longrope: [n_rot/2] frequency factors for contexts above / up to n_ctx_orig.
    Tensor *rope_factors_long = nullptr, *rope_factors_short = nullptr;
    std::vector<LayerWeights> layers;
    bool tied_output = false;
    // Encoders: absolute positions [n_embd, n_ctx_train] (bert), token types [n_embd, n_types]
    // (row 0 is added: every token is of "sentence A"), the embeddings' LayerNorm.
    Tensor *pos_embd = nullptr, *type_embd = nullptr;
    Tensor *tok_norm = nullptr, *tok_norm_b = nullptr;

    uint64_t weight_bytes() const { return weight_bytes_; } // bytes of all tensors placed
    uint64_t n_params() const { return n_params_; }         // elements of all tensors placed
    // Short label as llama-bench prints it: "<arch> <size> <format_label()>", e.g.
    // "llama 1B Q4_0" (general.size_label when present, else derived from n_params).
    std::string description() const;
    // The format part of it: the name of general.file_type ("Q4_K_M") when the file has a known
    // one, else the type holding most of the matrix bytes ("Q6_K").
    std::string format_label() const;

private:
    Model() = default;
    Tensor *place(const std::string &name, std::initializer_list<int64_t> expected_ne, bool required);
    // Rows [first, first + count) of a 2-D file tensor [K, n_rows] as a weight of its own (fused
    // projections); nullptr when the file lacks it.
    Tensor *place_rows(const std::string &name, int64_t K, int64_t n_rows, int64_t first, int64_t count);
    // The backend tensor of one weight from its file bytes (mapped or copied, options_.use_mmap),
    // counted in weight_bytes_ for the progress callback.
    Tensor *store(const std::string &name, int type, const int64_t *ne, const void *bytes, uint64_t nbytes);
    // Elements [first, first + count) of a 1-D f32 file tensor of n elements (a fused bias).
    Tensor *place_slice(const std::string &name, int64_t n, int64_t first, int64_t count);
    void load_layer(int64_t l);
    void load_shared_expert(LayerWeights &w, const std::string &prefix);
    Tensor *place_expert_bias(const std::string &name, int64_t rows);
    void load_expert_biases(LayerWeights &w, const std::string &prefix);
    void load_deepseek2_layer(int64_t l); // deepseek2.cpp
    // Weight bytes the loader rearranged (deepseek2's per-head splits): they back tensors that
    // may wrap them without a copy, so they live as long as the model.
    Tensor *store_owned(const std::string &name, int type, const int64_t ne[4], std::vector<uint8_t> bytes);
    std::vector<std::unique_ptr<std::vector<uint8_t>>> owned_bytes_;
    void load_qwen35_layer(int64_t l); // model_qwen35.cpp
    // Rows of a 2-D file tensor [K, n_rows] taken block by block ({first, count}) into one weight.
    Tensor *place_row_blocks(const std::string &name, int64_t K, int64_t n_rows, const std::vector<std::pair<int64_t, int64_t>> &blocks,
                             const std::string &label);
    void load_encoder(); // encoder_model.cpp
    void load_encoder_layer(int64_t l);

    ModelHparams hp_;
    ModelLoadOptions options_;
    uint64_t file_weight_bytes_ = 0; // all tensor bytes in the file: the progress denominator
    std::unique_ptr<gguf::File> file_;
    Backend *backend_ = nullptr;
    // The weights' device bytes in one allocation (sized for every tensor of the file); declared
    // before storage_ so that it outlives the tensors carved from it.
    std::unique_ptr<BufferSlab> slab_;
    std::vector<std::unique_ptr<PersistentTensor>> storage_;
    uint64_t weight_bytes_ = 0;
    uint64_t n_params_ = 0;
};

} // namespace rf
