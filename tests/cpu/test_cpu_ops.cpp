// Every non-matmul op except ATTENTION vs float64 reference math, on every SIMD level.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu_test_util.h"
#include "rocmforge/rope_angles.h"
#include "rocmforge/types.h"

using namespace cputest;

namespace {

double silu(double x) { return x / (1.0 + std::exp(-x)); }
double gelu_tanh(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }

} // namespace

TEST_CASE("cpu ops: GET_ROWS from several types", "[cpu][ops]") {
    for (auto &be : all_backends()) {
        for (int type : {RF_TYPE_F32, RF_TYPE_F16, RF_TYPE_BF16, RF_TYPE_Q8_0, RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_MXFP4}) {
            INFO(rf::type_name(type));
            const int64_t K = 256, V = 9, M = 5;
            Tensor table(type, {K, V}), ids(RF_TYPE_I32, {M}), out(RF_TYPE_F32, {K, M});
            std::vector<float> row(K);
            for (int64_t v = 0; v < V; ++v) {
                fill_normal(row.data(), K);
                uint8_t *dst = static_cast<uint8_t *>(table.t.data) + v * table.t.nb[1];
                if (type == RF_TYPE_F32) std::memcpy(dst, row.data(), K * 4);
                else rf::quantize_row(type, row.data(), dst, K);
            }
            const int32_t pick[M] = {3, 0, 8, 3, 5};
            std::memcpy(ids.i32(), pick, sizeof pick);
            rf_node node = make_node(RF_OP_GET_ROWS, out, {&table, &ids});
            run_ok(*be, node);
            std::vector<float> expect(K);
            for (int64_t m = 0; m < M; ++m) {
                rf::dequantize_row(type, static_cast<uint8_t *>(table.t.data) + pick[m] * table.t.nb[1], expect.data(), K);
                CHECK(std::memcmp(expect.data(), out.f32() + m * K, K * 4) == 0);
            }
        }
    }
}

TEST_CASE("cpu ops: ADD and MUL broadcast", "[cpu][ops]") {
    for (auto &be : all_backends()) {
        struct Shape { std::vector<int64_t> a, b; };
        for (const Shape &s : {Shape{{16, 6, 3}, {16, 6, 3}}, Shape{{16, 6, 3}, {16, 1, 3}},
                               Shape{{16, 6, 3}, {8, 6, 1}}, Shape{{16, 6, 3}, {16, 1, 1}},
                               Shape{{16, 6, 3}, {1, 6, 3}}}) { // [1, T]: a gate per token (Qwen2-MoE's shared expert)
            for (int op : {RF_OP_ADD, RF_OP_MUL}) {
                Tensor a(RF_TYPE_F32, s.a), b(RF_TYPE_F32, s.b), y(RF_TYPE_F32, s.a);
                fill_normal(a.f32(), a.n());
                fill_normal(b.f32(), b.n());
                rf_node node = make_node(op, y, {&a, &b});
                run_ok(*be, node);
                std::vector<double> ref(size_t(a.n()));
                for (int64_t i2 = 0; i2 < a.t.ne[2]; ++i2)
                    for (int64_t i1 = 0; i1 < a.t.ne[1]; ++i1)
                        for (int64_t i0 = 0; i0 < a.t.ne[0]; ++i0) {
                            const int64_t ia = (i2 * a.t.ne[1] + i1) * a.t.ne[0] + i0;
                            const int64_t ib = ((i2 % b.t.ne[2]) * b.t.ne[1] + i1 % b.t.ne[1]) * b.t.ne[0] + i0 % b.t.ne[0];
                            ref[size_t(ia)] = op == RF_OP_ADD ? double(a.f32()[ia]) + b.f32()[ib] : double(a.f32()[ia]) * b.f32()[ib];
                        }
                CHECK(nmse(ref, y.f32(), y.n()) < 1e-12);
            }
        }
        Tensor a(RF_TYPE_F32, {16, 6}), bad(RF_TYPE_F32, {5, 6}), y(RF_TYPE_F32, {16, 6});
        rf_node node = make_node(RF_OP_ADD, y, {&a, &bad});
        CHECK_FALSE(be->supports(node));
    }
}

TEST_CASE("cpu ops: SCALE, SILU, SWIGLU, RMS_NORM, SOFTMAX", "[cpu][ops]") {
    for (auto &be : all_backends()) {
        const int64_t K = 77, M = 5;
        Tensor a(RF_TYPE_F32, {K, M}), b(RF_TYPE_F32, {K, M}), y(RF_TYPE_F32, {K, M});
        fill_normal(a.f32(), a.n(), 2.f);
        fill_normal(b.f32(), b.n());
        std::vector<double> ref(size_t(a.n()));

        rf_node scale = make_node(RF_OP_SCALE, y, {&a});
        scale.fparams[0] = -0.37f;
        run_ok(*be, scale);
        for (int64_t i = 0; i < a.n(); ++i) ref[i] = -0.37 * a.f32()[i];
        CHECK(nmse(ref, y.f32(), y.n()) < 1e-12);

        rf_node si = make_node(RF_OP_SILU, y, {&a});
        run_ok(*be, si);
        for (int64_t i = 0; i < a.n(); ++i) ref[i] = silu(a.f32()[i]);
        CHECK(nmse(ref, y.f32(), y.n()) < 1e-11);

        rf_node sw = make_node(RF_OP_SWIGLU, y, {&a, &b});
        run_ok(*be, sw);
        for (int64_t i = 0; i < a.n(); ++i) ref[i] = silu(a.f32()[i]) * b.f32()[i];
        CHECK(nmse(ref, y.f32(), y.n()) < 1e-11);

        rf_node rn = make_node(RF_OP_RMS_NORM, y, {&a});
        rn.fparams[0] = 1e-5f;
        run_ok(*be, rn);
        for (int64_t m = 0; m < M; ++m) {
            double ss = 0;
            for (int64_t k = 0; k < K; ++k) ss += double(a.f32()[m * K + k]) * a.f32()[m * K + k];
            const double s = 1.0 / std::sqrt(ss / K + 1e-5);
            for (int64_t k = 0; k < K; ++k) ref[m * K + k] = a.f32()[m * K + k] * s;
        }
        CHECK(nmse(ref, y.f32(), y.n()) < 1e-12);

        rf_node sm = make_node(RF_OP_SOFTMAX, y, {&a});
        sm.fparams[0] = 0.7f;
        run_ok(*be, sm);
        for (int64_t m = 0; m < M; ++m) {
            double mx = -1e300, sum = 0;
            for (int64_t k = 0; k < K; ++k) mx = std::max(mx, 0.7 * a.f32()[m * K + k]);
            for (int64_t k = 0; k < K; ++k) sum += std::exp(0.7 * a.f32()[m * K + k] - mx);
            for (int64_t k = 0; k < K; ++k) ref[m * K + k] = std::exp(0.7 * a.f32()[m * K + k] - mx) / sum;
        }
        CHECK(nmse(ref, y.f32(), y.n()) < 1e-11);
        CHECK(all_finite(y.f32(), y.n()));
    }
}

TEST_CASE("cpu ops: GEGLU and SOFTCAP (Gemma)", "[cpu][ops]") {
    for (auto &be : all_backends()) {
        const int64_t K = 77, M = 5;
        Tensor a(RF_TYPE_F32, {K, M}), b(RF_TYPE_F32, {K, M}), y(RF_TYPE_F32, {K, M});
        fill_normal(a.f32(), a.n(), 3.f); // reaches the tails where tanh saturates
        fill_normal(b.f32(), b.n());
        std::vector<double> ref(size_t(a.n()));

        rf_node gg = make_node(RF_OP_GEGLU, y, {&a, &b});
        run_ok(*be, gg);
        for (int64_t i = 0; i < a.n(); ++i) ref[i] = gelu_tanh(a.f32()[i]) * b.f32()[i];
        CHECK(nmse(ref, y.f32(), y.n()) < 1e-11);

        rf_node sc = make_node(RF_OP_SOFTCAP, y, {&a});
        sc.fparams[0] = 2.5f;
        run_ok(*be, sc);
        for (int64_t i = 0; i < a.n(); ++i) ref[i] = 2.5 * std::tanh(a.f32()[i] / 2.5);
        CHECK(nmse(ref, y.f32(), y.n()) < 1e-11);

        sc.fparams[0] = 0.f; // a cap of 0 would divide by zero
        CHECK_FALSE(be->supports(sc));
    }
}

TEST_CASE("cpu ops: LAYER_NORM and GELU (BERT)", "[cpu][ops]") {
    for (auto &be : all_backends()) {
        const int64_t K = 384, M = 6;
        Tensor a(RF_TYPE_F32, {K, M}), y(RF_TYPE_F32, {K, M});
        fill_normal(a.f32(), a.n(), 3.f);
        for (int64_t i = 0; i < a.n(); ++i) a.f32()[i] += 2.f; // a mean far from 0: the centring matters
        std::vector<double> ref(size_t(a.n()));

        rf_node ln = make_node(RF_OP_LAYER_NORM, y, {&a});
        ln.fparams[0] = 1e-12f;
        run_ok(*be, ln);
        for (int64_t m = 0; m < M; ++m) {
            const float *x = a.f32() + m * K;
            double mean = 0, var = 0;
            for (int64_t k = 0; k < K; ++k) mean += x[k];
            mean /= K;
            for (int64_t k = 0; k < K; ++k) var += (x[k] - mean) * (x[k] - mean);
            var /= K;
            for (int64_t k = 0; k < K; ++k) ref[size_t(m * K + k)] = (x[k] - mean) / std::sqrt(var + 1e-12);
        }
        CHECK(nmse(ref, y.f32(), y.n()) < 1e-12);

        rf_node ge = make_node(RF_OP_GELU, y, {&a});
        run_ok(*be, ge);
        for (int64_t i = 0; i < a.n(); ++i) ref[size_t(i)] = gelu_tanh(a.f32()[i]);
        CHECK(nmse(ref, y.f32(), y.n()) < 1e-11);
    }
}

TEST_CASE("cpu ops: SIGMOID (Qwen2-MoE's shared-expert gate)", "[cpu][ops]") {
    for (auto &be : all_backends()) {
        const int64_t K = 37, M = 5;
        Tensor a(RF_TYPE_F32, {K, M}), y(RF_TYPE_F32, {K, M});
        fill_normal(a.f32(), a.n(), 8.f);
        // Edges: exactly 0, far in both tails (exp(-x) overflows to inf for x < -88.7).
        const float edges[] = {0.f, -0.f, 30.f, -30.f, 100.f, -100.f, 88.f, -88.f, 1e-30f};
        std::memcpy(a.f32(), edges, sizeof edges);
        rf_node node = make_node(RF_OP_SIGMOID, y, {&a});
        run_ok(*be, node);
        double worst = 0;
        for (int64_t i = 0; i < a.n(); ++i) {
            const double ref = 1.0 / (1.0 + std::exp(-(double)a.f32()[i]));
            const double got = y.f32()[i];
            if (ref > 1e-30) worst = std::max(worst, std::fabs(got - ref) / ref);
            else CHECK(std::fabs(got - ref) < 1e-37); // the tail below f32's normal range
        }
        CHECK(worst < 4e-7); // a few f32 roundings
        CHECK(y.f32()[0] == 0.5f);
        CHECK(y.f32()[1] == 0.5f);
        CHECK(y.f32()[4] == 1.f);
        CHECK(y.f32()[5] == 0.f);
        Tensor wrong(RF_TYPE_F32, {K, M + 1});
        CHECK_FALSE(be->supports(make_node(RF_OP_SIGMOID, wrong, {&a})));
    }
}

// ROPE of x at positions pos (frequency factors ff or none) into y.
static rf_node rope_node(Tensor &y, Tensor &x, Tensor &pos, Tensor *ff, int mode, int n_rot, float base, float scale) {
    rf_node node = make_node(RF_OP_ROPE, y, {&x, &pos, ff});
    node.iparams[0] = mode;
    node.iparams[1] = n_rot;
    node.fparams[0] = base;
    node.fparams[1] = scale;
    return node;
}

TEST_CASE("cpu ops: ROPE normal and NeoX with freq factors", "[cpu][ops]") {
    for (auto &be : all_backends()) {
        const int64_t D = 64, H = 3, T = 5;
        for (int mode : {RF_ROPE_NORMAL, RF_ROPE_NEOX})
            for (int n_rot : {64, 32})
                for (bool factors : {false, true}) {
                    INFO("mode " << mode << " n_rot " << n_rot << " factors " << factors);
                    Tensor x(RF_TYPE_F32, {D, H, T}), pos(RF_TYPE_I32, {T}), ff(RF_TYPE_F32, {n_rot / 2}),
                        y(RF_TYPE_F32, {D, H, T});
                    fill_normal(x.f32(), x.n());
                    for (int64_t t = 0; t < T; ++t) pos.i32()[t] = int32_t(t * 37 + 3);
                    for (int64_t i = 0; i < n_rot / 2; ++i) ff.f32()[i] = 1.f + float(i % 5);
                    rf_node node = rope_node(y, x, pos, factors ? &ff : nullptr, mode, n_rot, 10000.f, 0.5f);
                    run_ok(*be, node);
                    std::vector<double> ref(size_t(x.n()));
                    for (int64_t t = 0; t < T; ++t)
                        for (int64_t h = 0; h < H; ++h) {
                            const float *src = x.f32() + (t * H + h) * D;
                            double *dst = ref.data() + (t * H + h) * D;
                            for (int64_t i = 0; i < D; ++i) dst[i] = src[i];
                            for (int64_t i = 0; i < n_rot / 2; ++i) {
                                double th = pos.i32()[t] * 0.5 * std::pow(10000.0, -2.0 * i / n_rot);
                                if (factors) th /= ff.f32()[i];
                                const int64_t a = mode == RF_ROPE_NEOX ? i : 2 * i;
                                const int64_t b = mode == RF_ROPE_NEOX ? i + n_rot / 2 : 2 * i + 1;
                                dst[a] = src[a] * std::cos(th) - src[b] * std::sin(th);
                                dst[b] = src[a] * std::sin(th) + src[b] * std::cos(th);
                            }
                        }
                    CHECK(nmse(ref, y.f32(), y.n()) < 1e-11);
                }
    }
}

// The rows a decode graph hands ROPE (rope_angles.h) hold the CPU backend's angles bit for bit:
// rotating (1, 0) pairs makes its output the cos and sin it evaluated.
TEST_CASE("cpu ops: ROPE angles of rope_angles.h equal the CPU backend's", "[cpu][ops]") {
    for (auto &be : all_backends()) {
        const int64_t D = 64, H = 1, T = 6;
        for (int n_rot : {64, 48})
            for (bool factors : {false, true}) {
                INFO("n_rot " << n_rot << " factors " << factors);
                Tensor x(RF_TYPE_F32, {D, H, T}), pos(RF_TYPE_I32, {T}), ff(RF_TYPE_F32, {n_rot / 2}), y(RF_TYPE_F32, {D, H, T});
                for (int64_t i = 0; i < x.n(); ++i) x.f32()[i] = i % 2 ? 0.f : 1.f;
                const int32_t p[T] = {0, 1, 17, 4095, 70001, 131071};
                std::memcpy(pos.i32(), p, sizeof p);
                for (int64_t i = 0; i < n_rot / 2; ++i) ff.f32()[i] = 1.f + float(i % 7) * 0.75f;
                rf_node node = rope_node(y, x, pos, factors ? &ff : nullptr, RF_ROPE_NORMAL, n_rot, 500000.f, 0.25f);
                run_ok(*be, node);
                // A cache of fewer positions than asked for: the rest are evaluated directly.
                rf::RopeAngleCache cache(rf::RopeParams{n_rot, 500000.f, 0.25f, factors ? ff.f32() : nullptr}, 4096);
                std::vector<float> rows;
                for (int pass = 0; pass < 2; ++pass) { // computed, then from the cache
                    cache.gather(pos.i32(), T, rows);
                    REQUIRE(rows.size() == size_t(T * n_rot));
                    for (int64_t t = 0; t < T; ++t)
                        for (int64_t i = 0; i < n_rot; ++i)
                            CHECK(rows[size_t(t * n_rot + i)] == y.f32()[t * D + i]);
                }
            }
    }
}

TEST_CASE("cpu ops: SET_ROWS into f32, f16 and q8_0 pools", "[cpu][ops]") {
    for (auto &be : all_backends()) {
        for (int type : {RF_TYPE_F32, RF_TYPE_F16, RF_TYPE_Q8_0}) {
            INFO(rf::type_name(type));
            const int64_t R = 128, S = 10, T = 3;
            Tensor pool(type, {R, S}), x(RF_TYPE_F32, {R, T}), slots(RF_TYPE_I32, {T});
            std::memset(pool.t.data, 0xAB, pool.t.nb[2]);
            const std::vector<uint8_t> before(pool.storage);
            fill_normal(x.f32(), x.n());
            const int32_t s[T] = {7, 2, 5};
            std::memcpy(slots.i32(), s, sizeof s);
            rf_node node = make_node(RF_OP_SET_ROWS, pool, {&x, &slots});
            run_ok(*be, node);
            std::vector<uint8_t> expect(size_t(pool.t.nb[1]));
            for (int64_t t = 0; t < T; ++t) {
                if (type == RF_TYPE_F32) std::memcpy(expect.data(), x.f32() + t * R, R * 4);
                else if (type == RF_TYPE_F16)
                    for (int64_t i = 0; i < R; ++i) {
                        const uint16_t v = rf::fp32_to_fp16(x.f32()[t * R + i]);
                        std::memcpy(expect.data() + 2 * i, &v, 2);
                    }
                else rf::quantize_row(type, x.f32() + t * R, expect.data(), R);
                CHECK(std::memcmp(expect.data(), pool.storage.data() + s[t] * pool.t.nb[1], expect.size()) == 0);
            }
            for (int64_t r : {0, 1, 3, 4, 6, 8, 9})
                CHECK(std::memcmp(before.data() + r * pool.t.nb[1], pool.storage.data() + r * pool.t.nb[1], pool.t.nb[1]) == 0);
        }
    }
}

TEST_CASE("cpu ops: ARGMAX and COPY", "[cpu][ops]") {
    for (auto &be : all_backends()) {
        const int64_t K = 301, M = 4;
        Tensor a(RF_TYPE_F32, {K, M}), idx(RF_TYPE_I32, {M});
        fill_normal(a.f32(), a.n());
        a.f32()[0 * K + 17] = 50.f;
        a.f32()[1 * K + 300] = 50.f;
        a.f32()[2 * K + 5] = 50.f;
        a.f32()[2 * K + 9] = 50.f; // tie: first wins
        a.f32()[3 * K + 0] = 50.f;
        rf_node am = make_node(RF_OP_ARGMAX, idx, {&a});
        run_ok(*be, am);
        CHECK(idx.i32()[0] == 17);
        CHECK(idx.i32()[1] == 300);
        CHECK(idx.i32()[2] == 5);
        CHECK(idx.i32()[3] == 0);

        Tensor h(RF_TYPE_F16, {K, M}), back(RF_TYPE_F32, {K, M});
        rf_node to16 = make_node(RF_OP_COPY, h, {&a});
        run_ok(*be, to16);
        const auto *hv = reinterpret_cast<const uint16_t *>(h.t.data);
        bool exact = true;
        for (int64_t i = 0; i < a.n(); ++i) exact &= hv[i] == rf::fp32_to_fp16(a.f32()[i]);
        CHECK(exact);
        rf_node to32 = make_node(RF_OP_COPY, back, {&h});
        run_ok(*be, to32);
        bool exact_back = true;
        for (int64_t i = 0; i < a.n(); ++i) exact_back &= back.f32()[i] == rf::fp16_to_fp32(hv[i]);
        CHECK(exact_back);
    }
}

TEST_CASE("cpu ops: a multi-node graph runs in order", "[cpu][ops]") {
    for (auto &be : all_backends()) {
        const int64_t K = 256, N = 40, M = 3;
        Tensor x(RF_TYPE_F32, {K, M}), xn(RF_TYPE_F32, {K, M}), w(RF_TYPE_Q8_0, {K, N}), h(RF_TYPE_F32, {N, M}),
            act(RF_TYPE_F32, {N, M});
        fill_normal(x.f32(), x.n());
        std::vector<float> row(K), deq(size_t(K * N));
        for (int64_t n = 0; n < N; ++n) {
            fill_normal(row.data(), K);
            rf::quantize_row(RF_TYPE_Q8_0, row.data(), static_cast<uint8_t *>(w.t.data) + n * w.t.nb[1], K);
            rf::dequantize_row(RF_TYPE_Q8_0, static_cast<uint8_t *>(w.t.data) + n * w.t.nb[1], deq.data() + n * K, K);
        }
        rf_node n1 = make_node(RF_OP_RMS_NORM, xn, {&x});
        n1.fparams[0] = 1e-6f;
        rf_node n2 = make_node(RF_OP_MATMUL, h, {&w, &xn});
        rf_node n3 = make_node(RF_OP_SILU, act, {&h});
        std::string err;
        REQUIRE(be->run_graph({&n1, &n2, &n3}, &err) == RF_OK);
        std::vector<double> ref(size_t(N * M));
        for (int64_t m = 0; m < M; ++m) {
            double ss = 0;
            for (int64_t k = 0; k < K; ++k) ss += double(x.f32()[m * K + k]) * x.f32()[m * K + k];
            const double s = 1.0 / std::sqrt(ss / K + 1e-6);
            for (int64_t n = 0; n < N; ++n) {
                double acc = 0;
                for (int64_t k = 0; k < K; ++k) acc += deq[n * K + k] * (x.f32()[m * K + k] * s);
                ref[m * N + n] = silu(acc);
            }
        }
        CHECK(nmse(ref, act.f32(), act.n()) < 1e-3);
    }
}
