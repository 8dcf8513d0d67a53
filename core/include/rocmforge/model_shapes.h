// Named shapes of real LLaMA-family models (hyperparameters only, no weights), used by
// `rocmforge mkmodel` to write random-weight models with the exact tensor layout of the real
// thing: tiny, tinyllama-1.1b, llama2-7b, llama3-8b, qwen2-0.5b.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rf {

struct ModelShape {
    std::string name;          // "llama2-7b"
    std::string arch;          // general.architecture: "llama" or "qwen2"
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

    int64_t head_dim() const { return n_embd / n_head; }
    int64_t n_embd_kv() const { return head_dim() * n_head_kv; }
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
