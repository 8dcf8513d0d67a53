// `rocmforge mkmodel`: a seeded random-weight LLaMA-family model with the tensor names, shapes,
// metadata and per-tensor types llama.cpp's convert + quantize would produce for the real model.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <tuple>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "rocmforge/error.h"
#include "rocmforge/gguf.h"
#include "rocmforge/model_shapes.h"
#include "rocmforge/model_writer.h"
#include "rocmforge/output_path.h"
#include "rocmforge/types.h"
#include "block_pool.h"
#include "deepseek2_shape.h"
#include "qwen35_shapes.h"
#include "parallel_rows.h"
#include "random_weights.h"
#include "row_convert.h"

namespace rf {

namespace {

constexpr uint32_t kQuantizationVersion = 2; // ggml's GGML_QNT_VERSION
constexpr float kMatrixStd = 0.02f;
constexpr float kLogitStd = 2.0f; // target spread of the logits for unit-RMS hidden states

std::string join(const std::vector<std::string> &v) {
    std::string s;
    for (const auto &x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
}

// Distribution of a tensor's values, from its role.
struct Init {
    float mean = 0.0f;
    float stddev = kMatrixStd;
};

bool ends_with(const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Init init_for(const ShapeTensor &t, const ModelShape &s) {
    if (ends_with(t.name, "_norm.weight")) return {1.0f, kMatrixStd};
    if (ends_with(t.name, ".ssm_a")) return {-1.0f, 0.1f}; // -exp(A_log): a decay, never a growth
    if (t.name == "output.weight" || t.name == "token_embd.weight")
        // logit = sum over n_embd of h * w: std = sqrt(n_embd) * std(w) for unit-RMS h.
        return {0.0f, kLogitStd / std::sqrt(float(s.n_embd))};
    return {};
}

// gpt-oss checkpoints hold their experts in MXFP4 and the converter keeps them so: any quantized
// --type gives MXFP4 experts (the other tensors follow the mix); float types stay float.
int gpt_oss_expert_type(const ModelShape &s, const ShapeTensor &t, int type) {
    const bool expert = t.ne.size() == 3 && ends_with(t.name, "_exps.weight");
    const bool is_float = type == RF_TYPE_F32 || type == RF_TYPE_F16 || type == RF_TYPE_BF16;
    return s.gpt_oss() && expert && !is_float ? RF_TYPE_MXFP4 : type;
}

// The vocab file's tokenizer.* keys, checked for a token list.
struct Vocab {
    std::vector<gguf::KeyValue> kvs;
    int64_t n_tokens = 0;
};

Vocab read_vocab(const std::string &path) {
    auto f = gguf::File::open(path);
    Vocab v;
    for (const auto &kv : f->metadata())
        if (kv.key.rfind("tokenizer.", 0) == 0) v.kvs.push_back(kv);
    const gguf::Value *tokens = f->find("tokenizer.ggml.tokens");
    if (!tokens || !tokens->is_array() || tokens->arr.empty())
        throw Error(path + ": not a vocab file: missing or empty 'tokenizer.ggml.tokens'");
    v.n_tokens = int64_t(tokens->arr.size());
    return v;
}

// BertModel / NomicBertModel's keys: no KV head count, RMS epsilon or (bert) rotary base.
void set_encoder_keys(gguf::Writer &w, const ModelShape &s) {
    using gguf::Value;
    const std::string a = s.arch + ".";
    w.set(a + "context_length", Value::from_u32(uint32_t(s.n_ctx)));
    w.set(a + "embedding_length", Value::from_u32(uint32_t(s.n_embd)));
    w.set(a + "feed_forward_length", Value::from_u32(uint32_t(s.n_ff)));
    w.set(a + "block_count", Value::from_u32(uint32_t(s.n_layer)));
    w.set(a + "attention.head_count", Value::from_u32(uint32_t(s.n_head)));
    w.set(a + "attention.layer_norm_epsilon", Value::from_f32(s.norm_eps));
    if (s.arch == "nomic-bert") w.set(a + "rope.freq_base", Value::from_f32(s.rope_freq_base));
    w.set(a + "attention.causal", Value::from_bool(false));
    w.set(a + "pooling_type", Value::from_u32(uint32_t(s.pooling_type)));
    w.set("tokenizer.ggml.token_type_count", Value::from_u32(uint32_t(s.n_token_types)));
}

void set_model_metadata(gguf::Writer &w, const ModelShape &s, const MakeModelOptions &opt,
                        int ftype, int64_t n_params) {
    using gguf::Value;
    const std::string a = s.arch + ".";
    // Same keys and order as convert_hf_to_gguf.py writes for these architectures.
    w.set("general.architecture", Value::from_string(s.arch));
    w.set("general.type", Value::from_string("model"));
    w.set("general.name", Value::from_string(s.display_name + " (random weights)"));
    w.set("general.description",
          Value::from_string("Random weights from `rocmforge mkmodel --shape " + s.name +
                             " --seed " + std::to_string(opt.seed) + "`; not a trained model"));
    w.set("general.size_label", Value::from_string(size_label(n_params)));
    if (s.encoder()) {
        set_encoder_keys(w, s);
        if (ftype >= 0) w.set("general.file_type", Value::from_u32(uint32_t(ftype)));
        return;
    }
    set_llama_hparam_keys(w, {s.arch, s.n_layer, s.n_ctx, s.n_embd, s.n_ff, s.n_head, s.n_head_kv,
                              s.rope_freq_base, s.rms_eps});
    if (ftype >= 0) w.set("general.file_type", Value::from_u32(uint32_t(ftype)));
    if (s.deepseek2()) return set_deepseek2_keys(w, s);
    if (s.arch == "llama") { // LlamaModel adds these two; Qwen2Model does not
        w.set(a + "vocab_size", Value::from_u32(uint32_t(s.n_vocab)));
        w.set(a + "rope.dimension_count", Value::from_u32(uint32_t(s.head_dim())));
    }
    if (s.key_length) { // configs with an explicit head_dim
        w.set(a + "attention.key_length", Value::from_u32(uint32_t(s.key_length)));
        w.set(a + "attention.value_length", Value::from_u32(uint32_t(s.key_length)));
    }
    if (s.sliding_window) w.set(a + "attention.sliding_window", Value::from_u32(uint32_t(s.sliding_window)));
    if (s.attn_softcap > 0) w.set(a + "attn_logit_softcapping", Value::from_f32(s.attn_softcap));
    if (s.final_softcap > 0) w.set(a + "final_logit_softcapping", Value::from_f32(s.final_softcap));
    if (s.n_expert > 0) { // LlamaModel / Qwen3MoeModel / Qwen2MoeModel: add_expert_count, add_expert_used_count
        w.set(a + "expert_count", Value::from_u32(uint32_t(s.n_expert)));
        w.set(a + "expert_used_count", Value::from_u32(uint32_t(s.n_expert_used)));
        if (s.n_ff_exp) w.set(a + "expert_feed_forward_length", Value::from_u32(uint32_t(s.n_ff_exp)));
        if (s.n_ff_shexp) w.set(a + "expert_shared_feed_forward_length", Value::from_u32(uint32_t(s.n_ff_shexp)));
    }
    if (s.yarn_factor > 0) { // GptOssModel: yarn, its factor and the original context
        w.set(a + "rope.scaling.type", Value::from_string("yarn"));
        w.set(a + "rope.scaling.factor", Value::from_f32(s.yarn_factor));
        w.set(a + "rope.scaling.original_context_length", Value::from_u32(uint32_t(s.yarn_orig_ctx)));
    }
    if (s.qwen35()) set_qwen35_keys(w, s);
    if (s.arch == "phi3") { // Phi3Model: the rotary width and the pre-extension context
        w.set(a + "rope.dimension_count", Value::from_u32(uint32_t(s.head_dim())));
        w.set(a + "rope.scaling.original_context_length", Value::from_u32(uint32_t(s.n_ctx)));
    }
}

} // namespace

ModelWriteTotals make_model(const MakeModelOptions &opt) {
    const ModelShape *found = find_model_shape(opt.shape);
    if (!found)
        throw UsageError("unknown model shape '" + opt.shape + "' (valid: " +
                         join(model_shape_names()) + ")");
    ModelShape shape = *found;
    if (opt.n_ctx < 0) throw UsageError("--ctx must be positive");
    if (opt.n_ctx > 0) shape.n_ctx = opt.n_ctx;
    check_output_path(opt.output_path, "output"); // before generating gigabytes of weights

    const Vocab vocab = read_vocab(opt.vocab_path);
    if (shape.n_vocab != vocab.n_tokens) {
        if (shape.n_vocab != 0 && opt.on_note)
            opt.on_note("shape " + shape.name + " has " + std::to_string(shape.n_vocab) +
                        " tokens but " + opt.vocab_path + " has " +
                        std::to_string(vocab.n_tokens) + ": using the vocab's size");
        shape.n_vocab = vocab.n_tokens;
    }

    const std::vector<ShapeTensor> tensors = shape_tensors(shape);
    std::vector<std::string> names;
    for (const auto &t : tensors) names.push_back(t.name);
    MixModelInfo info = mix_model_info(names, int(shape.n_layer), int(shape.n_head),
                                       int(shape.n_head_kv), int(shape.n_expert),
                                       shape.arch == "llama" && shape.n_layer == 80);
    // Random weights have no activations to measure: the mixes that need an importance matrix
    // get a synthetic one, every weight 1, and llama.cpp's with-imatrix rules.
    const bool unit_importance = mix_needs_imatrix(mix_name(opt.mix));
    info.has_imatrix = unit_importance;
    MixCounters counters;
    std::vector<int> types;
    for (const auto &t : tensors) {
        int64_t ne[4] = {1, 1, 1, 1};
        for (size_t d = 0; d < t.ne.size(); ++d) ne[d] = t.ne[d];
        // As if converting an f32 checkpoint: 1-D tensors stay f32.
        const int type = choose_tensor_type(opt.mix, info, counters, t.name, ne, int(t.ne.size()),
                                            RF_TYPE_F32);
        if (type != RF_TYPE_F32) model_writer::check_row_fits(t.name, type, t.ne[0]);
        types.push_back(gpt_oss_expert_type(shape, t, type));
    }

    const int ftype = mix_llama_ftype(opt.mix);
    gguf::Writer w;
    int64_t n_params = 0;
    for (const auto &t : tensors) {
        int64_t n = 1;
        for (int64_t d : t.ne) n *= d;
        n_params += n;
    }
    set_model_metadata(w, shape, opt, ftype, n_params);
    for (const auto &kv : vocab.kvs) w.set(kv.key, kv.value);
    w.set("general.quantization_version", gguf::Value::from_u32(kQuantizationVersion));

    const int n_threads = model_writer::resolve_thread_count(opt.n_threads);
    // One pool per (type, distribution), built the first time a tensor needs it. Fillers run
    // one at a time on the writing thread, so the map needs no lock.
    std::map<std::tuple<int, float, float>, std::unique_ptr<model_writer::BlockPool>> pools;
    auto pool_for = [&](int type, const Init &init) -> const model_writer::BlockPool & {
        auto &slot = pools[{type, init.mean, init.stddev}];
        if (!slot) {
            const std::string stream = fmt::format("block-pool/{}/{}/{}", type_name(type),
                                                   init.mean, init.stddev);
            slot = std::make_unique<model_writer::BlockPool>(
                type, model_writer::tensor_seed(opt.seed, stream), init.mean, init.stddev,
                n_threads, unit_importance);
        }
        return *slot;
    };

    ModelWriteTotals totals;
    totals.n_tensors = tensors.size();
    for (size_t k = 0; k < tensors.size(); ++k) {
        const ShapeTensor &t = tensors[k];
        const int type = types[k];
        const int64_t row_len = t.ne[0];
        int64_t n_rows = 1; // every row of every matrix (3-D expert tensors: ne[1] * ne[2])
        for (size_t d = 1; d < t.ne.size(); ++d) n_rows *= t.ne[d];
        const uint64_t row_bytes = row_size(type, row_len);
        totals.n_params += row_len * n_rows;
        totals.dst_bytes += row_bytes * uint64_t(n_rows);
        const Init init = init_for(t, shape);
        const uint64_t seed = model_writer::tensor_seed(opt.seed, t.name);
        w.add_tensor(t.name, type, t.ne, [&, k, type, row_len, n_rows, row_bytes, init, seed](uint8_t *dst) {
            if (model_writer::use_block_pool(type)) {
                const model_writer::BlockPool &pool = pool_for(type, init);
                model_writer::parallel_for_rows(n_rows, n_threads, [&](int, int64_t begin, int64_t end) {
                    for (int64_t r = begin; r < end; ++r)
                        pool.fill_row(dst + uint64_t(r) * row_bytes, row_len, seed, uint64_t(r));
                });
            } else {
                std::vector<std::vector<float>> scratch(static_cast<size_t>(n_threads));
                const std::vector<float> ones(unit_importance ? size_t(row_len) : 0, 1.0f);
                model_writer::parallel_for_rows(n_rows, n_threads, [&](int worker, int64_t begin, int64_t end) {
                    std::vector<float> &f = scratch[size_t(worker)];
                    f.resize(size_t(row_len));
                    for (int64_t r = begin; r < end; ++r) {
                        model_writer::fill_normal_row(f.data(), row_len, seed, uint64_t(r),
                                                      init.mean, init.stddev);
                        quantize_row_weighted(type, f.data(), dst + uint64_t(r) * row_bytes, row_len,
                                              unit_importance ? ones.data() : nullptr);
                    }
                });
            }
            if (opt.on_tensor) {
                TensorWriteEvent ev;
                ev.index = k + 1;
                ev.count = tensors.size();
                ev.name = tensors[k].name;
                ev.ne = tensors[k].ne;
                ev.dst_type = type;
                ev.dst_bytes = row_bytes * uint64_t(n_rows);
                opt.on_tensor(ev);
            }
        });
    }
    w.write(opt.output_path);
    return totals;
}

} // namespace rf
