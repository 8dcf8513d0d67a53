// Selection (abi.h): TOPK, the k largest entries of each row (a mixture of experts' router, a
// sampler's candidates over the vocabulary), and GATHER, the entries at given indices.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "ops.h"

namespace rfcpu {
namespace {

bool check_topk(const rf_node &n, std::string *why) {
    if (!check_2d(n.dst, RF_TYPE_I32, "dst", why) || !check_2d(n.src[0], RF_TYPE_F32, "src0", why)) return false;
    const rf_tensor &d = *n.dst, &x = *n.src[0];
    if (d.ne[1] != x.ne[1] || d.ne[0] < 1 || d.ne[0] > x.ne[0]) {
        *why = "expects src0 [E,M] and dst [k,M] with 1 <= k <= E, got " + shape_str(x) + " -> " + shape_str(d);
        return false;
    }
    return true;
}

// k passes over the row, the largest not yet taken (the lowest index among equals): the
// reference for rows holding NaN, which compare with nothing.
void topk_passes(const float *v, int64_t E, int64_t k, int32_t *out) {
    for (int64_t j = 0; j < k; ++j) {
        int64_t best = -1;
        for (int64_t e = 0; e < E; ++e) {
            bool taken = false;
            for (int64_t i = 0; i < j && !taken; ++i) taken = out[i] == e;
            if (!taken && (best < 0 || v[e] > v[best])) best = e;
        }
        out[j] = (int32_t)best;
    }
}

void run_topk(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &d = *n.dst, &x = *n.src[0];
    const int64_t E = x.ne[0], k = d.ne[0];
    int64_t r0, r1;
    split_range(d.ne[1], part, n_parts, &r0, &r1);
    std::vector<int32_t> idx;
    for (int64_t r = r0; r < r1; ++r) {
        const float *v = row_f32(x, r);
        auto *out = reinterpret_cast<int32_t *>(row_ptr(d, r));
        if (std::any_of(v, v + E, [](float f) { return std::isnan(f); })) {
            topk_passes(v, E, k, out);
            continue;
        }
        // Without NaN, "larger value, then lower index" is a total order: the same k as the
        // passes, in O(E log k) (a vocabulary-sized row of a sampler's candidates).
        idx.resize((size_t)E);
        std::iota(idx.begin(), idx.end(), 0);
        std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                          [v](int32_t a, int32_t b) { return v[a] > v[b] || (v[a] == v[b] && a < b); });
        std::copy(idx.begin(), idx.begin() + k, out);
    }
}

bool check_gather(const rf_node &n, std::string *why) {
    if (!check_2d(n.dst, RF_TYPE_F32, "dst", why) || !check_2d(n.src[0], RF_TYPE_F32, "src0", why) ||
        !check_2d(n.src[1], RF_TYPE_I32, "src1 (indices)", why))
        return false;
    const rf_tensor &d = *n.dst, &x = *n.src[0], &ids = *n.src[1];
    if (!same_shape(d, ids) || d.ne[1] != x.ne[1]) {
        *why = "expects src0 [E,M], indices and dst [k,M], got " + shape_str(x) + ", " + shape_str(ids) + " -> " + shape_str(d);
        return false;
    }
    return true;
}

void run_gather(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &d = *n.dst, &x = *n.src[0], &ids = *n.src[1];
    const int64_t E = x.ne[0], k = d.ne[0];
    int64_t r0, r1;
    split_range(d.ne[1], part, n_parts, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        const float *v = row_f32(x, r);
        const auto *id = reinterpret_cast<const int32_t *>(row_ptr(ids, r));
        float *out = reinterpret_cast<float *>(row_ptr(d, r));
        for (int64_t j = 0; j < k; ++j) out[j] = id[j] >= 0 && id[j] < E ? v[id[j]] : 0.0f;
    }
}

NodeWork plan_rows(const KernelSet &, const rf_node &node, int nth) {
    NodeWork w;
    w.parts[0] = parts_for(node.dst->ne[1], node.src[0]->ne[0], nth);
    return w;
}

} // namespace

const OpImpl kOpTopk = {check_topk, plan_rows, run_topk};
const OpImpl kOpGather = {check_gather, plan_rows, run_gather};

} // namespace rfcpu
