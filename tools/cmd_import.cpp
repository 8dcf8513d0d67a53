// `rocmforge import`: a model trained by tools/train/train.py -> llama GGUF.
//
// Inputs
//   manifest.json  {"format": "rocmforge-train-v1", "dtype": "f32", "weights_file": "weights.f32",
//                   "hparams": {n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff,
//                               n_ctx, rope_base, rms_eps, tied},
//                   "tensors": [{"name", "shape" (PyTorch order), "offset", "nbytes"}, ...]}
//   weights file   little-endian float32, next to the manifest
//   tokenizer.json {"model": "gpt2", "pre", "tokens", "token_type", "merges", "bos_token_id",
//                   "eos_token_id", "add_bos_token", "add_eos_token"}
// The PyTorch model already uses llama.cpp's RoPE layout (tools/train/model.py), so Q/K are
// copied as they are. A PyTorch shape [out, in] is GGUF ne [in, out]: same bytes.
// Metadata keys and their order follow llama.cpp's convert_hf_to_gguf.py for LlamaModel.
#include "cmd_import.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "rocmforge/abi.h"
#include "rocmforge/error.h"
#include "rocmforge/gguf.h"
#include "rocmforge/model_writer.h"
#include "rocmforge/types.h"

namespace {

using rf::Error;
using rf::UsageError;
using rf::gguf::Value;

const char *kUsage =
    "usage: rocmforge import --manifest DIR/manifest.json --tokenizer TOK.json -o OUT.gguf\n"
    "                        [--outtype f16|f32] [--name NAME] [--description TEXT]\n"
    "\n"
    "Writes a llama GGUF from the weights of tools/train/train.py (float32 + manifest.json)\n"
    "and the byte-level BPE tokenizer of tools/train/train_tokenizer.py.\n"
    "\n"
    "  --manifest FILE    manifest.json written by train.py (the weights file lies beside it)\n"
    "  --tokenizer FILE   tokenizer JSON written by train_tokenizer.py\n"
    "  -o, --output FILE  output GGUF (appears only once complete)\n"
    "  --outtype T        f16 (default: 2-D weights F16, norms F32) or f32 (everything F32)\n"
    "  --name NAME        general.name (default: \"KJV tiny llama\")\n"
    "  --description TXT  general.description\n"
    "  -h, --help         show this help\n";

std::string dirname_of(const std::string &path) {
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("import: cannot read '" + path + "'");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw Error("import: error while reading '" + path + "'");
    return ss.str();
}

rapidjson::Document parse_json(const std::string &path) {
    const std::string text = read_file(path);
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag>(text.c_str(), text.size()); // no stack overflow on deep nesting
    if (doc.HasParseError())
        throw Error(path + ": invalid JSON at byte " + std::to_string(doc.GetErrorOffset()) + ": " +
                    rapidjson::GetParseError_En(doc.GetParseError()));
    if (!doc.IsObject()) throw Error(path + ": the top level must be a JSON object");
    return doc;
}

// Typed field access with errors naming the file and the field.
struct JsonObject {
    const rapidjson::Value &v;
    std::string where; // "file: field path"

    const rapidjson::Value &field(const char *key) const {
        auto it = v.FindMember(key);
        if (it == v.MemberEnd()) throw Error(where + ": missing field '" + key + "'");
        return it->value;
    }
    bool has(const char *key) const { return v.HasMember(key); }
    int64_t integer(const char *key, int64_t lo, int64_t hi) const {
        const auto &x = field(key);
        if (!x.IsInt64()) throw Error(where + ": field '" + key + "' must be an integer");
        const int64_t i = x.GetInt64();
        if (i < lo || i > hi)
            throw Error(where + ": field '" + key + "' = " + std::to_string(i) + " is outside [" +
                        std::to_string(lo) + ", " + std::to_string(hi) + "]");
        return i;
    }
    double number(const char *key) const {
        const auto &x = field(key);
        if (!x.IsNumber() || !std::isfinite(x.GetDouble()))
            throw Error(where + ": field '" + key + "' must be a finite number");
        return x.GetDouble();
    }
    bool boolean(const char *key) const {
        const auto &x = field(key);
        if (!x.IsBool()) throw Error(where + ": field '" + key + "' must be true or false");
        return x.GetBool();
    }
    std::string string(const char *key) const {
        const auto &x = field(key);
        if (!x.IsString()) throw Error(where + ": field '" + key + "' must be a string");
        return std::string(x.GetString(), x.GetStringLength());
    }
    const rapidjson::Value &array(const char *key) const {
        const auto &x = field(key);
        if (!x.IsArray()) throw Error(where + ": field '" + key + "' must be an array");
        return x;
    }
    JsonObject object(const char *key) const {
        const auto &x = field(key);
        if (!x.IsObject()) throw Error(where + ": field '" + key + "' must be an object");
        return {x, where + "." + key};
    }
};

struct Hparams {
    int64_t n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_ctx;
    double rope_base, rms_eps;
    bool tied;
};

struct WeightTensor {
    std::string name;
    std::vector<int64_t> shape; // PyTorch order
    uint64_t offset = 0;
    const float *data = nullptr; // into the weights buffer
    int64_t n_elements() const {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        return n;
    }
};

struct TrainedModel {
    Hparams hp{};
    std::vector<WeightTensor> tensors;
    std::vector<float> weights;
};

std::string shape_str(const std::vector<int64_t> &s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
}

// The tensors llama.cpp's llama loader expects, in its order, with PyTorch shapes.
std::vector<std::pair<std::string, std::vector<int64_t>>> expected_tensors(const Hparams &hp) {
    const int64_t E = hp.n_embd, V = hp.n_vocab, Q = hp.n_head * hp.head_dim,
                  KV = hp.n_head_kv * hp.head_dim, F = hp.n_ff;
    std::vector<std::pair<std::string, std::vector<int64_t>>> t = {{"token_embd.weight", {V, E}}};
    for (int64_t i = 0; i < hp.n_layer; ++i) {
        const std::string p = "blk." + std::to_string(i) + ".";
        t.push_back({p + "attn_norm.weight", {E}});
        t.push_back({p + "attn_q.weight", {Q, E}});
        t.push_back({p + "attn_k.weight", {KV, E}});
        t.push_back({p + "attn_v.weight", {KV, E}});
        t.push_back({p + "attn_output.weight", {E, Q}});
        t.push_back({p + "ffn_norm.weight", {E}});
        t.push_back({p + "ffn_gate.weight", {F, E}});
        t.push_back({p + "ffn_up.weight", {F, E}});
        t.push_back({p + "ffn_down.weight", {E, F}});
    }
    t.push_back({"output_norm.weight", {E}});
    if (!hp.tied) t.push_back({"output.weight", {V, E}});
    return t;
}

TrainedModel read_trained_model(const std::string &manifest_path) {
    const rapidjson::Document doc = parse_json(manifest_path);
    const JsonObject root{doc, manifest_path};
    if (root.string("format") != "rocmforge-train-v1")
        throw Error(manifest_path + ": field 'format' must be \"rocmforge-train-v1\"");
    if (root.string("dtype") != "f32") throw Error(manifest_path + ": field 'dtype' must be \"f32\"");

    TrainedModel m;
    const JsonObject h = root.object("hparams");
    const int64_t big = int64_t(1) << 31;
    m.hp.n_vocab = h.integer("n_vocab", 1, big);
    m.hp.n_embd = h.integer("n_embd", 1, big);
    m.hp.n_layer = h.integer("n_layer", 1, 4096);
    m.hp.n_head = h.integer("n_head", 1, 4096);
    m.hp.n_head_kv = h.integer("n_head_kv", 1, m.hp.n_head);
    m.hp.head_dim = h.integer("head_dim", 2, 4096);
    m.hp.n_ff = h.integer("n_ff", 1, big);
    m.hp.n_ctx = h.integer("n_ctx", 1, big);
    m.hp.rope_base = h.number("rope_base");
    m.hp.rms_eps = h.number("rms_eps");
    m.hp.tied = h.boolean("tied");
    if (m.hp.n_head % m.hp.n_head_kv != 0)
        throw Error(manifest_path + ": n_head " + std::to_string(m.hp.n_head) +
                    " is not a multiple of n_head_kv " + std::to_string(m.hp.n_head_kv));
    if (m.hp.head_dim % 2 != 0) throw Error(manifest_path + ": head_dim must be even (RoPE pairs)");
    if (!(m.hp.rope_base > 0) || !(m.hp.rms_eps > 0))
        throw Error(manifest_path + ": rope_base and rms_eps must be positive");

    const std::string weights_path = dirname_of(manifest_path) + "/" + root.string("weights_file");
    const std::string bytes = read_file(weights_path);
    if (bytes.size() % 4 != 0)
        throw Error(weights_path + ": size " + std::to_string(bytes.size()) + " is not a multiple of 4");
    m.weights.resize(bytes.size() / 4);
    std::memcpy(m.weights.data(), bytes.data(), bytes.size()); // little-endian host assumed (x86/arm64)

    const auto &list = root.array("tensors");
    std::map<std::string, size_t> index;
    for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
        if (!list[i].IsObject()) throw Error(manifest_path + ": tensors[" + std::to_string(i) + "] must be an object");
        const JsonObject t{list[i], manifest_path + ": tensors[" + std::to_string(i) + "]"};
        WeightTensor w;
        w.name = t.string("name");
        const auto &shape = t.array("shape");
        if (shape.Empty() || shape.Size() > 2) throw Error(t.where + ": shape must have 1 or 2 dimensions");
        for (const auto &d : shape.GetArray()) {
            if (!d.IsInt64() || d.GetInt64() <= 0) throw Error(t.where + ": shape entries must be positive integers");
            w.shape.push_back(d.GetInt64());
        }
        const int64_t nbytes = t.integer("nbytes", 0, INT64_MAX);
        w.offset = uint64_t(t.integer("offset", 0, INT64_MAX));
        if (nbytes != w.n_elements() * 4)
            throw Error(t.where + " '" + w.name + "': nbytes " + std::to_string(nbytes) + " != 4 * elements of " +
                        shape_str(w.shape));
        if (w.offset % 4 != 0 || w.offset + uint64_t(nbytes) > bytes.size())
            throw Error(t.where + " '" + w.name + "': bytes [" + std::to_string(w.offset) + ", " +
                        std::to_string(w.offset + nbytes) + ") are misaligned or past the end of " + weights_path +
                        " (" + std::to_string(bytes.size()) + " bytes)");
        w.data = m.weights.data() + w.offset / 4;
        for (int64_t k = 0; k < w.n_elements(); ++k)
            if (!std::isfinite(w.data[k]))
                throw Error(t.where + " '" + w.name + "': element " + std::to_string(k) + " is not finite");
        if (!index.emplace(w.name, m.tensors.size()).second)
            throw Error(t.where + ": tensor '" + w.name + "' appears twice");
        m.tensors.push_back(std::move(w));
    }

    // Exactly the llama tensors, in llama.cpp's order.
    std::vector<WeightTensor> ordered;
    for (const auto &[name, shape] : expected_tensors(m.hp)) {
        auto it = index.find(name);
        if (it == index.end()) throw Error(manifest_path + ": missing tensor '" + name + "'");
        const WeightTensor &w = m.tensors[it->second];
        if (w.shape != shape)
            throw Error(manifest_path + ": tensor '" + name + "' has shape " + shape_str(w.shape) +
                        ", the hparams want " + shape_str(shape));
        ordered.push_back(w);
    }
    if (ordered.size() != m.tensors.size()) {
        for (const auto &w : m.tensors) {
            bool known = false;
            for (const auto &o : ordered) known = known || o.name == w.name;
            if (!known) throw Error(manifest_path + ": unexpected tensor '" + w.name + "'");
        }
    }
    m.tensors = std::move(ordered);
    return m;
}

std::vector<std::string> string_array(const JsonObject &o, const char *key) {
    std::vector<std::string> out;
    const auto &a = o.array(key);
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
        if (!a[i].IsString()) throw Error(o.where + ": " + key + "[" + std::to_string(i) + "] must be a string");
        out.emplace_back(a[i].GetString(), a[i].GetStringLength());
    }
    return out;
}

// Tokenizer JSON -> tokenizer.ggml.* keys (as llama.cpp's gguf-py writes them).
void set_tokenizer_metadata(rf::gguf::Writer &w, const std::string &path, int64_t n_vocab) {
    const rapidjson::Document doc = parse_json(path);
    const JsonObject t{doc, path};
    const std::string model = t.string("model");
    if (model != "gpt2") throw Error(path + ": field 'model' is \"" + model + "\"; only \"gpt2\" (byte-level BPE) is supported");
    const std::vector<std::string> tokens = string_array(t, "tokens");
    const std::vector<std::string> merges = string_array(t, "merges");
    if (int64_t(tokens.size()) != n_vocab)
        throw Error(path + ": " + std::to_string(tokens.size()) + " tokens, but the model's n_vocab is " +
                    std::to_string(n_vocab));
    std::vector<int32_t> types;
    const auto &ta = t.array("token_type");
    for (rapidjson::SizeType i = 0; i < ta.Size(); ++i) {
        if (!ta[i].IsInt() || ta[i].GetInt() < 0 || ta[i].GetInt() > 6)
            throw Error(path + ": token_type[" + std::to_string(i) + "] must be an integer 0..6");
        types.push_back(ta[i].GetInt());
    }
    if (types.size() != tokens.size())
        throw Error(path + ": token_type has " + std::to_string(types.size()) + " entries for " +
                    std::to_string(tokens.size()) + " tokens");
    for (size_t i = 0; i < merges.size(); ++i) {
        const size_t sp = merges[i].find(' ');
        if (sp == std::string::npos || sp == 0 || sp + 1 == merges[i].size() ||
            merges[i].find(' ', sp + 1) != std::string::npos)
            throw Error(path + ": merges[" + std::to_string(i) + "] = \"" + merges[i] + "\" is not \"LEFT RIGHT\"");
    }
    const int64_t bos = t.integer("bos_token_id", 0, n_vocab - 1);
    const int64_t eos = t.integer("eos_token_id", 0, n_vocab - 1);

    w.set("tokenizer.ggml.model", Value::from_string(model));
    w.set("tokenizer.ggml.pre", Value::from_string(t.string("pre")));
    w.set("tokenizer.ggml.tokens", Value::from_strings(tokens));
    w.set("tokenizer.ggml.token_type", Value::from_i32s(types));
    w.set("tokenizer.ggml.merges", Value::from_strings(merges));
    w.set("tokenizer.ggml.bos_token_id", Value::from_u32(uint32_t(bos)));
    w.set("tokenizer.ggml.eos_token_id", Value::from_u32(uint32_t(eos)));
    w.set("tokenizer.ggml.add_bos_token", Value::from_bool(t.boolean("add_bos_token")));
    w.set("tokenizer.ggml.add_eos_token", Value::from_bool(t.boolean("add_eos_token")));
}

} // namespace

int cmd_import(int argc, char **argv) {
    std::string manifest, tokenizer, output, outtype = "f16";
    std::string name = "KJV tiny llama", description;
    for (int k = 1; k < argc; ++k) {
        const std::string a = argv[k];
        if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        auto value = [&]() -> std::string {
            if (k + 1 >= argc) throw UsageError("import: option '" + a + "' needs a value");
            return argv[++k];
        };
        if (a == "--manifest") manifest = value();
        else if (a == "--tokenizer") tokenizer = value();
        else if (a == "-o" || a == "--output") output = value();
        else if (a == "--outtype") outtype = value();
        else if (a == "--name") name = value();
        else if (a == "--description") description = value();
        else throw UsageError("import: unknown option '" + a + "' (see rocmforge import --help)");
    }
    if (manifest.empty() || tokenizer.empty() || output.empty())
        throw UsageError("import: --manifest, --tokenizer and -o are required (see rocmforge import --help)");
    if (outtype != "f16" && outtype != "f32") throw UsageError("import: --outtype must be f16 or f32");
    const bool f16 = outtype == "f16";

    const TrainedModel m = read_trained_model(manifest);
    const Hparams &hp = m.hp;
    int64_t n_params = 0;
    for (const auto &t : m.tensors) n_params += t.n_elements();

    rf::gguf::Writer w;
    const std::string a = "llama.";
    w.set("general.architecture", Value::from_string("llama"));
    w.set("general.type", Value::from_string("model"));
    w.set("general.name", Value::from_string(name));
    if (!description.empty()) w.set("general.description", Value::from_string(description));
    w.set("general.size_label", Value::from_string(rf::size_label(n_params)));
    rf::set_llama_hparam_keys(w, {"llama", hp.n_layer, hp.n_ctx, hp.n_embd, hp.n_ff, hp.n_head, hp.n_head_kv,
                              float(hp.rope_base), float(hp.rms_eps)});
    if (hp.head_dim * hp.n_head != hp.n_embd) { // convert writes these only when they differ
        w.set(a + "attention.key_length", Value::from_u32(uint32_t(hp.head_dim)));
        w.set(a + "attention.value_length", Value::from_u32(uint32_t(hp.head_dim)));
    }
    w.set("general.file_type", Value::from_u32(f16 ? 1u : 0u)); // LLAMA_FTYPE_MOSTLY_F16 / ALL_F32
    w.set(a + "vocab_size", Value::from_u32(uint32_t(hp.n_vocab)));
    w.set(a + "rope.dimension_count", Value::from_u32(uint32_t(hp.head_dim)));
    set_tokenizer_metadata(w, tokenizer, hp.n_vocab);
    w.set("general.quantization_version", Value::from_u32(2));

    for (const auto &t : m.tensors) {
        std::vector<int64_t> ne(t.shape.rbegin(), t.shape.rend()); // PyTorch [out, in] -> ne [in, out]
        const int64_t n = t.n_elements();
        const float *src = t.data;
        if (f16 && t.shape.size() == 2) {
            w.add_tensor(t.name, RF_TYPE_F16, ne, [src, n](uint8_t *dst) {
                for (int64_t k = 0; k < n; ++k) {
                    const uint16_t h = rf::fp32_to_fp16(src[k]);
                    std::memcpy(dst + 2 * k, &h, 2);
                }
            });
        } else {
            w.add_tensor(t.name, RF_TYPE_F32, ne, src);
        }
    }
    w.write(output);
    std::printf("import: wrote %s: %zu tensors, %lld parameters (%s), %s\n", output.c_str(), m.tensors.size(),
                (long long)n_params, rf::size_label(n_params).c_str(), f16 ? "F16 matrices, F32 norms" : "all F32");
    return 0;
}
