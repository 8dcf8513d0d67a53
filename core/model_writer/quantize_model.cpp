// `rocmforge quantize`: re-encodes every quantizable tensor of a GGUF model under a mix, the way
// llama-quantize does (same per-tensor types, same reference quantizers).
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/escape.h"
#include "rocmforge/gguf.h"
#include "rocmforge/imatrix.h"
#include "rocmforge/model_writer.h"
#include "rocmforge/output_path.h"
#include "rocmforge/types.h"
#include "parallel_rows.h"
#include "row_convert.h"

namespace rf {

namespace {

constexpr uint32_t kQuantizationVersion = 2; // ggml's GGML_QNT_VERSION

struct TensorPlan {
    const gguf::TensorInfo *src = nullptr;
    int dst_type = 0;
    uint64_t dst_bytes = 0;
    std::vector<float> importance; // ne[0] * ne[2] weights, or empty
};

// The importance weights of a tensor being quantized to `type`, as llama-quantize picks them:
// the entry of the same name, which must hold ne[0] * ne[2] values (one row per expert);
// missing: an error when the type needs one, else a note and none.
std::vector<float> importance_for(const gguf::TensorInfo &t, int type, const Imatrix *im,
                                  const QuantizeOptions &opt) {
    const bool needed = tensor_needs_imatrix(t.name, type) || importance_required(type);
    if (!im) {
        if (needed)
            throw UsageError("tensor " + quote_name(t.name) + " becomes " + type_name(type) +
                             ", which needs an importance matrix: pass --imatrix FILE (rocmforge imatrix makes one)");
        return {};
    }
    const auto it = im->entries.find(t.name);
    if (it == im->entries.end()) {
        if (needed)
            throw Error("tensor " + quote_name(t.name) + " is missing from the importance matrix '" + opt.imatrix_path +
                        "', and its type " + type_name(type) + " needs importance data");
        // token_embd is a row lookup, never a product: no imatrix has it, so no note.
        if (opt.on_note && importance_aware(type) && t.name != "token_embd.weight")
            opt.on_note("no importance data for " + t.name + ": quantized to " + type_name(type) + " without");
        return {};
    }
    std::vector<float> w = it->second.weights();
    if (int64_t(w.size()) != t.ne[0] * t.ne[2]) {
        if (t.name == "token_embd.weight") return {}; // llama.cpp ignores this mismatch for token_embd
        throw Error("importance matrix '" + opt.imatrix_path + "' has " + std::to_string(w.size()) + " values for " +
                    quote_name(t.name) + ", which needs " + std::to_string(t.ne[0] * t.ne[2]) + " (" +
                    std::to_string(t.ne[0]) + " per row x " + std::to_string(t.ne[2]) + " matrices)");
    }
    return w;
}

// A per-layer array (some architectures) or a missing key reads as `def`.
int metadata_int(const gguf::File &f, const std::string &key, int def) {
    const gguf::Value *v = f.find(key);
    if (!v || !v->is_integer()) return def;
    return int(v->as_int());
}

std::vector<TensorPlan> plan_tensors(const gguf::File &in, const QuantizeOptions &opt, const Imatrix *im) {
    const std::string arch = in.get_string("general.architecture", "");
    const int n_layer = metadata_int(in, arch + ".block_count", 0);
    const int n_head = metadata_int(in, arch + ".attention.head_count", 0);
    const int n_head_kv = metadata_int(in, arch + ".attention.head_count_kv", n_head);
    const int n_expert = metadata_int(in, arch + ".expert_count", 0);
    const bool is_70b = arch == "llama" && n_layer == 80; // llama.cpp's LLM_TYPE_70B

    std::vector<std::string> names;
    for (const auto &t : in.tensors()) names.push_back(t.name);
    MixModelInfo info = mix_model_info(names, n_layer, n_head, n_head_kv, n_expert, is_70b);
    info.has_imatrix = im != nullptr;
    MixCounters counters;

    std::vector<TensorPlan> plan;
    for (const auto &t : in.tensors()) {
        TensorPlan p;
        p.src = &t;
        p.dst_type = choose_tensor_type(opt.mix, info, counters, t.name, t.ne, t.n_dims, t.type,
                                        opt.pure);
        if (tensor_is_quantizable(t.name, t.n_dims)) {
            if (opt.token_embedding_type >= 0 && t.name == "token_embd.weight")
                p.dst_type = opt.token_embedding_type;
            if (opt.output_tensor_type >= 0 && t.name == "output.weight")
                p.dst_type = opt.output_tensor_type;
        }
        if (p.dst_type != t.type) {
            if (type_traits(t.type)->quantized && !opt.allow_requantize)
                throw UsageError("tensor " + quote_name(t.name) + " is already quantized (" +
                                 type_name(t.type) + "); requantizing to " +
                                 type_name(p.dst_type) +
                                 " loses accuracy twice and is disabled without "
                                 "--allow-requantize");
            const bool float_src = t.type == RF_TYPE_F32 || t.type == RF_TYPE_F16 ||
                                   t.type == RF_TYPE_BF16;
            if (!float_src && !type_traits(t.type)->quantized)
                throw Error("tensor " + quote_name(t.name) + " has type " + type_name(t.type) +
                            ", which cannot be converted to " + type_name(p.dst_type));
            model_writer::check_row_fits(t.name, p.dst_type, t.ne[0]);
            if (type_traits(p.dst_type)->quantized) p.importance = importance_for(t, p.dst_type, im, opt);
        }
        p.dst_bytes = uint64_t(row_size(p.dst_type, t.ne[0])) *
                      uint64_t(t.ne[1] * t.ne[2] * t.ne[3]);
        plan.push_back(p);
    }
    return plan;
}

} // namespace

ModelWriteTotals quantize_model(const QuantizeOptions &opt) {
    auto in = gguf::File::open(opt.input_path);
    // Checked before the work: the output replaces its file only at the end (atomic rename),
    // so these would otherwise surface after all the tensors were converted.
    check_output_path(opt.output_path, "output");
    if (!opt.overwrite_input && same_file(opt.input_path, opt.output_path))
        throw UsageError("output '" + opt.output_path + "' is the input file '" + opt.input_path +
                         "' (the same file, or a link to it): writing it would replace the original; give another "
                         "output, or --overwrite-input to replace it on purpose");
    std::unique_ptr<Imatrix> im;
    if (!opt.imatrix_path.empty()) im = std::make_unique<Imatrix>(read_imatrix(opt.imatrix_path));
    const std::vector<TensorPlan> plan = plan_tensors(*in, opt, im.get());
    const int n_threads = model_writer::resolve_thread_count(opt.n_threads);
    const int ftype = mix_llama_ftype(opt.mix);

    gguf::Writer w;
    w.set_alignment(in->alignment());
    for (const auto &kv : in->metadata()) {
        if (kv.key == "general.file_type" && ftype < 0) continue; // no llama.cpp value to claim
        w.set(kv.key, kv.value);
    }
    w.set("general.quantization_version", gguf::Value::from_u32(kQuantizationVersion));
    if (ftype >= 0) w.set("general.file_type", gguf::Value::from_u32(uint32_t(ftype)));

    ModelWriteTotals totals;
    totals.n_tensors = plan.size();
    for (size_t k = 0; k < plan.size(); ++k) {
        const TensorPlan &p = plan[k];
        const gguf::TensorInfo &t = *p.src;
        totals.n_params += t.n_elements();
        totals.src_bytes += t.nbytes;
        totals.dst_bytes += p.dst_bytes;
        std::vector<int64_t> ne(t.ne, t.ne + t.n_dims);
        const gguf::File *file = in.get();
        w.add_tensor(t.name, p.dst_type, ne, [&opt, &plan, k, ne, file, n_threads](uint8_t *dst) {
            const TensorPlan &q = plan[k];
            const gguf::TensorInfo &src = *q.src;
            model_writer::convert_rows(src.type, file->tensor_data(src), q.dst_type, dst, src.ne[0],
                                       src.ne[1] * src.ne[2] * src.ne[3], n_threads,
                                       q.importance.empty() ? nullptr : q.importance.data(), src.ne[1]);
            if (opt.on_tensor) {
                TensorWriteEvent ev;
                ev.index = k + 1;
                ev.count = plan.size();
                ev.name = src.name;
                ev.ne = ne;
                ev.src_type = src.type;
                ev.dst_type = q.dst_type;
                ev.src_bytes = src.nbytes;
                ev.dst_bytes = q.dst_bytes;
                opt.on_tensor(ev);
            }
        });
    }
    w.write(opt.output_path);
    return totals;
}

} // namespace rf
