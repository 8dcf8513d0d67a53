// Model loading: every weight becomes a PersistentTensor on the primary backend built from the
// mapped GGUF bytes (wrapped without a copy when the backend can address host memory).
#include "rocmforge/model.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>

#include "rocmforge/error.h"
#include "rocmforge/quant_mix.h"
#include "rocmforge/types.h"

namespace rf {

Model::~Model() {
    storage_.clear(); // tensors before the mapping they may point into
    file_.reset();
}

static std::string shape_str(const int64_t *ne, int n) {
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

Tensor *Model::place(const std::string &name, std::initializer_list<int64_t> expected_ne, bool required) {
    const gguf::TensorInfo *ti = file_->find_tensor(name);
    if (!ti) {
        if (required) throw Error(file_->path() + ": missing tensor '" + name + "'");
        return nullptr;
    }
    int64_t want[4] = {1, 1, 1, 1};
    int n = 0;
    for (int64_t v : expected_ne) want[n++] = v;
    for (int i = 0; i < 4; ++i)
        if (ti->ne[i] != want[i])
            throw Error(file_->path() + ": tensor '" + name + "' has shape " + shape_str(ti->ne, 4) +
                        ", expected " + shape_str(want, 4));
    if (!type_is_known(ti->type))
        throw Error(file_->path() + ": tensor '" + name + "' has unknown type id " + std::to_string(ti->type));
    if (n == 1 && ti->type != RF_TYPE_F32)
        throw Error(file_->path() + ": tensor '" + name + "' must be f32 (norm/bias vector), found " +
                    type_name(ti->type));
    const void *bytes = file_->tensor_data(*ti);
    if (options_.use_mmap) {
        storage_.push_back(std::make_unique<PersistentTensor>(*backend_, name, ti->type, ti->ne, bytes));
    } else {
        storage_.push_back(std::make_unique<PersistentTensor>(*backend_, name, ti->type,
                                                              std::initializer_list<int64_t>{ti->ne[0], ti->ne[1], ti->ne[2], ti->ne[3]}));
        backend_->upload(storage_.back()->get()->t.data, bytes, ti->nbytes);
    }
    weight_bytes_ += ti->nbytes;
    n_params_ += (uint64_t)ti->n_elements();
    if (options_.progress && !options_.progress(file_weight_bytes_ ? std::min(1.0f, (float)weight_bytes_ / (float)file_weight_bytes_) : 1.0f))
        throw Error(file_->path() + ": model load cancelled by the progress callback");
    return storage_.back()->get();
}

std::unique_ptr<Model> Model::load(const std::string &path, Runtime &runtime, const ModelLoadOptions &options) {
    std::unique_ptr<Model> m(new Model());
    m->options_ = options;
    m->file_ = gguf::File::open(path);
    for (const auto &t : m->file_->tensors()) m->file_weight_bytes_ += t.nbytes;
    m->hp_ = read_hparams(*m->file_);
    m->backend_ = runtime.primary();
    if (!m->backend_) throw Error("cannot load " + path + ": no backend is available");

    // The weights go to the backend from here on (a copy to the device, or to the CPU backend's
    // own pages): a phase of its own in the profiler's TTFT breakdown.
    runtime.phase("upload");
    const ModelHparams &hp = m->hp_;
    const int64_t E = hp.n_embd, V = hp.n_vocab, Q = hp.n_embd_q(), KV = hp.n_embd_kv(), F = hp.n_ff;
    m->tok_embd = m->place("token_embd.weight", {E, V}, true);
    m->output_norm = m->place("output_norm.weight", {E}, true);
    m->output = m->place("output.weight", {E, V}, false);
    if (!m->output) {
        m->output = m->tok_embd;
        m->tied_output = true;
    }
    m->rope_freqs = m->place("rope_freqs.weight", {hp.n_rot / 2}, false);

    const bool bias_required = hp.arch == ModelArch::Qwen2;
    for (int64_t l = 0; l < hp.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        LayerWeights w;
        w.attn_norm = m->place(p + "attn_norm.weight", {E}, true);
        w.wq = m->place(p + "attn_q.weight", {E, Q}, true);
        w.wk = m->place(p + "attn_k.weight", {E, KV}, true);
        w.wv = m->place(p + "attn_v.weight", {E, KV}, true);
        w.wo = m->place(p + "attn_output.weight", {Q, E}, true);
        w.bq = m->place(p + "attn_q.bias", {Q}, bias_required);
        w.bk = m->place(p + "attn_k.bias", {KV}, bias_required);
        w.bv = m->place(p + "attn_v.bias", {KV}, bias_required);
        w.ffn_norm = m->place(p + "ffn_norm.weight", {E}, true);
        w.ffn_gate = m->place(p + "ffn_gate.weight", {E, F}, true);
        w.ffn_up = m->place(p + "ffn_up.weight", {E, F}, true);
        w.ffn_down = m->place(p + "ffn_down.weight", {F, E}, true);
        m->layers.push_back(w);
    }
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
