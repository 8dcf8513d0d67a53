// Quantization mixes ("file types" such as Q4_K_M): which element type each tensor of a model
// gets. Mirrors llama.cpp's llama_tensor_get_type (src/llama-quant.cpp) for LLaMA-family
// models, with or without an importance matrix (MixModelInfo::has_imatrix), so
// `rocmforge quantize IN OUT Q4_K_M` picks the same per-tensor types as `llama-quantize ... Q4_K_M`.
//
// Usage (the counters advance like llama.cpp's, so call once per tensor in file order):
//     QuantMix mix;
//     if (!mix_from_name("Q4_K_M", &mix)) -> usage error
//     MixModelInfo info = mix_model_info(all_tensor_names, n_layer, n_head, n_head_kv, n_expert);
//     MixCounters counters;
//     for (tensor t : tensors in file order)
//         int type = choose_tensor_type(mix, info, counters, t.name, t.ne, t.n_dims, t.type);
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rf {

enum class QuantMix {
    F32, F16, BF16,
    Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
    Q2_K, Q3_K_S, Q3_K_M, Q3_K_L, Q4_K_S, Q4_K_M, Q5_K_S, Q5_K_M, Q6_K,
    MXFP4_MOE, // llama.cpp: expert tensors (ne[2] > 1) MXFP4, every other tensor Q8_0
    IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, // the i-quant / ternary mixes that need no importance matrix
    IQ3_S, IQ3_M,                 // grid i-quant mixes that work without one too
    // Mixes with tensors that need an importance matrix (mix_needs_imatrix).
    IQ3_XXS, IQ2_XXS, IQ2_XS, IQ2_S, IQ2_M, IQ1_S, IQ1_M,
    // ROCmForge extensions (no llama.cpp file type): every quantizable weight in the format,
    // output.weight (and a tied token_embd) Q8_0, like MXFP4_MOE does for its output.
    MXFP4, MXFP6_E2M3, MXFP6_E3M2,
};

// Case-insensitive ("q4_k_m", "Q4_K_M"). False for unknown names (and for the llama.cpp mixes
// IQ3_XS and Q2_K_S, which ROCmForge does not offer).
bool mix_from_name(std::string_view name, QuantMix *out);
const char *mix_name(QuantMix mix);        // canonical spelling, e.g. "Q4_K_M"
int mix_default_type(QuantMix mix);        // rf_type most tensors get (Q4_K for Q4_K_M)
// llama.cpp's general.file_type value (LLAMA_FTYPE_*), or -1 for the ROCmForge-only mixes.
int mix_llama_ftype(QuantMix mix);
// Name of a general.file_type value (llama.cpp's LLAMA_FTYPE_*; the "guessed" flag 1024 is
// ignored): the mix name for the mixes above, llama.cpp's for the others (IQ*, TQ*, Q2_K_S);
// "" for a value llama.cpp does not define.
std::string llama_ftype_name(int64_t ftype);
// True for the mixes llama-quantize refuses without an importance matrix because some of their
// tensors get a type that needs one (tensor_needs_imatrix): IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS,
// IQ2_S, IQ2_M, IQ3_XXS (its attn_q/attn_k are IQ2_S), and llama.cpp's IQ3_XS and Q2_K_S
// (case-insensitive).
bool mix_needs_imatrix(std::string_view name);
// llama.cpp's tensor_requires_imatrix: a tensor stored as IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S
// or IQ3_XXS needs importance data, except token_embd.weight and output.weight.
bool tensor_needs_imatrix(const std::string &tensor_name, int type);
// All supported mix names, for help texts.
std::vector<std::string> mix_names();

// Model facts the rules need (llama.cpp takes them from the hparams and a first pass over the
// tensor names).
struct MixModelInfo {
    int n_layer = 0;          // block count: range of the ffn_down/ffn_gate/ffn_up counters
    int n_attention_wv = 0;   // number of attn_v / attn_qkv / attn_kv_b tensors in the model
    int n_gqa = 1;            // n_head / n_head_kv (0 if n_head_kv == 0, as llama.cpp)
    int n_expert = 0;         // MoE experts; > 1 makes the layer index come from "blk.N."
    bool has_output = true;   // false: token_embd is tied to the output and gets its type
    bool is_70b = false;      // llama.cpp's LLM_TYPE_70B: attn_v Q3_K/Q4_K bumped to Q5_K
    bool has_imatrix = false; // quantizing with an importance matrix (changes IQ3_XXS, IQ4_*, Q4_0, Q5_0 rules)
};

// Fills n_attention_wv and has_output from the names of all tensors of the model.
MixModelInfo mix_model_info(const std::vector<std::string> &tensor_names, int n_layer,
                            int n_head, int n_head_kv, int n_expert = 0, bool is_70b = false);

// Per-kind running indices (llama.cpp's qs.i_attention_wv, i_ffn_down, ...).
struct MixCounters {
    int i_attention_wv = 0;
    int i_ffn_down = 0;
    int i_ffn_gate = 0;
    int i_ffn_up = 0;
};

// True if llama.cpp would quantize the tensor at all: 2-D or 3-D, name ends in "weight" and is
// not a norm, expert router (ffn_gate_inp), positional/token-type embedding or another small
// tensor llama.cpp keeps as is.
bool tensor_is_quantizable(const std::string &tensor_name, int n_dims);

// The rf_type to store tensor `tensor_name` (shape ne[0..3], n_dims dims, current type
// src_type) in under `mix`:
//  - not quantizable (1-D tensors, norms, ...): src_type unchanged;
//  - F32/F16/BF16 mixes: every quantizable tensor gets that type;
//  - otherwise llama.cpp's per-tensor rules (output.weight -> Q6_K, attn_v/ffn_down bumped on
//    the layers use_more_bits() selects, ...) unless `pure`, then the row-length fallback:
//    when ne[0] is not a multiple of the block size, Q2_K/Q3_K -> Q4_0, Q4_K -> Q5_0,
//    Q5_K -> Q5_1, Q6_K -> Q8_0, IQ1_S..IQ3_S and IQ4_XS -> IQ4_NL, TQ1_0/TQ2_0 -> Q4_0, MXFP4/MXFP6 -> F16
//    (a ROCmForge choice; llama.cpp has no MX fallback), and F16 when even that does not fit.
// Advances `counters` exactly where llama.cpp does. Throws rf::Error when no type fits (a
// block-32 type with ne[0] % 32 != 0, as llama.cpp does) or for a malformed layer name in an
// MoE model.
int choose_tensor_type(QuantMix mix, const MixModelInfo &model, MixCounters &counters,
                       const std::string &tensor_name, const int64_t ne[4], int n_dims,
                       int src_type, bool pure = false);

} // namespace rf
