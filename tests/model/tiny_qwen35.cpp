#include "tiny_qwen35.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "float_tensor.h"
#include "rocmforge/gguf.h"
#include "rocmforge/types.h"

namespace rf_test {

using rf::gguf::Value;

namespace {

bool recurrent(const Q35Spec &s, int64_t l) { return (l + 1) % s.interval != 0; }
int64_t conv_channels(const Q35Spec &s) { return 2 * s.n_k_heads * s.state_size + s.n_v_heads * s.state_size; }

} // namespace

Q35Weights write_tiny_qwen35(const std::string &path, const Q35Spec &s) {
    Q35Weights w;
    w.spec = s;
    std::mt19937 rng(s.seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    rf::gguf::Writer wr;
    const std::string a = s.next ? "qwen3next" : s.moe ? "qwen35moe" : "qwen35";
    auto key = [&](const std::string &k, Value v) {
        if (std::find(s.skip_keys.begin(), s.skip_keys.end(), k) == s.skip_keys.end()) wr.set(a + "." + k, std::move(v));
    };
    wr.set("general.architecture", Value::from_string(a));
    wr.set("general.name", Value::from_string("tiny-" + a));
    key("context_length", Value::from_u32(256));
    key("embedding_length", Value::from_u32((uint32_t)s.n_embd));
    key("block_count", Value::from_u32((uint32_t)(s.n_layer + s.nextn_layers)));
    if (!s.moe || s.next) key("feed_forward_length", Value::from_u32((uint32_t)s.n_ff));
    key("attention.head_count", Value::from_u32((uint32_t)s.n_head));
    key("attention.head_count_kv", Value::from_u32((uint32_t)s.n_head_kv));
    key("attention.key_length", Value::from_u32((uint32_t)s.head_dim));
    key("attention.value_length", Value::from_u32((uint32_t)s.head_dim));
    key("attention.layer_norm_rms_epsilon", Value::from_f32(s.rms_eps));
    key("rope.freq_base", Value::from_f32(s.rope_base));
    key("rope.dimension_count", Value::from_u32((uint32_t)s.n_rot));
    if (!s.next) key("rope.dimension_sections", Value::from_i32s({(int32_t)(s.n_rot / 4), (int32_t)(s.n_rot / 8), (int32_t)(s.n_rot / 8), 0}));
    key("ssm.conv_kernel", Value::from_u32((uint32_t)s.conv_kernel));
    key("ssm.state_size", Value::from_u32((uint32_t)s.state_size));
    key("ssm.group_count", Value::from_u32((uint32_t)s.n_k_heads));
    key("ssm.time_step_rank", Value::from_u32((uint32_t)s.n_v_heads));
    key("ssm.inner_size", Value::from_u32((uint32_t)(s.n_v_heads * s.state_size)));
    key("full_attention_interval", Value::from_u32((uint32_t)s.interval));
    if (s.nextn_layers) key("nextn_predict_layers", Value::from_u32((uint32_t)s.nextn_layers));
    if (s.moe) {
        key("expert_count", Value::from_u32((uint32_t)s.n_expert));
        key("expert_used_count", Value::from_u32((uint32_t)s.n_expert_used));
        key("expert_feed_forward_length", Value::from_u32((uint32_t)s.n_ff_exp));
        key("expert_shared_feed_forward_length", Value::from_u32((uint32_t)s.n_ff_shexp));
    }

    auto skipped = [&](const std::string &n) { return std::find(s.skip_tensors.begin(), s.skip_tensors.end(), n) != s.skip_tensors.end(); };
    auto make = [&](const std::string &name, int64_t n, float mean, float stddev, bool matrix) -> const std::vector<float> & {
        std::vector<float> v((size_t)n);
        for (auto &x : v) x = mean + stddev * normal(rng);
        if (matrix && s.matrix_type == RF_TYPE_F16)
            for (auto &x : v) x = rf::fp16_to_fp32(rf::fp32_to_fp16(x));
        return w.t[name] = std::move(v);
    };
    auto add = [&](const std::string &name, std::vector<int64_t> ne, float mean, float stddev, bool matrix) {
        int64_t n = 1;
        for (auto v : ne) n *= v;
        const auto &v = make(name, n, mean, stddev, matrix);
        if (!skipped(name)) add_float_tensor(wr, name, ne, v, matrix ? s.matrix_type : (int)RF_TYPE_F32);
    };
    const int64_t E = s.n_embd, D = s.head_dim, Q = D * s.n_head, KV = D * s.n_head_kv, C = conv_channels(s);
    const int64_t inner = s.n_v_heads * s.state_size;
    const float ie = 1.0f / std::sqrt((float)E);
    add("token_embd.weight", {E, s.n_vocab}, 0.0f, 1.0f, true);
    add("output_norm.weight", {E}, 1.0f, 0.1f, false);
    add("output.weight", {E, s.n_vocab}, 0.0f, ie, true);
    for (int64_t l = 0; l < s.n_layer + s.nextn_layers; ++l) {
        const std::string p = "blk." + std::to_string(l) + ".";
        add(p + "attn_norm.weight", {E}, 1.0f, 0.1f, false);
        add(p + "post_attention_norm.weight", {E}, 1.0f, 0.1f, false);
        if (l < s.n_layer && recurrent(s, l)) {
            const int64_t Hk = s.n_k_heads, Sk = s.state_size, r = s.n_v_heads / s.n_k_heads, rv = r * s.state_size;
            if (!s.next) {
                add(p + "attn_qkv.weight", {E, C}, 0.0f, ie, true);
                add(p + "attn_gate.weight", {E, inner}, 0.0f, ie, true);
            } else if (!s.legacy_ssm_in) {
                add(p + "attn_qkv.weight", {E, C}, 0.0f, ie, true);
                add(p + "attn_gate.weight", {E, inner}, 0.0f, ie, true);
            } else { // per key head: its q, k, its value heads' v and z rows
                const auto &qkv = make(p + "attn_qkv.weight", E * C, 0.0f, ie, true);
                const auto &z = make(p + "attn_gate.weight", E * inner, 0.0f, ie, true);
                std::vector<float> in;
                auto rows = [&](const std::vector<float> &m, int64_t first, int64_t n) {
                    in.insert(in.end(), m.begin() + first * E, m.begin() + (first + n) * E);
                };
                for (int64_t g = 0; g < Hk; ++g) {
                    rows(qkv, g * Sk, Sk);
                    rows(qkv, Hk * Sk + g * Sk, Sk);
                    rows(qkv, 2 * Hk * Sk + g * rv, rv);
                    rows(z, g * rv, rv);
                }
                add_float_tensor(wr, p + "ssm_in.weight", {E, C + inner}, in, s.matrix_type);
            }
            if (s.next) { // ssm_ba: per key head its value heads' beta rows, then their alpha rows
                const auto &b = make(p + "ssm_beta.weight", E * s.n_v_heads, 0.0f, ie, true);
                const auto &al = make(p + "ssm_alpha.weight", E * s.n_v_heads, 0.0f, ie, true);
                std::vector<float> ba;
                for (int64_t g = 0; g < Hk; ++g) {
                    ba.insert(ba.end(), b.begin() + g * r * E, b.begin() + (g + 1) * r * E);
                    ba.insert(ba.end(), al.begin() + g * r * E, al.begin() + (g + 1) * r * E);
                }
                if (!skipped(p + "ssm_ba.weight")) add_float_tensor(wr, p + "ssm_ba.weight", {E, 2 * s.n_v_heads}, ba, s.matrix_type);
            }
            add(p + "ssm_conv1d.weight", {s.conv_kernel, C}, 0.0f, 0.5f, false);
            add(p + "ssm_dt.bias", {s.n_v_heads}, 0.5f, 0.5f, false);
            std::vector<float> &A = w.t[p + "ssm_a"] = std::vector<float>((size_t)s.n_v_heads);
            for (auto &x : A) x = -std::exp(0.3f * normal(rng)); // -exp(A_log), as converted
            if (!skipped(p + "ssm_a")) add_float_tensor(wr, p + "ssm_a", {s.n_v_heads}, A, RF_TYPE_F32);
            if (!s.next) {
                add(p + "ssm_beta.weight", {E, s.n_v_heads}, 0.0f, ie, true);
                add(p + "ssm_alpha.weight", {E, s.n_v_heads}, 0.0f, ie, true);
            }
            add(p + "ssm_norm.weight", {s.state_size}, 1.0f, 0.1f, false);
            add(p + "ssm_out.weight", {inner, E}, 0.0f, 1.0f / std::sqrt((float)inner), true);
        } else {
            // attn_q: per head its query rows, then its output gate's (llama.cpp's view of Qcur_full).
            const auto &q = make(p + "attn_q.q", E * Q, 0.0f, ie, true);
            const auto &gt = make(p + "attn_q.gate", E * Q, 0.0f, ie, true);
            std::vector<float> qg;
            for (int64_t h = 0; h < s.n_head; ++h) {
                qg.insert(qg.end(), q.begin() + h * D * E, q.begin() + (h + 1) * D * E);
                qg.insert(qg.end(), gt.begin() + h * D * E, gt.begin() + (h + 1) * D * E);
            }
            if (!skipped(p + "attn_q.weight")) add_float_tensor(wr, p + "attn_q.weight", {E, 2 * Q}, qg, s.matrix_type);
            add(p + "attn_k.weight", {E, KV}, 0.0f, ie, true);
            add(p + "attn_v.weight", {E, KV}, 0.0f, ie, true);
            add(p + "attn_output.weight", {Q, E}, 0.0f, 1.0f / std::sqrt((float)Q), true);
            add(p + "attn_q_norm.weight", {D}, 1.0f, 0.1f, false);
            add(p + "attn_k_norm.weight", {D}, 1.0f, 0.1f, false);
        }
        if (s.moe) {
            add(p + "ffn_gate_inp.weight", {E, s.n_expert}, 0.0f, 1.0f, true);
            add(p + "ffn_gate_exps.weight", {E, s.n_ff_exp, s.n_expert}, 0.0f, ie, true);
            add(p + "ffn_up_exps.weight", {E, s.n_ff_exp, s.n_expert}, 0.0f, ie, true);
            add(p + "ffn_down_exps.weight", {s.n_ff_exp, E, s.n_expert}, 0.0f, 1.0f / std::sqrt((float)s.n_ff_exp), true);
            add(p + "ffn_gate_inp_shexp.weight", {E}, 0.0f, ie, false); // the converter's [n_embd] vector
            add(p + "ffn_gate_shexp.weight", {E, s.n_ff_shexp}, 0.0f, ie, true);
            add(p + "ffn_up_shexp.weight", {E, s.n_ff_shexp}, 0.0f, ie, true);
            add(p + "ffn_down_shexp.weight", {s.n_ff_shexp, E}, 0.0f, 1.0f / std::sqrt((float)s.n_ff_shexp), true);
        } else {
            add(p + "ffn_gate.weight", {E, s.n_ff}, 0.0f, ie, true);
            add(p + "ffn_up.weight", {E, s.n_ff}, 0.0f, ie, true);
            add(p + "ffn_down.weight", {s.n_ff, E}, 0.0f, 1.0f / std::sqrt((float)s.n_ff), true);
        }
    }
    wr.write(path);
    return w;
}

namespace {

using Vec = std::vector<double>;

// W [K, N] (N rows of K) times x [K].
Vec matvec(const std::vector<float> &W, const Vec &x, int64_t N, int64_t offset = 0) {
    const int64_t K = (int64_t)x.size();
    Vec y((size_t)N, 0.0);
    for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += (double)W[(size_t)(offset + n * K + k)] * x[(size_t)k];
        y[(size_t)n] = s;
    }
    return y;
}
void rms_norm(double *x, int64_t n, double eps, const float *w) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += x[i] * x[i];
    const double inv = 1.0 / std::sqrt(ss / (double)n + eps);
    for (int64_t i = 0; i < n; ++i) x[i] = x[i] * inv * w[i];
}
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double silu(double x) { return x * sigmoid(x); }
Vec swiglu_ffn(const std::vector<float> &g, const std::vector<float> &u, const std::vector<float> &d, const Vec &h, int64_t F,
               int64_t E, int64_t off_gu = 0, int64_t off_d = 0) {
    Vec a = matvec(g, h, F, off_gu), b = matvec(u, h, F, off_gu);
    for (int64_t i = 0; i < F; ++i) a[(size_t)i] = silu(a[(size_t)i]) * b[(size_t)i];
    return matvec(d, a, E, off_d);
}

} // namespace

std::vector<std::vector<double>> reference_qwen35(const Q35Weights &w, const std::vector<int32_t> &tokens) {
    const Q35Spec &s = w.spec;
    auto W = [&](const std::string &n) -> const std::vector<float> & { return w.t.at(n); };
    const int64_t E = s.n_embd, D = s.head_dim, H = s.n_head, HKV = s.n_head_kv, C = conv_channels(s), K = s.conv_kernel;
    const int64_t Hk = s.n_k_heads, Hv = s.n_v_heads, Sk = s.state_size, Sv = s.state_size, T = (int64_t)tokens.size();
    // Per layer: conv window [C][K-1], delta state [Hv][Sv][Sk], K/V cache [T][HKV*D].
    std::vector<std::vector<Vec>> conv((size_t)s.n_layer, std::vector<Vec>((size_t)C, Vec((size_t)(K - 1), 0.0)));
    std::vector<Vec> state((size_t)s.n_layer, Vec((size_t)(Hv * Sv * Sk), 0.0));
    std::vector<std::vector<Vec>> kc((size_t)s.n_layer), vc((size_t)s.n_layer);
    std::vector<std::vector<double>> logits;
    for (int64_t t = 0; t < T; ++t) {
        Vec x((size_t)E);
        for (int64_t i = 0; i < E; ++i) x[(size_t)i] = W("token_embd.weight")[(size_t)(tokens[(size_t)t] * E + i)];
        for (int64_t l = 0; l < s.n_layer; ++l) {
            const std::string p = "blk." + std::to_string(l) + ".";
            Vec h = x;
            rms_norm(h.data(), E, s.rms_eps, W(p + "attn_norm.weight").data());
            Vec a;
            if (recurrent(s, l)) {
                Vec qkv = matvec(W(p + "attn_qkv.weight"), h, C), z = matvec(W(p + "attn_gate.weight"), h, Hv * Sv);
                Vec beta = matvec(W(p + "ssm_beta.weight"), h, Hv), alpha = matvec(W(p + "ssm_alpha.weight"), h, Hv);
                const auto &cw = W(p + "ssm_conv1d.weight");
                Vec c((size_t)C);
                for (int64_t ch = 0; ch < C; ++ch) {
                    Vec &win = conv[(size_t)l][(size_t)ch];
                    double y = qkv[(size_t)ch] * cw[(size_t)(ch * K + K - 1)];
                    for (int64_t i = 0; i < K - 1; ++i) y += win[(size_t)i] * cw[(size_t)(ch * K + i)];
                    win.erase(win.begin());
                    win.push_back(qkv[(size_t)ch]);
                    c[(size_t)ch] = silu(y);
                }
                auto l2 = [](const double *v, int64_t n, double eps, double scale) {
                    double ss = 0;
                    for (int64_t i = 0; i < n; ++i) ss += v[i] * v[i];
                    Vec r((size_t)n);
                    for (int64_t i = 0; i < n; ++i) r[(size_t)i] = v[i] / std::max(std::sqrt(ss), eps) * scale;
                    return r;
                };
                Vec o((size_t)(Hv * Sv));
                for (int64_t hv = 0; hv < Hv; ++hv) {
                    // ggml's broadcast of the key heads; qwen3next's repeat interleave
                    const int64_t kh = s.next ? hv / (Hv / Hk) : hv % Hk;
                    const Vec q = l2(c.data() + kh * Sk, Sk, s.rms_eps, 1.0 / std::sqrt((double)Sk));
                    const Vec k = l2(c.data() + Hk * Sk + kh * Sk, Sk, s.rms_eps, 1.0);
                    const double *v = c.data() + 2 * Hk * Sk + hv * Sv;
                    const double ap = alpha[(size_t)hv] + W(p + "ssm_dt.bias")[(size_t)hv];
                    const double g = (ap > 20 ? ap : std::log1p(std::exp(ap))) * W(p + "ssm_a")[(size_t)hv];
                    const double b = sigmoid(beta[(size_t)hv]);
                    double *S = state[(size_t)l].data() + hv * Sv * Sk; // S[j][a]: value j, key a
                    for (int64_t i = 0; i < Sv * Sk; ++i) S[i] *= std::exp(g);
                    for (int64_t j = 0; j < Sv; ++j) {
                        double sk = 0;
                        for (int64_t i = 0; i < Sk; ++i) sk += S[j * Sk + i] * k[(size_t)i];
                        const double d = b * (v[j] - sk);
                        for (int64_t i = 0; i < Sk; ++i) S[j * Sk + i] += k[(size_t)i] * d;
                    }
                    for (int64_t j = 0; j < Sv; ++j) {
                        double r = 0;
                        for (int64_t i = 0; i < Sk; ++i) r += S[j * Sk + i] * q[(size_t)i];
                        o[(size_t)(hv * Sv + j)] = r;
                    }
                    rms_norm(o.data() + hv * Sv, Sv, s.rms_eps, W(p + "ssm_norm.weight").data());
                    for (int64_t j = 0; j < Sv; ++j) o[(size_t)(hv * Sv + j)] *= silu(z[(size_t)(hv * Sv + j)]);
                }
                a = matvec(W(p + "ssm_out.weight"), o, E);
            } else {
                Vec q = matvec(W(p + "attn_q.q"), h, H * D), gate = matvec(W(p + "attn_q.gate"), h, H * D);
                Vec k = matvec(W(p + "attn_k.weight"), h, HKV * D), v = matvec(W(p + "attn_v.weight"), h, HKV * D);
                auto rope = [&](double *r) { // NeoX over the first n_rot dims
                    const int64_t half = s.n_rot / 2;
                    for (int64_t i = 0; i < half; ++i) {
                        const double th = (double)t * std::pow((double)s.rope_base, -2.0 * (double)i / (double)s.n_rot);
                        const double x0 = r[i], x1 = r[i + half];
                        r[i] = x0 * std::cos(th) - x1 * std::sin(th);
                        r[i + half] = x0 * std::sin(th) + x1 * std::cos(th);
                    }
                };
                for (int64_t hh = 0; hh < H; ++hh) {
                    rms_norm(q.data() + hh * D, D, s.rms_eps, W(p + "attn_q_norm.weight").data());
                    rope(q.data() + hh * D);
                }
                for (int64_t hh = 0; hh < HKV; ++hh) {
                    rms_norm(k.data() + hh * D, D, s.rms_eps, W(p + "attn_k_norm.weight").data());
                    rope(k.data() + hh * D);
                }
                kc[(size_t)l].push_back(k);
                vc[(size_t)l].push_back(v);
                Vec o((size_t)(H * D), 0.0);
                for (int64_t hh = 0; hh < H; ++hh) {
                    const int64_t kvh = hh / (H / HKV);
                    Vec sc((size_t)(t + 1));
                    double mx = -1e300;
                    for (int64_t j = 0; j <= t; ++j) {
                        double d = 0;
                        for (int64_t i = 0; i < D; ++i) d += q[(size_t)(hh * D + i)] * kc[(size_t)l][(size_t)j][(size_t)(kvh * D + i)];
                        sc[(size_t)j] = d / std::sqrt((double)D);
                        mx = std::max(mx, sc[(size_t)j]);
                    }
                    double sum = 0;
                    for (auto &e : sc) sum += (e = std::exp(e - mx));
                    for (int64_t j = 0; j <= t; ++j)
                        for (int64_t i = 0; i < D; ++i)
                            o[(size_t)(hh * D + i)] += sc[(size_t)j] / sum * vc[(size_t)l][(size_t)j][(size_t)(kvh * D + i)];
                }
                for (int64_t i = 0; i < H * D; ++i) o[(size_t)i] *= sigmoid(gate[(size_t)i]);
                a = matvec(W(p + "attn_output.weight"), o, E);
            }
            for (int64_t i = 0; i < E; ++i) x[(size_t)i] += a[(size_t)i];
            h = x;
            rms_norm(h.data(), E, s.rms_eps, W(p + "post_attention_norm.weight").data());
            Vec f;
            if (s.moe) {
                Vec r = matvec(W(p + "ffn_gate_inp.weight"), h, s.n_expert);
                const double mx = *std::max_element(r.begin(), r.end());
                double sum = 0;
                for (auto &e : r) sum += (e = std::exp(e - mx));
                std::vector<int64_t> order((size_t)s.n_expert);
                for (int64_t e = 0; e < s.n_expert; ++e) order[(size_t)e] = e;
                std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return r[(size_t)i] > r[(size_t)j]; });
                double wsum = 0;
                for (int64_t j = 0; j < s.n_expert_used; ++j) wsum += r[(size_t)order[(size_t)j]] / sum;
                f = Vec((size_t)E, 0.0);
                const int64_t F = s.n_ff_exp;
                for (int64_t j = 0; j < s.n_expert_used; ++j) {
                    const int64_t e = order[(size_t)j];
                    const Vec y = swiglu_ffn(W(p + "ffn_gate_exps.weight"), W(p + "ffn_up_exps.weight"), W(p + "ffn_down_exps.weight"), h, F, E,
                                             e * E * F, e * F * E);
                    for (int64_t i = 0; i < E; ++i) f[(size_t)i] += r[(size_t)e] / sum / wsum * y[(size_t)i];
                }
                const Vec sh = swiglu_ffn(W(p + "ffn_gate_shexp.weight"), W(p + "ffn_up_shexp.weight"), W(p + "ffn_down_shexp.weight"), h,
                                          s.n_ff_shexp, E);
                const double sg = sigmoid(matvec(W(p + "ffn_gate_inp_shexp.weight"), h, 1)[0]);
                for (int64_t i = 0; i < E; ++i) f[(size_t)i] += sg * sh[(size_t)i];
            } else {
                f = swiglu_ffn(W(p + "ffn_gate.weight"), W(p + "ffn_up.weight"), W(p + "ffn_down.weight"), h, s.n_ff, E);
            }
            for (int64_t i = 0; i < E; ++i) x[(size_t)i] += f[(size_t)i];
        }
        rms_norm(x.data(), E, s.rms_eps, W("output_norm.weight").data());
        logits.push_back(matvec(W("output.weight"), x, s.n_vocab));
    }
    return logits;
}

} // namespace rf_test
