// Hyperparameters from GGUF metadata (`<arch>.*` keys, as llama.cpp names them in llama-arch.cpp)
// and what each architecture adds to the llama graph (as llama.cpp's llama_model::load_hparams).
#include <cmath>
#include <string>

#include "rocmforge/error.h"
#include "rocmforge/escape.h"
#include "rocmforge/model.h"
#include "deepseek2.h"

namespace rf {

namespace {

struct KeyReader {
    const gguf::File &f;
    std::string arch;

    std::string key(const char *suffix) const { return arch + "." + suffix; }

    const gguf::Value *find_scalar(const std::string &k) const {
        const gguf::Value *v = f.find(k);
        if (v && (v->is_array() || v->is_string()))
            throw Error(f.path() + ": metadata key '" + k + "' must be a number, found " +
                        gguf::value_type_name(v->type) + " (per-layer arrays are not supported)");
        return v;
    }
    int64_t get_int(const char *suffix, int64_t def, bool required) const {
        const std::string k = key(suffix);
        const gguf::Value *v = find_scalar(k);
        if (!v) {
            if (required) throw Error(f.path() + ": missing metadata key '" + k + "'");
            return def;
        }
        if (!v->is_integer()) throw Error(f.path() + ": metadata key '" + k + "' must be an integer");
        return v->as_int();
    }
    double get_float(const char *suffix, double def) const {
        const gguf::Value *v = find_scalar(key(suffix));
        return v ? v->as_float() : def;
    }
};

void require_positive(const gguf::File &f, const std::string &key, int64_t v) {
    if (v <= 0) throw Error(f.path() + ": metadata key '" + key + "' must be positive, got " + std::to_string(v));
}

struct ArchEntry {
    const char *name;
    ModelArch arch;
    int rope_mode;
};
constexpr ArchEntry kArchs[] = {
    {"llama", ModelArch::Llama, RF_ROPE_NORMAL}, {"mistral", ModelArch::Llama, RF_ROPE_NORMAL},
    {"qwen2", ModelArch::Qwen2, RF_ROPE_NEOX},   {"qwen3", ModelArch::Qwen3, RF_ROPE_NEOX},
    {"gemma2", ModelArch::Gemma2, RF_ROPE_NEOX}, {"gemma3", ModelArch::Gemma3, RF_ROPE_NEOX},
    {"phi3", ModelArch::Phi3, RF_ROPE_NEOX},     {"qwen3moe", ModelArch::Qwen3Moe, RF_ROPE_NEOX},
    {"qwen2moe", ModelArch::Qwen2Moe, RF_ROPE_NEOX}, {"gpt-oss", ModelArch::GptOss, RF_ROPE_NEOX},
    {"bert", ModelArch::Bert, RF_ROPE_NORMAL},   {"nomic-bert", ModelArch::NomicBert, RF_ROPE_NEOX},
    {"deepseek2", ModelArch::DeepSeek2, RF_ROPE_NORMAL},
    {"qwen35", ModelArch::Qwen35, RF_ROPE_NEOX}, {"qwen35moe", ModelArch::Qwen35Moe, RF_ROPE_NEOX},
    {"qwen3next", ModelArch::Qwen3Next, RF_ROPE_NEOX},
};

// llama.cpp's LLAMA_MAX_EXPERTS.
constexpr int64_t kMaxExperts = 512;

// Experts: <arch>.expert_count / expert_used_count, checked as llama.cpp's loader checks them.
// Only llama (Mixtral), qwen3moe, qwen2moe and gpt-oss files have an expert graph; experts in any
// other architecture are refused by name.
void read_expert_keys(ModelHparams &hp, const KeyReader &r) {
    const bool moe_only = hp.arch == ModelArch::Qwen3Moe || hp.arch == ModelArch::Qwen2Moe || hp.arch == ModelArch::GptOss ||
                          hp.arch == ModelArch::DeepSeek2 || hp.arch == ModelArch::Qwen35Moe || hp.arch == ModelArch::Qwen3Next;
    const bool moe_arch = hp.arch == ModelArch::Llama || moe_only;
    hp.n_expert = r.get_int("expert_count", 0, moe_only);
    if (hp.n_expert < 0 || hp.n_expert > kMaxExperts)
        throw Error(r.f.path() + ": " + r.key("expert_count") + " = " + std::to_string(hp.n_expert) + " outside 0.." +
                    std::to_string(kMaxExperts));
    if (hp.n_expert == 0) {
        if (moe_only) throw Error(r.f.path() + ": " + r.key("expert_count") + " must be positive for " + hp.arch_name);
        return;
    }
    if (!moe_arch)
        throw Error(r.f.path() + ": mixture-of-experts " + hp.arch_name + " models (" + r.key("expert_count") + " = " +
                    std::to_string(hp.n_expert) + ") are not supported (experts: llama, qwen3moe, qwen2moe, gpt-oss, deepseek2, qwen35moe, qwen3next)");
    hp.n_expert_used = r.get_int("expert_used_count", 0, true);
    if (hp.n_expert_used < 1 || hp.n_expert_used > hp.n_expert)
        throw Error(r.f.path() + ": " + r.key("expert_used_count") + " = " + std::to_string(hp.n_expert_used) +
                    " must be in 1.." + std::to_string(hp.n_expert) + " (" + r.key("expert_count") + ")");
    // gpt-oss: required, as llama.cpp's loader reads it.
    hp.n_ff_exp = moe_only ? r.get_int("expert_feed_forward_length", hp.n_ff / hp.n_expert_used,
                                        hp.arch == ModelArch::GptOss || hp.arch == ModelArch::DeepSeek2 ||
                                            hp.arch == ModelArch::Qwen35Moe)
                           : hp.n_ff;
    require_positive(r.f, r.key("expert_feed_forward_length"), hp.n_ff_exp);
    if (hp.arch == ModelArch::Qwen2Moe || hp.arch == ModelArch::Qwen3Next) {
        // llama.cpp: 0 or absent means n_ff.
        hp.n_ff_shexp = r.get_int("expert_shared_feed_forward_length", 0, false);
        if (hp.n_ff_shexp == 0) hp.n_ff_shexp = hp.n_ff;
        require_positive(r.f, r.key("expert_shared_feed_forward_length"), hp.n_ff_shexp);
    }
    if (hp.arch == ModelArch::Qwen35Moe) { // the shared expert, when the key says it has one
        hp.n_ff_shexp = r.get_int("expert_shared_feed_forward_length", 0, false);
        if (hp.n_ff_shexp < 0) throw Error(r.f.path() + ": " + r.key("expert_shared_feed_forward_length") + " must not be negative");
    }
}

// YaRN as llama.cpp sets it up: the original context (default: the training context), ext_factor
// 1 unless the file says otherwise (llama_context: a negative yarn_ext_factor means 1 for yarn),
// attn_factor 1 (times rope.scaling.attn_factor), beta_fast 32, beta_slow 1 (llama_hparams'
// defaults), each overridable by the rope.scaling.yarn_* keys of newer converters.
void read_yarn_keys(ModelHparams &hp, const KeyReader &r) {
    hp.rope_yarn = true;
    const int64_t orig = r.get_int("rope.scaling.original_context_length", hp.n_ctx_train, false);
    if (orig <= 0 || orig > INT32_MAX)
        throw Error(r.f.path() + ": " + r.key("rope.scaling.original_context_length") + " = " + std::to_string(orig) + " must be in 1.." +
                    std::to_string(INT32_MAX));
    hp.yarn.n_ctx_orig = (int)orig;
    hp.n_ctx_orig = orig;
    hp.yarn.ext_factor = (float)r.get_float("rope.scaling.yarn_ext_factor", 1.0);
    if (hp.yarn.ext_factor < 0) hp.yarn.ext_factor = 1.0f;
    // llama_context: get_mscale(factor) / (1 + 0.1 ln factor) (= 1: ggml_rope_ext applies the
    // magnitude itself) times rope.scaling.attn_factor; a yarn_attn_factor key replaces the first.
    hp.yarn.attn_factor = (float)(r.get_float("rope.scaling.yarn_attn_factor", 1.0) * r.get_float("rope.scaling.attn_factor", 1.0));
    hp.yarn.beta_fast = (float)r.get_float("rope.scaling.yarn_beta_fast", 32.0);
    hp.yarn.beta_slow = (float)r.get_float("rope.scaling.yarn_beta_slow", 1.0);
    if (!(hp.yarn.attn_factor > 0) || !(hp.yarn.beta_fast > 0) || !(hp.yarn.beta_slow > 0))
        throw Error(r.f.path() + ": YaRN's attn_factor, beta_fast and beta_slow must be positive");
}

std::string supported_arch_names() {
    std::string s;
    for (const ArchEntry &a : kArchs) s += (s.empty() ? "" : ", ") + std::string(a.name);
    return s;
}

// The architecture's additions to the llama graph. Gemma's query scale: the 27B models (46 / 62
// layers) scale by 1/sqrt(n_embd / n_head) (query_pre_attn_scalar), the others by the head size.
void read_family_keys(ModelHparams &hp, const KeyReader &r) {
    hp.attn_scale = 1.0f / std::sqrt((float)hp.head_dim);
    hp.rope_freq_base_swa = hp.rope_freq_base;
    hp.rope_freq_scale_swa = hp.rope_freq_scale;
    switch (hp.arch) {
    case ModelArch::Llama: case ModelArch::Qwen2: case ModelArch::Qwen2Moe: break;
    case ModelArch::DeepSeek2: break; // deepseek2.cpp, after the expert keys
    case ModelArch::Qwen3: case ModelArch::Qwen3Moe: hp.qk_norm = true; break;
    case ModelArch::Gemma2: case ModelArch::Gemma3: {
        const bool g3 = hp.arch == ModelArch::Gemma3;
        hp.embd_scale = hp.post_norms = hp.ffn_gelu = true;
        hp.qk_norm = g3;
        hp.n_swa = r.get_int("attention.sliding_window", 0, false);
        if (hp.n_swa < 0) throw Error(r.f.path() + ": " + r.key("attention.sliding_window") + " must not be negative");
        hp.swa_pattern = g3 ? 6 : 2; // gemma3: 5 local layers, then a global one; gemma2 alternates
        if (g3) hp.rope_freq_base_swa = 10000.0f, hp.rope_freq_scale_swa = 1.0f;
        // Without the keys gemma2 caps at 50 / 30 (llama.cpp's defaults), gemma3 not at all.
        if (!g3) hp.attn_softcap = (float)r.get_float("attn_logit_softcapping", 50.0);
        hp.final_softcap = (float)r.get_float("final_logit_softcapping", g3 ? 0.0 : 30.0);
        if (hp.attn_softcap < 0 || hp.final_softcap < 0) throw Error(r.f.path() + ": soft-capping values must not be negative");
        if (hp.n_layer == (g3 ? 62 : 46)) hp.attn_scale = 1.0f / std::sqrt((float)(hp.n_embd / hp.n_head));
        break;
    }
    case ModelArch::Bert: case ModelArch::NomicBert: {
        hp.encoder = true;
        hp.norm_eps = (float)r.get_float("attention.layer_norm_epsilon", 1e-12);
        if (!(hp.norm_eps > 0)) throw Error(r.f.path() + ": " + r.key("attention.layer_norm_epsilon") + " must be positive");
        // llama.cpp reads <arch>.attention.causal for these (default false); only false is served.
        const gguf::Value *causal = r.f.find(r.key("attention.causal"));
        if (causal && causal->as_int() != 0)
            throw Error(r.f.path() + ": " + r.key("attention.causal") + " = true: causal encoders are not supported");
        if (hp.n_head_kv != hp.n_head)
            throw Error(r.f.path() + ": " + hp.arch_name + " with grouped KV heads is not supported");
        break;
    }
    case ModelArch::GptOss:
        // llama.cpp's LLM_ARCH_OPENAI_MOE: the window is required; even layers are local
        // (set_swa_pattern(2)) and keep the global RoPE; the SwiGLU constants are its graph's.
        hp.n_swa = r.get_int("attention.sliding_window", 0, true);
        require_positive(r.f, r.key("attention.sliding_window"), hp.n_swa);
        hp.swa_pattern = 2;
        hp.attn_sinks = true;
        hp.swiglu_alpha = 1.702f;
        hp.swiglu_limit = 7.0f;
        break;
    case ModelArch::Qwen35: case ModelArch::Qwen35Moe: case ModelArch::Qwen3Next:
        hp.qk_norm = true;
        read_qwen35_keys(hp, r.f);
        break;
    case ModelArch::Phi3:
        hp.n_ctx_orig = r.get_int("rope.scaling.original_context_length", hp.n_ctx_train, false);
        hp.rope_attn_factor = (float)r.get_float("rope.scaling.attn_factor", 1.0);
        if (!(hp.rope_attn_factor > 0)) throw Error(r.f.path() + ": " + r.key("rope.scaling.attn_factor") + " must be positive");
        break;
    }
}

} // namespace

ModelHparams read_hparams(const gguf::File &f) {
    ModelHparams hp;
    const gguf::Value *arch = f.find("general.architecture");
    if (!arch || !arch->is_string()) throw Error(f.path() + ": missing metadata key 'general.architecture'");
    hp.arch_name = arch->as_string();
    const ArchEntry *entry = nullptr;
    for (const ArchEntry &a : kArchs)
        if (hp.arch_name == a.name) entry = &a;
    if (!entry)
        throw Error(f.path() + ": unsupported model architecture " + quote_name(hp.arch_name) +
                    " (supported: " + supported_arch_names() + ")");
    hp.arch = entry->arch;
    hp.rope_mode = entry->rope_mode;

    KeyReader r{f, hp.arch_name};
    hp.n_ctx_train = r.get_int("context_length", 0, true);
    hp.n_embd = r.get_int("embedding_length", 0, true);
    hp.n_layer = r.get_int("block_count", 0, true);
    // qwen35moe: its experts' widths are the FFN (llama.cpp reads no dense width for it).
    const bool ff_optional = hp.arch == ModelArch::Qwen35Moe;
    hp.n_ff = r.get_int("feed_forward_length", 0, !ff_optional);
    hp.n_head = r.get_int("attention.head_count", 0, true);
    hp.n_head_kv = r.get_int("attention.head_count_kv", hp.n_head, false);
    require_positive(f, r.key("context_length"), hp.n_ctx_train);
    require_positive(f, r.key("embedding_length"), hp.n_embd);
    require_positive(f, r.key("block_count"), hp.n_layer);
    if (!ff_optional || hp.n_ff != 0) require_positive(f, r.key("feed_forward_length"), hp.n_ff);
    require_positive(f, r.key("attention.head_count"), hp.n_head);
    require_positive(f, r.key("attention.head_count_kv"), hp.n_head_kv);
    if (hp.n_head % hp.n_head_kv != 0)
        throw Error(f.path() + ": attention.head_count (" + std::to_string(hp.n_head) +
                    ") is not a multiple of attention.head_count_kv (" + std::to_string(hp.n_head_kv) + ")");

    if (!r.find_scalar(r.key("attention.key_length")) && hp.n_embd % hp.n_head != 0)
        throw Error(f.path() + ": embedding_length " + std::to_string(hp.n_embd) +
                    " is not a multiple of attention.head_count " + std::to_string(hp.n_head));
    hp.head_dim = r.get_int("attention.key_length", hp.n_embd / hp.n_head, false);
    const int64_t v_len = r.get_int("attention.value_length", hp.head_dim, false);
    require_positive(f, r.key("attention.key_length"), hp.head_dim);
    if (v_len != hp.head_dim && hp.arch != ModelArch::DeepSeek2) // deepseek2: V heads of their own
        throw Error(f.path() + ": attention.value_length (" + std::to_string(v_len) +
                    ") differs from attention.key_length (" + std::to_string(hp.head_dim) + "): not supported");

    hp.n_rot = r.get_int("rope.dimension_count", hp.head_dim, false);
    if (hp.n_rot <= 0 || hp.n_rot > hp.head_dim || hp.n_rot % 2 != 0)
        throw Error(f.path() + ": rope.dimension_count " + std::to_string(hp.n_rot) +
                    " must be even and in 2.." + std::to_string(hp.head_dim));

    hp.rms_eps = (float)r.get_float("attention.layer_norm_rms_epsilon", 1e-5);
    if (!(hp.rms_eps > 0)) throw Error(f.path() + ": attention.layer_norm_rms_epsilon must be positive");
    hp.rope_freq_base = (float)r.get_float("rope.freq_base", 10000.0);
    if (!(hp.rope_freq_base > 0)) throw Error(f.path() + ": rope.freq_base must be positive");

    // Linear position scaling (llama.cpp: freq_scale = 1 / factor; 0 or absent = 1).
    const gguf::Value *stype = f.find(r.key("rope.scaling.type"));
    const std::string scaling = stype && stype->is_string() ? stype->as_string() : "none";
    // phi3's su/longrope is its rope_factors_long/short tensors plus attn_factor (read below).
    const bool longrope = hp.arch == ModelArch::Phi3 && (scaling == "longrope" || scaling == "su");
    if (scaling != "none" && scaling != "linear" && scaling != "yarn" && !longrope)
        throw Error(f.path() + ": rope.scaling.type " + quote_name(scaling) + " is not supported (none, linear, yarn)");
    double factor = r.get_float("rope.scaling.factor", 0.0);
    if (factor == 0.0) factor = r.get_float("rope.scale_linear", 0.0);
    if (factor < 0) throw Error(f.path() + ": rope.scaling.factor must not be negative");
    hp.rope_freq_scale = factor == 0.0 ? 1.0f : (float)(1.0 / factor);
    if (scaling == "yarn") read_yarn_keys(hp, r);
    read_family_keys(hp, r);
    read_expert_keys(hp, r);
    if (hp.arch == ModelArch::DeepSeek2) read_deepseek2_keys(hp, f);

    const gguf::TensorInfo *emb = f.find_tensor("token_embd.weight");
    if (!emb) throw Error(f.path() + ": missing tensor 'token_embd.weight'");
    hp.n_vocab = emb->ne[1];
    require_positive(f, "token_embd.weight ne[1]", hp.n_vocab);
    return hp;
}

} // namespace rf
