// The ops and parameters DeepSeek-V2/V3 added (ABI 2.15) against float64 on every SIMD level:
// CONCAT (ggml_concat along dim 0), ATTENTION with V heads narrower than K's read from the K pool
// (multi-head latent attention, absorbed form: one KV head of latent + rope), MOE_WEIGHTS'
// normalised chosen probabilities and MOE_GROUP_MASK (grouped top-k).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "cpu_test_util.h"
#include "rocmforge/types.h"

using namespace cputest;

TEST_CASE("cpu ops: CONCAT joins two tensors along dim 0", "[cpu][ops][deepseek2]") {
    for (auto &be : all_backends()) {
        const int64_t A = 37, B = 8, H = 3, T = 5;
        Tensor a(RF_TYPE_F32, {A, H, T}), b(RF_TYPE_F32, {B, H, T}), y(RF_TYPE_F32, {A + B, H, T});
        fill_normal(a.f32(), a.n());
        fill_normal(b.f32(), b.n());
        rf_node node = make_node(RF_OP_CONCAT, y, {&a, &b});
        run_ok(*be, node);
        for (int64_t r = 0; r < H * T; ++r)
            for (int64_t i = 0; i < A + B; ++i)
                CHECK(y.f32()[r * (A + B) + i] == (i < A ? a.f32()[r * A + i] : b.f32()[r * B + i - A]));
        Tensor wrong(RF_TYPE_F32, {A + B - 1, H, T}), other(RF_TYPE_F32, {B, H, T + 1});
        CHECK_FALSE(be->supports(make_node(RF_OP_CONCAT, wrong, {&a, &b})));
        CHECK_FALSE(be->supports(make_node(RF_OP_CONCAT, y, {&a, &other})));
    }
}

// One KV head whose pool rows are [latent Dv | rope R]; V is the latent, read from the same pool.
TEST_CASE("cpu attention: latent attention (V heads from the start of the K rows) vs float64", "[cpu][attention][deepseek2]") {
    const int64_t Dv = 64, R = 32, D = Dv + R, Hq = 6, S = 70, n_kv_max = 60, T = 5;
    const int32_t tok_pos[T] = {0, 3, 31, 32, 59};
    for (int pool_type : {RF_TYPE_F32, RF_TYPE_F16, RF_TYPE_Q8_0})
        for (auto &be : all_backends()) {
            INFO("pool type " << pool_type);
            Tensor q(RF_TYPE_F32, {D, Hq, T}), kf(RF_TYPE_F32, {D, S}), slots(RF_TYPE_I32, {n_kv_max, 1}), info(RF_TYPE_I32, {2, T});
            fill_normal(q.f32(), q.n(), 0.3f);
            fill_normal(kf.f32(), kf.n());
            // The pool in its type, and the values it holds read back as float (the reference's K and V).
            Tensor kp(pool_type, {D, S});
            std::vector<float> held((size_t)kf.n());
            for (int64_t s = 0; s < S; ++s) {
                uint8_t *row = static_cast<uint8_t *>(kp.t.data) + s * kp.t.nb[1];
                if (pool_type == RF_TYPE_F32) std::memcpy(row, kf.f32() + s * D, size_t(D) * 4);
                else rf::quantize_row(pool_type, kf.f32() + s * D, row, D);
                rf::dequantize_row(pool_type, row, held.data() + s * D, D);
            }
            std::vector<int32_t> perm(S);
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), rng());
            for (int64_t p = 0; p < n_kv_max; ++p) slots.i32()[p] = perm[(size_t)p];
            for (int64_t t = 0; t < T; ++t) info.i32()[2 * t] = 0, info.i32()[2 * t + 1] = tok_pos[t];
            const float scale = 0.1f;
            std::vector<double> ref((size_t)(Dv * Hq * T));
            for (int64_t t = 0; t < T; ++t)
                for (int64_t h = 0; h < Hq; ++h) {
                    std::vector<double> sc;
                    for (int64_t p = 0; p <= tok_pos[t]; ++p) {
                        double acc = 0;
                        for (int64_t i = 0; i < D; ++i) acc += double(q.f32()[(t * Hq + h) * D + i]) * held[(size_t)(slots.i32()[p] * D + i)];
                        sc.push_back(acc * scale);
                    }
                    const double mx = *std::max_element(sc.begin(), sc.end());
                    double sum = 0;
                    for (double &v : sc) sum += (v = std::exp(v - mx));
                    for (int64_t i = 0; i < Dv; ++i) {
                        double acc = 0;
                        for (int64_t p = 0; p <= tok_pos[t]; ++p) acc += sc[(size_t)p] * held[(size_t)(slots.i32()[p] * D + i)];
                        ref[(size_t)((t * Hq + h) * Dv + i)] = acc / sum;
                    }
                }
            Tensor out(RF_TYPE_F32, {Dv * Hq, T});
            rf_node node = make_node(RF_OP_ATTENTION, out, {&q, &kp, &kp, &slots, &info});
            node.fparams[0] = scale;
            run_ok(*be, node);
            REQUIRE(all_finite(out.f32(), out.n()));
            CHECK(nmse(ref, out.f32(), out.n()) < 1e-10);
            // Token 4 alone (a decode step: its heads split into slices of one) equals its row of
            // the 5-token node (slices of three) bit for bit.
            Tensor q1(RF_TYPE_F32, {D, Hq, 1}), info1(RF_TYPE_I32, {2, 1}), out1(RF_TYPE_F32, {Dv * Hq, 1});
            std::memcpy(q1.f32(), q.f32() + 4 * D * Hq, size_t(D * Hq) * 4);
            info1.i32()[0] = 0, info1.i32()[1] = tok_pos[4];
            rf_node one = make_node(RF_OP_ATTENTION, out1, {&q1, &kp, &kp, &slots, &info1});
            one.fparams[0] = scale;
            run_ok(*be, one);
            CHECK(std::memcmp(out1.f32(), out.f32() + 4 * Dv * Hq, size_t(Dv * Hq) * 4) == 0);
            // V rows too short for the V heads, or a dst that is no multiple of the heads: declined.
            Tensor short_v(pool_type, {Dv - 32, S}), odd(RF_TYPE_F32, {Dv * Hq + 1, T});
            rf_node bad = make_node(RF_OP_ATTENTION, out, {&q, &kp, &short_v, &slots, &info});
            CHECK_FALSE(be->supports(bad));
            rf_node bad_dst = make_node(RF_OP_ATTENTION, odd, {&q, &kp, &kp, &slots, &info});
            CHECK_FALSE(be->supports(bad_dst));
        }
}

TEST_CASE("cpu moe: MOE_WEIGHTS' normalised chosen probabilities (sigmoid gating) vs float64", "[cpu][moe][deepseek2]") {
    for (auto &be : all_backends()) {
        const int64_t E = 24, k = 6, M = 7;
        Tensor probs(RF_TYPE_F32, {E, M}), ids(RF_TYPE_I32, {k, M}), w(RF_TYPE_F32, {k, M});
        fill_normal(probs.f32(), probs.n());
        for (int64_t i = 0; i < probs.n(); ++i) probs.f32()[i] = 1.f / (1.f + std::exp(-probs.f32()[i]));
        for (int64_t m = 0; m < M; ++m)
            for (int64_t j = 0; j < k; ++j) ids.i32()[m * k + j] = int32_t((m * 5 + j * 3) % E);
        for (int64_t e = 0; e < E; ++e) probs.f32()[6 * E + e] = 1e-7f; // all tiny: the clamp keeps them small
        rf_node node = make_node(RF_OP_MOE_WEIGHTS, w, {&probs, &ids});
        node.iparams[0] = 3;
        run_ok(*be, node);
        for (int64_t m = 0; m < M; ++m) {
            double sum = 0;
            for (int64_t j = 0; j < k; ++j) sum += probs.f32()[m * E + ids.i32()[m * k + j]];
            const double norm = std::max(sum, 6.103515625e-5);
            for (int64_t j = 0; j < k; ++j)
                CHECK(w.f32()[m * k + j] == Approx(probs.f32()[m * E + ids.i32()[m * k + j]] / norm).epsilon(1e-6));
        }
        CHECK(w.f32()[6 * k] == Approx(1e-7 / 6.103515625e-5).epsilon(1e-6));
        node.iparams[0] = 4;
        CHECK_FALSE(be->supports(node));
    }
}

TEST_CASE("cpu moe: MOE_GROUP_MASK keeps the best groups by the sum of their top two", "[cpu][moe][deepseek2]") {
    for (auto &be : all_backends()) {
        const int64_t E = 32, G = 8, used = 3, M = 9;
        Tensor x(RF_TYPE_F32, {E, M}), y(RF_TYPE_F32, {E, M});
        fill_normal(x.f32(), x.n());
        // Row 0: group 5 has the single largest value but a weak second, group 1 two good ones.
        for (int64_t e = 0; e < E; ++e) x.f32()[e] = -1.f;
        x.f32()[5 * 4] = 3.f;
        x.f32()[1 * 4 + 1] = 1.8f, x.f32()[1 * 4 + 3] = 1.7f;
        x.f32()[6 * 4 + 2] = 0.5f;
        rf_node node = make_node(RF_OP_MOE_GROUP_MASK, y, {&x});
        node.iparams[0] = (int32_t)G;
        node.iparams[1] = (int32_t)used;
        run_ok(*be, node);
        for (int64_t m = 0; m < M; ++m) {
            const float *v = x.f32() + m * E;
            std::vector<double> score(G);
            for (int64_t g = 0; g < G; ++g) {
                std::vector<double> gv(v + g * 4, v + g * 4 + 4);
                std::sort(gv.rbegin(), gv.rend());
                score[(size_t)g] = gv[0] + gv[1];
            }
            std::vector<int> order(G);
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return score[(size_t)a] > score[(size_t)b]; });
            for (int64_t e = 0; e < E; ++e) {
                const bool kept = std::find(order.begin(), order.begin() + used, int(e / 4)) != order.begin() + used;
                CHECK(y.f32()[m * E + e] == (kept ? v[e] : -INFINITY));
            }
        }
        // Row 0: groups 1 (3.5), 5 (2.0) and 6 (-0.5) beat the all -1 groups (-2).
        CHECK(y.f32()[1 * 4 + 1] == 1.8f);
        CHECK(y.f32()[6 * 4 + 2] == 0.5f);
        CHECK(y.f32()[0] == -INFINITY);
        node.iparams[0] = 5; // does not divide E
        CHECK_FALSE(be->supports(node));
        node.iparams[0] = (int32_t)G, node.iparams[1] = (int32_t)G + 1;
        CHECK_FALSE(be->supports(node));
    }
}
