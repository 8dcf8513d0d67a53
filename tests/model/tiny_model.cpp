#include "tiny_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>

#include <unistd.h>

#include "float_tensor.h"
#include "rocmforge/gguf.h"
#include "rocmforge/types.h"

namespace rf_test {

using rf::gguf::Value;

std::string temp_path(const std::string &name) {
    auto dir = std::filesystem::temp_directory_path() / ("rf_model_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return (dir / name).string();
}

namespace {

bool is_gemma(const std::string &arch) { return arch == "gemma2" || arch == "gemma3"; }
bool is_gpt_oss(const std::string &arch) { return arch == "gpt-oss"; }
bool has_qk_norm(const std::string &arch) { return arch == "qwen3" || arch == "gemma3" || arch == "qwen3moe"; }
bool neox_rope(const std::string &arch) { return arch != "llama" && arch != "mistral"; }
int64_t head_size(const TinySpec &s) { return s.head_dim ? s.head_dim : s.n_embd / s.n_head; }
// One expert's FFN width as llama.cpp reads it.
int64_t expert_ff(const TinySpec &s) {
    if (s.arch != "qwen3moe" && s.arch != "qwen2moe" && s.arch != "gpt-oss") return s.n_ff;
    return s.n_ff_exp ? s.n_ff_exp : s.n_ff / s.n_expert_used;
}
int64_t shared_ff(const TinySpec &s) { return s.n_ff_shexp ? s.n_ff_shexp : s.n_ff; }

} // namespace


const std::vector<float> &random_tensor(std::map<std::string, std::vector<float>> &kept, std::mt19937 &rng, std::normal_distribution<float> &normal,
                                        const std::string &name, int64_t n, float mean, float stddev, bool round_f16) {
    std::vector<float> vals((size_t)n);
    for (auto &v : vals) v = mean + stddev * normal(rng);
    if (round_f16)
        for (auto &v : vals) v = rf::fp16_to_fp32(rf::fp32_to_fp16(v));
    return kept[name] = std::move(vals);
}

TinyWeights write_tiny_model(const std::string &path, const TinySpec &s) {
    TinyWeights w;
    w.spec = s;
    const int64_t D = head_size(s), Q = D * s.n_head, KV = D * s.n_head_kv;
    std::mt19937 rng(s.seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);

    rf::gguf::Writer wr;
    const std::string a = s.arch;
    wr.set("general.architecture", Value::from_string(a));
    wr.set("general.name", Value::from_string("tiny-" + a));
    wr.set(a + ".context_length", Value::from_u32((uint32_t)s.n_ctx_train));
    if (s.pooling_type >= 0) wr.set(a + ".pooling_type", Value::from_u32((uint32_t)s.pooling_type));
    wr.set(a + ".embedding_length", Value::from_u32((uint32_t)s.n_embd));
    wr.set(a + ".block_count", Value::from_u32((uint32_t)s.n_layer));
    wr.set(a + ".feed_forward_length", Value::from_u32((uint32_t)s.n_ff));
    wr.set(a + ".attention.head_count", Value::from_u32((uint32_t)s.n_head));
    wr.set(a + ".attention.head_count_kv", Value::from_u32((uint32_t)s.n_head_kv));
    wr.set(a + ".attention.layer_norm_rms_epsilon", Value::from_f32(s.rms_eps));
    wr.set(a + ".rope.freq_base", Value::from_f32(s.rope_base));
    if (s.head_dim) {
        wr.set(a + ".attention.key_length", Value::from_u32((uint32_t)s.head_dim));
        wr.set(a + ".attention.value_length", Value::from_u32((uint32_t)s.head_dim));
    }
    if (s.sliding_window) wr.set(a + ".attention.sliding_window", Value::from_u32((uint32_t)s.sliding_window));
    if (s.attn_softcap > 0) wr.set(a + ".attn_logit_softcapping", Value::from_f32(s.attn_softcap));
    if (s.final_softcap > 0) wr.set(a + ".final_logit_softcapping", Value::from_f32(s.final_softcap));
    if (s.rope_factors) {
        wr.set(a + ".rope.scaling.original_context_length", Value::from_u32((uint32_t)s.n_ctx_orig));
        wr.set(a + ".rope.scaling.attn_factor", Value::from_f32(s.rope_attn_factor));
    }
    if (s.n_expert) wr.set(a + ".expert_count", Value::from_u32((uint32_t)(s.expert_count_key ? s.expert_count_key : s.n_expert)));
    if (s.n_expert_used) wr.set(a + ".expert_used_count", Value::from_u32((uint32_t)s.n_expert_used));
    if (s.n_ff_exp) wr.set(a + ".expert_feed_forward_length", Value::from_u32((uint32_t)s.n_ff_exp));
    if (s.n_ff_shexp) wr.set(a + ".expert_shared_feed_forward_length", Value::from_u32((uint32_t)s.n_ff_shexp));
    if (s.file_type >= 0) wr.set("general.file_type", Value::from_u32((uint32_t)s.file_type));
    if (s.rope_scale_factor > 0) {
        wr.set(a + ".rope.scaling.type", Value::from_string("linear"));
        wr.set(a + ".rope.scaling.factor", Value::from_f32(s.rope_scale_factor));
    }
    if (s.yarn_factor > 0) { // GptOssModel's keys
        wr.set(a + ".rope.scaling.type", Value::from_string("yarn"));
        wr.set(a + ".rope.scaling.factor", Value::from_f32(s.yarn_factor));
        wr.set(a + ".rope.scaling.original_context_length", Value::from_u32((uint32_t)s.yarn_orig_ctx));
    }

    auto skipped = [&](const std::string &name) {
        return std::find(s.skip_tensors.begin(), s.skip_tensors.end(), name) != s.skip_tensors.end();
    };
    // Writes `vals` (already rounded to the file type) as tensor `name`.
    auto write = [&](const std::string &name, std::vector<int64_t> ne, std::vector<float> vals, int type) {
        if (!skipped(name)) add_float_tensor(wr, name, std::move(ne), std::move(vals), type);
    };
    // Random values for the reference under `name`: matrices [K, N] get N(0, 1/K) entries;
    // vectors 1 + small noise (norms) or small values.
    auto make = [&](const std::string &name, int64_t n, float mean, float stddev, bool matrix) -> const std::vector<float> & {
        return random_tensor(w.t, rng, normal, name, n, mean, stddev, matrix && s.matrix_type == RF_TYPE_F16);
    };
    auto add = [&](const std::string &name, std::vector<int64_t> ne, float mean, float stddev, bool matrix) {
        int64_t n = 1;
        for (auto v : ne) n *= v;
        write(name, ne, make(name, n, mean, stddev, matrix), matrix ? s.matrix_type : (int)RF_TYPE_F32);
    };
    // phi3's fused matrices: the parts (kept separately for the reference) stacked by rows.
    auto add_fused = [&](const std::string &name, int64_t K, const std::vector<std::pair<std::string, int64_t>> &parts) {
        std::vector<float> all;
        int64_t rows = 0;
        for (const auto &[part, n] : parts) {
            const auto &v = make(part, K * n, 0.0f, 1.0f / std::sqrt((float)K), true);
            all.insert(all.end(), v.begin(), v.end());
            rows += n;
        }
        write(name, {K, rows}, std::move(all), s.matrix_type);
    };
    const float inv_e = 1.0f / std::sqrt((float)s.n_embd);
    add("token_embd.weight", {s.n_embd, s.n_vocab}, 0.0f, 1.0f, true);
    add("output_norm.weight", {s.n_embd}, 1.0f, 0.1f, false);
    if (!s.tied_output) add("output.weight", {s.n_embd, s.n_vocab}, 0.0f, inv_e, true);
    if (s.rope_freqs) {
        // Llama 3 style: low frequencies stretched (factor > 1), high ones untouched.
        std::vector<float> ff((size_t)(D / 2));
        for (size_t i = 0; i < ff.size(); ++i) ff[i] = 1.0f + (float)i * 0.5f;
        w.t["rope_freqs.weight"] = ff;
        write("rope_freqs.weight", {D / 2}, ff, RF_TYPE_F32);
    }
    if (s.rope_factors) {
        std::vector<float> lng((size_t)(D / 2)), shrt((size_t)(D / 2));
        for (size_t i = 0; i < lng.size(); ++i) lng[i] = 1.0f + (float)i * 0.75f, shrt[i] = 1.0f + (float)i * 0.1f;
        w.t["rope_factors_long.weight"] = lng;
        w.t["rope_factors_short.weight"] = shrt;
        write("rope_factors_long.weight", {D / 2}, lng, RF_TYPE_F32);
        write("rope_factors_short.weight", {D / 2}, shrt, RF_TYPE_F32);
    }
    const bool gpt_oss = is_gpt_oss(s.arch);
    const bool bias = s.qkv_bias || s.arch == "qwen2" || s.arch == "qwen2moe" || gpt_oss;
    const bool fused = s.arch == "phi3" && s.fused;
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        add(p + "attn_norm.weight", {s.n_embd}, 1.0f, 0.1f, false);
        if (fused) {
            add_fused(p + "attn_qkv.weight", s.n_embd, {{p + "attn_q.weight", Q}, {p + "attn_k.weight", KV}, {p + "attn_v.weight", KV}});
        } else {
            add(p + "attn_q.weight", {s.n_embd, Q}, 0.0f, inv_e, true);
            add(p + "attn_k.weight", {s.n_embd, KV}, 0.0f, inv_e, true);
            add(p + "attn_v.weight", {s.n_embd, KV}, 0.0f, inv_e, true);
        }
        if (bias) {
            add(p + "attn_q.bias", {Q}, 0.0f, 0.2f, false);
            add(p + "attn_k.bias", {KV}, 0.0f, 0.2f, false);
            add(p + "attn_v.bias", {KV}, 0.0f, 0.2f, false);
        }
        if (has_qk_norm(s.arch)) {
            add(p + "attn_q_norm.weight", {D}, 1.0f, 0.3f, false);
            add(p + "attn_k_norm.weight", {D}, 1.0f, 0.3f, false);
        }
        add(p + "attn_output.weight", {Q, s.n_embd}, 0.0f, 1.0f / std::sqrt((float)Q), true);
        if (gpt_oss) {
            add(p + "attn_output.bias", {s.n_embd}, 0.0f, 0.2f, false);
            add(p + "attn_sinks.weight", {s.n_head}, 0.0f, s.sink_stddev, false);
        }
        add(p + (gpt_oss ? "post_attention_norm.weight" : "ffn_norm.weight"), {s.n_embd}, 1.0f, 0.1f, false);
        if (s.n_expert > 0) {
            const int64_t X = s.n_expert, FX = expert_ff(s);
            add(p + "ffn_gate_inp.weight", {s.n_embd, X}, 0.0f, 2.0f * inv_e, false); // router: f32 as the converter writes it
            add(p + "ffn_gate_exps.weight", {s.n_embd, FX, X}, 0.0f, inv_e, true);
            add(p + "ffn_up_exps.weight", {s.n_embd, FX, X}, 0.0f, inv_e, true);
            add(p + "ffn_down_exps.weight", {FX, s.n_embd, X}, 0.0f, 1.0f / std::sqrt((float)FX), true);
            if (gpt_oss) { // 2-D biases: f32 rows of each expert, as the converter writes them
                add(p + "ffn_gate_inp.bias", {X}, 0.0f, 0.5f, false);
                const auto &gb = make(p + "ffn_gate_exps.bias", FX * X, 0.0f, s.expert_bias_stddev, false);
                write(p + "ffn_gate_exps.bias", {FX, X}, gb, RF_TYPE_F32);
                const auto &ub = make(p + "ffn_up_exps.bias", FX * X, 0.0f, s.expert_bias_stddev, false);
                write(p + "ffn_up_exps.bias", {FX, X}, ub, RF_TYPE_F32);
                const auto &db = make(p + "ffn_down_exps.bias", s.n_embd * X, 0.0f, 0.3f, false);
                write(p + "ffn_down_exps.bias", {s.n_embd, X}, db, RF_TYPE_F32);
            }
            if (s.arch == "qwen2moe") {
                const int64_t FS = shared_ff(s);
                // The gate vector: f32 as the converter writes a 1-D tensor; spread enough that
                // sigmoid sees both tails.
                const auto &gv = make(p + "ffn_gate_inp_shexp.weight", s.n_embd, 0.0f, 3.0f * inv_e, false);
                write(p + "ffn_gate_inp_shexp.weight", s.shexp_gate_2d ? std::vector<int64_t>{s.n_embd, 1} : std::vector<int64_t>{s.n_embd}, gv,
                      RF_TYPE_F32);
                add(p + "ffn_gate_shexp.weight", {s.n_embd, FS}, 0.0f, inv_e, true);
                add(p + "ffn_down_shexp.weight", {FS, s.n_embd}, 0.0f, 1.0f / std::sqrt((float)FS), true);
                add(p + "ffn_up_shexp.weight", {s.n_embd, FS}, 0.0f, inv_e, true);
            }
            continue;
        }
        if (fused) {
            // The file's ffn_up holds gate then up; the reference reads them as ffn_gate/ffn_up.
            add_fused(p + "ffn_up.weight", s.n_embd, {{p + "ffn_gate.weight", s.n_ff}, {p + "ffn_up.weight", s.n_ff}});
        } else {
            add(p + "ffn_gate.weight", {s.n_embd, s.n_ff}, 0.0f, inv_e, true);
            add(p + "ffn_up.weight", {s.n_embd, s.n_ff}, 0.0f, inv_e, true);
        }
        add(p + "ffn_down.weight", {s.n_ff, s.n_embd}, 0.0f, 1.0f / std::sqrt((float)s.n_ff), true);
        if (is_gemma(s.arch)) {
            add(p + "post_attention_norm.weight", {s.n_embd}, 1.0f, 0.1f, false);
            add(p + "post_ffw_norm.weight", {s.n_embd}, 1.0f, 0.1f, false);
        }
    }
    wr.write(path);
    return w;
}

namespace {

using Vec = std::vector<double>;

// y[n] = sum_k W[n*K + k] x[k]  (W stored as N rows of K, ggml's [K, N])
Vec matvec(const std::vector<float> &W, const Vec &x, int64_t N) {
    const int64_t K = (int64_t)x.size();
    Vec y((size_t)N, 0.0);
    for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += (double)W[(size_t)(n * K + k)] * x[(size_t)k];
        y[(size_t)n] = acc;
    }
    return y;
}

Vec rms_norm(const Vec &x, const std::vector<float> &g, double eps) {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double inv = 1.0 / std::sqrt(ss / (double)x.size() + eps);
    Vec y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * g[i];
    return y;
}

// rms_norm of each head of x (n_heads * D values) with the [D] weight g.
void rms_norm_heads(Vec &x, int64_t D, const std::vector<float> &g, double eps) {
    for (size_t h = 0; h < x.size() / (size_t)D; ++h) {
        const Vec head(x.begin() + (long)h * D, x.begin() + (long)(h + 1) * D);
        const Vec y = rms_norm(head, g, eps);
        std::copy(y.begin(), y.end(), x.begin() + (long)h * D);
    }
}

void add_bias(Vec &x, const std::map<std::string, std::vector<float>> &t, const std::string &name) {
    auto it = t.find(name);
    if (it == t.end()) return;
    for (size_t i = 0; i < x.size(); ++i) x[i] += it->second[i];
}

// Rotates each head of x (n_heads * D values) for position pos.
void rope(Vec &x, int64_t n_heads, int64_t D, int64_t pos, bool neox, double base, double scale,
          const std::vector<float> *factors) {
    const int64_t n_rot = D;
    for (int64_t h = 0; h < n_heads; ++h) {
        double *v = x.data() + h * D;
        for (int64_t i = 0; i < n_rot / 2; ++i) {
            double theta = (double)pos * scale * std::pow(base, -2.0 * (double)i / (double)n_rot);
            if (factors) theta /= (*factors)[(size_t)i];
            const int64_t i0 = neox ? i : 2 * i, i1 = neox ? i + n_rot / 2 : 2 * i + 1;
            const double a = v[i0], b = v[i1];
            v[i0] = a * std::cos(theta) - b * std::sin(theta);
            v[i1] = a * std::sin(theta) + b * std::cos(theta);
        }
    }
}

// YaRN as ggml_rope_ext (rope_yarn.h's definition restated in double): the ramp between the
// correction dims mixes the interpolated angle with the extrapolated one; cos and sin scaled.
struct YarnRef {
    bool on = false;
    double freq_scale = 1, ext = 1, mscale = 1, c0 = 0, c1 = 0;
};
YarnRef yarn_ref(const TinySpec &s, int64_t n_rot) {
    YarnRef y;
    if (s.yarn_factor <= 0) return y;
    y.on = true;
    y.freq_scale = 1.0 / s.yarn_factor;
    auto corr = [&](double beta) {
        return (double)n_rot * std::log((double)s.yarn_orig_ctx / (beta * 2 * M_PI)) / (2 * std::log((double)s.rope_base));
    };
    y.c0 = std::max(0.0, std::floor(corr(32.0)));
    y.c1 = std::min((double)n_rot - 1, std::ceil(corr(1.0)));
    y.mscale = 1.0 + 0.1 * std::log(1.0 / y.freq_scale);
    return y;
}

void rope_yarn(Vec &x, int64_t n_heads, int64_t D, int64_t pos, double base, const YarnRef &y) {
    const int64_t n_rot = D;
    for (int64_t h = 0; h < n_heads; ++h) {
        double *v = x.data() + h * D;
        for (int64_t i = 0; i < n_rot / 2; ++i) {
            const double extrap = (double)pos * std::pow(base, -2.0 * (double)i / (double)n_rot);
            const double ramp = 1.0 - std::min(1.0, std::max(0.0, ((double)i - y.c0) / std::max(0.001, y.c1 - y.c0)));
            const double mix = ramp * y.ext;
            const double theta = extrap * y.freq_scale * (1 - mix) + extrap * mix;
            const double c = std::cos(theta) * y.mscale, sn = std::sin(theta) * y.mscale;
            const double a = v[i], b = v[i + n_rot / 2]; // NeoX halves
            v[i] = a * c - b * sn;
            v[i + n_rot / 2] = a * sn + b * c;
        }
    }
}

// ggml's swiglu_oai with gpt-oss's constants.
double swiglu_oai(double gate, double up) {
    const double x = std::min(gate, 7.0), y = std::min(std::max(up, -7.0), 7.0);
    return x / (1.0 + std::exp(-1.702 * x)) * (y + 1.0);
}

double gelu_tanh(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }
double silu(double x) { return x / (1.0 + std::exp(-x)); }
double softcap(double x, double cap) { return cap > 0 ? cap * std::tanh(x / cap) : x; }

// llama.cpp's build_moe_ffn with softmax gating: the n_expert_used experts of the largest router
// logits, weighted by the softmax over those logits (normalised: llama, qwen3moe) or by their
// entries of the softmax over all experts (qwen2moe).
Vec moe_ffn(const TinyWeights &w, const std::string &p, const Vec &h) {
    const TinySpec &s = w.spec;
    const int64_t E = s.n_embd, X = s.n_expert, FX = expert_ff(s);
    Vec logits = matvec(w.t.at(p + "ffn_gate_inp.weight"), h, X);
    const bool gpt_oss = is_gpt_oss(s.arch);
    add_bias(logits, w.t, p + "ffn_gate_inp.bias");
    std::vector<int64_t> order((size_t)X);
    for (int64_t e = 0; e < X; ++e) order[(size_t)e] = e;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return logits[(size_t)a] > logits[(size_t)b]; });
    double z = 0;
    const int64_t n_z = s.arch == "qwen2moe" ? X : s.n_expert_used; // what the softmax runs over
    for (int64_t j = 0; j < n_z; ++j) z += std::exp(logits[(size_t)order[(size_t)j]] - logits[(size_t)order[0]]);
    Vec out((size_t)E, 0.0);
    // One expert's [K, N] slice of a [K, N, X] tensor.
    auto slice = [&](const std::string &name, int64_t e, int64_t K, int64_t N) {
        const auto &all = w.t.at(p + name);
        return std::vector<float>(all.begin() + e * K * N, all.begin() + (e + 1) * K * N);
    };
    for (int64_t j = 0; j < s.n_expert_used; ++j) {
        const int64_t e = order[(size_t)j];
        const double weight = std::exp(logits[(size_t)e] - logits[(size_t)order[0]]) / z;
        Vec g = matvec(slice("ffn_gate_exps.weight", e, E, FX), h, FX);
        Vec u = matvec(slice("ffn_up_exps.weight", e, E, FX), h, FX);
        // gpt-oss: expert e's bias rows (ggml_add_id), the clamped SwiGLU.
        auto add_row = [&](Vec &v, const char *name) {
            auto it = w.t.find(p + name);
            if (it == w.t.end()) return;
            for (size_t i = 0; i < v.size(); ++i) v[i] += it->second[(size_t)e * v.size() + i];
        };
        add_row(g, "ffn_gate_exps.bias");
        add_row(u, "ffn_up_exps.bias");
        for (int64_t i = 0; i < FX; ++i)
            g[(size_t)i] = gpt_oss ? swiglu_oai(g[(size_t)i], u[(size_t)i]) : silu(g[(size_t)i]) * u[(size_t)i];
        Vec d = matvec(slice("ffn_down_exps.weight", e, FX, E), g, E);
        add_row(d, "ffn_down_exps.bias");
        for (int64_t i = 0; i < E; ++i) out[(size_t)i] += weight * d[(size_t)i];
    }
    return out;
}

// llm_build_qwen2moe's shared expert: sigmoid(gate_inp_shexp . h) * down(silu(gate h) * up h).
Vec shared_expert(const TinyWeights &w, const std::string &p, const Vec &h) {
    const TinySpec &s = w.spec;
    const int64_t E = s.n_embd, FS = shared_ff(s);
    const double gate = 1.0 / (1.0 + std::exp(-matvec(w.t.at(p + "ffn_gate_inp_shexp.weight"), h, 1)[0]));
    Vec g = matvec(w.t.at(p + "ffn_gate_shexp.weight"), h, FS);
    const Vec u = matvec(w.t.at(p + "ffn_up_shexp.weight"), h, FS);
    for (int64_t i = 0; i < FS; ++i) g[(size_t)i] = silu(g[(size_t)i]) * u[(size_t)i];
    Vec d = matvec(w.t.at(p + "ffn_down_shexp.weight"), g, E);
    for (double &e : d) e *= gate;
    return d;
}

} // namespace

std::vector<std::vector<double>> reference_hidden(const TinyWeights &w, const std::vector<int32_t> &tokens, int64_t n_ctx) {
    const TinySpec &s = w.spec;
    const int64_t E = s.n_embd, D = head_size(s), Q = D * s.n_head, KV = D * s.n_head_kv, T = (int64_t)tokens.size();
    const bool neox = neox_rope(s.arch), gemma = is_gemma(s.arch), gpt_oss = is_gpt_oss(s.arch);
    const YarnRef yarn = yarn_ref(s, D);
    const double scale = s.rope_scale_factor > 0 ? 1.0 / s.rope_scale_factor : 1.0;
    const std::vector<float> *factors = s.rope_freqs ? &w.t.at("rope_freqs.weight") : nullptr;
    if (s.rope_factors) factors = &w.t.at(n_ctx > s.n_ctx_orig ? "rope_factors_long.weight" : "rope_factors_short.weight");
    // phi3's attn_factor multiplies the rotated Q and K.
    const double mscale = s.rope_factors ? s.rope_attn_factor : 1.0;
    // gemma2 alternates local and global layers, gemma3 has five local layers per global one.
    // gpt-oss alternates too (llama.cpp's set_swa_pattern(2): even layers local).
    const int64_t swa_pattern = s.arch == "gemma2" || gpt_oss ? 2 : 6;
    auto W = [&](const std::string &n) -> const std::vector<float> & { return w.t.at(n); };

    std::vector<Vec> x((size_t)T);
    for (int64_t t = 0; t < T; ++t) {
        const auto &emb = W("token_embd.weight");
        x[(size_t)t].assign(emb.begin() + tokens[(size_t)t] * E, emb.begin() + (tokens[(size_t)t] + 1) * E);
        if (gemma)
            for (double &v : x[(size_t)t]) v *= std::sqrt((double)E);
    }
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        const bool local = (gemma || gpt_oss) && s.sliding_window > 0 && l % swa_pattern < swa_pattern - 1;
        const double base = local && s.arch == "gemma3" ? 10000.0 : s.rope_base;
        const double rscale = local && s.arch == "gemma3" ? 1.0 : scale;
        std::vector<Vec> q((size_t)T), k((size_t)T), v((size_t)T);
        for (int64_t t = 0; t < T; ++t) {
            Vec h = rms_norm(x[(size_t)t], W(p + "attn_norm.weight"), s.rms_eps);
            q[(size_t)t] = matvec(W(p + "attn_q.weight"), h, Q);
            k[(size_t)t] = matvec(W(p + "attn_k.weight"), h, KV);
            v[(size_t)t] = matvec(W(p + "attn_v.weight"), h, KV);
            add_bias(q[(size_t)t], w.t, p + "attn_q.bias");
            add_bias(k[(size_t)t], w.t, p + "attn_k.bias");
            add_bias(v[(size_t)t], w.t, p + "attn_v.bias");
            if (has_qk_norm(s.arch)) {
                rms_norm_heads(q[(size_t)t], D, W(p + "attn_q_norm.weight"), s.rms_eps);
                rms_norm_heads(k[(size_t)t], D, W(p + "attn_k_norm.weight"), s.rms_eps);
            }
            if (yarn.on) {
                rope_yarn(q[(size_t)t], s.n_head, D, t, base, yarn);
                rope_yarn(k[(size_t)t], s.n_head_kv, D, t, base, yarn);
            } else {
                rope(q[(size_t)t], s.n_head, D, t, neox, base, rscale, factors);
                rope(k[(size_t)t], s.n_head_kv, D, t, neox, base, rscale, factors);
            }
            for (double &e : q[(size_t)t]) e *= mscale;
            for (double &e : k[(size_t)t]) e *= mscale;
        }
        for (int64_t t = 0; t < T; ++t) {
            Vec attn((size_t)Q, 0.0);
            const int64_t first = local ? std::max<int64_t>(0, t - s.sliding_window + 1) : 0;
            for (int64_t h = 0; h < s.n_head; ++h) {
                const int64_t kvh = h / (s.n_head / s.n_head_kv);
                std::vector<double> sc((size_t)(t + 1 - first));
                double mx = -1e300;
                for (int64_t j = first; j <= t; ++j) {
                    double d = 0;
                    for (int64_t i = 0; i < D; ++i) d += q[(size_t)t][(size_t)(h * D + i)] * k[(size_t)j][(size_t)(kvh * D + i)];
                    double &e = sc[(size_t)(j - first)];
                    e = softcap(d / std::sqrt((double)D), s.attn_softcap);
                    mx = std::max(mx, e);
                }
                double sum = 0;
                for (auto &e : sc) sum += (e = std::exp(e - mx));
                // gpt-oss: the head's sink logit joins the denominator (no value row).
                if (gpt_oss) sum += std::exp((double)W(p + "attn_sinks.weight")[(size_t)h] - mx);
                for (int64_t j = first; j <= t; ++j)
                    for (int64_t i = 0; i < D; ++i)
                        attn[(size_t)(h * D + i)] += sc[(size_t)(j - first)] / sum * v[(size_t)j][(size_t)(kvh * D + i)];
            }
            Vec o = matvec(W(p + "attn_output.weight"), attn, E);
            add_bias(o, w.t, p + "attn_output.bias");
            if (gemma) o = rms_norm(o, W(p + "post_attention_norm.weight"), s.rms_eps);
            for (int64_t i = 0; i < E; ++i) x[(size_t)t][(size_t)i] += o[(size_t)i];
            // gpt-oss's FFN input norm is its post_attention_norm (on the residual stream).
            Vec h = rms_norm(x[(size_t)t], W(p + (gpt_oss ? "post_attention_norm.weight" : "ffn_norm.weight")), s.rms_eps);
            if (s.n_expert > 0) {
                const Vec d = moe_ffn(w, p, h);
                for (int64_t i = 0; i < E; ++i) x[(size_t)t][(size_t)i] += d[(size_t)i];
                if (s.arch == "qwen2moe") {
                    const Vec sh = shared_expert(w, p, h);
                    for (int64_t i = 0; i < E; ++i) x[(size_t)t][(size_t)i] += sh[(size_t)i];
                }
                continue;
            }
            Vec g = matvec(W(p + "ffn_gate.weight"), h, s.n_ff);
            Vec u = matvec(W(p + "ffn_up.weight"), h, s.n_ff);
            for (int64_t i = 0; i < s.n_ff; ++i)
                g[(size_t)i] = (gemma ? gelu_tanh(g[(size_t)i]) : silu(g[(size_t)i])) * u[(size_t)i];
            Vec d = matvec(W(p + "ffn_down.weight"), g, E);
            if (gemma) d = rms_norm(d, W(p + "post_ffw_norm.weight"), s.rms_eps);
            for (int64_t i = 0; i < E; ++i) x[(size_t)t][(size_t)i] += d[(size_t)i];
        }
    }
    for (int64_t t = 0; t < T; ++t) x[(size_t)t] = rms_norm(x[(size_t)t], W("output_norm.weight"), s.rms_eps);
    return x;
}

std::vector<std::vector<double>> reference_forward(const TinyWeights &w, const std::vector<int32_t> &tokens, int64_t n_ctx) {
    const TinySpec &s = w.spec;
    const auto &out = s.tied_output ? w.t.at("token_embd.weight") : w.t.at("output.weight");
    std::vector<Vec> logits = reference_hidden(w, tokens, n_ctx);
    for (Vec &row : logits) {
        row = matvec(out, row, s.n_vocab);
        for (double &e : row) e = softcap(e, s.final_softcap);
    }
    return logits;
}

std::unique_ptr<rf::Runtime> cpu_runtime() {
    rf::Config c;
    c.backends = {"cpu"};
    c.backends_explicit = true;
    if (const char *root = std::getenv("ROCMFORGE_BUILD_ROOT")) c.plugin_dirs.push_back(std::string(root) + "/backends/cpu");
    c.n_threads = 2;
    return rf::Runtime::create(c);
}

std::unique_ptr<rf::Runtime> gpulike_runtime(std::vector<std::string> backends) {
    const char *p = std::getenv("RF_GPULIKE");
    if (!p) throw std::runtime_error("RF_GPULIKE is not set (meson test sets it)");
    rf::Config c;
    c.backends = std::move(backends);
    c.backends_explicit = true;
    c.plugin_dirs = {std::filesystem::path(p).parent_path().string()};
    if (const char *root = std::getenv("ROCMFORGE_BUILD_ROOT")) c.plugin_dirs.push_back(std::string(root) + "/backends/cpu");
    c.n_threads = 2;
    return rf::Runtime::create(c);
}

template <typename B>
static double rel_diff_impl(const float *a, const B *b, int64_t n) {
    double max_ref = 0, max_err = 0;
    for (int64_t i = 0; i < n; ++i) {
        max_ref = std::max(max_ref, std::fabs((double)b[i]));
        max_err = std::max(max_err, std::fabs((double)a[i] - (double)b[i]));
    }
    return max_ref > 0 ? max_err / max_ref : max_err;
}
double rel_diff(const float *a, const float *b, int64_t n) { return rel_diff_impl(a, b, n); }
double rel_diff(const float *a, const double *b, int64_t n) { return rel_diff_impl(a, b, n); }

} // namespace rf_test
