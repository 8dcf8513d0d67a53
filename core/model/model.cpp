// Model loading: every weight becomes a PersistentTensor on the primary backend built from the
// mapped GGUF bytes (wrapped without a copy when the backend can address host memory). Tensor
// names are llama.cpp's (llama-arch.cpp's LLM_TENSOR_NAMES).
#include "rocmforge/model.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include "rocmforge/buffer_slab.h"
#include "rocmforge/log.h"
#include "rocmforge/error.h"
#include "rocmforge/quant_mix.h"
#include "rocmforge/types.h"

namespace rf {

namespace {
// Whether backend b has a MATMUL kernel for weights like t (an f32 vector times t's rows).
bool has_matmul_for(const Backend &b, const gguf::TensorInfo &t) {
    const int64_t K = t.ne[0], N = t.ne[1];
    rf_tensor w{}, x{}, d{};
    init_tensor_layout(w, t.type, {K, N});
    init_tensor_layout(x, RF_TYPE_F32, {K});
    init_tensor_layout(d, RF_TYPE_F32, {N});
    rf_node n{};
    n.op = RF_OP_MATMUL;
    n.dst = &d;
    n.src[0] = &w;
    n.src[1] = &x;
    return b.supports(n);
}

// The first backend in the runtime's order with a MATMUL kernel for every 2-D weight type of the
// file: weights on a backend that cannot multiply them would be copied to another one every step
// (an i-quant file on a GPU without kernels for it). `skipped` names what the primary lacked.
Backend *backend_for_weights(Runtime &runtime, const gguf::File &file, std::string &skipped) {
    std::vector<const gguf::TensorInfo *> probes; // one tensor per type
    for (const auto &t : file.tensors()) {
        const TypeTraits *tt = type_traits(t.type);
        if (t.n_dims < 2 || t.ne[1] < 2 || t.type == RF_TYPE_F32 || !tt || t.ne[0] % tt->block_size) continue;
        bool seen = false;
        for (const auto *p : probes) seen |= p->type == t.type;
        if (!seen) probes.push_back(&t);
    }
    for (Backend *b : runtime.backends()) {
        const gguf::TensorInfo *missing = nullptr;
        for (const auto *p : probes)
            if (!has_matmul_for(*b, *p)) { missing = p; break; }
        if (!missing) return b;
        skipped += (skipped.empty() ? "" : "; ") + b->name() + " has no matmul for " + type_name(missing->type) + " weights";
    }
    return runtime.primary(); // none has them all: the scheduler places each op where it can run
}
} // namespace

Model::~Model() {
    storage_.clear(); // tensors before the slab and the mapping they may point into
    slab_.reset();
    file_.reset();
}

static std::string shape_str(const int64_t *ne, int n) {
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

// The file's tensor `name`, checked against the expected shape (nullptr when absent and optional).
static const gguf::TensorInfo *find_checked(const gguf::File &f, const std::string &name,
                                            std::initializer_list<int64_t> expected_ne, bool required) {
    const gguf::TensorInfo *ti = f.find_tensor(name);
    if (!ti) {
        if (required) throw Error(f.path() + ": missing tensor '" + name + "'");
        return nullptr;
    }
    int64_t want[4] = {1, 1, 1, 1};
    int n = 0;
    for (int64_t v : expected_ne) want[n++] = v;
    for (int i = 0; i < 4; ++i)
        if (ti->ne[i] != want[i])
            throw Error(f.path() + ": tensor '" + name + "' has shape " + shape_str(ti->ne, 4) +
                        ", expected " + shape_str(want, 4));
    if (!type_is_known(ti->type))
        throw Error(f.path() + ": tensor '" + name + "' has unknown type id " + std::to_string(ti->type));
    if (n == 1 && ti->type != RF_TYPE_F32)
        throw Error(f.path() + ": tensor '" + name + "' must be f32 (norm/bias vector), found " +
                    type_name(ti->type));
    return ti;
}

// A weight on the backend from its bytes in the mapped file: those pages themselves where the
// backend can use them (use_mmap), else a copy.
Tensor *Model::store(const std::string &name, int type, const int64_t *ne, const void *bytes, uint64_t nbytes) {
    if (options_.use_mmap) {
        storage_.push_back(std::make_unique<PersistentTensor>(*backend_, name, type, ne, bytes, slab_.get()));
    } else {
        storage_.push_back(std::make_unique<PersistentTensor>(*backend_, name, type, std::initializer_list<int64_t>{ne[0], ne[1], ne[2], ne[3]},
                                                              slab_.get()));
        backend_->upload(storage_.back()->get()->t.data, bytes, nbytes);
    }
    weight_bytes_ += nbytes;
    if (options_.progress && !options_.progress(file_weight_bytes_ ? std::min(1.0f, (float)weight_bytes_ / (float)file_weight_bytes_) : 1.0f))
        throw Error(file_->path() + ": model load cancelled by the progress callback");
    return storage_.back()->get();
}

Tensor *Model::place(const std::string &name, std::initializer_list<int64_t> expected_ne, bool required) {
    const gguf::TensorInfo *ti = find_checked(*file_, name, expected_ne, required);
    if (!ti) return nullptr;
    n_params_ += (uint64_t)ti->n_elements();
    return store(name, ti->type, ti->ne, file_->tensor_data(*ti), ti->nbytes);
}

Tensor *Model::place_rows(const std::string &name, int64_t K, int64_t n_rows, int64_t first, int64_t count) {
    const gguf::TensorInfo *ti = find_checked(*file_, name, {K, n_rows}, false);
    if (!ti) return nullptr;
    const uint64_t row_bytes = row_size(ti->type, K);
    const int64_t ne[4] = {K, count, 1, 1};
    const std::string part = name + "[rows " + std::to_string(first) + ".." + std::to_string(first + count) + "]";
    n_params_ += (uint64_t)(K * count);
    return store(part, ti->type, ne, file_->tensor_data(*ti) + row_bytes * (uint64_t)first, row_bytes * (uint64_t)count);
}

// qwen2moe's shared expert (llama.cpp's FFN_GATE_INP_SHEXP, FFN_{GATE,UP,DOWN}_SHEXP). The
// converter writes the gate as a vector [n_embd] (f32, or the file's float type); [n_embd, 1]
// is read the same. It becomes a one-column weight, so its product with h is a MATMUL.
void Model::load_shared_expert(LayerWeights &w, const std::string &p) {
    const ModelHparams &hp = hp_;
    const int64_t E = hp.n_embd, F = hp.n_ff_shexp;
    const std::string gate = p + "ffn_gate_inp_shexp.weight";
    const gguf::TensorInfo *ti = file_->find_tensor(gate);
    if (!ti) throw Error(file_->path() + ": missing tensor '" + gate + "'");
    if (ti->ne[0] != E || ti->ne[1] != 1 || ti->ne[2] != 1 || ti->ne[3] != 1)
        throw Error(file_->path() + ": tensor '" + gate + "' has shape " + shape_str(ti->ne, 4) + ", expected [" +
                    std::to_string(E) + "] or [" + std::to_string(E) + ", 1]");
    if (!type_is_known(ti->type))
        throw Error(file_->path() + ": tensor '" + gate + "' has unknown type id " + std::to_string(ti->type));
    const int64_t ne[4] = {E, 1, 1, 1};
    n_params_ += (uint64_t)E;
    w.ffn_gate_inp_shexp = store(gate, ti->type, ne, file_->tensor_data(*ti), ti->nbytes);
    w.ffn_gate_shexp = place(p + "ffn_gate_shexp.weight", {E, F}, true);
    w.ffn_up_shexp = place(p + "ffn_up_shexp.weight", {E, F}, true);
    w.ffn_down_shexp = place(p + "ffn_down_shexp.weight", {F, E}, true);
}

// A 2-D f32 bias with one row per expert (gpt-oss's FFN_{GATE,UP,DOWN}_EXPS "bias").
Tensor *Model::place_expert_bias(const std::string &name, int64_t rows) {
    const gguf::TensorInfo *ti = find_checked(*file_, name, {rows, hp_.n_expert}, true);
    if (ti->type != RF_TYPE_F32)
        throw Error(file_->path() + ": tensor '" + name + "' must be f32 (expert biases), found " + type_name(ti->type));
    n_params_ += (uint64_t)ti->n_elements();
    return store(name, ti->type, ti->ne, file_->tensor_data(*ti), ti->nbytes);
}

// gpt-oss's router and expert biases (llama.cpp loads them all as required).
void Model::load_expert_biases(LayerWeights &w, const std::string &p) {
    const ModelHparams &hp = hp_;
    w.ffn_gate_inp_b = place(p + "ffn_gate_inp.bias", {hp.n_expert}, true);
    w.ffn_gate_exps_b = place_expert_bias(p + "ffn_gate_exps.bias", hp.n_ff_exp);
    w.ffn_up_exps_b = place_expert_bias(p + "ffn_up_exps.bias", hp.n_ff_exp);
    w.ffn_down_exps_b = place_expert_bias(p + "ffn_down_exps.bias", hp.n_embd);
}

void Model::load_layer(int64_t l) {
    if (hp_.hybrid()) return load_qwen35_layer(l);
    const ModelHparams &hp = hp_;
    const int64_t E = hp.n_embd, Q = hp.n_embd_q(), KV = hp.n_embd_kv(), F = hp.n_ff, D = hp.head_dim;
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights w;
    w.attn_norm = place(p + "attn_norm.weight", {E}, true);
    // phi3 stores the projections fused: attn_qkv rows are Q, K, V; ffn_up rows are gate, up.
    // Each part becomes a weight of its own, so the graph is the same as for separate files.
    const std::string qkv = p + "attn_qkv.weight";
    if (file_->find_tensor(qkv)) {
        w.wq = place_rows(qkv, E, Q + 2 * KV, 0, Q);
        w.wk = place_rows(qkv, E, Q + 2 * KV, Q, KV);
        w.wv = place_rows(qkv, E, Q + 2 * KV, Q + KV, KV);
    } else {
        w.wq = place(p + "attn_q.weight", {E, Q}, true);
        w.wk = place(p + "attn_k.weight", {E, KV}, true);
        w.wv = place(p + "attn_v.weight", {E, KV}, true);
    }
    w.wo = place(p + "attn_output.weight", {Q, E}, true);
    const bool gpt_oss = hp.arch == ModelArch::GptOss;
    const bool bias_required = hp.arch == ModelArch::Qwen2 || gpt_oss;
    w.bq = place(p + "attn_q.bias", {Q}, bias_required);
    w.bk = place(p + "attn_k.bias", {KV}, bias_required);
    w.bv = place(p + "attn_v.bias", {KV}, bias_required);
    if (gpt_oss) {
        w.bo = place(p + "attn_output.bias", {E}, true);
        w.attn_sinks = place(p + "attn_sinks.weight", {hp.n_head}, true);
    }
    if (hp.qk_norm) {
        w.attn_q_norm = place(p + "attn_q_norm.weight", {D}, true);
        w.attn_k_norm = place(p + "attn_k_norm.weight", {D}, true);
    }
    // gpt-oss names the FFN's input norm post_attention_norm (llama.cpp's ATTN_POST_NORM, applied
    // to the residual stream after attention: the place of everyone else's ffn_norm).
    w.ffn_norm = place(p + (gpt_oss ? "post_attention_norm.weight" : "ffn_norm.weight"), {E}, true);
    if (gpt_oss) load_expert_biases(w, p);
    if (hp.is_moe()) {
        // llama.cpp's FFN_GATE_INP and FFN_{GATE,UP,DOWN}_EXPS: one 3-D tensor per projection.
        const int64_t X = hp.n_expert, FX = hp.n_ff_exp;
        w.ffn_gate_inp = place(p + "ffn_gate_inp.weight", {E, X}, true);
        w.ffn_gate_exps = place(p + "ffn_gate_exps.weight", {E, FX, X}, true);
        w.ffn_up_exps = place(p + "ffn_up_exps.weight", {E, FX, X}, true);
        w.ffn_down_exps = place(p + "ffn_down_exps.weight", {FX, E, X}, true);
        if (hp.n_ff_shexp > 0) load_shared_expert(w, p);
    } else if (hp.arch == ModelArch::Phi3 && !file_->find_tensor(p + "ffn_gate.weight")) {
        const std::string up = p + "ffn_up.weight";
        w.ffn_gate = place_rows(up, E, 2 * F, 0, F);
        w.ffn_up = place_rows(up, E, 2 * F, F, F);
        if (!w.ffn_gate) throw Error(file_->path() + ": missing tensor '" + up + "'");
    } else {
        w.ffn_gate = place(p + "ffn_gate.weight", {E, F}, true);
        w.ffn_up = place(p + "ffn_up.weight", {E, F}, true);
    }
    if (!hp.is_moe()) w.ffn_down = place(p + "ffn_down.weight", {F, E}, true);
    if (hp.post_norms) { // llama.cpp's ATTN_POST_NORM / FFN_POST_NORM
        w.attn_post_norm = place(p + "post_attention_norm.weight", {E}, true);
        w.ffn_post_norm = place(p + "post_ffw_norm.weight", {E}, true);
    }
    layers.push_back(w);
}

std::unique_ptr<Model> Model::load(const std::string &path, Runtime &runtime, const ModelLoadOptions &options) {
    std::unique_ptr<Model> m(new Model());
    m->options_ = options;
    m->file_ = gguf::File::open(path);
    uint64_t slab_bytes = 0;
    for (const auto &t : m->file_->tensors()) {
        m->file_weight_bytes_ += t.nbytes;
        slab_bytes += BufferSlab::slice_bytes(t.nbytes);
    }
    m->hp_ = read_hparams(*m->file_);
    std::string skipped;
    m->backend_ = options.backend.empty() ? backend_for_weights(runtime, *m->file_, skipped) : runtime.find(options.backend);
    if (!skipped.empty() && m->backend_ && m->backend_ != runtime.primary())
        spdlog::info("{}: weights on {} ({})", path, m->backend_->name(), skipped);
    if (!m->backend_ && !options.backend.empty()) {
        std::string started;
        for (const auto *b : runtime.backends()) started += (started.empty() ? "" : ", ") + b->name();
        throw UsageError("cannot load " + path + " on backend '" + options.backend + "': no such backend started (started: " +
                         (started.empty() ? "none" : started) + ")");
    }
    if (!m->backend_) throw Error("cannot load " + path + ": no backend is available");
    m->slab_ = std::make_unique<BufferSlab>(*m->backend_, slab_bytes);

    // The weights go to the backend from here on (a copy to the device, or to the CPU backend's
    // own pages): a phase of its own in the profiler's TTFT breakdown.
    runtime.phase("upload");
    const ModelHparams &hp = m->hp_;
    if (hp.encoder) {
        m->load_encoder();
        return m;
    }
    const int64_t E = hp.n_embd, V = hp.n_vocab;
    m->tok_embd = m->place("token_embd.weight", {E, V}, true);
    m->output_norm = m->place("output_norm.weight", {E}, true);
    m->output = m->place("output.weight", {E, V}, false);
    if (!m->output) {
        m->output = m->tok_embd;
        m->tied_output = true;
    }
    m->rope_freqs = m->place("rope_freqs.weight", {hp.n_rot / 2}, false);
    m->rope_factors_long = m->place("rope_factors_long.weight", {hp.n_rot / 2}, false);
    m->rope_factors_short = m->place("rope_factors_short.weight", {hp.n_rot / 2}, false);
    for (int64_t l = 0; l < hp.n_layer; ++l) hp.is_mla() ? m->load_deepseek2_layer(l) : m->load_layer(l);
    return m;
}

std::string Model::description() const {
    std::string size = file_->get_string("general.size_label", "");
    if (size.empty()) {
        char buf[32];
        const double n = (double)n_params_;
        if (n >= 1e9) std::snprintf(buf, sizeof buf, "%.0fB", n / 1e9);
        else std::snprintf(buf, sizeof buf, "%.0fM", n / 1e6);
        size = buf;
    }
    return hp_.arch_name + " " + size + " " + format_label();
}

std::string Model::format_label() const {
    // general.file_type names the mix the file was written as (Q4_K_M keeps some tensors in
    // Q6_K, which may hold the most bytes), as llama.cpp reports it.
    // A value that is not an integer, or an unknown number, falls back to the guess below.
    const gguf::Value *ft = file_->find("general.file_type");
    if (ft && ft->is_integer() && ft->type != gguf::ValueType::BOOL && (ft->u >> 63) == 0)
        if (const std::string name = llama_ftype_name(ft->as_int()); !name.empty()) return name;
    // Otherwise the type holding most of the matrix bytes.
    std::map<int, uint64_t> bytes_by_type;
    for (const auto &t : file_->tensors())
        if (t.n_dims >= 2) bytes_by_type[t.type] += t.nbytes;
    int dominant = RF_TYPE_F32;
    uint64_t best = 0;
    for (const auto &[type, bytes] : bytes_by_type)
        if (bytes > best) best = bytes, dominant = type;
    std::string tname = type_name(dominant);
    for (char &c : tname) c = (char)std::toupper((unsigned char)c);
    return tname;
}

} // namespace rf
