#include "select_cases.h"

#include <cmath>
#include <limits>

#include "graph_builder.h"

namespace opcheck {
namespace {

// How a row's values are laid out.
enum class Rows {
    random,   // logits-like: N(0, 4)-ish spread, few exact ties
    ties,     // eight distinct values: most of the k best tie with others
    zeros,    // -0 and +0 (equal: the lower index first), some -inf, a few positive
    crowded,  // the largest values only at e % 256 < 8: a few of the kernel's groups hold them
};

const char *rows_label(Rows r) {
    switch (r) {
    case Rows::random: return "random";
    case Rows::ties: return "ties";
    case Rows::zeros: return "zeros";
    case Rows::crowded: return "crowded";
    }
    return "?";
}

HostTensor row_values(std::mt19937 &rng, int64_t E, int64_t M, Rows kind) {
    HostTensor x = rnd(rng, RF_TYPE_F32, E, M, 1, 1, 4.f);
    auto *v = reinterpret_cast<float *>(x.data.data());
    std::uniform_int_distribution<int> pick(0, 7);
    for (int64_t m = 0; m < M; ++m)
        for (int64_t e = 0; e < E; ++e) {
            float &f = v[m * E + e];
            switch (kind) {
            case Rows::random: break;
            case Rows::ties: f = (float)pick(rng) - 3.5f; break;
            case Rows::zeros: {
                const int p = pick(rng);
                f = p < 3 ? -0.0f : p < 6 ? 0.0f : p == 6 ? -std::numeric_limits<float>::infinity() : (e % 97 == 0 ? 1.0f : 0.0f);
                break;
            }
            case Rows::crowded: f = e % 256 < 8 ? (float)e : -(float)(e % 256); break;
            }
        }
    return x;
}

Case topk_rows(std::mt19937 &rng, int64_t E, int64_t k, int64_t M, Rows kind) {
    Case c = base("topk rows E=" + std::to_string(E) + " k=" + std::to_string(k) + " M=" + std::to_string(M) + " " + rows_label(kind),
                  RF_OP_TOPK, {make(RF_TYPE_I32, k, M), row_values(rng, E, M, kind)}, 0);
    c.exact = true;
    c.bytes = 4.0 * E * M + 4.0 * k * M;
    return c;
}

Case gather(std::mt19937 &rng, int64_t E, int64_t k, int64_t M) {
    std::uniform_int_distribution<int32_t> id(-2, (int32_t)E + 1); // a few outside the row: 0
    std::vector<int32_t> ids((size_t)(k * M));
    for (int32_t &i : ids) i = id(rng);
    Case c = base("gather E=" + std::to_string(E) + " k=" + std::to_string(k) + " M=" + std::to_string(M), RF_OP_GATHER,
                  {make(RF_TYPE_F32, k, M), rnd(rng, RF_TYPE_F32, E, M, 1, 1, 4.f), ints(ids, k, M)}, 0);
    c.exact = true;
    return c;
}

} // namespace

std::vector<Case> select_cases(std::mt19937 &rng) {
    std::vector<Case> v;
    // Llama-2 (32000), Llama-3 (128256), Qwen2 (151936) vocabularies and odd lengths; k: greedy
    // (1), llama.cpp's default top-k (40), 64, and a k beyond the usual.
    const int64_t shapes[][3] = {{32000, 40, 1}, {32000, 40, 16}, {32000, 1, 3}, {32001, 64, 5},
                                 {128256, 40, 2}, {151936, 64, 1}, {513, 513, 2}, {1000, 300, 3}};
    for (const auto &s : shapes) v.push_back(topk_rows(rng, s[0], s[1], s[2], Rows::random));
    for (Rows kind : {Rows::ties, Rows::zeros, Rows::crowded}) {
        v.push_back(topk_rows(rng, 32000, 40, 4, kind));
        v.push_back(topk_rows(rng, 151936, 64, 2, kind)); // crowded: 4,752 candidates, the k-round path
    }
    const int64_t gathers[][3] = {{32000, 40, 16}, {7, 3, 5}, {151936, 64, 2}};
    for (const auto &s : gathers) v.push_back(gather(rng, s[0], s[1], s[2]));
    return v;
}

// What a decode step appends for its sampler: TOPK of the logits, then GATHER of their values.
std::vector<GraphCase> select_graph_cases(std::mt19937 &rng) {
    std::vector<GraphCase> v;
    for (int64_t M : {1, 16}) {
        const int64_t E = 32000, k = 40;
        Builder b;
        b.c.name = "sampler candidates E=" + std::to_string(E) + " k=" + std::to_string(k) + " M=" + std::to_string(M);
        b.c.max_nmse = 0;
        const int logits = b.input(row_values(rng, E, M, Rows::random));
        const int ids = b.output(RF_TYPE_I32, k, M), vals = b.output(RF_TYPE_F32, k, M);
        b.node(RF_OP_TOPK, ids, {logits});
        b.node(RF_OP_GATHER, vals, {logits, ids});
        v.push_back(std::move(b.c));
    }
    return v;
}

std::vector<Case> select_perf_cases(std::mt19937 &rng, const std::string &filter) {
    std::vector<Case> v;
    const int64_t shapes[][3] = {{32000, 40, 1}, {32000, 40, 16}, {128256, 40, 16}};
    for (const auto &s : shapes) {
        Case c = topk_rows(rng, s[0], s[1], s[2], Rows::random);
        if (wanted(c.name, filter)) v.push_back(std::move(c));
    }
    return v;
}

} // namespace opcheck
