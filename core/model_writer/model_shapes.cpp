// Shape table for `rocmforge mkmodel`. Numbers come from the models' published configs
// (config.json: hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
// intermediate_size, vocab_size, rope_theta, rms_norm_eps, head_dim, sliding_window,
// attn_logit_softcapping, final_logit_softcapping, num_local_experts / num_experts,
// num_experts_per_tok, moe_intermediate_size). Tensor names as llama.cpp's llama-arch.cpp.
#include "rocmforge/model_shapes.h"
#include "deepseek2_shape.h"
#include "qwen35_shapes.h"

#include <algorithm>
#include <cctype>

namespace rf {

namespace {

std::vector<ModelShape> make_table() {
    std::vector<ModelShape> t;
    ModelShape s;

    // Small llama: fast enough to build at compile time and to run in tests.
    s = {};
    s.name = "tiny"; s.arch = "llama"; s.display_name = "ROCmForge Tiny";
    s.n_embd = 256; s.n_layer = 4; s.n_head = 8; s.n_head_kv = 4; s.n_ff = 768;
    s.n_vocab = 0; s.n_ctx = 2048; s.rope_freq_base = 10000.0f; s.rms_eps = 1e-5f;
    t.push_back(s);

    s = {};
    s.name = "tinyllama-1.1b"; s.arch = "llama"; s.display_name = "TinyLlama 1.1B";
    s.n_embd = 2048; s.n_layer = 22; s.n_head = 32; s.n_head_kv = 4; s.n_ff = 5632;
    s.n_vocab = 32000; s.n_ctx = 2048; s.rope_freq_base = 10000.0f; s.rms_eps = 1e-5f;
    t.push_back(s);

    s = {};
    s.name = "llama2-7b"; s.arch = "llama"; s.display_name = "Llama 2 7B";
    s.n_embd = 4096; s.n_layer = 32; s.n_head = 32; s.n_head_kv = 32; s.n_ff = 11008;
    s.n_vocab = 32000; s.n_ctx = 4096; s.rope_freq_base = 10000.0f; s.rms_eps = 1e-5f;
    t.push_back(s);

    s = {};
    s.name = "llama3-8b"; s.arch = "llama"; s.display_name = "Llama 3 8B";
    s.n_embd = 4096; s.n_layer = 32; s.n_head = 32; s.n_head_kv = 8; s.n_ff = 14336;
    s.n_vocab = 128256; s.n_ctx = 8192; s.rope_freq_base = 500000.0f; s.rms_eps = 1e-5f;
    t.push_back(s);

    s = {};
    s.name = "qwen2-0.5b"; s.arch = "qwen2"; s.display_name = "Qwen2 0.5B";
    s.n_embd = 896; s.n_layer = 24; s.n_head = 14; s.n_head_kv = 2; s.n_ff = 4864;
    s.n_vocab = 151936; s.n_ctx = 32768; s.rope_freq_base = 1000000.0f; s.rms_eps = 1e-6f;
    s.qkv_bias = true; s.tied_embeddings = true;
    t.push_back(s);

    s = {};
    s.name = "qwen3-0.6b"; s.arch = "qwen3"; s.display_name = "Qwen3 0.6B";
    s.n_embd = 1024; s.n_layer = 28; s.n_head = 16; s.n_head_kv = 8; s.n_ff = 3072; s.key_length = 128;
    s.n_vocab = 151936; s.n_ctx = 40960; s.rope_freq_base = 1000000.0f; s.rms_eps = 1e-6f;
    s.qk_norm = true; s.tied_embeddings = true;
    t.push_back(s);

    s = {};
    s.name = "qwen3-8b"; s.arch = "qwen3"; s.display_name = "Qwen3 8B";
    s.n_embd = 4096; s.n_layer = 36; s.n_head = 32; s.n_head_kv = 8; s.n_ff = 12288; s.key_length = 128;
    s.n_vocab = 151936; s.n_ctx = 40960; s.rope_freq_base = 1000000.0f; s.rms_eps = 1e-6f;
    s.qk_norm = true;
    t.push_back(s);

    s = {};
    s.name = "gemma2-2b"; s.arch = "gemma2"; s.display_name = "Gemma 2 2B";
    s.n_embd = 2304; s.n_layer = 26; s.n_head = 8; s.n_head_kv = 4; s.n_ff = 9216; s.key_length = 256;
    s.n_vocab = 256000; s.n_ctx = 8192; s.rope_freq_base = 10000.0f; s.rms_eps = 1e-6f;
    s.post_norms = true; s.tied_embeddings = true; s.sliding_window = 4096;
    s.attn_softcap = 50.0f; s.final_softcap = 30.0f;
    t.push_back(s);

    s = {};
    s.name = "gemma3-1b"; s.arch = "gemma3"; s.display_name = "Gemma 3 1B";
    s.n_embd = 1152; s.n_layer = 26; s.n_head = 4; s.n_head_kv = 1; s.n_ff = 6912; s.key_length = 256;
    s.n_vocab = 262144; s.n_ctx = 32768; s.rope_freq_base = 1000000.0f; s.rms_eps = 1e-6f;
    s.qk_norm = true; s.post_norms = true; s.tied_embeddings = true; s.sliding_window = 512;
    t.push_back(s);

    s = {};
    s.name = "phi3-mini"; s.arch = "phi3"; s.display_name = "Phi 3 Mini 4K";
    s.n_embd = 3072; s.n_layer = 32; s.n_head = 32; s.n_head_kv = 32; s.n_ff = 8192;
    s.n_vocab = 32064; s.n_ctx = 4096; s.rope_freq_base = 10000.0f; s.rms_eps = 1e-5f;
    s.fused = true;
    t.push_back(s);

    s = {};
    s.name = "mixtral-8x7b"; s.arch = "llama"; s.display_name = "Mixtral 8x7B";
    s.n_embd = 4096; s.n_layer = 32; s.n_head = 32; s.n_head_kv = 8; s.n_ff = 14336;
    s.n_vocab = 32000; s.n_ctx = 32768; s.rope_freq_base = 1000000.0f; s.rms_eps = 1e-5f;
    s.n_expert = 8; s.n_expert_used = 2;
    t.push_back(s);

    s = {};
    s.name = "qwen3-30b-a3b"; s.arch = "qwen3moe"; s.display_name = "Qwen3 30B A3B";
    s.n_embd = 2048; s.n_layer = 48; s.n_head = 32; s.n_head_kv = 4; s.n_ff = 6144; s.key_length = 128;
    s.n_vocab = 151936; s.n_ctx = 40960; s.rope_freq_base = 1000000.0f; s.rms_eps = 1e-6f;
    s.qk_norm = true; s.n_expert = 128; s.n_expert_used = 8; s.n_ff_exp = 768;
    t.push_back(s);

    // Qwen2-MoE (shared_expert_intermediate_size: the shared expert's width; norm_topk_prob false).
    s = {};
    s.name = "qwen1.5-moe-a2.7b"; s.arch = "qwen2moe"; s.display_name = "Qwen1.5 MoE A2.7B";
    s.n_embd = 2048; s.n_layer = 24; s.n_head = 16; s.n_head_kv = 16; s.n_ff = 5632;
    s.n_vocab = 151936; s.n_ctx = 8192; s.rope_freq_base = 1000000.0f; s.rms_eps = 1e-6f;
    s.qkv_bias = true; s.n_expert = 60; s.n_expert_used = 4; s.n_ff_exp = 1408; s.n_ff_shexp = 5632;
    t.push_back(s);

    s = {};
    s.name = "qwen2-57b-a14b"; s.arch = "qwen2moe"; s.display_name = "Qwen2 57B A14B";
    s.n_embd = 3584; s.n_layer = 28; s.n_head = 28; s.n_head_kv = 4; s.n_ff = 18944;
    s.n_vocab = 151936; s.n_ctx = 32768; s.rope_freq_base = 1000000.0f; s.rms_eps = 1e-6f;
    s.qkv_bias = true; s.n_expert = 64; s.n_expert_used = 8; s.n_ff_exp = 2560; s.n_ff_shexp = 20480;
    t.push_back(s);

    // gpt-oss (openai/gpt-oss-20b and -120b config.json: head_dim 64 over hidden_size 2880,
    // intermediate_size 2880 for every expert, rope_scaling yarn factor 32 over 4096 positions,
    // sliding_window 128, separate unembedding).
    s = {};
    s.name = "gpt-oss-20b"; s.arch = "gpt-oss"; s.display_name = "gpt-oss 20b";
    s.n_embd = 2880; s.n_layer = 24; s.n_head = 64; s.n_head_kv = 8; s.n_ff = 2880; s.key_length = 64;
    s.n_vocab = 201088; s.n_ctx = 131072; s.rope_freq_base = 150000.0f; s.rms_eps = 1e-5f;
    s.qkv_bias = true; s.sliding_window = 128; s.yarn_factor = 32.0f; s.yarn_orig_ctx = 4096;
    s.n_expert = 32; s.n_expert_used = 4; s.n_ff_exp = 2880;
    t.push_back(s);
    s.name = "gpt-oss-120b"; s.display_name = "gpt-oss 120b";
    s.n_layer = 36; s.n_expert = 128;
    t.push_back(s);

    // Embedding encoders: BAAI/bge-small-en-v1.5 (CLS pooling) and nomic-embed-text-v1.5 (mean
    // pooling, rotary positions, SwiGLU, no biases, fused QKV).
    s = {};
    s.name = "bge-small"; s.arch = "bert"; s.display_name = "BGE Small EN v1.5";
    s.n_embd = 384; s.n_layer = 12; s.n_head = 12; s.n_head_kv = 12; s.n_ff = 1536;
    s.n_vocab = 30522; s.n_ctx = 512; s.norm_eps = 1e-12f; s.pooling_type = 2; s.n_token_types = 2;
    t.push_back(s);

    s = {};
    s.name = "nomic-embed"; s.arch = "nomic-bert"; s.display_name = "Nomic Embed Text v1.5";
    s.n_embd = 768; s.n_layer = 12; s.n_head = 12; s.n_head_kv = 12; s.n_ff = 3072;
    s.n_vocab = 30522; s.n_ctx = 2048; s.rope_freq_base = 1000.0f; s.norm_eps = 1e-12f; s.pooling_type = 1;
    s.n_token_types = 2; s.fused = true;
    t.push_back(s);

    // Tiny shapes of each family (the vocab file's size): for tests and smoke runs. The MoE ones
    // keep several experts per token (mixtral 2 of 8, qwen3moe 4 of 16, experts 64 wide; qwen2moe
    // 4 of 8, experts 64 wide and a shared expert 192 wide).
    for (const char *base : {"qwen3-0.6b", "gemma2-2b", "gemma3-1b", "phi3-mini", "mixtral-8x7b", "qwen3-30b-a3b",
                             "qwen1.5-moe-a2.7b", "gpt-oss-20b", "bge-small", "nomic-embed"}) {
        ModelShape tiny = *std::find_if(t.begin(), t.end(), [&](const ModelShape &x) { return x.name == base; });
        tiny.name = "tiny-" + tiny.arch;
        tiny.display_name = "ROCmForge Tiny " + tiny.arch;
        tiny.n_embd = 128; tiny.n_head = 4; tiny.n_head_kv = tiny.encoder() ? 4 : 2; tiny.n_ff = 256; tiny.n_vocab = 0;
        tiny.n_ctx = tiny.encoder() ? 512 : 2048;
        tiny.n_layer = tiny.arch == "gemma3" ? 7 : 3; // gemma3: six local layers around a global one
        if (tiny.key_length) tiny.key_length = 64;    // wider heads than n_embd / n_head, as the real ones
        if (tiny.sliding_window) tiny.sliding_window = 8;
        if (tiny.arch == "llama") tiny.name = "tiny-mixtral", tiny.display_name = "ROCmForge Tiny mixtral";
        if (tiny.n_expert == 128) tiny.n_expert = 16, tiny.n_expert_used = 4, tiny.n_ff_exp = 64;
        if (tiny.n_ff_shexp) tiny.n_expert = 8, tiny.n_expert_used = 4, tiny.n_ff_exp = 64, tiny.n_ff_shexp = 192;
        // gpt-oss: 8 experts of 64, 4 per token, YaRN over 256 original positions.
        if (tiny.gpt_oss()) tiny.n_expert = 8, tiny.n_expert_used = 4, tiny.n_ff_exp = 64, tiny.yarn_orig_ctx = 256;
        t.push_back(tiny);
    }
    add_deepseek2_shapes(t);
    add_qwen35_shapes(t);
    return t;
}

const std::vector<ModelShape> &table() {
    static const std::vector<ModelShape> t = make_table();
    return t;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

} // namespace

const ModelShape *find_model_shape(std::string_view name) {
    for (const ModelShape &s : table())
        if (iequals(s.name, name)) return &s;
    return nullptr;
}

std::vector<std::string> model_shape_names() {
    std::vector<std::string> names;
    for (const ModelShape &s : table()) names.push_back(s.name);
    return names;
}

namespace {

// bert / nomic-bert tensors in the order convert_hf_to_gguf.py writes them (names as llama.cpp's).
std::vector<ShapeTensor> encoder_tensors(const ModelShape &s) {
    const int64_t E = s.n_embd, F = s.n_ff;
    const bool bert = s.arch == "bert";
    std::vector<ShapeTensor> t;
    t.push_back({"token_embd.weight", {E, s.n_vocab}});
    if (bert) t.push_back({"position_embd.weight", {E, s.n_ctx}});
    t.push_back({"token_types.weight", {E, s.n_token_types}});
    t.push_back({"token_embd_norm.weight", {E}});
    t.push_back({"token_embd_norm.bias", {E}});
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        if (s.fused) {
            t.push_back({p + "attn_qkv.weight", {E, 3 * E}});
        } else {
            for (const char *n : {"attn_q", "attn_k", "attn_v"}) {
                t.push_back({p + n + ".weight", {E, E}});
                t.push_back({p + n + ".bias", {E}});
            }
        }
        t.push_back({p + "attn_output.weight", {E, E}});
        if (bert) t.push_back({p + "attn_output.bias", {E}});
        t.push_back({p + "attn_output_norm.weight", {E}});
        t.push_back({p + "attn_output_norm.bias", {E}});
        if (!bert) t.push_back({p + "ffn_gate.weight", {E, F}});
        t.push_back({p + "ffn_up.weight", {E, F}});
        if (bert) t.push_back({p + "ffn_up.bias", {F}});
        t.push_back({p + "ffn_down.weight", {F, E}});
        if (bert) t.push_back({p + "ffn_down.bias", {E}});
        t.push_back({p + "layer_output_norm.weight", {E}});
        t.push_back({p + "layer_output_norm.bias", {E}});
    }
    return t;
}

} // namespace

std::vector<ShapeTensor> shape_tensors(const ModelShape &s) {
    if (s.encoder()) return encoder_tensors(s);
    if (s.deepseek2()) return deepseek2_tensors(s);
    if (s.qwen35()) return qwen35_tensors(s);
    const int64_t E = s.n_embd, Q = s.n_embd_q(), KV = s.n_embd_kv(), F = s.n_ff, V = s.n_vocab, D = s.head_dim();
    std::vector<ShapeTensor> t;
    t.push_back({"token_embd.weight", {E, V}});
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        t.push_back({p + "attn_norm.weight", {E}});
        if (s.fused) {
            t.push_back({p + "attn_qkv.weight", {E, Q + 2 * KV}});
        } else {
            t.push_back({p + "attn_q.weight", {E, Q}});
            if (s.qkv_bias) t.push_back({p + "attn_q.bias", {Q}});
            t.push_back({p + "attn_k.weight", {E, KV}});
            if (s.qkv_bias) t.push_back({p + "attn_k.bias", {KV}});
            t.push_back({p + "attn_v.weight", {E, KV}});
            if (s.qkv_bias) t.push_back({p + "attn_v.bias", {KV}});
        }
        if (s.qk_norm) {
            t.push_back({p + "attn_q_norm.weight", {D}});
            t.push_back({p + "attn_k_norm.weight", {D}});
        }
        t.push_back({p + "attn_output.weight", {Q, E}});
        if (s.gpt_oss()) {
            t.push_back({p + "attn_output.bias", {E}});
            t.push_back({p + "attn_sinks.weight", {s.n_head}});
        }
        if (s.post_norms || s.gpt_oss()) t.push_back({p + "post_attention_norm.weight", {E}});
        if (!s.gpt_oss()) t.push_back({p + "ffn_norm.weight", {E}});
        if (s.n_expert > 0) {
            const int64_t X = s.n_expert, FX = s.expert_ff();
            const bool b = s.gpt_oss(); // biases: f32 (their names do not end in "weight")
            t.push_back({p + "ffn_gate_inp.weight", {E, X}});
            if (b) t.push_back({p + "ffn_gate_inp.bias", {X}});
            t.push_back({p + "ffn_gate_exps.weight", {E, FX, X}});
            if (b) t.push_back({p + "ffn_gate_exps.bias", {FX, X}});
            t.push_back({p + "ffn_down_exps.weight", {FX, E, X}});
            if (b) t.push_back({p + "ffn_down_exps.bias", {E, X}});
            t.push_back({p + "ffn_up_exps.weight", {E, FX, X}});
            if (b) t.push_back({p + "ffn_up_exps.bias", {FX, X}});
            if (s.n_ff_shexp > 0) { // 1-D gate: f32, never quantized (llama.cpp's n_dims < 2 rule)
                const int64_t FS = s.n_ff_shexp;
                t.push_back({p + "ffn_gate_inp_shexp.weight", {E}});
                t.push_back({p + "ffn_gate_shexp.weight", {E, FS}});
                t.push_back({p + "ffn_down_shexp.weight", {FS, E}});
                t.push_back({p + "ffn_up_shexp.weight", {E, FS}});
            }
        } else if (s.fused) {
            t.push_back({p + "ffn_up.weight", {E, 2 * F}}); // gate rows, then up rows
        } else {
            t.push_back({p + "ffn_gate.weight", {E, F}});
            t.push_back({p + "ffn_up.weight", {E, F}});
        }
        if (s.n_expert == 0) t.push_back({p + "ffn_down.weight", {F, E}});
        if (s.post_norms) t.push_back({p + "post_ffw_norm.weight", {E}});
    }
    t.push_back({"output_norm.weight", {E}});
    if (!s.tied_embeddings) t.push_back({"output.weight", {E, V}});
    return t;
}

} // namespace rf
