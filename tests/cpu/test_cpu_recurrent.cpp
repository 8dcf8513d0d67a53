// Qwen3.5's recurrent ops (abi.h SSM_CONV, GATED_DELTA_NET, SOFTPLUS) against float64 on every
// SIMD level: two sequences interleaved in one node, one continuing from a carried state and one
// starting at position 0 (whose stale state row must be ignored), the state written back, and a
// prompt in one node equal, bit for bit, to the same tokens one node each (decode).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "cpu_test_util.h"

using namespace cputest;

namespace {

// Tokens of sequences 0 and 1 interleaved: sequence 0 continues at position 5, sequence 1 starts
// at 0; batch sequence b uses pool row rows[b].
struct Batch {
    std::vector<int32_t> seq, pos;
};
Batch interleaved(int64_t T) {
    Batch b;
    int32_t next[2] = {5, 0};
    for (int64_t t = 0; t < T; ++t) {
        const int32_t s = (t % 3 == 1) ? 1 : 0;
        b.seq.push_back(s);
        b.pos.push_back(next[s]++);
    }
    return b;
}
void fill_info(Tensor &info, const Batch &b, int64_t first, int64_t count) {
    for (int64_t t = 0; t < count; ++t) {
        info.i32()[2 * t] = b.seq[(size_t)(first + t)];
        info.i32()[2 * t + 1] = b.pos[(size_t)(first + t)];
    }
}

} // namespace

TEST_CASE("cpu ops: SSM_CONV (short causal convolution with carried inputs) vs float64", "[cpu][ops][qwen35]") {
    const int64_t C = 37, K = 4, W = K - 1, T = 11, R = 3;
    const Batch bt = interleaved(T);
    for (auto &be : all_backends()) {
        Tensor x(RF_TYPE_F32, {C, T}), w(RF_TYPE_F32, {K, C}), y(RF_TYPE_F32, {C, T}), pool(RF_TYPE_F32, {W * C, R});
        Tensor info(RF_TYPE_I32, {2, T}), rows(RF_TYPE_I32, {2});
        fill_normal(x.f32(), x.n());
        fill_normal(w.f32(), w.n());
        fill_normal(pool.f32(), pool.n());
        rows.i32()[0] = 2, rows.i32()[1] = 0; // sequence 1's row 0 holds stale values
        fill_info(info, bt, 0, T);
        const std::vector<float> pool0 = pool.as_floats();
        // float64: each sequence's window, seeded from its row (zeros for the new one).
        std::vector<std::vector<double>> win(2, std::vector<double>((size_t)(W * C), 0.0));
        for (int64_t i = 0; i < W * C; ++i) win[0][(size_t)i] = pool0[(size_t)(2 * W * C + i)];
        std::vector<double> ref((size_t)(C * T));
        for (int64_t t = 0; t < T; ++t) {
            auto &s = win[(size_t)bt.seq[(size_t)t]];
            for (int64_t c = 0; c < C; ++c) {
                double sum = 0;
                for (int64_t i = 0; i < W; ++i) sum += s[(size_t)(c * W + i)] * w.f32()[c * K + i];
                sum += double(x.f32()[t * C + c]) * w.f32()[c * K + W];
                ref[(size_t)(t * C + c)] = sum;
                for (int64_t i = 0; i + 1 < W; ++i) s[(size_t)(c * W + i)] = s[(size_t)(c * W + i + 1)];
                s[(size_t)(c * W + W - 1)] = x.f32()[t * C + c];
            }
        }
        rf_node node = make_node(RF_OP_SSM_CONV, y, {&x, &w, &pool, &info, &rows});
        run_ok(*be, node);
        CHECK(nmse(ref, y.f32(), y.n()) < 1e-12);
        // The rows now hold each sequence's last K - 1 inputs (exact copies); row 1 untouched.
        for (int64_t i = 0; i < W * C; ++i) {
            CHECK(pool.f32()[2 * W * C + i] == (float)win[0][(size_t)i]);
            CHECK(pool.f32()[i] == (float)win[1][(size_t)i]);
            CHECK(pool.f32()[W * C + i] == pool0[(size_t)(W * C + i)]);
        }
        // The same tokens one node each: the same floats.
        std::memcpy(pool.f32(), pool0.data(), pool0.size() * sizeof(float));
        for (int64_t t = 0; t < T; ++t) {
            Tensor x1(RF_TYPE_F32, {C, 1}), y1(RF_TYPE_F32, {C, 1}), info1(RF_TYPE_I32, {2, 1});
            std::memcpy(x1.f32(), x.f32() + t * C, sizeof(float) * C);
            fill_info(info1, bt, t, 1);
            rf_node one = make_node(RF_OP_SSM_CONV, y1, {&x1, &w, &pool, &info1, &rows});
            run_ok(*be, one);
            CHECK(std::memcmp(y1.f32(), y.f32() + t * C, sizeof(float) * C) == 0);
        }
        // A batch sequence index outside the rows fails the compute.
        info.i32()[0] = 7;
        std::string err;
        CHECK(be->run(node, &err) != RF_OK);
        CHECK(err.find("batch sequence 7") != std::string::npos);
        Tensor short_pool(RF_TYPE_F32, {W * C - 1, R});
        CHECK_FALSE(be->supports(make_node(RF_OP_SSM_CONV, y, {&x, &w, &short_pool, &info, &rows})));
    }
}

namespace {

// The gated delta rule in float64 for one sequence's head, from its state S[a][b] (a key, b value).
struct RefHead {
    std::vector<double> S; // b * Sk + a
};

std::vector<double> l2n(const float *x, int64_t n, double eps, double scale) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += double(x[i]) * x[i];
    const double inv = 1.0 / std::max(std::sqrt(s), eps);
    std::vector<double> r((size_t)n);
    for (int64_t i = 0; i < n; ++i) r[(size_t)i] = x[i] * inv * scale;
    return r;
}

} // namespace

TEST_CASE("cpu ops: GATED_DELTA_NET (gated delta rule with per-head state) vs float64", "[cpu][ops][qwen35]") {
    const int64_t Hk = 2, Sk = 16, Hv = 4, Sv = 12, T = 10, R = 3, N = 2 * Hk * Sk + Hv * Sv, SS = Sk * Sv * Hv;
    const float eps = 1e-6f, qs = 1.0f / std::sqrt((float)Sk);
    const Batch bt = interleaved(T);
    for (int mapping = 0; mapping < 2; ++mapping) // value head h reads key head h % Hk, or h / (Hv / Hk)
    for (auto &be : all_backends()) {
        INFO("key head mapping " << mapping);
        Tensor qkv(RF_TYPE_F32, {N, T}), g(RF_TYPE_F32, {Hv, T}), beta(RF_TYPE_F32, {Hv, T}), y(RF_TYPE_F32, {Hv * Sv, T});
        Tensor pool(RF_TYPE_F32, {SS, R}), info(RF_TYPE_I32, {2, T}), rows(RF_TYPE_I32, {2});
        fill_normal(qkv.f32(), qkv.n());
        fill_normal(pool.f32(), pool.n(), 0.5f);
        for (int64_t i = 0; i < g.n(); ++i) {
            g.f32()[i] = -std::fabs(qkv.f32()[i % qkv.n()]) * 0.7f;           // log decay <= 0
            beta.f32()[i] = 1.0f / (1.0f + std::exp(-qkv.f32()[(i * 7) % qkv.n()])); // in (0, 1)
        }
        qkv.f32()[3 * N + 0] = 0.0f; // a zero-length-ish key is bounded by eps
        rows.i32()[0] = 1, rows.i32()[1] = 2;
        fill_info(info, bt, 0, T);
        const std::vector<float> pool0 = pool.as_floats();
        std::vector<std::vector<double>> st(2, std::vector<double>((size_t)SS, 0.0));
        for (int64_t i = 0; i < SS; ++i) st[0][(size_t)i] = pool0[(size_t)(SS + i)];
        std::vector<double> ref((size_t)(Hv * Sv * T));
        for (int64_t t = 0; t < T; ++t) {
            auto &S = st[(size_t)bt.seq[(size_t)t]];
            const float *x = qkv.f32() + t * N;
            for (int64_t h = 0; h < Hv; ++h) {
                const int64_t kh = mapping ? h / (Hv / Hk) : h % Hk;
                const auto q = l2n(x + kh * Sk, Sk, eps, qs), k = l2n(x + Hk * Sk + kh * Sk, Sk, eps, 1.0);
                const float *v = x + 2 * Hk * Sk + h * Sv;
                const double decay = std::exp((double)g.f32()[t * Hv + h]), b = beta.f32()[t * Hv + h];
                double *Sh = S.data() + h * Sk * Sv;
                for (int64_t i = 0; i < Sk * Sv; ++i) Sh[i] *= decay;
                for (int64_t j = 0; j < Sv; ++j) {
                    double sk = 0;
                    for (int64_t a = 0; a < Sk; ++a) sk += Sh[j * Sk + a] * k[(size_t)a];
                    const double d = b * (v[j] - sk);
                    for (int64_t a = 0; a < Sk; ++a) Sh[j * Sk + a] += k[(size_t)a] * d;
                }
                for (int64_t j = 0; j < Sv; ++j) {
                    double o = 0;
                    for (int64_t a = 0; a < Sk; ++a) o += Sh[j * Sk + a] * q[(size_t)a];
                    ref[(size_t)(t * Hv * Sv + h * Sv + j)] = o;
                }
            }
        }
        rf_node node = make_node(RF_OP_GATED_DELTA_NET, y, {&qkv, &g, &beta, &pool, &info, &rows});
        node.iparams[0] = (int32_t)Hk, node.iparams[1] = (int32_t)Sk, node.iparams[2] = (int32_t)Hv, node.iparams[3] = (int32_t)Sv;
        node.fparams[0] = eps, node.fparams[1] = qs;
        node.iparams[4] = mapping;
        run_ok(*be, node);
        CHECK(nmse(ref, y.f32(), y.n()) < 1e-10);
        CHECK(all_finite(y.f32(), y.n()));
        // The state rows carry each sequence's final S; row 0 (no sequence) untouched.
        std::vector<double> s_ref(st[0]);
        s_ref.insert(s_ref.end(), st[1].begin(), st[1].end());
        CHECK(nmse(s_ref, pool.f32() + SS, 2 * SS) < 1e-10);
        for (int64_t i = 0; i < SS; ++i) CHECK(pool.f32()[i] == pool0[(size_t)i]);
        // Token by token (decode) gives the same floats as the prompt in one node.
        std::memcpy(pool.f32(), pool0.data(), pool0.size() * sizeof(float));
        for (int64_t t = 0; t < T; ++t) {
            Tensor x1(RF_TYPE_F32, {N, 1}), g1(RF_TYPE_F32, {Hv, 1}), b1(RF_TYPE_F32, {Hv, 1}), y1(RF_TYPE_F32, {Hv * Sv, 1});
            Tensor info1(RF_TYPE_I32, {2, 1});
            std::memcpy(x1.f32(), qkv.f32() + t * N, sizeof(float) * N);
            std::memcpy(g1.f32(), g.f32() + t * Hv, sizeof(float) * Hv);
            std::memcpy(b1.f32(), beta.f32() + t * Hv, sizeof(float) * Hv);
            fill_info(info1, bt, t, 1);
            rf_node one = make_node(RF_OP_GATED_DELTA_NET, y1, {&x1, &g1, &b1, &pool, &info1, &rows});
            std::memcpy(one.iparams, node.iparams, sizeof node.iparams);
            std::memcpy(one.fparams, node.fparams, sizeof node.fparams);
            run_ok(*be, one);
            CHECK(std::memcmp(y1.f32(), y.f32() + t * Hv * Sv, sizeof(float) * Hv * Sv) == 0);
        }
        rf_node bad = node;
        bad.iparams[2] = 3; // not a multiple of Hk
        CHECK_FALSE(be->supports(bad));
    }
}

TEST_CASE("cpu ops: SOFTPLUS vs float64", "[cpu][ops][qwen35]") {
    for (auto &be : all_backends()) {
        const int64_t K = 29, M = 3;
        Tensor x(RF_TYPE_F32, {K, M}), y(RF_TYPE_F32, {K, M});
        fill_normal(x.f32(), x.n(), 8.f);
        x.f32()[0] = 25.f, x.f32()[1] = -40.f, x.f32()[2] = 20.f;
        rf_node node = make_node(RF_OP_SOFTPLUS, y, {&x});
        run_ok(*be, node);
        for (int64_t i = 0; i < x.n(); ++i) {
            const double v = x.f32()[i], want = v > 20 ? v : std::log1p(std::exp(v));
            CHECK(y.f32()[i] == Approx(want).epsilon(2e-6).margin(1e-30));
        }
        CHECK(y.f32()[0] == 25.f);
    }
}
