// The mixture-of-experts ops (TOPK, MOE_WEIGHTS, MATMUL_ID, MOE_SUM) vs float64 reference math,
// MATMUL_ID for every weight type on every SIMD level, plus thread-split and bad-input checks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include <sys/mman.h>
#include <unistd.h>

#include "cpu_test_util.h"
#include "matmul_weights.h"
#include "rocmforge/types.h"

using namespace cputest;

namespace {

struct IdCase { int64_t K, N, E, S, M; bool shared_x; };

// Ids of S distinct experts per token, drawn so that some experts get no token at all.
Tensor make_ids(const IdCase &c) {
    Tensor ids(RF_TYPE_I32, {c.S, c.M});
    const int64_t used = std::max<int64_t>(c.S, c.E - 1); // expert E-1 unused when E > S
    for (int64_t m = 0; m < c.M; ++m) {
        std::vector<int32_t> perm((size_t)used);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng());
        for (int64_t s = 0; s < c.S; ++s) ids.i32()[m * c.S + s] = perm[(size_t)s];
    }
    return ids;
}

std::vector<double> reference_id(int type, const std::vector<float> &w, const Tensor &x, const Tensor &ids, const IdCase &c) {
    std::vector<double> ref(size_t(c.N * c.S * c.M));
    const float *xv = reinterpret_cast<const float *>(x.t.data);
    const int32_t *iv = reinterpret_cast<const int32_t *>(ids.t.data);
    for (int64_t m = 0; m < c.M; ++m)
        for (int64_t s = 0; s < c.S; ++s) {
            const int64_t e = iv[m * c.S + s];
            const float *xr = xv + (m * (c.shared_x ? 1 : c.S) + (c.shared_x ? 0 : s)) * c.K;
            for (int64_t n = 0; n < c.N; ++n) {
                double acc = 0;
                const float *wr = w.data() + (e * c.N + n) * c.K;
                for (int64_t k = 0; k < c.K; ++k) acc += double(wr[k]) * double(id_activation(type, xr[k]));
                ref[size_t((m * c.S + s) * c.N + n)] = acc;
            }
        }
    return ref;
}

std::vector<IdCase> id_cases(int type) {
    const int64_t bs = rf::type_traits(type)->block_size;
    const int64_t k_small = bs == 256 ? 256 : (bs == 1 ? 100 : 96);
    const int64_t k_big = bs == 256 ? 512 : (bs == 1 ? 333 : 544);
    // decode (one token, shared activation: gate/up), decode of the down projection (a row per
    // slot), prefill with grouping (more tokens than a tile, odd sizes), top-1 of many experts.
    return {{k_small, 33, 8, 2, 1, true}, {k_big, 19, 4, 2, 1, false}, {k_small, 21, 5, 2, 37, true},
            {k_big, 7, 6, 3, 11, false}, {k_small, 9, 16, 1, 20, true}};
}

} // namespace

TEST_CASE("cpu moe: MATMUL_ID, every weight type vs float64 reference", "[cpu][moe]") {
    const auto configs = simd_configs();
    auto backends = all_backends();
    for (int type : kMatmulWeightTypes) {
        INFO("type " << rf::type_name(type));
        for (const IdCase &c : id_cases(type)) {
            INFO("K=" << c.K << " N=" << c.N << " E=" << c.E << " S=" << c.S << " M=" << c.M << " shared " << c.shared_x);
            std::vector<float> deq;
            Tensor w = make_weight(type, c.K, c.N, c.E, &deq);
            Tensor x(RF_TYPE_F32, {c.K, c.shared_x ? 1 : c.S, c.M});
            fill_normal(x.f32(), x.n());
            Tensor ids = make_ids(c);
            const std::vector<double> ref = reference_id(type, deq, x, ids, c);
            std::vector<std::vector<float>> outs;
            for (size_t b = 0; b < backends.size(); ++b) {
                INFO("config " << configs[b]);
                Tensor y(RF_TYPE_F32, {c.N, c.S, c.M});
                std::fill(y.f32(), y.f32() + y.n(), NAN); // every output must be written
                rf_node node = make_node(RF_OP_MATMUL_ID, y, {&w, &x, &ids});
                run_ok(*backends[b], node);
                REQUIRE(all_finite(y.f32(), y.n()));
                CHECK(nmse(ref, y.f32(), y.n()) < matmul_threshold(type));
                outs.push_back(y.as_floats());
            }
            std::vector<double> scalar_out(outs[1].begin(), outs[1].end());
            for (size_t b = 0; b < outs.size(); ++b) CHECK(nmse(scalar_out, outs[b].data(), int64_t(outs[b].size())) < 1e-9);
        }
    }
}

TEST_CASE("cpu moe: MATMUL_ID equals MATMUL on each chosen expert's slice bit for bit, any thread split", "[cpu][moe]") {
    Backend one(R"({"n_threads": 1})"), three(R"({"n_threads": 3})");
    for (int type : {RF_TYPE_Q4_K, RF_TYPE_Q8_0, RF_TYPE_F16}) {
        INFO(rf::type_name(type));
        const IdCase c{256, 300, 4, 2, 13, false};
        std::vector<float> deq;
        Tensor w = make_weight(type, c.K, c.N, c.E, &deq);
        Tensor x(RF_TYPE_F32, {c.K, c.S, c.M});
        fill_normal(x.f32(), x.n());
        Tensor ids = make_ids(c);
        Tensor y1(RF_TYPE_F32, {c.N, c.S, c.M}), y3(RF_TYPE_F32, {c.N, c.S, c.M});
        rf_node n1 = make_node(RF_OP_MATMUL_ID, y1, {&w, &x, &ids}), n3 = make_node(RF_OP_MATMUL_ID, y3, {&w, &x, &ids});
        run_ok(one, n1);
        run_ok(three, n3);
        CHECK(y1.as_floats() == y3.as_floats());
        // Column (s, m) against MATMUL of expert ids[s, m]'s slice on the row as MATMUL_ID takes it
        // (f16-rounded for F16): the same kernels, the same floats.
        for (int64_t m : {int64_t(0), c.M - 1})
            for (int64_t s = 0; s < c.S; ++s) {
                const int32_t e = ids.i32()[m * c.S + s];
                rf_tensor slice = w.t;
                slice.ne[2] = 1;
                slice.data = static_cast<uint8_t *>(w.t.data) + e * w.t.nb[2];
                Tensor xs(RF_TYPE_F32, {c.K, 1}), ys(RF_TYPE_F32, {c.N, 1});
                for (int64_t k = 0; k < c.K; ++k) xs.f32()[k] = id_activation(type, x.f32()[(m * c.S + s) * c.K + k]);
                rf_node mm = make_node(RF_OP_MATMUL, ys, {nullptr, &xs});
                mm.src[0] = &slice;
                run_ok(three, mm);
                CHECK(std::memcmp(ys.f32(), y1.f32() + (m * c.S + s) * c.N, size_t(c.N) * 4) == 0);
            }
    }
}

// ggml's vec_dot_type for MUL_MAT_ID: F16 experts dot f16-rounded activations. f32 activations
// (the arithmetic before) differ from the rounded ones in the low bits of nearly every output,
// so these equalities fail on it.
TEST_CASE("cpu moe: F16 MATMUL_ID dots f16-rounded activations, bit for bit", "[cpu][moe]") {
    const IdCase c{264, 37, 4, 2, 11, false};
    std::vector<float> deq;
    Tensor w = make_weight(RF_TYPE_F16, c.K, c.N, c.E, &deq);
    Tensor x(RF_TYPE_F32, {c.K, c.S, c.M}), xr(RF_TYPE_F32, {c.K, c.S, c.M});
    fill_normal(x.f32(), x.n());
    for (int64_t i = 0; i < x.n(); ++i) xr.f32()[i] = rf::fp16_to_fp32(rf::fp32_to_fp16(x.f32()[i]));
    Tensor ids = make_ids(c);
    auto configs = simd_configs();
    auto backends = all_backends();
    for (size_t b = 0; b < backends.size(); ++b) {
        INFO("config " << configs[b]);
        Tensor y(RF_TYPE_F32, {c.N, c.S, c.M}), yr(RF_TYPE_F32, {c.N, c.S, c.M});
        rf_node n1 = make_node(RF_OP_MATMUL_ID, y, {&w, &x, &ids}), n2 = make_node(RF_OP_MATMUL_ID, yr, {&w, &xr, &ids});
        run_ok(*backends[b], n1);
        run_ok(*backends[b], n2);
        CHECK(y.as_floats() == yr.as_floats());
        // Each column against the dense MATMUL of its expert's slice on the rounded row.
        for (int64_t col = 0; col < c.S * c.M; ++col) {
            const int32_t e = ids.i32()[col];
            rf_tensor slice = w.t;
            slice.ne[2] = 1;
            slice.data = static_cast<uint8_t *>(w.t.data) + e * w.t.nb[2];
            Tensor xs(RF_TYPE_F32, {c.K, 1}), ys(RF_TYPE_F32, {c.N, 1});
            std::memcpy(xs.f32(), xr.f32() + col * c.K, size_t(c.K) * 4);
            rf_node mm = make_node(RF_OP_MATMUL, ys, {nullptr, &xs});
            mm.src[0] = &slice;
            run_ok(*backends[b], mm);
            CHECK(std::memcmp(ys.f32(), y.f32() + col * c.N, size_t(c.N) * 4) == 0);
        }
    }
}

TEST_CASE("cpu moe: MATMUL_ID reads only the chosen experts' weights (the others are unreadable pages)", "[cpu][moe]") {
    // Q8_0 rows of 256 weights are 272 bytes; 256 rows make an expert slice of 17 pages, so each
    // expert starts on a page of its own and the unchosen ones can be made PROT_NONE: a read of
    // them faults (and fails this test by crashing it).
    const int64_t K = 256, N = 256, E = 6, S = 2, M = 5;
    const size_t page = size_t(sysconf(_SC_PAGESIZE)), slice = size_t(272 * N);
    REQUIRE(slice % page == 0);
    void *mem = mmap(nullptr, slice * E, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(mem != MAP_FAILED);
    std::vector<float> deq;
    Tensor host = make_weight(RF_TYPE_Q8_0, K, N, E, &deq);
    std::memcpy(mem, host.t.data, slice * E);
    rf_tensor w = host.t;
    w.data = mem;
    Tensor x(RF_TYPE_F32, {K, 1, M}), ids(RF_TYPE_I32, {S, M}), y(RF_TYPE_F32, {N, S, M});
    fill_normal(x.f32(), x.n());
    const int32_t chosen[S * M] = {1, 4, 4, 1, 1, 4, 4, 1, 1, 4}; // experts 0, 2, 3, 5 untouched
    std::memcpy(ids.i32(), chosen, sizeof chosen);
    for (int64_t e : {0, 2, 3, 5}) REQUIRE(mprotect(static_cast<uint8_t *>(mem) + slice * e, slice, PROT_NONE) == 0);
    for (const char *cfg : {R"({"n_threads": 1})", R"({"n_threads": 3})"}) {
        Backend be(cfg);
        rf_node node = make_node(RF_OP_MATMUL_ID, y, {nullptr, &x, &ids});
        node.src[0] = &w;
        run_ok(be, node);
        const IdCase c{K, N, E, S, M, true};
        CHECK(nmse(reference_id(RF_TYPE_Q8_0, deq, x, ids, c), y.f32(), y.n()) < matmul_threshold(RF_TYPE_Q8_0));
    }
    munmap(mem, slice * E);
}

TEST_CASE("cpu moe: MATMUL_ID refuses bad shapes and fails on an expert id out of range", "[cpu][moe]") {
    Backend be("{}");
    Tensor w(RF_TYPE_Q8_0, {64, 8, 4}), x(RF_TYPE_F32, {64, 1, 3}), ids(RF_TYPE_I32, {2, 3}), y(RF_TYPE_F32, {8, 2, 3});
    Tensor bad_x(RF_TYPE_F32, {64, 3, 3}), bad_y(RF_TYPE_F32, {8, 2, 2});
    rf_node n1 = make_node(RF_OP_MATMUL_ID, y, {&w, &bad_x, &ids});
    CHECK_FALSE(be.supports(n1));
    rf_node n2 = make_node(RF_OP_MATMUL_ID, bad_y, {&w, &x, &ids});
    std::string err;
    CHECK(be.run(n2, &err) == RF_ERR_UNSUPPORTED);
    CHECK(err.find("shapes do not match") != std::string::npos);
    const int32_t v[6] = {0, 1, 2, 4, 3, 0}; // 4 >= E
    std::memcpy(ids.i32(), v, sizeof v);
    rf_node n3 = make_node(RF_OP_MATMUL_ID, y, {&w, &x, &ids});
    REQUIRE(be.supports(n3));
    CHECK(be.run(n3, &err) != RF_OK);
    CHECK(err.find("expert id 4") != std::string::npos);
}

TEST_CASE("cpu moe: TOPK picks the largest, lower index first on ties", "[cpu][moe]") {
    for (auto &be : all_backends()) {
        for (int64_t E : {8, 60, 128}) {
            const int64_t M = 9;
            for (int64_t k : {int64_t(1), int64_t(2), E / 4 + 1, E}) {
                INFO("E=" << E << " k=" << k);
                Tensor x(RF_TYPE_F32, {E, M}), ids(RF_TYPE_I32, {k, M});
                fill_normal(x.f32(), x.n());
                for (int64_t i = 0; i < x.n(); i += 3) x.f32()[i] = std::round(x.f32()[i] * 2.f) / 2.f; // ties
                rf_node node = make_node(RF_OP_TOPK, ids, {&x});
                run_ok(*be, node);
                for (int64_t m = 0; m < M; ++m) {
                    std::vector<int32_t> order((size_t)E);
                    std::iota(order.begin(), order.end(), 0);
                    const float *v = x.f32() + m * E;
                    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return v[a] > v[b]; });
                    for (int64_t j = 0; j < k; ++j) CHECK(ids.i32()[m * k + j] == order[(size_t)j]);
                }
            }
        }
    }
}

// MOE_WEIGHTS of the routing `ids` (TOPK's) over `logits` into w, in mode 0 (the chosen entries
// of the softmax over all) or 1 (softmax over the chosen).
static void run_moe_weights(Backend &be, Tensor &w, Tensor &logits, Tensor &ids, int mode) {
    rf_node node = make_node(RF_OP_MOE_WEIGHTS, w, {&logits, &ids});
    node.iparams[0] = mode;
    run_ok(be, node);
}

TEST_CASE("cpu moe: MOE_WEIGHTS (softmax over the chosen or over all) and MOE_SUM vs float64", "[cpu][moe]") {
    for (auto &be : all_backends()) {
        const int64_t E = 12, k = 3, M = 7, N = 45;
        Tensor logits(RF_TYPE_F32, {E, M}), ids(RF_TYPE_I32, {k, M});
        fill_normal(logits.f32(), logits.n(), 3.f);
        rf_node tk = make_node(RF_OP_TOPK, ids, {&logits});
        run_ok(*be, tk);
        for (int mode : {0, 1}) {
            INFO("mode " << mode);
            Tensor w(RF_TYPE_F32, {k, M});
            run_moe_weights(*be, w, logits, ids, mode);
            std::vector<double> ref((size_t)(k * M));
            for (int64_t m = 0; m < M; ++m) {
                const float *l = logits.f32() + m * E;
                double z = 0;
                if (mode) for (int64_t j = 0; j < k; ++j) z += std::exp((double)l[ids.i32()[m * k + j]]);
                else for (int64_t e = 0; e < E; ++e) z += std::exp((double)l[e]);
                for (int64_t j = 0; j < k; ++j) ref[(size_t)(m * k + j)] = std::exp((double)l[ids.i32()[m * k + j]]) / z;
            }
            CHECK(nmse(ref, w.f32(), w.n()) < 1e-12);
            double s0 = 0;
            for (int64_t j = 0; j < k; ++j) s0 += w.f32()[j];
            if (mode) CHECK(s0 == Approx(1.0).epsilon(1e-6));
            else CHECK(s0 < 1.0);

            Tensor y(RF_TYPE_F32, {N, k, M}), out(RF_TYPE_F32, {N, M});
            fill_normal(y.f32(), y.n());
            rf_node sum = make_node(RF_OP_MOE_SUM, out, {&y, &w});
            run_ok(*be, sum);
            std::vector<double> ref_sum((size_t)(N * M), 0.0);
            for (int64_t m = 0; m < M; ++m)
                for (int64_t s = 0; s < k; ++s)
                    for (int64_t n = 0; n < N; ++n)
                        ref_sum[(size_t)(m * N + n)] += (double)w.f32()[m * k + s] * y.f32()[(m * k + s) * N + n];
            CHECK(nmse(ref_sum, out.f32(), out.n()) < 1e-12);
        }
        // An id out of range fails the compute with the id.
        ids.i32()[4] = (int32_t)E;
        Tensor w(RF_TYPE_F32, {k, M});
        rf_node bad = make_node(RF_OP_MOE_WEIGHTS, w, {&logits, &ids});
        bad.iparams[0] = 1;
        std::string err;
        CHECK(be->run(bad, &err) != RF_OK);
        CHECK(err.find("expert id 12") != std::string::npos);
        // k > E is refused.
        Tensor too_many(RF_TYPE_I32, {E + 1, M});
        rf_node tk2 = make_node(RF_OP_TOPK, too_many, {&logits});
        CHECK_FALSE(be->supports(tk2));
    }
}

// llama.cpp selects the experts with ggml_argsort_top_k: ggml's CPU argsort, std::sort of the
// indices 0..E-1 with the comparator v[a] > v[b] and no tie-break, its first k kept. On up to 16
// elements libstdc++'s std::sort is an insertion sort (stable): among equal values the lower
// index comes first, TOPK's rule. Constructed ties: repeated values, -0 against +0, all equal.
TEST_CASE("cpu moe: TOPK breaks ties as llama.cpp's CPU argsort (E <= 16)", "[cpu][moe]") {
    const std::vector<std::pair<std::vector<float>, std::vector<int32_t>>> fixed = {
        {{0.5f, 2.f, 2.f, -0.f, 0.f, 2.f}, {1, 2, 5, 0, 3, 4}},
        {{1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f}, {0, 1, 2, 3, 4, 5, 6, 7}},
        {{-1.f, 3.f, -1.f, 3.f}, {1, 3, 0, 2}},
        {{0.f, -0.f, -0.f, 0.f, -1.f}, {0, 1, 2, 3, 4}},
    };
    for (auto &be : all_backends()) {
        for (const auto &[vals, want] : fixed) {
            const int64_t E = int64_t(vals.size());
            for (int64_t k = 1; k <= E; ++k) {
                INFO("E=" << E << " k=" << k << " first " << vals[0]);
                Tensor x(RF_TYPE_F32, {E, 1}), ids(RF_TYPE_I32, {k, 1});
                std::copy(vals.begin(), vals.end(), x.f32());
                rf_node node = make_node(RF_OP_TOPK, ids, {&x});
                run_ok(*be, node);
                for (int64_t j = 0; j < k; ++j) CHECK(ids.i32()[j] == want[size_t(j)]);
            }
        }
        // Random rows with many ties against ggml's own procedure.
        for (int64_t E : {2, 4, 8, 16}) {
            const int64_t M = 40;
            Tensor x(RF_TYPE_F32, {E, M});
            fill_normal(x.f32(), x.n());
            for (int64_t i = 0; i < x.n(); ++i) x.f32()[i] = std::round(x.f32()[i] * 1.5f) * (i % 7 == 0 ? -0.f : 1.f);
            for (int64_t k : {int64_t(1), int64_t(2), E / 2, E}) {
                INFO("E=" << E << " k=" << k);
                Tensor ids(RF_TYPE_I32, {k, M});
                rf_node node = make_node(RF_OP_TOPK, ids, {&x});
                run_ok(*be, node);
                for (int64_t m = 0; m < M; ++m) {
                    const float *v = x.f32() + m * E;
                    std::vector<int32_t> order((size_t)E);
                    std::iota(order.begin(), order.end(), 0);
                    std::sort(order.begin(), order.end(), [v](int32_t a, int32_t b) { return v[a] > v[b]; });
                    for (int64_t j = 0; j < k; ++j) CHECK(ids.i32()[m * k + j] == order[(size_t)j]);
                }
            }
        }
    }
}

// MOE_WEIGHTS as llama.cpp's build_moe_ffn computes them on ggml's CPU ops (soft_max over all
// experts with the sum in double and the f32 reciprocal, get_rows, sum_rows in double, clamp,
// div), and MOE_SUM as its mul of the expert outputs by their weights followed by the adds of
// the slots in order: restated here step by step, equal bit for bit on every SIMD level.
TEST_CASE("cpu moe: MOE_WEIGHTS and MOE_SUM in ggml's order of operations, bit for bit", "[cpu][moe]") {
    const int64_t E = 40, k = 6, M = 9, N = 77;
    Tensor logits(RF_TYPE_F32, {E, M}), ids(RF_TYPE_I32, {k, M});
    fill_normal(logits.f32(), logits.n(), 2.f);
    for (auto &be : all_backends()) {
        rf_node tk = make_node(RF_OP_TOPK, ids, {&logits});
        run_ok(*be, tk);
        for (int mode : {0, 1}) {
            INFO("mode " << mode);
            Tensor w(RF_TYPE_F32, {k, M});
            run_moe_weights(*be, w, logits, ids, mode);
            for (int64_t m = 0; m < M; ++m) {
                const float *l = logits.f32() + m * E;
                const int32_t *id = ids.i32() + m * k;
                float mx = -INFINITY;
                for (int64_t e = 0; e < E; ++e) mx = std::max(mx, l[e]);
                std::vector<float> probs((size_t)E);
                double sum = 0;
                for (int64_t e = 0; e < E; ++e) sum += (double)(probs[(size_t)e] = std::exp(l[e] - mx));
                const float scale = float(1.0 / sum);
                for (float &p : probs) p *= scale;
                std::vector<float> want((size_t)k);
                double chosen = 0;
                for (int64_t j = 0; j < k; ++j) chosen += (double)(want[(size_t)j] = probs[(size_t)id[j]]);
                if (mode)
                    for (float &p : want) p /= std::max(float(chosen), 6.103515625e-5f);
                for (int64_t j = 0; j < k; ++j) CHECK(w.f32()[m * k + j] == want[(size_t)j]);
            }
            Tensor y(RF_TYPE_F32, {N, k, M}), out(RF_TYPE_F32, {N, M});
            fill_normal(y.f32(), y.n());
            rf_node sum = make_node(RF_OP_MOE_SUM, out, {&y, &w});
            run_ok(*be, sum);
            for (int64_t m = 0; m < M; ++m)
                for (int64_t n = 0; n < N; ++n) {
                    volatile float acc = w.f32()[m * k] * y.f32()[(m * k) * N + n];
                    for (int64_t s = 1; s < k; ++s) {
                        volatile float p = w.f32()[m * k + s] * y.f32()[(m * k + s) * N + n]; // rounded, not fused
                        acc = acc + p;
                    }
                    CHECK(out.f32()[m * N + n] == acc);
                }
        }
    }
}
