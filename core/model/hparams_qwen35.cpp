// Qwen3.5's keys (qwen35, qwen35moe), as llama.cpp's loader reads them for its hybrid stack of
// Gated DeltaNet layers and gated full-attention layers: the ssm.* sizes, the layer pattern
// (full_attention_interval, default 4: layer l is full attention when (l + 1) % interval == 0),
// rope.dimension_sections and the multi-token-prediction blocks, which are not run.
#include <string>

#include "rocmforge/error.h"
#include "rocmforge/model.h"

namespace rf {

namespace {

int64_t int_key(const gguf::File &f, const std::string &k, int64_t def, bool required) {
    const gguf::Value *v = f.find(k);
    if (!v) {
        if (required) throw Error(f.path() + ": missing metadata key '" + k + "'");
        return def;
    }
    if (!v->is_integer()) throw Error(f.path() + ": metadata key '" + k + "' must be an integer");
    return v->as_int();
}

int64_t positive_key(const gguf::File &f, const std::string &k, int64_t def, bool required) {
    const int64_t v = int_key(f, k, def, required);
    if (v <= 0) throw Error(f.path() + ": metadata key '" + k + "' must be positive, got " + std::to_string(v));
    return v;
}

} // namespace

void read_qwen35_keys(ModelHparams &hp, const gguf::File &f) {
    const std::string a = hp.arch_name + ".";
    hp.ssm_d_conv = positive_key(f, a + "ssm.conv_kernel", 0, true);
    hp.ssm_d_inner = positive_key(f, a + "ssm.inner_size", 0, true);
    hp.ssm_d_state = positive_key(f, a + "ssm.state_size", 0, true);
    hp.ssm_dt_rank = positive_key(f, a + "ssm.time_step_rank", 0, true);
    hp.ssm_n_group = positive_key(f, a + "ssm.group_count", 0, true);
    hp.full_attn_interval = positive_key(f, a + "full_attention_interval", 4, false);
    if (hp.ssm_d_conv < 2) throw Error(f.path() + ": " + a + "ssm.conv_kernel must be at least 2");
    if (hp.ssm_d_inner % hp.ssm_dt_rank != 0)
        throw Error(f.path() + ": " + a + "ssm.inner_size (" + std::to_string(hp.ssm_d_inner) + ") is not a multiple of " + a +
                    "ssm.time_step_rank (" + std::to_string(hp.ssm_dt_rank) + ")");
    if (hp.ssm_dt_rank % hp.ssm_n_group != 0)
        throw Error(f.path() + ": " + a + "ssm.time_step_rank (" + std::to_string(hp.ssm_dt_rank) + ") is not a multiple of " + a +
                    "ssm.group_count (" + std::to_string(hp.ssm_n_group) + ")");
    // llama.cpp's delta net needs key and value heads of one size (its state is square).
    if (hp.ssm_head_v_dim() != hp.ssm_d_state)
        throw Error(f.path() + ": value heads of " + std::to_string(hp.ssm_head_v_dim()) + " differ from key heads of " +
                    std::to_string(hp.ssm_d_state) + " (ssm.state_size): not supported");
    if (f.find(a + "attention.recurrent_layers"))
        throw Error(f.path() + ": " + a + "attention.recurrent_layers (an explicit layer pattern) is not supported; "
                    "only full_attention_interval");
    if (const gguf::Value *ws = f.find(a + "expert_weights_scale"); ws && ws->as_float() != 0.0 && ws->as_float() != 1.0)
        throw Error(f.path() + ": " + a + "expert_weights_scale = " + ws->to_string() + " is not supported (only 1)");
    // The multi-token-prediction blocks follow the stack; they draft tokens, which is not done here.
    hp.n_layer_nextn = int_key(f, a + "nextn_predict_layers", 0, false);
    if (hp.n_layer_nextn < 0 || hp.n_layer_nextn >= hp.n_layer)
        throw Error(f.path() + ": " + a + "nextn_predict_layers = " + std::to_string(hp.n_layer_nextn) + " must be in 0.." +
                    std::to_string(hp.n_layer - 1));
    hp.n_layer -= hp.n_layer_nextn;
    if (hp.n_layer_kv() == 0)
        throw Error(f.path() + ": no full-attention layer in " + std::to_string(hp.n_layer) + " layers with " + a +
                    "full_attention_interval = " + std::to_string(hp.full_attn_interval));
    // Multi-section RoPE: for text every section has the token's position, which makes it the
    // NeoX rotation of rope.dimension_count dims; the sections must lie within those.
    if (const gguf::Value *sec = f.find(a + "rope.dimension_sections")) {
        if (!sec->is_array()) throw Error(f.path() + ": " + a + "rope.dimension_sections must be an array");
        int64_t sum = 0;
        for (const gguf::Value &v : sec->arr) sum += v.is_integer() ? v.as_int() : 0;
        // The fourth section takes position 0 for text in llama.cpp: not the NeoX rotation.
        if (sec->arr.size() > 3 && sec->arr[3].is_integer() && sec->arr[3].as_int() != 0)
            throw Error(f.path() + ": " + a + "rope.dimension_sections with a fourth section is not supported");
        if (sum > hp.n_rot / 2)
            throw Error(f.path() + ": " + a + "rope.dimension_sections sum to " + std::to_string(sum) + " pairs, more than " +
                        std::to_string(hp.n_rot / 2) + " (rope.dimension_count / 2)");
    }
}

} // namespace rf
