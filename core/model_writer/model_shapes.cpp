// Shape table for `rocmforge mkmodel`. Numbers come from the models' published configs
// (config.json: hidden_size, num_hidden_layers, num_attention_heads, num_key_value_heads,
// intermediate_size, vocab_size, rope_theta, rms_norm_eps).
#include "rocmforge/model_shapes.h"

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

std::vector<ShapeTensor> shape_tensors(const ModelShape &s) {
    const int64_t E = s.n_embd, KV = s.n_embd_kv(), F = s.n_ff, V = s.n_vocab;
    std::vector<ShapeTensor> t;
    t.push_back({"token_embd.weight", {E, V}});
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        t.push_back({p + "attn_norm.weight", {E}});
        t.push_back({p + "attn_q.weight", {E, E}});
        if (s.qkv_bias) t.push_back({p + "attn_q.bias", {E}});
        t.push_back({p + "attn_k.weight", {E, KV}});
        if (s.qkv_bias) t.push_back({p + "attn_k.bias", {KV}});
        t.push_back({p + "attn_v.weight", {E, KV}});
        if (s.qkv_bias) t.push_back({p + "attn_v.bias", {KV}});
        t.push_back({p + "attn_output.weight", {E, E}});
        t.push_back({p + "ffn_norm.weight", {E}});
        t.push_back({p + "ffn_gate.weight", {E, F}});
        t.push_back({p + "ffn_up.weight", {E, F}});
        t.push_back({p + "ffn_down.weight", {F, E}});
    }
    t.push_back({"output_norm.weight", {E}});
    if (!s.tied_embeddings) t.push_back({"output.weight", {E, V}});
    return t;
}

} // namespace rf
