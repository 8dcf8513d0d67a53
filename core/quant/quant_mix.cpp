// Per-tensor type choice of llama.cpp's quantization mixes (llama_tensor_get_type_impl and
// tensor_type_fallback in src/llama-quant.cpp), restricted to LLaMA-family architectures.
#include "rocmforge/quant_mix.h"

#include <cstdio>
#include <cstring>

#include "rocmforge/error.h"
#include "rocmforge/types.h"

namespace rf {

namespace {

struct MixEntry {
    QuantMix mix;
    const char *name;
    int default_type;
    int llama_ftype;
};

constexpr MixEntry kMixes[] = {
    {QuantMix::F32, "F32", RF_TYPE_F32, 0},
    {QuantMix::F16, "F16", RF_TYPE_F16, 1},
    {QuantMix::BF16, "BF16", RF_TYPE_BF16, 32},
    {QuantMix::Q4_0, "Q4_0", RF_TYPE_Q4_0, 2},
    {QuantMix::Q4_1, "Q4_1", RF_TYPE_Q4_1, 3},
    {QuantMix::Q5_0, "Q5_0", RF_TYPE_Q5_0, 8},
    {QuantMix::Q5_1, "Q5_1", RF_TYPE_Q5_1, 9},
    {QuantMix::Q8_0, "Q8_0", RF_TYPE_Q8_0, 7},
    {QuantMix::Q2_K, "Q2_K", RF_TYPE_Q2_K, 10},
    {QuantMix::Q3_K_S, "Q3_K_S", RF_TYPE_Q3_K, 11},
    {QuantMix::Q3_K_M, "Q3_K_M", RF_TYPE_Q3_K, 12},
    {QuantMix::Q3_K_L, "Q3_K_L", RF_TYPE_Q3_K, 13},
    {QuantMix::Q4_K_S, "Q4_K_S", RF_TYPE_Q4_K, 14},
    {QuantMix::Q4_K_M, "Q4_K_M", RF_TYPE_Q4_K, 15},
    {QuantMix::Q5_K_S, "Q5_K_S", RF_TYPE_Q5_K, 16},
    {QuantMix::Q5_K_M, "Q5_K_M", RF_TYPE_Q5_K, 17},
    {QuantMix::Q6_K, "Q6_K", RF_TYPE_Q6_K, 18},
    {QuantMix::MXFP4_MOE, "MXFP4_MOE", RF_TYPE_MXFP4, 38},
    {QuantMix::IQ4_NL, "IQ4_NL", RF_TYPE_IQ4_NL, 25},
    {QuantMix::IQ4_XS, "IQ4_XS", RF_TYPE_IQ4_XS, 30},
    {QuantMix::TQ1_0, "TQ1_0", RF_TYPE_TQ1_0, 36},
    {QuantMix::TQ2_0, "TQ2_0", RF_TYPE_TQ2_0, 37},
    {QuantMix::IQ3_S, "IQ3_S", RF_TYPE_IQ3_S, 26},
    {QuantMix::IQ3_M, "IQ3_M", RF_TYPE_IQ3_S, 27},
    {QuantMix::IQ3_XXS, "IQ3_XXS", RF_TYPE_IQ3_XXS, 23},
    {QuantMix::IQ2_XXS, "IQ2_XXS", RF_TYPE_IQ2_XXS, 19},
    {QuantMix::IQ2_XS, "IQ2_XS", RF_TYPE_IQ2_XS, 20},
    {QuantMix::IQ2_S, "IQ2_S", RF_TYPE_IQ2_XS, 28}, // llama.cpp: IQ2_S is mostly IQ2_XS
    {QuantMix::IQ2_M, "IQ2_M", RF_TYPE_IQ2_S, 29},
    {QuantMix::IQ1_S, "IQ1_S", RF_TYPE_IQ1_S, 24},
    {QuantMix::IQ1_M, "IQ1_M", RF_TYPE_IQ1_M, 31},
    {QuantMix::MXFP4, "MXFP4", RF_TYPE_MXFP4, -1},
    {QuantMix::MXFP6_E2M3, "MXFP6_E2M3", RF_TYPE_MXFP6_E2M3, -1},
    {QuantMix::MXFP6_E3M2, "MXFP6_E3M2", RF_TYPE_MXFP6_E3M2, -1},
};

const MixEntry &entry(QuantMix mix) {
    for (const MixEntry &e : kMixes)
        if (e.mix == mix) return e;
    throw Error("quant mix: unknown mix id " + std::to_string(static_cast<int>(mix)));
}

bool iequal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 'a' + 'A');
        if (y >= 'a' && y <= 'z') y = static_cast<char>(y - 'a' + 'A');
        if (x != y) return false;
    }
    return true;
}

bool contains(const std::string &s, const char *part) { return s.find(part) != std::string::npos; }

enum class Category { TokenEmbd, AttnQ, AttnV, AttnK, AttnOutput, FfnUp, FfnGate, FfnDown, Output, Other };

// llama.cpp's tensor_get_category; attn_qkv and attn_kv_b count as attn_v-like.
Category category_of(const std::string &name) {
    if (name == "output.weight") return Category::Output;
    if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return Category::TokenEmbd;
    if (contains(name, "attn_qkv.weight") || contains(name, "attn_kv_b.weight") ||
        contains(name, "attn_v.weight"))
        return Category::AttnV;
    if (contains(name, "attn_k.weight")) return Category::AttnK;
    if (contains(name, "attn_q.weight")) return Category::AttnQ;
    if (contains(name, "attn_output.weight")) return Category::AttnOutput;
    if (contains(name, "ffn_up")) return Category::FfnUp;
    if (contains(name, "ffn_gate")) return Category::FfnGate;
    if (contains(name, "ffn_down")) return Category::FfnDown;
    return Category::Other;
}

// Layers that get more bits: the first and last eighth and every third layer in between.
bool use_more_bits(int i_layer, int n_layers) {
    return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 || (i_layer - n_layers / 8) % 3 == 2;
}

// Layer index for the ffn rules: the running counter, or for MoE models the "blk.N." number
// (experts are not stored in layer order).
int layer_index(const MixModelInfo &m, int counter, const std::string &name) {
    if (m.n_expert <= 1) return counter;
    int i_layer = -1;
    if (std::sscanf(name.c_str(), "blk.%d.", &i_layer) != 1)
        throw Error("quant mix: cannot determine the layer of tensor '" + name + "'");
    if (i_layer < 0 || i_layer >= m.n_layer)
        throw Error("quant mix: layer " + std::to_string(i_layer) + " of tensor '" + name +
                    "' is outside [0, " + std::to_string(m.n_layer) + ")");
    return i_layer;
}

bool is_mx_only(QuantMix mix) {
    return mix == QuantMix::MXFP4 || mix == QuantMix::MXFP6_E2M3 || mix == QuantMix::MXFP6_E3M2;
}

// The mixes llama.cpp gives its own branch (2-bit and 1-bit i-quants).
bool is_low_bit(QuantMix mix) {
    using M = QuantMix;
    return mix == M::IQ2_XXS || mix == M::IQ2_XS || mix == M::IQ1_S || mix == M::IQ2_S || mix == M::IQ2_M ||
           mix == M::IQ1_M;
}

// llama.cpp's branch for the low-bit mixes: attn_v and the first eighth of ffn_down get
// more bits, attn_output too. Unlike the other mixes, ffn_gate/ffn_up counters stay.
int low_bit_type(QuantMix mix, const MixModelInfo &m, MixCounters &c, Category cat, int new_type) {
    using M = QuantMix;
    const bool s_or_m = mix == M::IQ2_S || mix == M::IQ2_M;
    if (cat == Category::AttnV) {
        if (m.n_gqa >= 4 || m.n_expert >= 4) new_type = RF_TYPE_Q4_K;
        else new_type = s_or_m ? RF_TYPE_IQ3_S : RF_TYPE_Q2_K;
        ++c.i_attention_wv;
    } else if (m.n_expert == 8 && cat == Category::AttnK) {
        new_type = RF_TYPE_Q4_K;
    } else if (cat == Category::FfnDown) {
        if (c.i_ffn_down < m.n_layer / 8) new_type = s_or_m ? RF_TYPE_IQ3_S : RF_TYPE_Q2_K;
        ++c.i_ffn_down;
    } else if (cat == Category::AttnOutput) {
        if (m.n_expert == 8) new_type = RF_TYPE_Q5_K;
        else if (mix == M::IQ1_S || mix == M::IQ1_M) new_type = RF_TYPE_IQ2_XXS;
        else if (s_or_m) new_type = RF_TYPE_IQ3_S;
    }
    return new_type;
}

// llama_tensor_get_type_impl for the mixes we support (arch != FALCON).
int mixed_type(QuantMix mix, const MixModelInfo &m, MixCounters &c, const std::string &name,
               const int64_t ne[4], Category cat, int new_type) {
    using M = QuantMix;
    if (cat == Category::Output || (!m.has_output && cat == Category::TokenEmbd)) {
        const int64_t qk = type_traits(new_type)->block_size;
        if (mix == M::MXFP4_MOE || is_mx_only(mix)) return RF_TYPE_Q8_0;
        if (ne[0] % qk != 0) return RF_TYPE_Q8_0;
        if (is_low_bit(mix) || mix == M::IQ3_XXS) return RF_TYPE_Q5_K;
        return new_type != RF_TYPE_Q8_0 ? RF_TYPE_Q6_K : new_type;
    }
    if (mix == M::MXFP4_MOE) return ne[2] > 1 ? RF_TYPE_MXFP4 : RF_TYPE_Q8_0;
    if (cat == Category::TokenEmbd) {
        if (mix == M::TQ1_0 || mix == M::TQ2_0) return RF_TYPE_Q4_K;
        if (mix == M::IQ2_XXS || mix == M::IQ2_XS || mix == M::IQ1_S || mix == M::IQ1_M) return RF_TYPE_Q2_K;
        if (mix == M::IQ2_S || mix == M::IQ2_M || mix == M::IQ3_XXS) return RF_TYPE_IQ3_S;
        return new_type;
    }
    if (is_mx_only(mix)) return new_type;
    if (is_low_bit(mix)) return low_bit_type(mix, m, c, cat, new_type);
    const bool iq4 = mix == M::IQ4_NL || mix == M::IQ4_XS;
    const bool iq3 = mix == M::IQ3_S || mix == M::IQ3_M || mix == M::IQ3_XXS;

    switch (cat) {
    case Category::AttnV: {
        if (mix == M::Q2_K) new_type = m.n_gqa >= 4 ? RF_TYPE_Q4_K : RF_TYPE_Q3_K;
        else if (mix == M::Q3_K_M) new_type = c.i_attention_wv < 2 ? RF_TYPE_Q5_K : RF_TYPE_Q4_K;
        else if (mix == M::Q3_K_L) new_type = RF_TYPE_Q5_K;
        else if ((mix == M::Q4_K_M || mix == M::Q5_K_M) && use_more_bits(c.i_attention_wv, m.n_attention_wv))
            new_type = RF_TYPE_Q6_K;
        else if (mix == M::Q4_K_S && c.i_attention_wv < 4) new_type = RF_TYPE_Q5_K;
        else if (iq4 && m.n_gqa >= 4) new_type = RF_TYPE_Q5_K;
        else if (mix == M::IQ3_XXS)
            new_type = m.n_gqa >= 4 ? RF_TYPE_Q4_K : !m.has_imatrix ? RF_TYPE_IQ3_S : RF_TYPE_IQ3_XXS;
        else if (mix == M::IQ3_S && m.n_gqa >= 4) new_type = RF_TYPE_Q4_K;
        else if (mix == M::IQ3_M) new_type = RF_TYPE_Q4_K;
        if (m.is_70b && (new_type == RF_TYPE_Q3_K || new_type == RF_TYPE_Q4_K)) new_type = RF_TYPE_Q5_K;
        if (m.n_expert == 8) new_type = RF_TYPE_Q8_0;
        ++c.i_attention_wv;
        break;
    }
    case Category::AttnK:
        if (m.n_expert == 8) new_type = RF_TYPE_Q8_0;
        else if (mix == M::IQ3_XXS) new_type = RF_TYPE_IQ2_S;
        break;
    case Category::AttnQ:
        if (mix == M::IQ3_XXS) new_type = RF_TYPE_IQ2_S;
        break;
    case Category::FfnDown: {
        const int i_layer = layer_index(m, c.i_ffn_down, name);
        const int n_layer = m.n_layer;
        if (mix == M::Q2_K) new_type = RF_TYPE_Q3_K;
        else if (mix == M::Q3_K_M) new_type = i_layer < n_layer / 16 ? RF_TYPE_Q5_K : RF_TYPE_Q4_K;
        else if (mix == M::Q3_K_L) new_type = RF_TYPE_Q5_K;
        else if (mix == M::Q4_K_M) {
            if (use_more_bits(i_layer, n_layer)) new_type = RF_TYPE_Q6_K;
        } else if (mix == M::Q5_K_M && use_more_bits(i_layer, n_layer)) new_type = RF_TYPE_Q6_K;
        else if (mix == M::Q4_K_S && i_layer < n_layer / 8) new_type = RF_TYPE_Q5_K;
        else if (iq4 && i_layer < n_layer / 8 && !m.has_imatrix) new_type = RF_TYPE_Q5_K;
        else if (mix == M::IQ3_XXS && !m.has_imatrix) new_type = i_layer < n_layer / 8 ? RF_TYPE_Q4_K : RF_TYPE_Q3_K;
        else if (mix == M::IQ3_M && (i_layer < n_layer / 8 || (m.n_expert == 8 && use_more_bits(i_layer, n_layer))))
            new_type = RF_TYPE_Q4_K;
        // With an imatrix, llama.cpp guards Q4_0/Q5_0's first ffn_down layers.
        else if ((mix == M::Q4_0 || mix == M::Q5_0) && m.has_imatrix && i_layer < n_layer / 8)
            new_type = mix == M::Q4_0 ? RF_TYPE_Q4_1 : RF_TYPE_Q5_1;
        ++c.i_ffn_down;
        break;
    }
    case Category::AttnOutput:
        if (m.n_expert == 8) {
            if (mix == M::Q2_K || mix == M::Q3_K_S || mix == M::Q3_K_M || mix == M::Q4_K_S || mix == M::Q4_K_M || iq4 ||
                iq3)
                new_type = RF_TYPE_Q5_K;
        } else {
            if (mix == M::Q2_K) new_type = RF_TYPE_Q3_K;
            else if (mix == M::IQ3_XXS) new_type = RF_TYPE_IQ3_S;
            else if (mix == M::IQ3_M) new_type = RF_TYPE_Q4_K;
            else if (mix == M::Q3_K_M) new_type = RF_TYPE_Q4_K;
            else if (mix == M::Q3_K_L) new_type = RF_TYPE_Q5_K;
        }
        break;
    case Category::FfnGate:
        layer_index(m, c.i_ffn_gate, name); // validates the name like llama.cpp
        ++c.i_ffn_gate;
        break;
    case Category::FfnUp:
        layer_index(m, c.i_ffn_up, name);
        ++c.i_ffn_up;
        break;
    default:
        break;
    }
    return new_type;
}

// tensor_type_fallback: a compatible type when ne[0] is not a multiple of the block size.
int fallback_type(const std::string &name, int64_t ncols, int type) {
    const int64_t qk = type_traits(type)->block_size;
    if (ncols % qk == 0) return type;
    int fb;
    switch (type) {
    case RF_TYPE_Q2_K:
    case RF_TYPE_Q3_K:
    case RF_TYPE_TQ1_0:
    case RF_TYPE_TQ2_0: fb = RF_TYPE_Q4_0; break;
    case RF_TYPE_IQ1_S:
    case RF_TYPE_IQ1_M:
    case RF_TYPE_IQ2_XXS:
    case RF_TYPE_IQ2_XS:
    case RF_TYPE_IQ2_S:
    case RF_TYPE_IQ3_XXS:
    case RF_TYPE_IQ3_S:
    case RF_TYPE_IQ4_XS: fb = RF_TYPE_IQ4_NL; break;
    case RF_TYPE_Q4_K: fb = RF_TYPE_Q5_0; break;
    case RF_TYPE_Q5_K: fb = RF_TYPE_Q5_1; break;
    case RF_TYPE_Q6_K: fb = RF_TYPE_Q8_0; break;
    case RF_TYPE_MXFP4:
    case RF_TYPE_MXFP6_E2M3:
    case RF_TYPE_MXFP6_E3M2: fb = RF_TYPE_F16; break; // ROCmForge choice
    default:
        throw Error("quant mix: tensor '" + name + "' has rows of " + std::to_string(ncols) +
                    " elements, not a multiple of the " + type_name(type) + " block size " +
                    std::to_string(qk) + ", and " + type_name(type) + " has no fallback type");
    }
    if (ncols % type_traits(fb)->block_size != 0) fb = RF_TYPE_F16;
    return fb;
}

} // namespace

bool mix_from_name(std::string_view name, QuantMix *out) {
    for (const MixEntry &e : kMixes) {
        if (iequal(name, e.name)) {
            if (out) *out = e.mix;
            return true;
        }
    }
    return false;
}

const char *mix_name(QuantMix mix) { return entry(mix).name; }
int mix_default_type(QuantMix mix) { return entry(mix).default_type; }
int mix_llama_ftype(QuantMix mix) { return entry(mix).llama_ftype; }

std::string llama_ftype_name(int64_t ftype) {
    constexpr int64_t kGuessed = 1024; // LLAMA_FTYPE_GUESSED: llama.cpp inferred the value
    if (ftype >= kGuessed) ftype -= kGuessed;
    for (const MixEntry &e : kMixes)
        if (e.llama_ftype >= 0 && e.llama_ftype == ftype) return e.name;
    // llama.cpp file types without a ROCmForge mix (src/llama-model-loader.cpp, llama_ftype_name).
    static const struct {
        int64_t ftype;
        const char *name;
    } kOthers[] = {
        {4, "Q4_1_SOME_F16"}, {21, "Q2_K_S"}, {22, "IQ3_XS"},
    };
    for (const auto &o : kOthers)
        if (o.ftype == ftype) return o.name;
    return "";
}

bool mix_needs_imatrix(std::string_view name) {
    static const char *const kNeed[] = {"IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M",
                                        "IQ3_XXS", "IQ3_XS", "Q2_K_S"};
    for (const char *n : kNeed)
        if (iequal(name, n)) return true;
    return false;
}

bool tensor_needs_imatrix(const std::string &tensor_name, int type) {
    if (tensor_name == "token_embd.weight" || tensor_name == "per_layer_token_embd.weight" ||
        tensor_name == "output.weight")
        return false;
    return type == RF_TYPE_IQ3_XXS || type == RF_TYPE_IQ2_XXS || type == RF_TYPE_IQ2_XS || type == RF_TYPE_IQ2_S ||
           type == RF_TYPE_IQ1_M || type == RF_TYPE_IQ1_S;
}

std::vector<std::string> mix_names() {
    std::vector<std::string> names;
    for (const MixEntry &e : kMixes) names.emplace_back(e.name);
    return names;
}

MixModelInfo mix_model_info(const std::vector<std::string> &tensor_names, int n_layer, int n_head,
                            int n_head_kv, int n_expert, bool is_70b) {
    MixModelInfo m;
    m.n_layer = n_layer;
    m.n_gqa = n_head_kv > 0 ? n_head / n_head_kv : 0;
    m.n_expert = n_expert;
    m.is_70b = is_70b;
    m.has_output = false;
    for (const std::string &name : tensor_names) {
        const Category cat = category_of(name);
        if (cat == Category::AttnV) ++m.n_attention_wv;
        if (cat == Category::Output) m.has_output = true;
    }
    return m;
}

bool tensor_is_quantizable(const std::string &name, int n_dims) {
    if (n_dims < 2) return false;
    if (name.size() < 6 || name.compare(name.size() - 6, 6, "weight") != 0) return false;
    static const char *const kKeep[] = {
        "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
        "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
        "indexer.q_proj.weight", "time_mix_first.weight", "time_mix_w0.weight",
        "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_v0.weight", "time_mix_v1.weight",
        "time_mix_v2.weight", "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight",
        "time_mix_g1.weight", "time_mix_g2.weight", "time_mix_decay_w1.weight",
        "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight", "attn_rel_b.weight",
        ".position_embd", ".rel_pos", ".patch_embd", ".patch_merger",
    };
    for (const char *k : kKeep)
        if (contains(name, k)) return false;
    return name != "position_embd.weight" && name != "token_types.weight";
}

int choose_tensor_type(QuantMix mix, const MixModelInfo &model, MixCounters &counters,
                       const std::string &tensor_name, const int64_t ne[4], int n_dims,
                       int src_type, bool pure) {
    if (!tensor_is_quantizable(tensor_name, n_dims)) return src_type;
    if (ne[0] <= 0) throw Error("quant mix: tensor '" + tensor_name + "' has an empty row");
    const int default_type = mix_default_type(mix);
    if (!type_traits(default_type)->quantized) return default_type; // F32/F16/BF16 mixes
    int new_type = default_type;
    if (!pure) new_type = mixed_type(mix, model, counters, tensor_name, ne, category_of(tensor_name), new_type);
    return fallback_type(tensor_name, ne[0], new_type);
}

} // namespace rf
