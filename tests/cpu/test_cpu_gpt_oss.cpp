// The ops and parameters gpt-oss added (ABI 2.14) against float64 on every SIMD level: SWIGLU_OAI
// (ggml's swiglu_oai), ADD_ID (ggml_add_id), ROPE's YaRN form (ggml_rope_ext), ATTENTION's sinks
// (ggml's flash attention with sinks) and MOE_WEIGHTS' softmax of the chosen logits
// (SOFTMAX_WEIGHT gating).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "cpu_test_util.h"
#include "rocmforge/rope_angles.h"
#include "rocmforge/rope_yarn.h"
#include "rocmforge/types.h"

using namespace cputest;

TEST_CASE("cpu ops: SWIGLU_OAI (gpt-oss's clamped SwiGLU) vs float64", "[cpu][ops][gpt-oss]") {
    for (auto &be : all_backends()) {
        const int64_t K = 45, M = 6;
        Tensor gate(RF_TYPE_F32, {K, M}), up(RF_TYPE_F32, {K, M}), y(RF_TYPE_F32, {K, M});
        fill_normal(gate.f32(), gate.n(), 6.f); // both sides of the limit
        fill_normal(up.f32(), up.n(), 6.f);
        // Edges: at and past the limit on both sides, 0, a tail where exp(-alpha x) overflows.
        const float g_edges[] = {7.f, 7.5f, -7.5f, 0.f, -60.f, 1000.f, -1000.f, 6.999f};
        const float u_edges[] = {7.f, -7.5f, 9.f, -1.f, 3.f, -1000.f, 1000.f, -7.f};
        std::memcpy(gate.f32(), g_edges, sizeof g_edges);
        std::memcpy(up.f32(), u_edges, sizeof u_edges);
        rf_node node = make_node(RF_OP_SWIGLU_OAI, y, {&gate, &up});
        node.fparams[0] = 1.702f;
        node.fparams[1] = 7.0f;
        run_ok(*be, node);
        std::vector<double> ref((size_t)y.n());
        for (int64_t i = 0; i < y.n(); ++i) {
            const double x = std::min<double>(gate.f32()[i], 7.0), u = std::clamp<double>(up.f32()[i], -7.0, 7.0);
            ref[(size_t)i] = x / (1.0 + std::exp(-1.702 * x)) * (u + 1.0);
        }
        // Relative to the factors' magnitudes: y + 1 cancels near y = -1, which no f32 op avoids;
        // in the sigmoid's tail the f32 product alpha x (up to ~60) carries its rounding into exp.
        double worst = 0;
        for (int64_t i = 0; i < y.n(); ++i) {
            const double x = std::min<double>(gate.f32()[i], 7.0), u = std::clamp<double>(up.f32()[i], -7.0, 7.0);
            const double size = std::fabs(x / (1.0 + std::exp(-1.702 * x))) * (std::fabs(u) + 1.0);
            if (size > 1e-20) worst = std::max(worst, std::fabs(y.f32()[i] - ref[(size_t)i]) / size);
        }
        CHECK(worst < 5e-6);
        CHECK(y.f32()[3] == 0.f);                         // x = 0
        CHECK(y.f32()[5] == Approx(7.0 / (1 + std::exp(-1.702 * 7.0)) * -6.0)); // both clamps
        // The up projection clamps on both sides, the gate only above.
        CHECK(y.f32()[2] == Approx(-7.5 / (1 + std::exp(1.702 * 7.5)) * 8.0).epsilon(1e-5));
        node.fparams[1] = 0.f;
        CHECK_FALSE(be->supports(node)); // the limit must be positive
        Tensor wrong(RF_TYPE_F32, {K, M + 1});
        CHECK_FALSE(be->supports(make_node(RF_OP_SWIGLU_OAI, wrong, {&gate, &up})));
    }
}

TEST_CASE("cpu ops: ADD_ID adds each chosen expert's bias row", "[cpu][moe][gpt-oss]") {
    for (auto &be : all_backends()) {
        const int64_t N = 37, S = 4, M = 5, E = 9;
        Tensor y(RF_TYPE_F32, {N, S, M}), bias(RF_TYPE_F32, {N, E}), ids(RF_TYPE_I32, {S, M}), out(RF_TYPE_F32, {N, S, M});
        fill_normal(y.f32(), y.n());
        fill_normal(bias.f32(), bias.n(), 3.f);
        for (int64_t i = 0; i < ids.n(); ++i) ids.i32()[i] = int32_t((i * 5 + 2) % E);
        ids.i32()[7] = (int32_t)E; // out of range: the row is copied unchanged
        ids.i32()[8] = -1;
        rf_node node = make_node(RF_OP_ADD_ID, out, {&y, &bias, &ids});
        run_ok(*be, node);
        for (int64_t m = 0; m < M; ++m)
            for (int64_t s = 0; s < S; ++s) {
                const int32_t e = ids.i32()[m * S + s];
                for (int64_t n = 0; n < N; ++n) {
                    const float x = y.f32()[(m * S + s) * N + n];
                    const float want = e >= 0 && e < E ? x + bias.f32()[e * N + n] : x;
                    CHECK(out.f32()[(m * S + s) * N + n] == want); // one f32 add: exact
                }
            }
        Tensor short_bias(RF_TYPE_F32, {N - 1, E});
        CHECK_FALSE(be->supports(make_node(RF_OP_ADD_ID, out, {&y, &short_bias, &ids})));
        Tensor i64ids(RF_TYPE_I64, {S, M});
        CHECK_FALSE(be->supports(make_node(RF_OP_ADD_ID, out, {&y, &bias, &i64ids})));
    }
}

namespace {

// YaRN ROPE node: NeoX, n_rot, base, freq_scale, the YaRN parameters.
rf_node yarn_node(Tensor &y, Tensor &x, Tensor &pos, Tensor *ff, int n_rot, float base, float scale, const rf::RopeYarn &yp) {
    rf_node node = make_node(RF_OP_ROPE, y, {&x, &pos, ff});
    node.iparams[0] = RF_ROPE_NEOX;
    node.iparams[1] = n_rot;
    node.iparams[2] = 1;
    node.iparams[3] = yp.n_ctx_orig;
    node.fparams[0] = base;
    node.fparams[1] = scale;
    node.fparams[2] = yp.ext_factor;
    node.fparams[3] = yp.attn_factor;
    node.fparams[4] = yp.beta_fast;
    node.fparams[5] = yp.beta_slow;
    return node;
}

} // namespace

TEST_CASE("cpu ops: ROPE's YaRN form vs float64 (ggml_rope_ext)", "[cpu][ops][gpt-oss]") {
    // gpt-oss's own numbers: 64 rotated dims, base 150000, 4096 original positions, factor 32:
    // the ramp runs over pairs 8..18 and cos / sin are scaled by 1 + 0.1 ln 32.
    {
        rf::RopeYarn yp{4096, 1.f, 1.f, 32.f, 1.f};
        float dims[2];
        rf::rope_yarn_corr_dims(yp, 64, 150000.f, dims);
        CHECK(dims[0] == 8.f);
        CHECK(dims[1] == 18.f);
        CHECK(rf::rope_yarn_mscale(yp, 1.f / 32.f) == Approx(1.0 + 0.1 * std::log(32.0)));
    }
    struct Case {
        int n_rot;
        float base, factor;
        rf::RopeYarn y;
        bool factors;
    };
    const Case cases[] = {{64, 150000.f, 32.f, {4096, 1.f, 1.f, 32.f, 1.f}, false},
                          {64, 10000.f, 4.f, {2048, 1.f, 1.2f, 32.f, 1.f}, false},
                          {32, 10000.f, 8.f, {512, 0.5f, 1.f, 24.f, 2.f}, true},
                          {64, 150000.f, 32.f, {4096, 0.f, 0.9f, 32.f, 1.f}, false}}; // ext 0: attn_factor alone
    for (auto &be : all_backends())
        for (const Case &c : cases) {
            INFO("n_rot " << c.n_rot << " base " << c.base << " factor " << c.factor << " ext " << c.y.ext_factor);
            const int64_t D = 64, H = 3, T = 6;
            Tensor x(RF_TYPE_F32, {D, H, T}), pos(RF_TYPE_I32, {T}), ff(RF_TYPE_F32, {c.n_rot / 2}), y(RF_TYPE_F32, {D, H, T});
            fill_normal(x.f32(), x.n());
            const int32_t p[T] = {0, 1, 17, 4095, 70001, 131071};
            std::memcpy(pos.i32(), p, sizeof p);
            for (int64_t i = 0; i < c.n_rot / 2; ++i) ff.f32()[i] = 1.f + float(i % 3) * 0.5f;
            rf_node node = yarn_node(y, x, pos, c.factors ? &ff : nullptr, c.n_rot, c.base, 1.f / c.factor, c.y);
            run_ok(*be, node);
            // float64 restatement of ggml's rope_yarn (the corr dims from their f32 definition).
            float dims[2];
            rf::rope_yarn_corr_dims(c.y, c.n_rot, c.base, dims);
            const double fs = 1.0 / c.factor;
            double mscale = c.y.attn_factor;
            if (c.y.ext_factor != 0) mscale *= 1.0 + 0.1 * std::log(1.0 / fs);
            std::vector<double> ref((size_t)x.n());
            for (int64_t t = 0; t < T; ++t)
                for (int64_t h = 0; h < H; ++h) {
                    const float *src = x.f32() + (t * H + h) * D;
                    double *dst = ref.data() + (t * H + h) * D;
                    for (int64_t i = 0; i < D; ++i) dst[i] = src[i];
                    for (int64_t i = 0; i < c.n_rot / 2; ++i) {
                        double te = p[t] * std::pow((double)c.base, -2.0 * i / c.n_rot);
                        if (c.factors) te /= ff.f32()[i];
                        // The ramp in f32, as ggml's rope_yarn_ramp defines it: at large positions
                        // the angle is more sensitive to its last bit than the test's bound.
                        const float r = (float(i) - dims[0]) / std::max(0.001f, dims[1] - dims[0]);
                        const double ramp = 1.0f - std::min(1.0f, std::max(0.0f, r));
                        const double mix = ramp * c.y.ext_factor;
                        const double th = te * fs * (1 - mix) + te * mix;
                        const double cs = std::cos(th) * mscale, sn = std::sin(th) * mscale;
                        const int64_t a = i, b = i + c.n_rot / 2;
                        dst[a] = src[a] * cs - src[b] * sn;
                        dst[b] = src[a] * sn + src[b] * cs;
                    }
                }
            CHECK(nmse(ref, y.f32(), y.n()) < 1e-11);
            // The host's angle rows (rope_angles.h) hold the backend's cos and sin bit for bit.
            Tensor ones(RF_TYPE_F32, {D, 1, T}), rot(RF_TYPE_F32, {D, 1, T});
            for (int64_t t = 0; t < T; ++t)
                for (int64_t i = 0; i < D; ++i) ones.f32()[t * D + i] = i < c.n_rot / 2 ? 1.f : 0.f;
            rf_node n1 = yarn_node(rot, ones, pos, c.factors ? &ff : nullptr, c.n_rot, c.base, 1.f / c.factor, c.y);
            run_ok(*be, n1);
            rf::RopeParams rp{c.n_rot, c.base, 1.f / c.factor, c.factors ? ff.f32() : nullptr};
            rp.yarn = true;
            rp.yarn_params = c.y;
            std::vector<float> row((size_t)c.n_rot);
            for (int64_t t = 0; t < T; ++t) {
                rf::rope_angles_row(rp, p[t], row.data());
                for (int64_t i = 0; i < c.n_rot / 2; ++i) {
                    CHECK(row[(size_t)(2 * i)] == rot.f32()[t * D + i]);                  // (1, 0) rotated: cos
                    CHECK(row[(size_t)(2 * i + 1)] == rot.f32()[t * D + i + c.n_rot / 2]); // and sin
                }
            }
        }
    for (auto &be : all_backends()) { // no original context: refused
        Tensor x(RF_TYPE_F32, {64, 1, 1}), pos(RF_TYPE_I32, {1}), y(RF_TYPE_F32, {64, 1, 1});
        rf_node node = yarn_node(y, x, pos, nullptr, 64, 10000.f, 0.25f, rf::RopeYarn{0, 1.f, 1.f, 32.f, 1.f});
        CHECK_FALSE(be->supports(node));
    }
}

TEST_CASE("cpu attention: sinks join each head's softmax denominator", "[cpu][attention][gpt-oss]") {
    const int64_t D = 64, Hq = 8, Hkv = 2, S = 60, n_kv_max = 50, T = 4;
    const int32_t tok_pos[T] = {0, 9, 33, 47}; // one key, a few, more than a chunk of 32
    for (int32_t window : {0, 12})
        for (auto &be : all_backends()) {
            INFO("window " << window);
            Tensor q(RF_TYPE_F32, {D, Hq, T}), kp(RF_TYPE_F32, {D * Hkv, S}), vp(RF_TYPE_F32, {D * Hkv, S}),
                slots(RF_TYPE_I32, {n_kv_max, 1}), info(RF_TYPE_I32, {2, T}), sinks(RF_TYPE_F32, {Hq});
            fill_normal(q.f32(), q.n());
            fill_normal(kp.f32(), kp.n(), 1.5f);
            fill_normal(vp.f32(), vp.n());
            fill_normal(sinks.f32(), sinks.n(), 2.f);
            sinks.f32()[0] = 40.f;  // above every score: the output nearly vanishes
            sinks.f32()[1] = -80.f; // below: no effect
            std::vector<int32_t> perm(S);
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), rng());
            for (int64_t p = 0; p < n_kv_max; ++p) slots.i32()[p] = perm[(size_t)p];
            for (int64_t t = 0; t < T; ++t) info.i32()[2 * t] = 0, info.i32()[2 * t + 1] = tok_pos[t];
            const float scale = 0.125f;
            std::vector<double> ref((size_t)(D * Hq * T));
            for (int64_t t = 0; t < T; ++t)
                for (int64_t h = 0; h < Hq; ++h) {
                    const int64_t g = h / (Hq / Hkv), first = window > 0 ? std::max<int64_t>(0, tok_pos[t] - window + 1) : 0;
                    std::vector<double> sc;
                    for (int64_t p = first; p <= tok_pos[t]; ++p) {
                        double acc = 0;
                        for (int64_t i = 0; i < D; ++i)
                            acc += double(q.f32()[(t * Hq + h) * D + i]) * kp.f32()[slots.i32()[p] * D * Hkv + g * D + i];
                        sc.push_back(acc * scale);
                    }
                    const double sink = sinks.f32()[h];
                    const double mx = std::max(*std::max_element(sc.begin(), sc.end()), sink);
                    double sum = std::exp(sink - mx);
                    for (double &v : sc) sum += (v = std::exp(v - mx));
                    for (int64_t i = 0; i < D; ++i) {
                        double acc = 0;
                        for (int64_t p = first; p <= tok_pos[t]; ++p)
                            acc += sc[(size_t)(p - first)] * vp.f32()[slots.i32()[p] * D * Hkv + g * D + i];
                        ref[(size_t)((t * Hq + h) * D + i)] = acc / sum;
                    }
                }
            Tensor out(RF_TYPE_F32, {D * Hq, T});
            rf_node node = make_node(RF_OP_ATTENTION, out, {&q, &kp, &vp, &slots, &info, &sinks});
            node.fparams[0] = scale;
            node.iparams[0] = window;
            run_ok(*be, node);
            REQUIRE(all_finite(out.f32(), out.n()));
            CHECK(nmse(ref, out.f32(), out.n()) < 1e-10);
            for (int64_t i = 0; i < D; ++i) CHECK(std::fabs(out.f32()[i]) < 1e-6); // head 0 of token 0: the sink wins
            // The same node without its sinks differs (the reference is not the plain softmax).
            Tensor plain(RF_TYPE_F32, {D * Hq, T});
            rf_node no_sinks = make_node(RF_OP_ATTENTION, plain, {&q, &kp, &vp, &slots, &info});
            no_sinks.fparams[0] = scale;
            no_sinks.iparams[0] = window;
            run_ok(*be, no_sinks);
            CHECK(nmse(ref, plain.f32(), plain.n()) > 1e-3);
            Tensor short_sinks(RF_TYPE_F32, {Hq - 1});
            rf_node bad = make_node(RF_OP_ATTENTION, out, {&q, &kp, &vp, &slots, &info, &short_sinks});
            bad.fparams[0] = scale;
            CHECK_FALSE(be->supports(bad));
        }
}

TEST_CASE("cpu moe: MOE_WEIGHTS' softmax of the chosen logits (gpt-oss) vs float64 and ggml's steps", "[cpu][moe][gpt-oss]") {
    for (auto &be : all_backends()) {
        const int64_t E = 32, k = 4, M = 9;
        Tensor logits(RF_TYPE_F32, {E, M}), ids(RF_TYPE_I32, {k, M}), w(RF_TYPE_F32, {k, M});
        fill_normal(logits.f32(), logits.n(), 4.f);
        rf_node tk = make_node(RF_OP_TOPK, ids, {&logits});
        run_ok(*be, tk);
        rf_node node = make_node(RF_OP_MOE_WEIGHTS, w, {&logits, &ids});
        node.iparams[0] = 2;
        run_ok(*be, node);
        std::vector<double> ref((size_t)(k * M));
        for (int64_t m = 0; m < M; ++m) {
            const float *l = logits.f32() + m * E;
            const int32_t *id = ids.i32() + m * k;
            double z = 0;
            for (int64_t j = 0; j < k; ++j) z += std::exp((double)l[id[j]]);
            for (int64_t j = 0; j < k; ++j) ref[(size_t)(m * k + j)] = std::exp((double)l[id[j]]) / z;
            // ggml_soft_max on the k chosen: exp(l - max) in f32, the sum in double, the f32 reciprocal.
            float mx = -INFINITY;
            for (int64_t j = 0; j < k; ++j) mx = std::max(mx, l[id[j]]);
            double sum = 0;
            for (int64_t j = 0; j < k; ++j) sum += (double)std::exp(l[id[j]] - mx);
            const float inv = float(1.0 / sum);
            for (int64_t j = 0; j < k; ++j) CHECK(w.f32()[m * k + j] == std::exp(l[id[j]] - mx) * inv);
        }
        CHECK(nmse(ref, w.f32(), w.n()) < 1e-12);
        node.iparams[0] = 4; // 3: ABI 2.15 (test_cpu_deepseek2.cpp)
        CHECK_FALSE(be->supports(node));
    }
}
