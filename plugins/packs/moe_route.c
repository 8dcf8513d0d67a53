/* The "moe_route" fusion of ROCmForge's kernel packs: TOPK(logits) MOE_WEIGHTS(logits, ids), a
 * mixture of experts' routing after its router matmul, as one rf_moe_route_f32 launch
 * (kernels/moe_route.hip): a warp per token row finds the k experts and then their weights, with
 * the arithmetic of rf_topk_f32 and rf_moe_weights_f32. One launch a layer fewer in every MoE
 * decode step (Qwen3-30B-A3B: 48 a token). */
#include <math.h>
#include <string.h>

#include "pack_fusions.h"
#include "pack_match.h"

#define PM_WARP 32
#define WARP_TOPK_MAX 512 /* rf_topk_f32's row length (kernels/select_rows.hip RF_TOPK_WARP_KEYS) */

static int32_t claim_moe_route(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    const rf_node *tk, *mw;
    const rf_tensor *x, *ids, *w;
    (void)dev;
    if (first + 1 >= g->n_nodes) return 0;
    tk = g->nodes[first], mw = g->nodes[first + 1];
    if (tk->op != RF_OP_TOPK || mw->op != RF_OP_MOE_WEIGHTS || !tk->src[0] || !tk->dst || !mw->src[0] || !mw->src[1] || !mw->dst) return 0;
    x = tk->src[0], ids = tk->dst, w = mw->dst;
    if (!pm_dense_2d(x, RF_TYPE_F32, 4) || !pm_dense_2d(ids, RF_TYPE_I32, 4) || !pm_dense_2d(w, RF_TYPE_F32, 4)) return 0;
    /* The weights of these ids over these logits. */
    if (mw->src[0]->data != x->data || !pm_same_shape(mw->src[0], x) || mw->src[0]->nb[1] != x->nb[1] || mw->src[1]->data != ids->data ||
        !pm_same_shape(mw->src[1], ids) || !pm_same_shape(w, ids))
        return 0;
    if (x->ne[0] > WARP_TOPK_MAX || ids->ne[0] < 1 || ids->ne[0] > x->ne[0] || ids->ne[1] != x->ne[1] || x->ne[1] > 0x7fffffff) return 0;
    if (mw->iparams[0] != 0 && mw->iparams[0] != 1) return 0;
    if (pm_overlap(ids, x) || pm_overlap(w, x) || pm_overlap(w, ids)) return 0;
    l->grid[0] = (uint32_t)x->ne[1];
    l->threads = PM_WARP;
    l->src[0] = (rf_tensor_ref){0, 0};
    l->dst = (rf_tensor_ref){0, RF_BIND_DST};
    l->src[1] = (rf_tensor_ref){1, RF_BIND_DST};
    l->moe_weights.over_chosen = mw->iparams[0];
    return 2;
}

/* The kernel's keys (select_key): the float's bits made monotonic, the inverted index below. */
static unsigned long long route_key(float v, int i) {
    uint32_t b;
    v += 0.f;
    memcpy(&b, &v, 4);
    b = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    return ((unsigned long long)b << 32) | (uint32_t)~(uint32_t)i;
}

/* warp_sum of one double per lane (xor butterfly 16, 8, 4, 2, 1), lane 0's result. */
static double warp_sum_d(double v[PM_WARP]) {
    double t[PM_WARP];
    int o, l;
    for (o = PM_WARP / 2; o > 0; o >>= 1) {
        for (l = 0; l < PM_WARP; ++l) t[l] = v[l] + v[l ^ o];
        memcpy(v, t, sizeof t);
    }
    return v[0];
}

/* Row r as the kernel computes it: the k largest keys in order, then the weights (softmax over
 * all E with the sum in double, each lane's entries l, l + 32, ..., then the chosen ones
 * renormalised in over_chosen mode). expf is the host's: equal to the GPU's within an ulp. */
static void route_row(const float *v, int E, int k, int over_chosen, int32_t *id, float *out) {
    double lane_sum[PM_WARP];
    float mx = -INFINITY;
    int j, e, l;
    for (j = 0; j < k; ++j) {
        unsigned long long best = 0;
        for (e = 0; e < E; ++e) {
            const unsigned long long key = route_key(v[e], e);
            int taken = 0, q;
            for (q = 0; q < j; ++q) taken |= id[q] == e;
            if (!taken && key > best) best = key;
        }
        id[j] = best ? (int32_t)~(uint32_t)best : -1;
    }
    for (j = 0; j < k; ++j)
        if (id[j] < 0 || id[j] >= E) {
            for (j = 0; j < k; ++j) out[j] = 0.f;
            return;
        }
    for (e = 0; e < E; ++e) mx = fmaxf(mx, v[e]);
    for (l = 0; l < PM_WARP; ++l) {
        lane_sum[l] = 0.0;
        for (e = l; e < E; e += PM_WARP) lane_sum[l] += (double)expf(v[e] - mx);
    }
    {
        const float inv = (float)(1.0 / warp_sum_d(lane_sum));
        for (l = 0; l < PM_WARP; ++l) lane_sum[l] = 0.0;
        for (j = 0; j < k; ++j) {
            out[j] = expf(v[id[j]] - mx) * inv;
            lane_sum[j % PM_WARP] += (double)out[j];
        }
    }
    if (over_chosen) {
        const float norm = fmaxf((float)warp_sum_d(lane_sum), 6.103515625e-5f);
        for (j = 0; j < k; ++j) out[j] = out[j] / norm;
    }
}

static int32_t host_moe_route(const rf_kargs *a, const rf_fusion_launch *l) {
    const rf_ktensor *x = &a->src[0], *ids = &a->dst, *w = &a->src[1];
    int64_t r;
    (void)l;
    if (!x->data || !ids->data || !w->data || x->ne[0] > WARP_TOPK_MAX) return RF_ERR_INVALID;
    for (r = 0; r < x->ne[1]; ++r)
        route_row((const float *)((const char *)x->data + r * x->nb[1]), (int)x->ne[0], (int)ids->ne[0], a->moe_weights.over_chosen == 1,
                  (int32_t *)((char *)ids->data + r * ids->nb[1]), (float *)((char *)w->data + r * w->nb[1]));
    return RF_OK;
}

const rf_fusion rf_fusion_moe_route = {
    /* .struct_size = */ sizeof(rf_fusion),
    /* .name        = */ "moe_route",
    /* .kernel      = */ "rf_moe_route_f32",
    /* .first_op    = */ RF_OP_TOPK,
    /* .claim       = */ claim_moe_route,
    /* .host_run    = */ host_moe_route,
};
