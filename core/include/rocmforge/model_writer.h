// Writing whole model files: requantizing a GGUF model under a mix (`rocmforge quantize`) and
// generating seeded random-weight models of real shapes (`rocmforge mkmodel`). Both stream one
// tensor at a time through gguf::Writer (atomic: an error never leaves a truncated output) and
// spread the rows of each tensor over threads; the bytes never depend on the thread count.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "rocmforge/quant_mix.h"

namespace rf {

namespace gguf {
class Writer;
}

// The `<arch>.*` hyperparameter keys every llama-family GGUF carries, in convert_hf_to_gguf.py's order.
struct LlamaHparamKeys {
    std::string arch = "llama";
    int64_t n_layer = 0, n_ctx = 0, n_embd = 0, n_ff = 0, n_head = 0, n_head_kv = 0;
    float rope_base = 10000.0f, rms_eps = 1e-5f;
};
void set_llama_hparam_keys(gguf::Writer &w, const LlamaHparamKeys &keys);

// general.size_label as gguf-py writes it (two significant digits at least): "6.7B", "494M", "3.1M".
std::string size_label(int64_t n_params);

// Reported once per tensor, after its data has been produced.
struct TensorWriteEvent {
    size_t index = 0;       // 1-based position in the output file
    size_t count = 0;       // tensors in the output file
    std::string name;
    std::vector<int64_t> ne;
    int src_type = -1;      // type in the input file; -1 for generated tensors
    int dst_type = 0;
    uint64_t src_bytes = 0; // 0 for generated tensors
    uint64_t dst_bytes = 0;
};
using TensorWriteCallback = std::function<void(const TensorWriteEvent &)>;

struct ModelWriteTotals {
    size_t n_tensors = 0;
    int64_t n_params = 0;
    uint64_t src_bytes = 0; // tensor data bytes read (quantize only)
    uint64_t dst_bytes = 0; // tensor data bytes written
};

struct QuantizeOptions {
    std::string input_path;
    std::string output_path;
    QuantMix mix = QuantMix::Q8_0;
    bool pure = false;              // one type for every quantizable tensor (no mix rules)
    bool allow_requantize = false;  // accept already-quantized input tensors (lossy twice)
    int output_tensor_type = -1;    // rf_type for output.weight, -1: mix rule
    int token_embedding_type = -1;  // rf_type for token_embd.weight, -1: mix rule
    int n_threads = 0;              // 0: hardware thread count
    TensorWriteCallback on_tensor;  // optional progress
    bool overwrite_input = false;   // allow output_path to be input_path (also through links)
    // Importance matrix (GGUF or legacy .dat, rocmforge imatrix / llama-imatrix); "" for none.
    // With one, the mix rules are llama.cpp's with-imatrix rules and every tensor whose type
    // uses importance (rf::importance_aware) is quantized with its rows' weights, as ggml.
    std::string imatrix_path;
    // Called once per remark (a tensor quantized without importance data it could have used).
    std::function<void(const std::string &)> on_note;
};

// Reads input_path, writes output_path. Before any work, output_path must be writable (not a
// directory) and not the input file unless overwrite_input (UsageError otherwise). Metadata is copied; general.file_type (llama.cpp's
// LLAMA_FTYPE value, omitted for ROCmForge-only mixes) and general.quantization_version = 2
// are set. Throws rf::Error: exit code 1 for unreadable input, an unsupported tensor or a bad
// importance matrix (malformed, a size that does not match a tensor, a tensor missing from it
// whose type needs one), 2 for a requantization that was not allowed, an override type that
// does not fit, or a type that needs an importance matrix when none was given.
ModelWriteTotals quantize_model(const QuantizeOptions &opt);

struct MakeModelOptions {
    std::string shape;       // model_shapes.h name: "tiny", "llama2-7b", ...
    QuantMix mix = QuantMix::Q8_0;
    std::string vocab_path;  // GGUF holding tokenizer.* metadata (tests/data/vocab/*.gguf)
    std::string output_path;
    uint64_t seed = 0;
    int n_threads = 0;       // 0: hardware thread count
    int64_t n_ctx = 0;       // context_length; 0: the shape's
    TensorWriteCallback on_tensor;                   // optional progress
    std::function<void(const std::string &)> on_note; // optional remarks (vocab size adopted)
};

// Writes a random-weight model: matrices ~ normal(0, 0.02) (token_embd/output scaled so logits
// have a standard deviation near 2), norm weights ~ normal(1, 0.02), biases ~ normal(0, 0.02),
// each generated per row and converted straight to the mix's type for that tensor. The mixes
// that need an importance matrix (mix_needs_imatrix: IQ1_S .. IQ3_XXS) use a synthetic one,
// every weight 1, with llama.cpp's with-imatrix type rules. The same options give identical
// bytes. Throws rf::Error (2 for an unknown shape).
ModelWriteTotals make_model(const MakeModelOptions &opt);

} // namespace rf

namespace rf {

// "[ 3/291] blk.0.attn_q.weight  f32 -> q4_K  [4096, 4096]  64.00 MiB -> 9.00 MiB" (quantize)
// or "[ 3/291] blk.0.attn_q.weight  q4_K  [4096, 4096]  9.00 MiB" (generated).
std::string describe_tensor_event(const TensorWriteEvent &ev);
std::string format_mib(uint64_t bytes); // "9.00 MiB"

} // namespace rf
