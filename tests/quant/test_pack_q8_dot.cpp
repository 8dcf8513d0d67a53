// The kernel packs' host reference of the decode matmuls' dot products (plugins/packs/q8_dot.c):
// weight rows quantized by the repository's quantizers, activations quantized to q8_1 columns by
// pm_quantize_q8_1 (plugins/packs/pack_match.c), compared with a float64 dot product of the
// dequantized row (rf::dequantize_row) and the dequantized column (q * d).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "pack_match.h"
#include "q8_dot.h"
#include "rocmforge/pack_abi.h"
#include "rocmforge/types.h"

namespace {

const int kTypes[] = {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q5_0, RF_TYPE_Q8_0, RF_TYPE_IQ4_XS,
                      RF_TYPE_IQ2_XXS, RF_TYPE_IQ3_XXS, RF_TYPE_IQ3_S, RF_TYPE_IQ2_XS, RF_TYPE_IQ2_S,
                      RF_TYPE_IQ1_S, RF_TYPE_IQ1_M, RF_TYPE_TQ2_0};

std::vector<float> gaussian(int64_t n, std::mt19937 &rng, float scale = 1.0f) {
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto &x : v) x = dist(rng);
    return v;
}

// Activations whose magnitude changes from one 32-block to the next (every pair gets its own d,
// and with blocks of 256 the block's d is set by its largest 32-block).
std::vector<float> activations(int64_t n, std::mt19937 &rng) {
    auto x = gaussian(n, rng);
    std::uniform_real_distribution<float> mag(0.05f, 4.0f);
    for (int64_t b = 0; b < n; b += 32) {
        const float m = mag(rng);
        for (int64_t i = b; i < b + 32; ++i) x[static_cast<size_t>(i)] *= m;
    }
    return x;
}

std::vector<unsigned char> quantize_weights(int type, const std::vector<float> &w) {
    const auto K = static_cast<int64_t>(w.size());
    std::vector<unsigned char> q(rf::row_size(type, K));
    // IQ2_XXS, IQ2_XS, IQ1_S: only with an importance matrix (uniform here)
    const std::vector<float> importance(w.size(), 1.0f);
    rf::quantize_row_weighted(type, w.data(), q.data(), K, rf::importance_required(type) ? importance.data() : nullptr);
    return q;
}

std::vector<unsigned char> quantize_column(int type, const std::vector<float> &x) {
    const auto K = static_cast<int64_t>(x.size());
    std::vector<unsigned char> col(static_cast<size_t>(RF_Q8_1_COLUMN_BYTES(K)), 0xA5);
    pm_quantize_q8_1(x.data(), K, pm_act_block(type), col.data());
    return col;
}

// The column's values q * d as the kernels see them.
std::vector<double> column_values(const std::vector<unsigned char> &col, int64_t K) {
    std::vector<double> a(static_cast<size_t>(K));
    for (int64_t i = 0; i < K; ++i) {
        float d;
        std::memcpy(&d, col.data() + K + 8 * (i / 32), sizeof d);
        a[static_cast<size_t>(i)] = static_cast<double>(static_cast<signed char>(col[static_cast<size_t>(i)])) * d;
    }
    return a;
}

struct Ref {
    double dot = 0, mag = 0; // sum w a, sum |w a|
    double tol() const { return 1e-5 * mag + 1e-6; }
};
Ref reference(const std::vector<float> &w, const std::vector<double> &a) {
    Ref r;
    for (size_t i = 0; i < w.size(); ++i) {
        r.dot += static_cast<double>(w[i]) * a[i];
        r.mag += std::fabs(static_cast<double>(w[i]) * a[i]);
    }
    return r;
}

std::vector<float> dequantize(int type, const std::vector<unsigned char> &q, int64_t K) {
    std::vector<float> w(static_cast<size_t>(K));
    rf::dequantize_row(type, q.data(), w.data(), K);
    return w;
}

} // namespace

TEST_CASE("q8_dot type tables", "[pack_q8_dot]") {
    for (int t : kTypes) {
        CHECK(pm_q8_dot_type(t) == 1);
        const int blk = pm_act_block(t);
        CHECK(blk == (t == RF_TYPE_Q4_0 || t == RF_TYPE_Q5_0 || t == RF_TYPE_Q8_0 ? 32 : 256));
        CHECK(rf::type_traits(t)->block_size == blk);
        std::vector<unsigned char> row(1024), col(1024);
        CHECK(std::isnan(pm_dot_q8_1(t, row.data(), col.data(), blk / 2)));
        CHECK(std::isnan(pm_dot_q8_1(t, row.data(), col.data(), 0)));
    }
    for (int t : {RF_TYPE_F32, RF_TYPE_F16, RF_TYPE_BF16, RF_TYPE_Q4_1, RF_TYPE_Q5_1, RF_TYPE_Q2_K, RF_TYPE_Q3_K, RF_TYPE_Q8_K}) {
        CHECK(pm_q8_dot_type(t) == 0);
        CHECK(pm_act_block(t) == 0);
    }
}

TEST_CASE("q8_1 dot products match the dequantized float64 dot", "[pack_q8_dot]") {
    std::mt19937 rng(1234);
    for (int t : kTypes) {
        std::vector<int64_t> Ks = {256, 512, 4096};
        if (pm_act_block(t) == 32) Ks.insert(Ks.begin(), {32, 96});
        for (int64_t K : Ks) {
            for (int rep = 0; rep < 6; ++rep) {
                // rep 0: weights all of one sign (Q4_K / Q5_K mins of one sign, large d * sum terms)
                auto wf = gaussian(K, rng, rep == 1 ? 0.02f : 1.0f);
                if (rep == 0)
                    for (auto &v : wf) v = std::fabs(v) + 0.5f;
                const auto q = quantize_weights(t, wf);
                const auto w = dequantize(t, q, K);
                const auto x = activations(K, rng);
                const auto col = quantize_column(t, x);
                const Ref r = reference(w, column_values(col, K));
                const float got = pm_dot_q8_1(t, q.data(), col.data(), K);
                INFO("type " << rf::type_name(t) << " K " << K << " rep " << rep << " got " << got << " ref " << r.dot
                             << " tol " << r.tol());
                REQUIRE(std::isfinite(got));
                CHECK(std::fabs(got - r.dot) <= r.tol());
                // Deterministic, and independent of the row's and column's alignment.
                std::vector<unsigned char> qs(q.size() + 3), cs(col.size() + 5);
                std::memcpy(qs.data() + 3, q.data(), q.size());
                std::memcpy(cs.data() + 5, col.data(), col.size());
                CHECK(pm_dot_q8_1(t, qs.data() + 3, cs.data() + 5, K) == got);
            }
        }
    }
}

TEST_CASE("q8_1 dot products pick every element in ggml's order", "[pack_q8_dot]") {
    // A one-hot activation (q = 127 at element e, d = 1/127) selects weight e alone: the dot is
    // the dequantized weight, so any element, scale or min taken from the wrong place shows.
    std::mt19937 rng(99);
    for (int t : kTypes) {
        const int64_t K = 2 * pm_act_block(t) + (pm_act_block(t) == 32 ? 64 : 0);
        const auto q = quantize_weights(t, gaussian(K, rng));
        const auto w = dequantize(t, q, K);
        std::vector<float> x(static_cast<size_t>(K), 0.f);
        int bad = 0;
        for (int64_t e = 0; e < K; ++e) {
            x[static_cast<size_t>(e)] = (e % 3 == 0 ? -1.f : 1.f) * (1.f + static_cast<float>(e % 7));
            const auto col = quantize_column(t, x);
            const Ref r = reference(w, column_values(col, K));
            const float got = pm_dot_q8_1(t, q.data(), col.data(), K);
            if (!(std::fabs(got - r.dot) <= r.tol()) && ++bad <= 5) {
                INFO("type " << rf::type_name(t) << " element " << e << " got " << got << " ref " << r.dot);
                CHECK(std::fabs(got - r.dot) <= r.tol());
            }
            x[static_cast<size_t>(e)] = 0.f;
        }
        INFO("type " << rf::type_name(t));
        CHECK(bad == 0);
    }
}

TEST_CASE("the tolerance catches a wrong element order", "[pack_q8_dot]") {
    // The reference with the weights of each 32-element block reversed must fail the check the
    // dot passes: the comparison above is not trivially satisfied.
    std::mt19937 rng(7);
    for (int t : kTypes) {
        const int64_t K = 512;
        const auto q = quantize_weights(t, gaussian(K, rng));
        auto w = dequantize(t, q, K);
        const auto col = quantize_column(t, activations(K, rng));
        const auto a = column_values(col, K);
        const float got = pm_dot_q8_1(t, q.data(), col.data(), K);
        const Ref good = reference(w, a);
        for (int64_t b = 0; b < K; b += 32) std::reverse(w.begin() + b, w.begin() + b + 32);
        const Ref bad = reference(w, a);
        INFO("type " << rf::type_name(t) << " got " << got << " good " << good.dot << " reversed " << bad.dot);
        CHECK(std::fabs(got - good.dot) <= good.tol());
        CHECK(std::fabs(got - bad.dot) > bad.tol());
    }
}

TEST_CASE("f16 dot products match float64", "[pack_q8_dot]") {
    std::mt19937 rng(5);
    for (int64_t K : {1, 7, 8, 100, 256, 4096, 4104}) {
        const auto wf = gaussian(K, rng);
        const auto x = activations((K + 31) / 32 * 32, rng);
        std::vector<uint16_t> h(static_cast<size_t>(K));
        double ref = 0, mag = 0;
        for (int64_t i = 0; i < K; ++i) {
            h[static_cast<size_t>(i)] = rf::fp32_to_fp16(wf[static_cast<size_t>(i)]);
            const double p = static_cast<double>(rf::fp16_to_fp32(h[static_cast<size_t>(i)])) * x[static_cast<size_t>(i)];
            ref += p;
            mag += std::fabs(p);
        }
        const float got = pm_dot_f16(h.data(), x.data(), K);
        INFO("K " << K << " got " << got << " ref " << ref);
        CHECK(std::fabs(got - ref) <= 1e-5 * mag + 1e-6);
    }
    CHECK(pm_dot_f16(nullptr, nullptr, 0) == 0.f);
}

TEST_CASE("f16 dot decodes every half exactly", "[pack_q8_dot]") {
    const float one = 1.f;
    int bad = 0;
    for (uint32_t b = 0; b < 0x10000; ++b) {
        const uint16_t h = static_cast<uint16_t>(b);
        const float want = rf::fp16_to_fp32(h), got = pm_dot_f16(&h, &one, 1);
        if (std::isnan(want) ? !std::isnan(got) : got != want) ++bad;
    }
    CHECK(bad == 0);
}
