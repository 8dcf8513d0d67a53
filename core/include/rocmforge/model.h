// LLaMA-family models (llama 1/2/3, mistral-style files, qwen2): hyperparameters read from GGUF
// metadata, weights placed on the runtime's primary backend straight from the mapped file.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/gguf.h"
#include "rocmforge/graph.h"
#include "rocmforge/runtime.h"

namespace rf {

// Which graph recipe a file's `general.architecture` maps to.
enum class ModelArch { Llama, Qwen2 };

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
    int rope_mode = RF_ROPE_NORMAL; // llama: NORMAL, qwen2: NEOX (llama.cpp's llama_model_rope_type)

    int64_t n_embd_q() const { return head_dim * n_head; }
    int64_t n_embd_kv() const { return head_dim * n_head_kv; }
};

// Reads and validates the hyperparameters. Throws rf::Error naming the key for a missing or bad
// value, and naming the architecture when it is not one of llama / mistral / qwen2.
ModelHparams read_hparams(const gguf::File &file);

struct LayerWeights {
    Tensor *attn_norm = nullptr;
    Tensor *wq = nullptr, *wk = nullptr, *wv = nullptr, *wo = nullptr;
    Tensor *bq = nullptr, *bk = nullptr, *bv = nullptr; // qwen2 only (nullptr otherwise)
    Tensor *ffn_norm = nullptr;
    Tensor *ffn_gate = nullptr, *ffn_up = nullptr, *ffn_down = nullptr;
};

struct ModelLoadOptions {
    // false: the weights are copied into memory of the backend's own instead of being served
    // from the mapped file (the file is still mapped while loading, for its metadata).
    bool use_mmap = true;
    // Called after each tensor with the share of weight bytes placed (0..1]; returning false
    // stops the load (rf::Error "model load cancelled").
    std::function<bool(float)> progress;
};

class Model {
public:
    // Opens `path`, reads the hyperparameters and places every weight on runtime.primary().
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
    std::vector<LayerWeights> layers;
    bool tied_output = false;

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

    ModelHparams hp_;
    ModelLoadOptions options_;
    uint64_t file_weight_bytes_ = 0; // all tensor bytes in the file: the progress denominator
    std::unique_ptr<gguf::File> file_;
    Backend *backend_ = nullptr;
    std::vector<std::unique_ptr<PersistentTensor>> storage_;
    uint64_t weight_bytes_ = 0;
    uint64_t n_params_ = 0;
};

} // namespace rf
