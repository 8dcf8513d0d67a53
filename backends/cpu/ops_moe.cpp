// Mixture-of-experts routing and combination (abi.h): MOE_WEIGHTS (the gating weights of the
// experts TOPK chose, ops_select.cpp, from the router logits), ADD_ID (a bias row per chosen
// expert, gpt-oss) and MOE_SUM (the experts' outputs weighted and summed). MATMUL_ID, the expert
// FFN itself, is ops_matmul_id.cpp.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ops.h"

namespace rfcpu {
namespace {

bool check_moe_weights(const rf_node &n, std::string *why) {
    if (!check_2d(n.dst, RF_TYPE_F32, "dst", why) || !check_2d(n.src[0], RF_TYPE_F32, "src0 (logits)", why) ||
        !check_2d(n.src[1], RF_TYPE_I32, "src1 (expert ids)", why))
        return false;
    const rf_tensor &d = *n.dst, &l = *n.src[0], &ids = *n.src[1];
    if (!same_shape(d, ids) || d.ne[1] != l.ne[1] || d.ne[0] > l.ne[0]) {
        *why = "expects logits [E,M], ids and dst [k,M], got " + shape_str(l) + ", " + shape_str(ids) + " -> " + shape_str(d);
        return false;
    }
    if (n.iparams[0] < 0 || n.iparams[0] > 3) {
        *why = "iparams[0] must be 0 (softmax over all), 1 (normalised over the chosen), 2 (softmax of the chosen) or 3 "
               "(the chosen probabilities normalised)";
        return false;
    }
    return true;
}

void run_moe_weights(const OpContext &ctx, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &d = *n.dst, &l = *n.src[0], &ids = *n.src[1];
    const int64_t E = l.ne[0], k = d.ne[0];
    const bool over_chosen = n.iparams[0] == 1, of_chosen = n.iparams[0] == 2, probs_given = n.iparams[0] == 3;
    int64_t r0, r1;
    split_range(d.ne[1], part, n_parts, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        const float *v = row_f32(l, r);
        const auto *id = reinterpret_cast<const int32_t *>(row_ptr(ids, r));
        float *out = row_f32(d, r);
        bool bad = false;
        for (int64_t j = 0; j < k; ++j)
            if (id[j] < 0 || id[j] >= E) {
                ctx.errors.fail("MOE_WEIGHTS: expert id " + std::to_string(id[j]) + " of token " + std::to_string(r) +
                                " outside [0, " + std::to_string(E) + ")");
                bad = true;
            }
        if (bad) {
            for (int64_t j = 0; j < k; ++j) out[j] = 0.f;
            continue;
        }
        if (of_chosen) {
            // gpt-oss (LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT): ggml's soft_max of the k
            // chosen logits themselves (exp in f32, the sum in double, the f32 reciprocal).
            float mx = -INFINITY;
            for (int64_t j = 0; j < k; ++j) mx = std::fmax(mx, v[id[j]]);
            double sum = 0.0;
            for (int64_t j = 0; j < k; ++j) sum += double(std::exp(v[id[j]] - mx));
            const float inv = float(1.0 / sum);
            for (int64_t j = 0; j < k; ++j) out[j] = std::exp(v[id[j]] - mx) * inv;
            continue;
        }
        if (probs_given) {
            // DeepSeek-V3's sigmoid gating with expert_weights_norm: src0 holds the probabilities;
            // the chosen ones divided by their sum (sum_rows: double, then f32), clamped below.
            double chosen = 0.0;
            for (int64_t j = 0; j < k; ++j) chosen += double(v[id[j]]);
            const float norm = std::fmax(float(chosen), 6.103515625e-5f);
            for (int64_t j = 0; j < k; ++j) out[j] = v[id[j]] / norm;
            continue;
        }
        // llama.cpp's build_moe_ffn on ggml's CPU ops: probs = soft_max(logits) over all E
        // (exp in f32, the sum in double, scaled by the f32 reciprocal), the chosen entries
        // taken (get_rows); normalised: divided by their sum (sum_rows: double, then f32),
        // clamped below at 6.103515625e-5.
        float mx = -INFINITY;
        for (int64_t e = 0; e < E; ++e) mx = std::fmax(mx, v[e]);
        double sum = 0.0;
        for (int64_t e = 0; e < E; ++e) sum += double(std::exp(v[e] - mx));
        const float inv = float(1.0 / sum);
        for (int64_t j = 0; j < k; ++j) out[j] = std::exp(v[id[j]] - mx) * inv;
        if (over_chosen) {
            double chosen = 0.0;
            for (int64_t j = 0; j < k; ++j) chosen += double(out[j]);
            const float norm = std::fmax(float(chosen), 6.103515625e-5f);
            for (int64_t j = 0; j < k; ++j) out[j] = out[j] / norm;
        }
    }
}

bool check_moe_sum(const rf_node &n, std::string *why) {
    const rf_tensor *d = n.dst, *y = n.src[0], *w = n.src[1];
    if (!check_2d(d, RF_TYPE_F32, "dst", why) || !check_2d(w, RF_TYPE_F32, "src1 (weights)", why)) return false;
    if (!y || y->type != RF_TYPE_F32 || !rows_contiguous(*y) || y->ne[3] != 1) { *why = "src0 must be f32 [N,S,M]"; return false; }
    if (y->ne[0] != d->ne[0] || y->ne[2] != d->ne[1] || w->ne[0] != y->ne[1] || w->ne[1] != d->ne[1]) {
        *why = "expects src0 [N,S,M], src1 [S,M], dst [N,M], got " + shape_str(*y) + ", " + shape_str(*w) + " -> " + shape_str(*d);
        return false;
    }
    return true;
}

void run_moe_sum(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &d = *n.dst, &y = *n.src[0], &w = *n.src[1];
    const int64_t N = d.ne[0], S = y.ne[1];
    int64_t r0, r1;
    split_range(d.ne[1], part, n_parts, &r0, &r1);
    for (int64_t m = r0; m < r1; ++m) {
        float *out = row_f32(d, m);
        const float *wm = row_f32(w, m);
        // ggml: the products rounded (mul), then added in slot order (add of the views); this
        // file is built without FMA, so the product is never fused into the add.
        for (int64_t i = 0; i < N; ++i) out[i] = wm[0] * row_f32(y, 0, m)[i];
        for (int64_t s = 1; s < S; ++s) {
            const float *ys = row_f32(y, s, m);
            const float ws = wm[s];
            for (int64_t i = 0; i < N; ++i) out[i] += ws * ys[i];
        }
    }
}

bool check_add_id(const rf_node &n, std::string *why) {
    const rf_tensor *d = n.dst, *y = n.src[0], *b = n.src[1], *ids = n.src[2];
    if (!d || !y || !b || !ids) { *why = "dst and src0..src2 are required"; return false; }
    if (d->type != RF_TYPE_F32 || y->type != RF_TYPE_F32 || b->type != RF_TYPE_F32 || ids->type != RF_TYPE_I32) {
        *why = "expects f32 dst, src0, src1 and i32 ids";
        return false;
    }
    if (!rows_contiguous(*d) || !rows_contiguous(*y) || !rows_contiguous(*b) || !rows_contiguous(*ids)) {
        *why = "rows must be contiguous";
        return false;
    }
    if (!same_shape(*d, *y) || y->ne[3] != 1 || b->ne[0] != y->ne[0] || b->ne[2] != 1 || b->ne[3] != 1 ||
        ids->ne[0] != y->ne[1] || ids->ne[1] != y->ne[2] || ids->ne[2] != 1) {
        *why = "expects src0 [N,S,M], bias [N,E], ids [S,M], got " + shape_str(*y) + ", " + shape_str(*b) + ", " + shape_str(*ids);
        return false;
    }
    return true;
}

// ggml_add_id: each (slot, token) row plus its expert's bias row (an f32 add per element).
void run_add_id(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &d = *n.dst, &y = *n.src[0], &b = *n.src[1], &ids = *n.src[2];
    const int64_t N = d.ne[0], S = d.ne[1], E = b.ne[1];
    int64_t r0, r1;
    split_range(d.ne[2], part, n_parts, &r0, &r1);
    for (int64_t m = r0; m < r1; ++m) {
        const auto *id = reinterpret_cast<const int32_t *>(row_ptr(ids, m));
        for (int64_t s = 0; s < S; ++s) {
            const float *x = row_f32(y, s, m);
            float *out = row_f32(d, s, m);
            if (id[s] < 0 || id[s] >= E) {
                for (int64_t i = 0; i < N; ++i) out[i] = x[i];
                continue;
            }
            const float *bias = row_f32(b, id[s]);
            for (int64_t i = 0; i < N; ++i) out[i] = x[i] + bias[i];
        }
    }
}

bool check_moe_group_mask(const rf_node &n, std::string *why) {
    if (!check_2d(n.dst, RF_TYPE_F32, "dst", why) || !check_2d(n.src[0], RF_TYPE_F32, "src0", why)) return false;
    const int64_t E = n.src[0]->ne[0], G = n.iparams[0], used = n.iparams[1];
    if (!same_shape(*n.dst, *n.src[0])) { *why = "dst and src0 differ in shape"; return false; }
    if (G < 1 || E % G || used < 1 || used > G) {
        *why = "iparams[0] (groups) must divide E and iparams[1] (groups kept) be in 1..groups";
        return false;
    }
    return true;
}

// llama.cpp's build_moe_ffn grouped selection: a group's score is the sum of its top two values
// (ggml_top_k, get_rows, sum_rows), the best n_group_used groups by ggml_top_k, the rest -inf.
void run_moe_group_mask(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &d = *n.dst, &x = *n.src[0];
    const int64_t E = x.ne[0], G = n.iparams[0], per = E / G, used = n.iparams[1];
    std::vector<float> score((size_t)G);
    std::vector<int32_t> order((size_t)G);
    int64_t r0, r1;
    split_range(d.ne[1], part, n_parts, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        const float *v = row_f32(x, r);
        float *out = row_f32(d, r);
        for (int64_t g = 0; g < G; ++g) {
            const float *gv = v + g * per;
            // The two largest (the lower index first among equals; NaN never wins).
            int64_t i0 = 0;
            for (int64_t i = 1; i < per; ++i)
                if (gv[i] > gv[i0]) i0 = i;
            if (per == 1) { score[size_t(g)] = gv[0]; continue; }
            int64_t i1 = i0 == 0 ? 1 : 0;
            for (int64_t i = 0; i < per; ++i)
                if (i != i0 && gv[i] > gv[i1]) i1 = i;
            score[size_t(g)] = gv[i0] + gv[i1];
        }
        for (int64_t g = 0; g < G; ++g) order[size_t(g)] = int32_t(g);
        std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return score[size_t(a)] > score[size_t(b)]; });
        for (int64_t i = 0; i < E; ++i) out[i] = -INFINITY;
        for (int64_t j = 0; j < used; ++j) {
            const int64_t g = order[size_t(j)];
            for (int64_t i = g * per; i < (g + 1) * per; ++i) out[i] = v[i];
        }
    }
}

NodeWork plan_add_id(const KernelSet &, const rf_node &node, int nth) {
    NodeWork w;
    w.parts[0] = parts_for(node.dst->ne[2], node.dst->ne[0] * node.dst->ne[1], nth);
    return w;
}

NodeWork plan_rows(const KernelSet &, const rf_node &node, int nth) {
    NodeWork w;
    w.parts[0] = parts_for(node.dst->ne[1], node.src[0]->ne[0] * node.src[0]->ne[1], nth);
    return w;
}

} // namespace

const OpImpl kOpMoeWeights = {check_moe_weights, plan_rows, run_moe_weights};
const OpImpl kOpMoeSum = {check_moe_sum, plan_rows, run_moe_sum};
const OpImpl kOpAddId = {check_add_id, plan_add_id, run_add_id};
const OpImpl kOpMoeGroupMask = {check_moe_group_mask, plan_rows, run_moe_group_mask};

} // namespace rfcpu
