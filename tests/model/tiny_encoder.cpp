#include "tiny_encoder.h"

#include <cmath>
#include <random>

#include "float_tensor.h"
#include "rocmforge/gguf.h"
#include "rocmforge/types.h"

namespace rf_test {

using rf::gguf::Value;
using Vec = std::vector<double>;

const char *const kEncoderWords[] = {"hello", "world", "the", "cat", "sat", "on", "mat", "embed", "me", "please"};
const int kEncoderWordCount = 10;

namespace {

// The bert vocabulary as convert_hf_to_gguf.py stores it: specials (control), words with U+2581.
void write_vocab(rf::gguf::Writer &wr, int64_t n_vocab) {
    std::vector<std::string> tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    for (int i = 0; i < kEncoderWordCount; ++i) tokens.push_back(std::string("\u2581") + kEncoderWords[i]);
    while ((int64_t)tokens.size() < n_vocab) tokens.push_back("\u2581filler" + std::to_string(tokens.size()));
    std::vector<int32_t> types(tokens.size(), 1);
    for (int i = 0; i < 5; ++i) types[(size_t)i] = 3;
    wr.set("tokenizer.ggml.model", Value::from_string("bert"));
    wr.set("tokenizer.ggml.tokens", Value::from_strings(tokens));
    wr.set("tokenizer.ggml.token_type", Value::from_i32s(types));
    wr.set("tokenizer.ggml.token_type_count", Value::from_u32(2));
    wr.set("tokenizer.ggml.bos_token_id", Value::from_u32(2));
    wr.set("tokenizer.ggml.seperator_token_id", Value::from_u32(3));
    wr.set("tokenizer.ggml.unknown_token_id", Value::from_u32(1));
    wr.set("tokenizer.ggml.padding_token_id", Value::from_u32(0));
    wr.set("tokenizer.ggml.mask_token_id", Value::from_u32(4));
}

Vec matvec(const std::vector<float> &W, const Vec &x, int64_t N) {
    const int64_t K = (int64_t)x.size();
    Vec y((size_t)N, 0.0);
    for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) y[(size_t)n] += (double)W[(size_t)(n * K + k)] * x[(size_t)k];
    return y;
}

void add(Vec &x, const std::vector<float> &b) {
    for (size_t i = 0; i < x.size(); ++i) x[i] += b[i];
}

Vec layer_norm(const Vec &x, const std::vector<float> &w, const std::vector<float> &b, double eps) {
    double mean = 0, var = 0;
    for (double v : x) mean += v;
    mean /= (double)x.size();
    for (double v : x) var += (v - mean) * (v - mean);
    var /= (double)x.size();
    Vec y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mean) / std::sqrt(var + eps) * w[i] + b[i];
    return y;
}

// NeoX rotation of every head (all D dimensions) at position pos.
void rope_neox(Vec &x, int64_t n_head, int64_t D, int64_t pos, double base) {
    for (int64_t h = 0; h < n_head; ++h) {
        double *v = x.data() + h * D;
        for (int64_t i = 0; i < D / 2; ++i) {
            const double th = (double)pos * std::pow(base, -2.0 * (double)i / (double)D);
            const double a = v[i], b = v[i + D / 2];
            v[i] = a * std::cos(th) - b * std::sin(th);
            v[i + D / 2] = a * std::sin(th) + b * std::cos(th);
        }
    }
}

double gelu(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }

} // namespace

TinyEncoderWeights write_tiny_encoder(const std::string &path, const TinyEncoderSpec &s) {
    TinyEncoderWeights w;
    w.spec = s;
    const bool bert = s.arch == "bert";
    const int64_t E = s.n_embd, F = s.n_ff;
    std::mt19937 rng(s.seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    rf::gguf::Writer wr;
    const std::string a = s.arch;
    wr.set("general.architecture", Value::from_string(a));
    wr.set("general.name", Value::from_string("tiny-" + a));
    wr.set(a + ".context_length", Value::from_u32((uint32_t)s.n_ctx_train));
    wr.set(a + ".embedding_length", Value::from_u32((uint32_t)E));
    wr.set(a + ".feed_forward_length", Value::from_u32((uint32_t)F));
    wr.set(a + ".block_count", Value::from_u32((uint32_t)s.n_layer));
    wr.set(a + ".attention.head_count", Value::from_u32((uint32_t)s.n_head));
    wr.set(a + ".attention.layer_norm_epsilon", Value::from_f32(s.norm_eps));
    if (!bert) wr.set(a + ".rope.freq_base", Value::from_f32(s.rope_base));
    wr.set(a + ".attention.causal", Value::from_bool(false));
    wr.set(a + ".pooling_type", Value::from_u32((uint32_t)s.pooling_type));
    write_vocab(wr, s.n_vocab);

    auto write = [&](const std::string &name, std::vector<int64_t> ne, std::vector<float> vals, int type) {
        add_float_tensor(wr, name, std::move(ne), std::move(vals), type);
    };
    auto make = [&](const std::string &name, int64_t n, float mean, float sd, bool matrix) -> const std::vector<float> & {
        std::vector<float> v((size_t)n);
        for (auto &x : v) x = mean + sd * normal(rng);
        if (matrix && s.matrix_type == RF_TYPE_F16)
            for (auto &x : v) x = rf::fp16_to_fp32(rf::fp32_to_fp16(x));
        return w.t[name] = std::move(v);
    };
    auto tensor = [&](const std::string &name, std::vector<int64_t> ne, float mean, float sd) {
        const bool matrix = ne.size() > 1;
        int64_t n = 1;
        for (int64_t d : ne) n *= d;
        write(name, ne, make(name, n, mean, sd, matrix), matrix ? s.matrix_type : (int)RF_TYPE_F32);
    };
    const float inv_e = 1.0f / std::sqrt((float)E), inv_f = 1.0f / std::sqrt((float)F);
    tensor("token_embd.weight", {E, s.n_vocab}, 0.0f, 1.0f);
    if (bert) tensor("position_embd.weight", {E, s.n_ctx_train}, 0.0f, 0.5f);
    tensor("token_types.weight", {E, 2}, 0.0f, 0.5f);
    tensor("token_embd_norm.weight", {E}, 1.0f, 0.1f);
    tensor("token_embd_norm.bias", {E}, 0.0f, 0.1f);
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        if (bert) {
            for (const char *n : {"attn_q", "attn_k", "attn_v"}) {
                tensor(p + n + ".weight", {E, E}, 0.0f, inv_e);
                tensor(p + n + ".bias", {E}, 0.0f, 0.1f);
            }
        } else { // Q, K, V stacked by rows in attn_qkv; the parts kept for the reference
            std::vector<float> all;
            for (const char *n : {"attn_q", "attn_k", "attn_v"}) {
                const auto &v = make(p + n + ".weight", E * E, 0.0f, inv_e, true);
                all.insert(all.end(), v.begin(), v.end());
            }
            write(p + "attn_qkv.weight", {E, 3 * E}, std::move(all), s.matrix_type);
        }
        tensor(p + "attn_output.weight", {E, E}, 0.0f, inv_e);
        if (bert) tensor(p + "attn_output.bias", {E}, 0.0f, 0.1f);
        tensor(p + "attn_output_norm.weight", {E}, 1.0f, 0.1f);
        tensor(p + "attn_output_norm.bias", {E}, 0.0f, 0.1f);
        if (!bert) tensor(p + "ffn_gate.weight", {E, F}, 0.0f, inv_e);
        tensor(p + "ffn_up.weight", {E, F}, 0.0f, inv_e);
        if (bert) tensor(p + "ffn_up.bias", {F}, 0.0f, 0.1f);
        tensor(p + "ffn_down.weight", {F, E}, 0.0f, inv_f);
        if (bert) tensor(p + "ffn_down.bias", {E}, 0.0f, 0.1f);
        tensor(p + "layer_output_norm.weight", {E}, 1.0f, 0.1f);
        tensor(p + "layer_output_norm.bias", {E}, 0.0f, 0.1f);
    }
    wr.write(path);
    return w;
}

std::vector<std::vector<double>> reference_encoder(const TinyEncoderWeights &w, const std::vector<int32_t> &tokens) {
    const TinyEncoderSpec &s = w.spec;
    const bool bert = s.arch == "bert";
    const int64_t E = s.n_embd, H = s.n_head, D = E / H, T = (int64_t)tokens.size();
    auto W = [&](const std::string &name) -> const std::vector<float> & { return w.t.at(name); };
    std::vector<Vec> x((size_t)T, Vec((size_t)E));
    for (int64_t t = 0; t < T; ++t) {
        for (int64_t i = 0; i < E; ++i) {
            double v = W("token_embd.weight")[(size_t)(tokens[(size_t)t] * E + i)] + W("token_types.weight")[(size_t)i];
            if (bert) v += W("position_embd.weight")[(size_t)(t * E + i)];
            x[(size_t)t][(size_t)i] = v;
        }
        x[(size_t)t] = layer_norm(x[(size_t)t], W("token_embd_norm.weight"), W("token_embd_norm.bias"), s.norm_eps);
    }
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        std::vector<Vec> q, k, v;
        for (int64_t t = 0; t < T; ++t) {
            Vec qt = matvec(W(p + "attn_q.weight"), x[(size_t)t], E), kt = matvec(W(p + "attn_k.weight"), x[(size_t)t], E),
                vt = matvec(W(p + "attn_v.weight"), x[(size_t)t], E);
            if (bert) add(qt, W(p + "attn_q.bias")), add(kt, W(p + "attn_k.bias")), add(vt, W(p + "attn_v.bias"));
            else rope_neox(qt, H, D, t, s.rope_base), rope_neox(kt, H, D, t, s.rope_base);
            q.push_back(qt), k.push_back(kt), v.push_back(vt);
        }
        std::vector<Vec> next((size_t)T);
        for (int64_t t = 0; t < T; ++t) {
            Vec att((size_t)E, 0.0);
            for (int64_t h = 0; h < H; ++h) {
                Vec sc((size_t)T);
                double mx = -1e300, sum = 0;
                for (int64_t u = 0; u < T; ++u) { // every token: bidirectional
                    double d = 0;
                    for (int64_t i = 0; i < D; ++i) d += q[(size_t)t][(size_t)(h * D + i)] * k[(size_t)u][(size_t)(h * D + i)];
                    sc[(size_t)u] = d / std::sqrt((double)D);
                    mx = std::max(mx, sc[(size_t)u]);
                }
                for (double &c : sc) sum += (c = std::exp(c - mx));
                for (int64_t u = 0; u < T; ++u)
                    for (int64_t i = 0; i < D; ++i) att[(size_t)(h * D + i)] += sc[(size_t)u] / sum * v[(size_t)u][(size_t)(h * D + i)];
            }
            Vec o = matvec(W(p + "attn_output.weight"), att, E);
            if (bert) add(o, W(p + "attn_output.bias"));
            for (int64_t i = 0; i < E; ++i) o[(size_t)i] += x[(size_t)t][(size_t)i];
            const Vec h1 = layer_norm(o, W(p + "attn_output_norm.weight"), W(p + "attn_output_norm.bias"), s.norm_eps);
            Vec up = matvec(W(p + "ffn_up.weight"), h1, s.n_ff);
            if (bert) {
                add(up, W(p + "ffn_up.bias"));
                for (double &u : up) u = gelu(u);
            } else {
                const Vec gate = matvec(W(p + "ffn_gate.weight"), h1, s.n_ff);
                for (size_t i = 0; i < up.size(); ++i) up[i] *= gate[i] / (1.0 + std::exp(-gate[i]));
            }
            Vec f = matvec(W(p + "ffn_down.weight"), up, E);
            if (bert) add(f, W(p + "ffn_down.bias"));
            for (int64_t i = 0; i < E; ++i) f[(size_t)i] += h1[(size_t)i];
            next[(size_t)t] = layer_norm(f, W(p + "layer_output_norm.weight"), W(p + "layer_output_norm.bias"), s.norm_eps);
        }
        x = std::move(next);
    }
    return x;
}

} // namespace rf_test
