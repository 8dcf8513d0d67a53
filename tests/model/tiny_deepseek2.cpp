#include "tiny_deepseek2.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "float_tensor.h"
#include "tiny_model.h"
#include "rocmforge/gguf.h"
#include "rocmforge/types.h"

namespace rf_test {

using rf::gguf::Value;

DeepSeek2Weights write_tiny_deepseek2(const std::string &path, const DeepSeek2Spec &s) {
    DeepSeek2Weights w;
    w.spec = s;
    std::mt19937 rng(s.seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const int64_t E = s.n_embd, H = s.n_head, R = s.kv_lora, Dk = s.nope + s.rope, Dv = s.v_head;
    rf::gguf::Writer wr;
    const std::string a = "deepseek2";
    auto set = [&](const std::string &key, Value v) {
        if (std::find(s.skip_keys.begin(), s.skip_keys.end(), key) == s.skip_keys.end()) wr.set(a + "." + key, std::move(v));
    };
    wr.set("general.architecture", Value::from_string(a));
    wr.set("general.name", Value::from_string("tiny-deepseek2"));
    set("context_length", Value::from_u32((uint32_t)s.n_ctx_train));
    set("embedding_length", Value::from_u32((uint32_t)E));
    set("block_count", Value::from_u32((uint32_t)s.n_layer));
    set("feed_forward_length", Value::from_u32((uint32_t)s.n_ff));
    set("attention.head_count", Value::from_u32((uint32_t)H));
    set("attention.layer_norm_rms_epsilon", Value::from_f32(s.rms_eps));
    set("rope.freq_base", Value::from_f32(s.rope_base));
    set("rope.dimension_count", Value::from_u32((uint32_t)s.rope));
    if (s.q_lora) set("attention.q_lora_rank", Value::from_u32((uint32_t)s.q_lora));
    set("attention.kv_lora_rank", Value::from_u32((uint32_t)R));
    if (s.mla_layout) { // the newer converter: one KV "head" of latent + rope, V the latent
        set("attention.head_count_kv", Value::from_u32(1));
        set("attention.key_length", Value::from_u32((uint32_t)(R + s.rope)));
        set("attention.value_length", Value::from_u32((uint32_t)R));
        set("attention.key_length_mla", Value::from_u32((uint32_t)Dk));
        set("attention.value_length_mla", Value::from_u32((uint32_t)Dv));
    } else {
        set("attention.head_count_kv", Value::from_u32((uint32_t)H));
        set("attention.key_length", Value::from_u32((uint32_t)Dk));
        set("attention.value_length", Value::from_u32((uint32_t)Dv));
    }
    set("leading_dense_block_count", Value::from_u32((uint32_t)s.n_dense_lead));
    set("expert_count", Value::from_u32((uint32_t)s.n_expert));
    set("expert_used_count", Value::from_u32((uint32_t)s.n_expert_used));
    set("expert_feed_forward_length", Value::from_u32((uint32_t)s.n_ff_exp));
    set("expert_shared_count", Value::from_u32((uint32_t)s.n_shared));
    set("expert_weights_scale", Value::from_f32(s.weights_scale));
    set("expert_weights_norm", Value::from_bool(s.weights_norm));
    set("expert_gating_func", Value::from_u32(s.sigmoid ? 2 : 1));
    if (s.n_group) {
        set("expert_group_count", Value::from_u32((uint32_t)s.n_group));
        set("expert_group_used_count", Value::from_u32((uint32_t)s.n_group_used));
    }
    if (s.nextn) set("nextn_predict_layers", Value::from_u32((uint32_t)s.nextn));
    if (s.yarn_factor > 0) {
        set("rope.scaling.type", Value::from_string("yarn"));
        set("rope.scaling.factor", Value::from_f32(s.yarn_factor));
        set("rope.scaling.original_context_length", Value::from_u32((uint32_t)s.yarn_orig_ctx));
        set("rope.scaling.yarn_log_multiplier", Value::from_f32(s.yarn_log_mul));
    }

    auto write = [&](const std::string &name, std::vector<int64_t> ne, const std::vector<float> &vals, int type) {
        if (std::find(s.skip_tensors.begin(), s.skip_tensors.end(), name) == s.skip_tensors.end())
            add_float_tensor(wr, name, std::move(ne), vals, type);
    };
    auto make = [&](const std::string &name, int64_t n, float mean, float stddev, bool matrix) -> const std::vector<float> & {
        return random_tensor(w.t, rng, normal, name, n, mean, stddev, matrix && s.matrix_type == RF_TYPE_F16);
    };
    auto add = [&](const std::string &name, std::vector<int64_t> ne, float mean, float stddev, bool matrix) {
        int64_t n = 1;
        for (auto v : ne) n *= v;
        write(name, ne, make(name, n, mean, stddev, matrix), matrix ? s.matrix_type : (int)RF_TYPE_F32);
    };
    auto inv = [](int64_t k) { return 1.0f / std::sqrt((float)k); };
    add("token_embd.weight", {E, s.n_vocab}, 0.0f, 1.0f, true);
    add("output_norm.weight", {E}, 1.0f, 0.1f, false);
    add("output.weight", {E, s.n_vocab}, 0.0f, inv(E), true);
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        add(p + "attn_norm.weight", {E}, 1.0f, 0.1f, false);
        if (s.q_lora) {
            add(p + "attn_q_a.weight", {E, s.q_lora}, 0.0f, inv(E), true);
            add(p + "attn_q_a_norm.weight", {s.q_lora}, 1.0f, 0.1f, false);
            add(p + "attn_q_b.weight", {s.q_lora, H * Dk}, 0.0f, inv(s.q_lora), true);
        } else {
            add(p + "attn_q.weight", {E, H * Dk}, 0.0f, inv(E), true);
        }
        add(p + "attn_kv_a_mqa.weight", {E, R + s.rope}, 0.0f, inv(E), true);
        add(p + "attn_kv_a_norm.weight", {R}, 1.0f, 0.1f, false);
        // attn_kv_b [R, H (nope + Dv)]: the reference's; the MLA layout writes its halves.
        const std::string kvb = p + "attn_kv_b.weight";
        const std::vector<float> &kv = make(kvb, R * H * (s.nope + Dv), 0.0f, inv(R), true);
        if (!s.mla_layout) {
            write(kvb, {R, H * (s.nope + Dv)}, kv, s.matrix_type);
        } else {
            std::vector<float> kb((size_t)(s.nope * R * H)), vb((size_t)(R * Dv * H));
            for (int64_t h = 0; h < H; ++h) {
                for (int64_t j = 0; j < s.nope; ++j)
                    for (int64_t r = 0; r < R; ++r) kb[(size_t)((h * R + r) * s.nope + j)] = kv[(size_t)((h * (s.nope + Dv) + j) * R + r)];
                for (int64_t i = 0; i < Dv; ++i)
                    for (int64_t r = 0; r < R; ++r) vb[(size_t)((h * Dv + i) * R + r)] = kv[(size_t)((h * (s.nope + Dv) + s.nope + i) * R + r)];
            }
            write(p + "attn_k_b.weight", {s.nope, R, H}, kb, s.matrix_type);
            write(p + "attn_v_b.weight", {R, Dv, H}, vb, s.matrix_type);
        }
        add(p + "attn_output.weight", {H * Dv, E}, 0.0f, inv(H * Dv), true);
        add(p + "ffn_norm.weight", {E}, 1.0f, 0.1f, false);
        if (l < s.n_dense_lead) {
            add(p + "ffn_gate.weight", {E, s.n_ff}, 0.0f, inv(E), true);
            add(p + "ffn_up.weight", {E, s.n_ff}, 0.0f, inv(E), true);
            add(p + "ffn_down.weight", {s.n_ff, E}, 0.0f, inv(s.n_ff), true);
            continue;
        }
        const int64_t X = s.n_expert, FX = s.n_ff_exp, FS = s.n_ff_exp * s.n_shared;
        add(p + "ffn_gate_inp.weight", {E, X}, 0.0f, 2.0f * inv(E), false); // the router: f32
        if (s.probs_bias) add(p + "exp_probs_b.bias", {X}, 0.0f, 0.3f, false);
        add(p + "ffn_gate_exps.weight", {E, FX, X}, 0.0f, inv(E), true);
        add(p + "ffn_up_exps.weight", {E, FX, X}, 0.0f, inv(E), true);
        add(p + "ffn_down_exps.weight", {FX, E, X}, 0.0f, inv(FX), true);
        add(p + "ffn_gate_shexp.weight", {E, FS}, 0.0f, inv(E), true);
        add(p + "ffn_up_shexp.weight", {E, FS}, 0.0f, inv(E), true);
        add(p + "ffn_down_shexp.weight", {FS, E}, 0.0f, inv(FS), true);
    }
    wr.write(path);
    return w;
}

namespace {

using Vec = std::vector<double>;

Vec matvec(const float *W, const Vec &x, int64_t N) {
    const int64_t K = (int64_t)x.size();
    Vec y((size_t)N, 0.0);
    for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) y[(size_t)n] += (double)W[n * K + k] * x[(size_t)k];
    return y;
}
Vec matvec(const std::vector<float> &W, const Vec &x, int64_t N) { return matvec(W.data(), x, N); }

Vec rms_norm(const Vec &x, const std::vector<float> &g, double eps) {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double inv = 1.0 / std::sqrt(ss / (double)x.size() + eps);
    Vec y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * inv * g[i];
    return y;
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }

Vec swiglu_ffn(const float *g, const float *u, const float *d, const Vec &h, int64_t F) {
    Vec a = matvec(g, h, F);
    const Vec b = matvec(u, h, F);
    for (int64_t i = 0; i < F; ++i) a[(size_t)i] = silu(a[(size_t)i]) * b[(size_t)i];
    return matvec(d, a, (int64_t)h.size());
}

// Pairs (2i, 2i + 1) rotated (llama.cpp's LLAMA_ROPE_TYPE_NORM for deepseek2); with YaRN as
// ggml_rope_ext, the magnitude attn_factor (1 + 0.1 ln factor) = 1 under deepseek2's attn_factor.
void rope(double *v, int64_t n, int64_t pos, const DeepSeek2Spec &s) {
    const bool yarn = s.yarn_factor > 0;
    const double fs = yarn ? 1.0 / s.yarn_factor : 1.0;
    auto corr = [&](double beta) { return (double)n * std::log((double)s.yarn_orig_ctx / (beta * 2 * M_PI)) / (2 * std::log((double)s.rope_base)); };
    const double c0 = yarn ? std::max(0.0, std::floor(corr(32.0))) : 0, c1 = yarn ? std::min((double)n - 1, std::ceil(corr(1.0))) : 0;
    for (int64_t i = 0; i < n / 2; ++i) {
        const double extrap = (double)pos * std::pow((double)s.rope_base, -2.0 * (double)i / (double)n);
        double theta = extrap;
        if (yarn) {
            const double mix = 1.0 - std::min(1.0, std::max(0.0, ((double)i - c0) / std::max(0.001, c1 - c0)));
            theta = extrap * fs * (1 - mix) + extrap * mix;
        }
        const double a = v[2 * i], b = v[2 * i + 1];
        v[2 * i] = a * std::cos(theta) - b * std::sin(theta);
        v[2 * i + 1] = a * std::sin(theta) + b * std::cos(theta);
    }
}

// build_moe_ffn for deepseek2 in float64: selection on the biased probabilities (groups first),
// the weights from the unbiased ones.
Vec experts(const DeepSeek2Weights &w, const std::string &p, const Vec &h) {
    const DeepSeek2Spec &s = w.spec;
    const int64_t E = s.n_embd, X = s.n_expert, FX = s.n_ff_exp;
    const Vec logits = matvec(w.t.at(p + "ffn_gate_inp.weight"), h, X);
    Vec probs((size_t)X), sel((size_t)X);
    const double mx = *std::max_element(logits.begin(), logits.end());
    double z = 0;
    for (int64_t e = 0; e < X; ++e) z += std::exp(logits[(size_t)e] - mx);
    for (int64_t e = 0; e < X; ++e)
        probs[(size_t)e] = s.sigmoid ? 1.0 / (1.0 + std::exp(-logits[(size_t)e])) : std::exp(logits[(size_t)e] - mx) / z;
    for (int64_t e = 0; e < X; ++e) sel[(size_t)e] = probs[(size_t)e] + (s.probs_bias ? w.t.at(p + "exp_probs_b.bias")[(size_t)e] : 0.0);
    if (s.n_group > 1) {
        const int64_t per = X / s.n_group;
        std::vector<double> score((size_t)s.n_group);
        for (int64_t g = 0; g < s.n_group; ++g) {
            std::vector<double> v(sel.begin() + g * per, sel.begin() + (g + 1) * per);
            std::sort(v.rbegin(), v.rend());
            score[(size_t)g] = v[0] + (per > 1 ? v[1] : 0.0);
        }
        std::vector<int64_t> order((size_t)s.n_group);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return score[(size_t)a] > score[(size_t)b]; });
        for (int64_t j = s.n_group_used; j < s.n_group; ++j)
            for (int64_t e = order[(size_t)j] * per; e < (order[(size_t)j] + 1) * per; ++e) sel[(size_t)e] = -INFINITY;
    }
    std::vector<int64_t> order((size_t)X);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return sel[(size_t)a] > sel[(size_t)b]; });
    double sum = 0;
    for (int64_t j = 0; j < s.n_expert_used; ++j) sum += probs[(size_t)order[(size_t)j]];
    Vec out((size_t)E, 0.0);
    for (int64_t j = 0; j < s.n_expert_used; ++j) {
        const int64_t e = order[(size_t)j];
        double weight = probs[(size_t)e];
        if (s.weights_norm) weight /= std::max(sum, 6.103515625e-5);
        if (s.weights_scale != 0) weight *= s.weights_scale;
        const Vec d = swiglu_ffn(w.t.at(p + "ffn_gate_exps.weight").data() + e * E * FX, w.t.at(p + "ffn_up_exps.weight").data() + e * E * FX,
                                 w.t.at(p + "ffn_down_exps.weight").data() + e * FX * E, h, FX);
        for (int64_t i = 0; i < E; ++i) out[(size_t)i] += weight * d[(size_t)i];
    }
    return out;
}

} // namespace

std::vector<std::vector<double>> deepseek2_reference(const DeepSeek2Weights &w, const std::vector<int32_t> &tokens) {
    const DeepSeek2Spec &s = w.spec;
    const int64_t E = s.n_embd, H = s.n_head, R = s.kv_lora, Dk = s.nope + s.rope, Dv = s.v_head, T = (int64_t)tokens.size();
    auto W = [&](const std::string &n) -> const std::vector<float> & { return w.t.at(n); };
    const double ln = s.yarn_factor > 0 ? std::log((double)s.yarn_factor) : 0.0;
    const double mscale = 1.0 + s.yarn_log_mul * ln, kq_scale = mscale * mscale / std::sqrt((double)Dk);
    std::vector<Vec> x((size_t)T);
    for (int64_t t = 0; t < T; ++t) {
        const auto &emb = W("token_embd.weight");
        x[(size_t)t].assign(emb.begin() + tokens[(size_t)t] * E, emb.begin() + (tokens[(size_t)t] + 1) * E);
    }
    for (int64_t l = 0; l < s.n_layer; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        std::vector<Vec> q((size_t)T), k((size_t)T), v((size_t)T); // full heads [H * Dk], [H * Dk], [H * Dv]
        for (int64_t t = 0; t < T; ++t) {
            const Vec h = rms_norm(x[(size_t)t], W(p + "attn_norm.weight"), s.rms_eps);
            if (s.q_lora) {
                const Vec cq = rms_norm(matvec(W(p + "attn_q_a.weight"), h, s.q_lora), W(p + "attn_q_a_norm.weight"), s.rms_eps);
                q[(size_t)t] = matvec(W(p + "attn_q_b.weight"), cq, H * Dk);
            } else {
                q[(size_t)t] = matvec(W(p + "attn_q.weight"), h, H * Dk);
            }
            for (int64_t hh = 0; hh < H; ++hh) rope(q[(size_t)t].data() + hh * Dk + s.nope, s.rope, t, s);
            Vec kv = matvec(W(p + "attn_kv_a_mqa.weight"), h, R + s.rope);
            const Vec c = rms_norm(Vec(kv.begin(), kv.begin() + R), W(p + "attn_kv_a_norm.weight"), s.rms_eps);
            rope(kv.data() + R, s.rope, t, s);
            const Vec kvb = matvec(W(p + "attn_kv_b.weight"), c, H * (s.nope + Dv));
            k[(size_t)t].assign((size_t)(H * Dk), 0.0);
            v[(size_t)t].assign((size_t)(H * Dv), 0.0);
            for (int64_t hh = 0; hh < H; ++hh) {
                for (int64_t i = 0; i < s.nope; ++i) k[(size_t)t][(size_t)(hh * Dk + i)] = kvb[(size_t)(hh * (s.nope + Dv) + i)];
                for (int64_t i = 0; i < s.rope; ++i) k[(size_t)t][(size_t)(hh * Dk + s.nope + i)] = kv[(size_t)(R + i)];
                for (int64_t i = 0; i < Dv; ++i) v[(size_t)t][(size_t)(hh * Dv + i)] = kvb[(size_t)(hh * (s.nope + Dv) + s.nope + i)];
            }
        }
        for (int64_t t = 0; t < T; ++t) {
            Vec attn((size_t)(H * Dv), 0.0);
            for (int64_t hh = 0; hh < H; ++hh) {
                std::vector<double> sc((size_t)(t + 1));
                for (int64_t j = 0; j <= t; ++j) {
                    double d = 0;
                    for (int64_t i = 0; i < Dk; ++i) d += q[(size_t)t][(size_t)(hh * Dk + i)] * k[(size_t)j][(size_t)(hh * Dk + i)];
                    sc[(size_t)j] = d * kq_scale;
                }
                const double mx = *std::max_element(sc.begin(), sc.end());
                double sum = 0;
                for (double &e : sc) sum += (e = std::exp(e - mx));
                for (int64_t j = 0; j <= t; ++j)
                    for (int64_t i = 0; i < Dv; ++i) attn[(size_t)(hh * Dv + i)] += sc[(size_t)j] / sum * v[(size_t)j][(size_t)(hh * Dv + i)];
            }
            const Vec o = matvec(W(p + "attn_output.weight"), attn, E);
            for (int64_t i = 0; i < E; ++i) x[(size_t)t][(size_t)i] += o[(size_t)i];
            const Vec h = rms_norm(x[(size_t)t], W(p + "ffn_norm.weight"), s.rms_eps);
            Vec f;
            if (l < s.n_dense_lead) {
                f = swiglu_ffn(W(p + "ffn_gate.weight").data(), W(p + "ffn_up.weight").data(), W(p + "ffn_down.weight").data(), h, s.n_ff);
            } else {
                f = experts(w, p, h);
                const Vec sh = swiglu_ffn(W(p + "ffn_gate_shexp.weight").data(), W(p + "ffn_up_shexp.weight").data(),
                                          W(p + "ffn_down_shexp.weight").data(), h, s.n_ff_exp * s.n_shared);
                for (int64_t i = 0; i < E; ++i) f[(size_t)i] += sh[(size_t)i];
            }
            for (int64_t i = 0; i < E; ++i) x[(size_t)t][(size_t)i] += f[(size_t)i];
        }
    }
    std::vector<std::vector<double>> logits((size_t)T);
    for (int64_t t = 0; t < T; ++t)
        logits[(size_t)t] = matvec(W("output.weight"), rms_norm(x[(size_t)t], W("output_norm.weight"), s.rms_eps), s.n_vocab);
    return logits;
}

} // namespace rf_test
