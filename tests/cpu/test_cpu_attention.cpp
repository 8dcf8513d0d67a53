// ATTENTION over the paged pool: GQA ratios 1 and 4, f32/f16/q8_0 pools, scattered slot tables,
// two sequences in one batch, sliding windows, soft-capped scores (Gemma) and bidirectional
// attention (encoders: every position of the sequence in the batch), against float64
// softmax attention on the dequantized pool.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "cpu_test_util.h"
#include "rocmforge/types.h"

using namespace cputest;

namespace {

struct Setup {
    int64_t D, Hq, Hkv;
    int pool_type;
    int32_t window = 0; // iparams[0]: last W positions only
    float cap = 0.f;    // fparams[1]: scores soft-capped
    bool bidirectional = false; // iparams[2]: up to the sequence's last position in the batch
};

void write_pool_row(int type, const float *x, uint8_t *dst, int64_t n) {
    if (type == RF_TYPE_F32) std::memcpy(dst, x, size_t(n) * 4);
    else if (type == RF_TYPE_F16)
        for (int64_t i = 0; i < n; ++i) {
            const uint16_t v = rf::fp32_to_fp16(x[i]);
            std::memcpy(dst + 2 * i, &v, 2);
        }
    else rf::quantize_row(type, x, dst, n);
}

} // namespace

TEST_CASE("cpu attention: GQA, pool types, scattered slots", "[cpu][attention]") {
    std::vector<std::unique_ptr<Backend>> backends;
    for (const auto &cfg : simd_configs()) backends.push_back(std::make_unique<Backend>(cfg));

    const Setup setups[] = {{64, 4, 4, RF_TYPE_F16}, {64, 8, 2, RF_TYPE_F16}, {64, 8, 2, RF_TYPE_Q8_0},
                            {128, 4, 4, RF_TYPE_Q8_0}, {32, 8, 2, RF_TYPE_F32}, {64, 8, 2, RF_TYPE_F16, 20, 0.f},
                            {32, 8, 2, RF_TYPE_F32, 0, 1.5f}, {64, 4, 4, RF_TYPE_Q8_0, 7, 3.f},
                            {64, 8, 2, RF_TYPE_F16, 0, 0.f, true}, {32, 4, 4, RF_TYPE_F32, 0, 1.5f, true}};
    for (const Setup &su : setups) {
        INFO("D=" << su.D << " Hq=" << su.Hq << " Hkv=" << su.Hkv << " pool " << rf::type_name(su.pool_type)
                  << " window " << su.window << " cap " << su.cap << " bidirectional " << su.bidirectional);
        const int64_t D = su.D, Hq = su.Hq, Hkv = su.Hkv, S = 90, n_kv_max = 70, n_seq = 2;
        // Batch: seq 0 continues at positions 40..42 (prefill chunk), seq 1 decodes position 65
        // (more than two chunks of keys), seq 0 position 0 once more (attends one key).
        const int32_t tok_seq[] = {0, 0, 0, 1, 0};
        const int32_t tok_pos[] = {40, 41, 42, 65, 0};
        const int64_t T = 5;

        Tensor q(RF_TYPE_F32, {D, Hq, T}), kp(su.pool_type, {D * Hkv, S}), vp(su.pool_type, {D * Hkv, S}),
            slots(RF_TYPE_I32, {n_kv_max, n_seq}), info(RF_TYPE_I32, {2, T});
        fill_normal(q.f32(), q.n());
        std::vector<float> row(size_t(D * Hkv));
        for (int64_t s = 0; s < S; ++s) {
            fill_normal(row.data(), D * Hkv, 1.5f);
            write_pool_row(su.pool_type, row.data(), static_cast<uint8_t *>(kp.t.data) + s * kp.t.nb[1], D * Hkv);
            fill_normal(row.data(), D * Hkv);
            write_pool_row(su.pool_type, row.data(), static_cast<uint8_t *>(vp.t.data) + s * vp.t.nb[1], D * Hkv);
        }
        // Scattered, disjoint slots for the two sequences.
        std::vector<int32_t> perm(S);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng());
        for (int64_t s = 0; s < n_seq; ++s)
            for (int64_t p = 0; p < n_kv_max; ++p)
                slots.i32()[s * n_kv_max + p] = p < 45 ? perm[size_t(s * 45 + p)] : (s == 1 ? perm[size_t(p)] : -1);
        // seq 1 needs 66 positions: positions >= 45 reuse some of its earlier slots (fine for the math).
        for (int64_t t = 0; t < T; ++t) {
            info.i32()[2 * t] = tok_seq[t];
            info.i32()[2 * t + 1] = tok_pos[t];
        }
        const float scale = 1.f / std::sqrt(float(D));

        // float64 reference on the dequantized pools.
        std::vector<float> kd(size_t(D * Hkv * S)), vd(size_t(D * Hkv * S));
        for (int64_t s = 0; s < S; ++s) {
            rf::dequantize_row(su.pool_type, static_cast<uint8_t *>(kp.t.data) + s * kp.t.nb[1], kd.data() + s * D * Hkv, D * Hkv);
            rf::dequantize_row(su.pool_type, static_cast<uint8_t *>(vp.t.data) + s * vp.t.nb[1], vd.data() + s * D * Hkv, D * Hkv);
        }
        std::vector<double> ref(size_t(D * Hq * T));
        for (int64_t t = 0; t < T; ++t)
            for (int64_t h = 0; h < Hq; ++h) {
                const int64_t g = h / (Hq / Hkv);
                const float *qv = q.f32() + (t * Hq + h) * D;
                std::vector<double> sc;
                const int64_t first = su.window > 0 ? std::max<int64_t>(0, tok_pos[t] - su.window + 1) : 0;
                int64_t end = tok_pos[t]; // bidirectional: the last position of the sequence in the batch
                for (int64_t u = 0; u < T && su.bidirectional; ++u)
                    if (tok_seq[u] == tok_seq[t]) end = std::max<int64_t>(end, tok_pos[u]);
                for (int64_t p = first; p <= end; ++p) {
                    const int32_t slot = slots.i32()[tok_seq[t] * n_kv_max + p];
                    double acc = 0;
                    for (int64_t i = 0; i < D; ++i) acc += double(qv[i]) * kd[size_t(slot * D * Hkv + g * D + i)];
                    acc *= scale;
                    sc.push_back(su.cap > 0 ? su.cap * std::tanh(acc / su.cap) : acc);
                }
                const double mx = *std::max_element(sc.begin(), sc.end());
                double sum = 0;
                for (double &v : sc) sum += (v = std::exp(v - mx));
                for (int64_t i = 0; i < D; ++i) {
                    double acc = 0;
                    for (int64_t p = first; p <= end; ++p) {
                        const int32_t slot = slots.i32()[tok_seq[t] * n_kv_max + p];
                        acc += sc[size_t(p - first)] * vd[size_t(slot * D * Hkv + g * D + i)];
                    }
                    ref[size_t((t * Hq + h) * D + i)] = acc / sum;
                }
            }

        for (auto &be : backends) {
            Tensor out(RF_TYPE_F32, {D * Hq, T});
            rf_node node = make_node(RF_OP_ATTENTION, out, {&q, &kp, &vp, &slots, &info});
            node.fparams[0] = scale;
            node.fparams[1] = su.cap;
            node.iparams[0] = su.window;
            node.iparams[2] = su.bidirectional ? 1 : 0;
            REQUIRE(be->supports(node));
            std::string err;
            REQUIRE(be->run(node, &err) == RF_OK);
            REQUIRE(all_finite(out.f32(), out.n()));
            CHECK(nmse(ref, out.f32(), out.n()) < 1e-9);
        }
    }
}

TEST_CASE("cpu attention: a bad slot is reported", "[cpu][attention]") {
    Backend be(R"({"n_threads": 2})");
    const int64_t D = 32;
    Tensor q(RF_TYPE_F32, {D, 2, 1}), kp(RF_TYPE_F16, {D, 4}), vp(RF_TYPE_F16, {D, 4}),
        slots(RF_TYPE_I32, {4, 1}), info(RF_TYPE_I32, {2, 1}), out(RF_TYPE_F32, {D * 2, 1});
    const int32_t sl[] = {0, 9, 1, 2};
    std::memcpy(slots.i32(), sl, sizeof sl);
    info.i32()[0] = 0;
    info.i32()[1] = 2;
    rf_node node = make_node(RF_OP_ATTENTION, out, {&q, &kp, &vp, &slots, &info});
    node.fparams[0] = 1.f;
    std::string err;
    CHECK(be.run(node, &err) == RF_ERR_INVALID);
    CHECK(err.find("slot 9") != std::string::npos);
}
