// Qwen3.5's layers (qwen35, qwen35moe; and qwen3next's, with its fused ssm_ba and, in older files,
// ssm_in) as llama.cpp's converter writes them: Gated DeltaNet
// layers (attn_qkv, attn_gate, ssm_conv1d, ssm_dt.bias, ssm_a, ssm_beta, ssm_alpha, ssm_norm,
// ssm_out) and every full_attention_interval-th layer a gated full-attention one (attn_q holding
// each head's query and output gate, attn_k, attn_v, Q/K norms, attn_output); the FFN's input
// norm is post_attention_norm; qwen35moe's FFN is experts plus an optional shared expert.
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/model.h"
#include "rocmforge/types.h"

namespace rf {

namespace {

// Blocks {first, count} of each of H heads' halves: head h holds 2 D rows, half 0 then half 1.
std::vector<std::pair<int64_t, int64_t>> head_halves(int64_t D, int64_t H, int half) {
    std::vector<std::pair<int64_t, int64_t>> b;
    for (int64_t h = 0; h < H; ++h) b.push_back({2 * D * h + half * D, D});
    return b;
}

} // namespace

// The blocks' rows gathered into memory of their own (they interleave in the file).
Tensor *Model::place_row_blocks(const std::string &name, int64_t K, int64_t n_rows, const std::vector<std::pair<int64_t, int64_t>> &blocks,
                                const std::string &label) {
    const gguf::TensorInfo *ti = file_->find_tensor(name);
    if (!ti) throw Error(file_->path() + ": missing tensor '" + name + "'");
    if (ti->ne[0] != K || ti->ne[1] != n_rows || ti->ne[2] != 1 || ti->ne[3] != 1)
        throw Error(file_->path() + ": tensor '" + name + "' has shape [" + std::to_string(ti->ne[0]) + ", " + std::to_string(ti->ne[1]) +
                    "], expected [" + std::to_string(K) + ", " + std::to_string(n_rows) + "]");
    if (!type_is_known(ti->type)) throw Error(file_->path() + ": tensor '" + name + "' has unknown type id " + std::to_string(ti->type));
    const uint64_t row = row_size(ti->type, K);
    int64_t n = 0;
    for (const auto &[first, count] : blocks) n += count;
    std::vector<uint8_t> bytes((size_t)(row * (uint64_t)n));
    const uint8_t *src = file_->tensor_data(*ti);
    uint8_t *dst = bytes.data();
    for (const auto &[first, count] : blocks) {
        std::copy(src + row * (uint64_t)first, src + row * (uint64_t)(first + count), dst);
        dst += row * (uint64_t)count;
    }
    const int64_t ne[4] = {K, n, 1, 1};
    n_params_ += (uint64_t)(K * n);
    // A copy: these bytes do not outlive the call, so the backend must not wrap them.
    const bool mmap = options_.use_mmap;
    options_.use_mmap = false;
    Tensor *t = store(name + "[" + label + "]", ti->type, ne, bytes.data(), bytes.size());
    options_.use_mmap = mmap;
    return t;
}

void Model::load_qwen35_layer(int64_t l) {
    const ModelHparams &hp = hp_;
    const int64_t E = hp.n_embd, D = hp.head_dim;
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights w;
    w.attn_norm = place(p + "attn_norm.weight", {E}, true);
    w.ffn_norm = place(p + "post_attention_norm.weight", {E}, true);
    if (hp.is_recurrent(l)) {
        const int64_t C = hp.ssm_conv_channels(), inner = hp.ssm_d_inner, Hv = hp.ssm_dt_rank;
        const int64_t Hk = hp.ssm_n_group, Sk = hp.ssm_d_state, r = Hv / Hk, rv = r * hp.ssm_head_v_dim();
        const bool next = hp.arch == ModelArch::Qwen3Next;
        if (!next && (file_->find_tensor(p + "ssm_ba.weight") || file_->find_tensor(p + "ssm_in.weight")))
            throw Error(file_->path() + ": qwen3next's fused ssm_in / ssm_ba tensors in a " + hp.arch_name +
                        " file (its layout: attn_qkv, attn_gate, ssm_beta, ssm_alpha)");
        if (next && !file_->find_tensor(p + "attn_qkv.weight") && file_->find_tensor(p + "ssm_in.weight")) {
            // Older qwen3next files: ssm_in holds per key head q, k, its value heads' v and z.
            const int64_t G = 2 * Sk + 2 * rv;
            std::vector<std::pair<int64_t, int64_t>> qkv, z;
            for (int64_t part = 0; part < 3; ++part)
                for (int64_t g = 0; g < Hk; ++g) qkv.push_back({g * G + part * Sk, part < 2 ? Sk : rv});
            for (int64_t g = 0; g < Hk; ++g) z.push_back({g * G + 2 * Sk + rv, rv});
            w.ssm_qkv = place_row_blocks(p + "ssm_in.weight", E, Hk * G, qkv, "qkv");
            w.ssm_z = place_row_blocks(p + "ssm_in.weight", E, Hk * G, z, "z");
        } else {
            w.ssm_qkv = place(p + "attn_qkv.weight", {E, C}, true);
            w.ssm_z = place(p + "attn_gate.weight", {E, inner}, true);
        }
        w.ssm_conv1d = place(p + "ssm_conv1d.weight", {hp.ssm_d_conv, C}, true);
        if (w.ssm_conv1d->type() != RF_TYPE_F32)
            throw Error(file_->path() + ": tensor '" + p + "ssm_conv1d.weight' must be f32 (as the converter writes it), found " +
                        type_name(w.ssm_conv1d->type()));
        w.ssm_dt = place(p + "ssm_dt.bias", {Hv}, true);
        w.ssm_a = place(p + "ssm_a", {Hv}, true);
        if (next) { // ssm_ba: per key head its value heads' beta rows, then their alpha rows
            w.ssm_beta = place_row_blocks(p + "ssm_ba.weight", E, 2 * Hv, head_halves(r, Hk, 0), "beta");
            w.ssm_alpha = place_row_blocks(p + "ssm_ba.weight", E, 2 * Hv, head_halves(r, Hk, 1), "alpha");
        } else {
            w.ssm_beta = place(p + "ssm_beta.weight", {E, Hv}, true);
            w.ssm_alpha = place(p + "ssm_alpha.weight", {E, Hv}, true);
        }
        w.ssm_norm = place(p + "ssm_norm.weight", {hp.ssm_head_v_dim()}, true);
        w.ssm_out = place(p + "ssm_out.weight", {inner, E}, true);
    } else {
        // attn_q: each head's query rows, then its output gate's (llama.cpp's views of Qcur_full).
        w.wq = place_row_blocks(p + "attn_q.weight", E, 2 * D * hp.n_head, head_halves(D, hp.n_head, 0), "query");
        w.attn_q_gate = place_row_blocks(p + "attn_q.weight", E, 2 * D * hp.n_head, head_halves(D, hp.n_head, 1), "gate");
        w.wk = place(p + "attn_k.weight", {E, hp.n_embd_kv()}, true);
        w.wv = place(p + "attn_v.weight", {E, hp.n_embd_kv()}, true);
        w.wo = place(p + "attn_output.weight", {hp.n_embd_q(), E}, true);
        w.attn_q_norm = place(p + "attn_q_norm.weight", {D}, true);
        w.attn_k_norm = place(p + "attn_k_norm.weight", {D}, true);
    }
    if (hp.is_moe()) {
        const int64_t X = hp.n_expert, FX = hp.n_ff_exp;
        w.ffn_gate_inp = place(p + "ffn_gate_inp.weight", {E, X}, true);
        w.ffn_gate_exps = place(p + "ffn_gate_exps.weight", {E, FX, X}, true);
        w.ffn_up_exps = place(p + "ffn_up_exps.weight", {E, FX, X}, true);
        w.ffn_down_exps = place(p + "ffn_down_exps.weight", {FX, E, X}, true);
        if (hp.n_ff_shexp > 0) load_shared_expert(w, p);
        else if (file_->find_tensor(p + "ffn_gate_shexp.weight")) // running without it would be wrong
            throw Error(file_->path() + ": tensor '" + p + "ffn_gate_shexp.weight' (a shared expert) but no " + hp.arch_name +
                        ".expert_shared_feed_forward_length");
    } else {
        w.ffn_gate = place(p + "ffn_gate.weight", {E, hp.n_ff}, true);
        w.ffn_up = place(p + "ffn_up.weight", {E, hp.n_ff}, true);
        w.ffn_down = place(p + "ffn_down.weight", {hp.n_ff, E}, true);
    }
    layers.push_back(w);
}

} // namespace rf
