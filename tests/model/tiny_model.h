// A tiny random model of each supported architecture written with rf::gguf::Writer, plus an
// independent float64 reference forward pass (plain loops, written from llama.cpp's graphs) to
// check the graph against.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "rocmforge/runtime.h"

namespace rf_test {

struct TinySpec {
    std::string arch = "llama"; // "llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3", "phi3", "qwen3moe", "qwen2moe",
                                // "gpt-oss"
    int64_t n_embd = 64, n_layer = 2, n_head = 4, n_head_kv = 2, n_ff = 96, n_vocab = 97;
    int64_t head_dim = 0;          // attention.key_length / value_length; 0: not written (n_embd / n_head)
    int64_t sliding_window = 0;    // gemma: attention.sliding_window (0: not written)
    float attn_softcap = 0.0f;     // gemma2: attn_logit_softcapping (0: not written)
    float final_softcap = 0.0f;    // gemma2: final_logit_softcapping (0: not written)
    bool fused = true;             // phi3: attn_qkv and ffn_up holding gate and up
    bool rope_factors = false;     // phi3: rope_factors_long/short, original_context_length, attn_factor
    int64_t n_ctx_orig = 64;       // phi3 with rope_factors: long factors above this context
    float rope_attn_factor = 1.25f;
    int64_t n_ctx_train = 256;
    // Mixture of experts (llama = Mixtral, qwen3moe): expert_count, expert_used_count (0: not
    // written) and qwen3moe's expert_feed_forward_length (0: not written, the FFN width is then
    // n_ff / n_expert_used); the experts replace ffn_gate/up/down.
    int64_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0;
    int64_t expert_count_key = 0; // > 0: written as expert_count instead of n_expert (bad-file tests)
    // qwen2moe's shared expert: expert_shared_feed_forward_length (0: not written, the width is
    // then n_ff); its gate ffn_gate_inp_shexp written as [n_embd] (the converter's) or [n_embd, 1].
    int64_t n_ff_shexp = 0;
    bool shexp_gate_2d = false;
    // gpt-oss: YaRN (rope.scaling.type yarn with this factor and original context; 0: not
    // written), and the spread of the sinks and the expert biases (wide enough that the SwiGLU
    // clamp at 7 is reached).
    float yarn_factor = 0.0f;
    int64_t yarn_orig_ctx = 0;
    float sink_stddev = 1.5f, expert_bias_stddev = 4.0f;
    float rms_eps = 1e-5f;
    float rope_base = 10000.0f;
    float rope_scale_factor = 0.0f; // rope.scaling.factor; 0: not written
    bool rope_freqs = false;       // write a Llama-3 rope_freqs.weight
    bool tied_output = false;      // omit output.weight
    bool qkv_bias = false;         // qwen2 always writes them
    int matrix_type = 0;           // RF_TYPE_F32 or RF_TYPE_F16 for the 2-D weights
    int64_t file_type = -1;        // general.file_type (llama.cpp's LLAMA_FTYPE_*); -1: not written
    int64_t pooling_type = -1;     // <arch>.pooling_type (llama.cpp's numbering); -1: not written
    uint32_t seed = 1234;
    std::vector<std::string> skip_tensors; // for the missing-tensor test
};

// Weights as float (after the file type's rounding), by GGUF tensor name.
struct TinyWeights {
    TinySpec spec;
    std::map<std::string, std::vector<float>> t;
};

// Random values for tensor `name` of a tiny model (mean + stddev * normal), rounded through f16
// when `round_f16` (the file stores them so), kept in kept[name] for the reference.
const std::vector<float> &random_tensor(std::map<std::string, std::vector<float>> &kept, std::mt19937 &rng, std::normal_distribution<float> &normal,
                                        const std::string &name, int64_t n, float mean, float stddev, bool round_f16);

// Writes the model to `path`; returns the weights as the file holds them.
TinyWeights write_tiny_model(const std::string &path, const TinySpec &spec);

// Float64 forward of one sequence: logits [tokens.size()][n_vocab] for every position, for a
// context of n_ctx tokens (which picks phi3's long or short RoPE factors).
std::vector<std::vector<double>> reference_forward(const TinyWeights &w, const std::vector<int32_t> &tokens,
                                                   int64_t n_ctx = 128);

// The same pass up to the final norm: each position's hidden state rms_norm(x) * output_norm
// [tokens.size()][n_embd], what embeddings pool.
std::vector<std::vector<double>> reference_hidden(const TinyWeights &w, const std::vector<int32_t> &tokens,
                                                  int64_t n_ctx = 128);

// A runtime with only the CPU backend (plugin from the build tree).
std::unique_ptr<rf::Runtime> cpu_runtime();
// A runtime of the "gpulike" test plugin (two_cpu_backend.c built with TWOCPU_FAKE_GPU, found
// through RF_GPULIKE) and the CPU backend, in the order given.
std::unique_ptr<rf::Runtime> gpulike_runtime(std::vector<std::string> backends = {"gpulike", "cpu"});

// Largest |a - b| over the row divided by the largest |b| (0 when equal).
double rel_diff(const float *a, const float *b, int64_t n);
double rel_diff(const float *a, const double *b, int64_t n);

std::string temp_path(const std::string &name);

} // namespace rf_test
