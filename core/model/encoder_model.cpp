// The weights of the encoder families bert and nomic-bert, named and shaped as llama.cpp's
// llama_model::load_tensors loads them (LLM_ARCH_BERT / LLM_ARCH_NOMIC_BERT): embeddings with
// token types (and positions: bert), their LayerNorm, and per layer Q/K/V (nomic-bert: fused
// attn_qkv, split by rows here), the output projection, two LayerNorms and the FFN (bert: up and
// down with biases; nomic-bert: gate, up and down).
#include "rocmforge/error.h"
#include "rocmforge/model.h"

namespace rf {

Tensor *Model::place_slice(const std::string &name, int64_t n, int64_t first, int64_t count) {
    const gguf::TensorInfo *ti = file_->find_tensor(name);
    if (!ti) return nullptr;
    if (ti->type != RF_TYPE_F32 || ti->n_elements() != n || ti->ne[1] != 1)
        throw Error(file_->path() + ": tensor '" + name + "' must be an f32 vector of " + std::to_string(n) + " elements");
    const int64_t ne[4] = {count, 1, 1, 1};
    const std::string part = name + "[" + std::to_string(first) + ".." + std::to_string(first + count) + "]";
    n_params_ += (uint64_t)count;
    return store(part, RF_TYPE_F32, ne, file_->tensor_data(*ti) + 4 * (uint64_t)first, 4 * (uint64_t)count);
}

void Model::load_encoder() {
    const ModelHparams &hp = hp_;
    const int64_t E = hp.n_embd;
    tok_embd = place("token_embd.weight", {E, hp.n_vocab}, true);
    const gguf::TensorInfo *types = file_->find_tensor("token_types.weight");
    if (types) type_embd = place("token_types.weight", {E, types->ne[1]}, true);
    if (hp.arch == ModelArch::Bert) pos_embd = place("position_embd.weight", {E, hp.n_ctx_train}, true);
    tok_norm = place("token_embd_norm.weight", {E}, true);
    tok_norm_b = place("token_embd_norm.bias", {E}, true);
    for (int64_t l = 0; l < hp.n_layer; ++l) load_encoder_layer(l);
}

void Model::load_encoder_layer(int64_t l) {
    const ModelHparams &hp = hp_;
    const int64_t E = hp.n_embd, F = hp.n_ff;
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights w;
    const std::string qkv = p + "attn_qkv.weight";
    if (file_->find_tensor(qkv)) {
        w.wq = place_rows(qkv, E, 3 * E, 0, E);
        w.wk = place_rows(qkv, E, 3 * E, E, E);
        w.wv = place_rows(qkv, E, 3 * E, 2 * E, E);
        const std::string b = p + "attn_qkv.bias";
        w.bq = place_slice(b, 3 * E, 0, E);
        w.bk = place_slice(b, 3 * E, E, E);
        w.bv = place_slice(b, 3 * E, 2 * E, E);
    } else {
        w.wq = place(p + "attn_q.weight", {E, E}, true);
        w.wk = place(p + "attn_k.weight", {E, E}, true);
        w.wv = place(p + "attn_v.weight", {E, E}, true);
        w.bq = place(p + "attn_q.bias", {E}, true);
        w.bk = place(p + "attn_k.bias", {E}, true);
        w.bv = place(p + "attn_v.bias", {E}, true);
    }
    w.wo = place(p + "attn_output.weight", {E, E}, true);
    w.bo = place(p + "attn_output.bias", {E}, false);
    w.attn_out_norm = place(p + "attn_output_norm.weight", {E}, true);
    w.attn_out_norm_b = place(p + "attn_output_norm.bias", {E}, true);
    w.ffn_up = place(p + "ffn_up.weight", {E, F}, true);
    w.ffn_up_b = place(p + "ffn_up.bias", {F}, false);
    w.ffn_down = place(p + "ffn_down.weight", {F, E}, true);
    w.ffn_down_b = place(p + "ffn_down.bias", {E}, false);
    if (hp.arch == ModelArch::NomicBert) w.ffn_gate = place(p + "ffn_gate.weight", {E, F}, true);
    w.layer_out_norm = place(p + "layer_output_norm.weight", {E}, true);
    w.layer_out_norm_b = place(p + "layer_output_norm.bias", {E}, true);
    layers.push_back(w);
}

} // namespace rf
