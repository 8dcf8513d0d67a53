// DeepSeek-V2/V3 (deepseek2): the keys and tensors llama.cpp's converter writes
// (LLM_ARCH_DEEPSEEK2 in llama-model.cpp), in both layouts: newer files split attn_kv_b into
// attn_k_b / attn_v_b and write key_length_mla / value_length_mla (key_length then being the
// latent attention's kv_lora_rank + rope); older ones have attn_kv_b alone, whose two halves are
// taken apart here. The graph is forward_deepseek2.cpp.
#include "deepseek2.h"

#include <cmath>
#include <cstring>
#include <string>

#include "rocmforge/error.h"
#include "rocmforge/types.h"

namespace rf {

namespace {

struct Keys {
    const gguf::File &f;
    const std::string &arch;
    std::string key(const char *s) const { return arch + "." + s; }
    const gguf::Value *find(const char *s) const {
        const gguf::Value *v = f.find(key(s));
        if (v && (v->is_array() || v->is_string()))
            throw Error(f.path() + ": metadata key '" + key(s) + "' must be a number");
        return v;
    }
    int64_t get_int(const char *s, int64_t def, bool required) const {
        const gguf::Value *v = find(s);
        if (!v) {
            if (required) throw Error(f.path() + ": missing metadata key '" + key(s) + "'");
            return def;
        }
        if (!v->is_integer()) throw Error(f.path() + ": metadata key '" + key(s) + "' must be an integer");
        return v->as_int();
    }
    double get_float(const char *s, double def, bool required) const {
        const gguf::Value *v = find(s);
        if (!v && required) throw Error(f.path() + ": missing metadata key '" + key(s) + "'");
        return v ? v->as_float() : def;
    }
    [[noreturn]] void bad(const char *s, const std::string &why) const {
        throw Error(f.path() + ": metadata key '" + key(s) + "' " + why);
    }
};

} // namespace

void read_deepseek2_keys(ModelHparams &hp, const gguf::File &f) {
    const Keys k{f, hp.arch_name};
    ModelHparams::DeepSeek2 &ds = hp.ds;
    ds.n_lora_q = k.get_int("attention.q_lora_rank", 0, false);
    ds.n_lora_kv = k.get_int("attention.kv_lora_rank", 0, true);
    if (ds.n_lora_q < 0) k.bad("attention.q_lora_rank", "must not be negative");
    if (ds.n_lora_kv <= 0) k.bad("attention.kv_lora_rank", "must be positive");
    // key_length / value_length as read by hparams.cpp (head_dim, and value_length's default).
    const int64_t key_len = hp.head_dim, value_len = k.get_int("attention.value_length", hp.head_dim, false);
    const int64_t k_mla = k.get_int("attention.key_length_mla", 0, false), v_mla = k.get_int("attention.value_length_mla", 0, false);
    if (!k.find("rope.dimension_count")) k.bad("rope.dimension_count", "is missing (the rope part of each head)");
    if (k_mla > 0 && v_mla > 0) {
        ds.n_head_k = k_mla, ds.n_head_v = v_mla;
        // The converter's latent-attention sizes: one "head" of latent + rope, V the latent.
        if (key_len != ds.n_lora_kv + hp.n_rot || value_len != ds.n_lora_kv)
            throw Error(f.path() + ": " + k.key("attention.key_length") + " / value_length (" + std::to_string(key_len) + " / " +
                        std::to_string(value_len) + ") must be kv_lora_rank + rope and kv_lora_rank with the _mla lengths");
    } else {
        ds.n_head_k = key_len, ds.n_head_v = value_len;
    }
    if (hp.n_rot >= ds.n_head_k) k.bad("rope.dimension_count", "must be smaller than the query head (" + std::to_string(ds.n_head_k) + ")");
    if (ds.n_head_v <= 0) k.bad("attention.value_length", "must be positive");

    // Multi-token-prediction layers (counted in block_count by converters that keep them) are
    // not run: the model is the layers before them, as llama.cpp runs it.
    const int64_t nextn = k.get_int("nextn_predict_layers", 0, false);
    if (nextn < 0 || nextn >= hp.n_layer) k.bad("nextn_predict_layers", "must be in 0..block_count - 1");
    hp.n_layer -= nextn;
    ds.n_dense_lead = k.get_int("leading_dense_block_count", 0, true);
    if (ds.n_dense_lead < 0 || ds.n_dense_lead > hp.n_layer) k.bad("leading_dense_block_count", "must be in 0..block_count");
    ds.n_expert_shared = k.get_int("expert_shared_count", 0, true);
    if (ds.n_expert_shared < 0) k.bad("expert_shared_count", "must not be negative");
    hp.n_ff_shexp = hp.n_ff_exp * ds.n_expert_shared;
    ds.weights_scale = (float)k.get_float("expert_weights_scale", 0.0, true);
    if (!(ds.weights_scale >= 0)) k.bad("expert_weights_scale", "must not be negative");
    if (const gguf::Value *v = k.find("expert_weights_norm")) ds.weights_norm = v->as_int() != 0;
    // llama.cpp: absent (V2, V2.5 files) means softmax.
    const int64_t gating = k.get_int("expert_gating_func", 0, false);
    if (gating < 0 || gating > 2) k.bad("expert_gating_func", "= " + std::to_string(gating) + ": only softmax (1) and sigmoid (2) are supported");
    ds.sigmoid_gating = gating == 2;
    ds.n_group = k.get_int("expert_group_count", 0, false);
    ds.n_group_used = k.get_int("expert_group_used_count", 0, false);
    if (ds.n_group > 1 && (hp.n_expert % ds.n_group != 0 || ds.n_group_used < 1 || ds.n_group_used > ds.n_group))
        throw Error(f.path() + ": " + k.key("expert_group_count") + " = " + std::to_string(ds.n_group) + " must divide " +
                    k.key("expert_count") + " and " + k.key("expert_group_used_count") + " be in 1.." + std::to_string(ds.n_group));
    if (ds.n_group > 1 && ds.n_group_used * (hp.n_expert / ds.n_group) < hp.n_expert_used)
        throw Error(f.path() + ": the " + std::to_string(ds.n_group_used) + " groups kept hold fewer experts than " +
                    k.key("expert_used_count"));

    // llm_build_deepseek2's YaRN: the rope is handed attn_factor / (1 + 0.1 ln(1 / freq_scale)),
    // so that ggml_rope_ext's own magnitude cancels, and the scores are scaled by mscale^2 with
    // mscale = attn_factor (1 + yarn_log_multiplier ln(1 / freq_scale)), the file's multiplier.
    const double log_mul = k.get_float("rope.scaling.yarn_log_multiplier", 0.0, false);
    double mscale = 1.0;
    if (hp.rope_yarn) {
        const double attn = hp.yarn.attn_factor, ln = std::log(1.0 / hp.rope_freq_scale);
        hp.yarn.attn_factor = (float)(attn / (1.0 + 0.1 * ln));
        mscale = attn * (1.0 + log_mul * ln);
    }
    ds.kq_scale = (float)(mscale * mscale / std::sqrt((double)ds.n_head_k));
    // The cache's one head: the latent, then the roped k_pe.
    hp.head_dim = ds.n_lora_kv + hp.n_rot;
    hp.n_head_kv = 1;
    hp.attn_scale = ds.kq_scale;
}

Tensor *Model::store_owned(const std::string &name, int type, const int64_t ne[4], std::vector<uint8_t> bytes) {
    owned_bytes_.push_back(std::make_unique<std::vector<uint8_t>>(std::move(bytes)));
    n_params_ += (uint64_t)(ne[0] * ne[1] * ne[2] * ne[3]);
    return store(name, type, ne, owned_bytes_.back()->data(), owned_bytes_.back()->size());
}

namespace {

const gguf::TensorInfo &find_2d(const gguf::File &f, const std::string &name, int64_t k, int64_t n) {
    const gguf::TensorInfo *ti = f.find_tensor(name);
    if (!ti) throw Error(f.path() + ": missing tensor '" + name + "'");
    if (ti->ne[0] != k || ti->ne[1] != n || ti->ne[2] != 1 || ti->ne[3] != 1 || !type_is_known(ti->type))
        throw Error(f.path() + ": tensor '" + name + "' has shape [" + std::to_string(ti->ne[0]) + ", " + std::to_string(ti->ne[1]) + ", " +
                    std::to_string(ti->ne[2]) + "], expected [" + std::to_string(k) + ", " + std::to_string(n) + "]");
    return *ti;
}

// Rows of each of `heads` blocks of `block` rows: [first, first + count) of each, in order.
std::vector<uint8_t> head_rows(const gguf::File &f, const gguf::TensorInfo &ti, int64_t heads, int64_t block, int64_t first,
                               int64_t count) {
    const size_t rb = row_size(ti.type, ti.ne[0]);
    std::vector<uint8_t> out(rb * (size_t)(heads * count));
    const uint8_t *src = f.tensor_data(ti);
    for (int64_t h = 0; h < heads; ++h)
        std::memcpy(out.data() + rb * (size_t)(h * count), src + rb * (size_t)(h * block + first), rb * (size_t)count);
    return out;
}

} // namespace

void Model::load_deepseek2_layer(int64_t l) {
    const ModelHparams &hp = hp_;
    const ModelHparams::DeepSeek2 &ds = hp.ds;
    const int64_t E = hp.n_embd, H = hp.n_head, R = ds.n_lora_kv, rope = hp.n_rot, nope = ds.n_head_k - rope,
                  Dk = ds.n_head_k, Dv = ds.n_head_v;
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights w;
    w.attn_norm = place(p + "attn_norm.weight", {E}, true);
    // Q: each head's rows are nope, then rope; taken apart so that both parts are whole tensors.
    auto split_q = [&](const std::string &name, int64_t K) {
        const gguf::TensorInfo &ti = find_2d(*file_, name, K, H * Dk);
        const int64_t ne_nope[4] = {K, H * nope, 1, 1}, ne_pe[4] = {K, H * rope, 1, 1};
        w.wq_nope = store_owned(name + "[nope rows]", ti.type, ne_nope, head_rows(*file_, ti, H, Dk, 0, nope));
        w.wq_pe = store_owned(name + "[rope rows]", ti.type, ne_pe, head_rows(*file_, ti, H, Dk, nope, rope));
    };
    if (ds.n_lora_q > 0) {
        w.wq_a = place(p + "attn_q_a.weight", {E, ds.n_lora_q}, true);
        w.attn_q_a_norm = place(p + "attn_q_a_norm.weight", {ds.n_lora_q}, true);
        split_q(p + "attn_q_b.weight", ds.n_lora_q);
    } else {
        split_q(p + "attn_q.weight", E);
    }
    const std::string kv_a = p + "attn_kv_a_mqa.weight";
    find_2d(*file_, kv_a, E, R + rope);
    w.wkv_a_latent = place_rows(kv_a, E, R + rope, 0, R);
    w.wkv_a_pe = place_rows(kv_a, E, R + rope, R, rope);
    w.attn_kv_a_norm = place(p + "attn_kv_a_norm.weight", {R}, true);
    if (file_->find_tensor(p + "attn_k_b.weight")) {
        w.wk_b = place(p + "attn_k_b.weight", {nope, R, H}, true);
        w.wv_b = place(p + "attn_v_b.weight", {R, Dv, H}, true);
    } else {
        // attn_kv_b [R, H * (nope + Dv)]: per head nope K rows, then Dv V rows, each over the
        // latent. W_vb is its V rows as they are; W_kb the K rows transposed (q_nope enters on
        // the nope side), which needs their values: f32.
        const std::string kvb = p + "attn_kv_b.weight";
        if (!file_->find_tensor(kvb)) throw Error(file_->path() + ": missing tensor '" + p + "attn_k_b.weight' (or '" + kvb + "')");
        const gguf::TensorInfo &ti = find_2d(*file_, kvb, R, H * (nope + Dv));
        const int64_t ne_v[4] = {R, Dv, H, 1}, ne_k[4] = {nope, R, H, 1};
        w.wv_b = store_owned(kvb + "[V rows]", ti.type, ne_v, head_rows(*file_, ti, H, nope + Dv, nope, Dv));
        const std::vector<uint8_t> krows = head_rows(*file_, ti, H, nope + Dv, 0, nope);
        const size_t rb = row_size(ti.type, R);
        std::vector<float> row((size_t)R);
        std::vector<uint8_t> kb((size_t)(nope * R * H) * sizeof(float));
        auto *out = reinterpret_cast<float *>(kb.data());
        for (int64_t h = 0; h < H; ++h)
            for (int64_t j = 0; j < nope; ++j) {
                dequantize_row(ti.type, krows.data() + rb * (size_t)(h * nope + j), row.data(), R);
                for (int64_t r = 0; r < R; ++r) out[(h * R + r) * nope + j] = row[(size_t)r];
            }
        w.wk_b = store_owned(kvb + "[K rows, transposed]", RF_TYPE_F32, ne_k, std::move(kb));
    }
    w.wo = place(p + "attn_output.weight", {H * Dv, E}, true);
    w.ffn_norm = place(p + "ffn_norm.weight", {E}, true);
    if (l < ds.n_dense_lead) {
        w.ffn_gate = place(p + "ffn_gate.weight", {E, hp.n_ff}, true);
        w.ffn_up = place(p + "ffn_up.weight", {E, hp.n_ff}, true);
        w.ffn_down = place(p + "ffn_down.weight", {hp.n_ff, E}, true);
    } else {
        const int64_t X = hp.n_expert, FX = hp.n_ff_exp, FS = hp.n_ff_shexp;
        w.ffn_gate_inp = place(p + "ffn_gate_inp.weight", {E, X}, true);
        w.ffn_exp_probs_b = place(p + "exp_probs_b.bias", {X}, false);
        w.ffn_gate_exps = place(p + "ffn_gate_exps.weight", {E, FX, X}, true);
        w.ffn_up_exps = place(p + "ffn_up_exps.weight", {E, FX, X}, true);
        w.ffn_down_exps = place(p + "ffn_down_exps.weight", {FX, E, X}, true);
        if (FS > 0) {
            w.ffn_gate_shexp = place(p + "ffn_gate_shexp.weight", {E, FS}, true);
            w.ffn_up_shexp = place(p + "ffn_up_shexp.weight", {E, FS}, true);
            w.ffn_down_shexp = place(p + "ffn_down_shexp.weight", {FS, E}, true);
        }
    }
    layers.push_back(w);
}

} // namespace rf
