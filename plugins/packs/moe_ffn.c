/* The decode fusions of a mixture of experts' FFN (kernels/moe_fused.hip), where the backend runs
 * each MATMUL_ID on rf_mvq_idc_<type> (a routed column per grid row, q8_1 activations: few
 * routed columns, no more than experts):
 *  - "moe_gate_up": MATMUL_ID(gate) MATMUL_ID(up) SWIGLU as one rf_mvq_idcg_<type> launch (each
 *    warp reads its expert's gate and up rows together);
 *  - "moe_down_sum": MATMUL_ID(down) MOE_SUM as one rf_mvq_idcs_<type> launch (the slots of a row
 *    in one block, summed in slot order).
 * Two and one launches a layer fewer in every MoE decode step. The activations are lent as the
 * backend's own MATMUL_ID reads them (q8_1 columns in the weight type's block), so each product
 * has the floats of the unfused op. */
#include <math.h>

#include "matmul_fusion.h"
#include "pack_fusions.h"
#include "pack_match.h"
#include "q8_dot.h"

#define MOE_IDC_MAX_COLS 64 /* backends/hip/moe.cpp kMvqIdCols */

/* The kernel suffix where the backend runs this MATMUL_ID on rf_mvq_idc_<type> (moe.cpp's
 * mvq_id_suffix and its column rule) and kernels/moe_fused.hip has the fused forms, else NULL
 * (MXFP4 has none: gpt-oss puts its expert biases between the matmuls and the SwiGLU / sum). */
static const char *idc_suffix(const rf_pack_device *dev, const rf_node *n) {
    const rf_tensor *w = n->src[0], *x = n->src[1], *ids = n->src[2], *d = n->dst;
    int64_t S, M;
    if (n->op != RF_OP_MATMUL_ID || !w || !x || !ids || !d || !pm_dense_2d(ids, RF_TYPE_I32, 4) || !pm_plain_f32(x) || !pm_dense_f32(d)) return NULL;
    S = ids->ne[0], M = ids->ne[1];
    if (S * M > MOE_IDC_MAX_COLS || S * M > w->ne[2] || w->ne[2] > 65535 || w->ne[3] != 1) return NULL;
    if (x->ne[0] != w->ne[0] || (x->ne[1] != S && x->ne[1] != 1) || x->ne[2] != M || x->ne[3] != 1 || d->ne[0] != w->ne[1] ||
        d->ne[1] != S || d->ne[2] != M || d->ne[3] != 1 || !pm_rows16(x) || x->nb[2] != x->nb[1] * x->ne[1])
        return NULL;
    switch (w->type) {
    case RF_TYPE_Q4_K: return pm_aligned(w, 16) ? "q4_k" : NULL;
    case RF_TYPE_Q5_K: return pm_aligned(w, 16) ? "q5_k" : NULL;
    case RF_TYPE_Q6_K: return pm_nvidia(dev) && pm_aligned(w, 2) ? "q6_k" : NULL; /* AMD: rf_mm_id_q6_k */
    case RF_TYPE_Q4_0: return pm_aligned(w, 2) ? "q4_0" : NULL;
    case RF_TYPE_Q8_0: return pm_aligned(w, 2) ? "q8_0" : NULL;
    default: return NULL;
    }
}

/* The fused kernel of weight type suffix sfx (the claim's kernel must be a literal the pack lists):
 * rf_mvq_idcs_<sfx> for the down-and-sum fusion, else rf_mvq_idcg_<sfx>. */
static const char *fused_kernel(int down_sum, const char *sfx) {
    static const char *const sfxs[] = {"q4_k", "q5_k", "q6_k", "q4_0", "q8_0"};
    static const char *const gate_up[] = {"rf_mvq_idcg_q4_k", "rf_mvq_idcg_q5_k", "rf_mvq_idcg_q6_k", "rf_mvq_idcg_q4_0", "rf_mvq_idcg_q8_0"};
    static const char *const sums[] = {"rf_mvq_idcs_q4_k", "rf_mvq_idcs_q5_k", "rf_mvq_idcs_q6_k", "rf_mvq_idcs_q4_0", "rf_mvq_idcs_q8_0"};
    size_t i;
    for (i = 0; i < sizeof sfxs / sizeof sfxs[0]; ++i)
        if (strcmp(sfxs[i], sfx) == 0) return down_sum ? sums[i] : gate_up[i];
    return NULL;
}

static int32_t claim_moe_gate_up(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    const rf_node *mg, *mu, *sw;
    const rf_tensor *x, *ids, *gd, *ud, *sd;
    const char *sfx, *kernel;
    if (first + 2 >= g->n_nodes) return 0;
    mg = g->nodes[first], mu = g->nodes[first + 1], sw = g->nodes[first + 2];
    if (sw->op != RF_OP_SWIGLU || !(sfx = idc_suffix(dev, mg)) || !idc_suffix(dev, mu) || mu->src[0]->type != mg->src[0]->type) return 0;
    x = mg->src[1], ids = mg->src[2], gd = mg->dst, ud = mu->dst, sd = sw->dst;
    /* The same activations and routing, weights of one shape. */
    if (mu->src[1]->data != x->data || !pm_same_shape(mu->src[1], x) || mu->src[1]->nb[1] != x->nb[1] || mu->src[1]->nb[2] != x->nb[2] ||
        mu->src[2]->data != ids->data || !pm_same_shape(mu->src[2], ids) || !pm_same_shape(mu->src[0], mg->src[0]))
        return 0;
    if (!sw->src[0] || !sw->src[1] || sw->src[0]->data != gd->data || sw->src[1]->data != ud->data || !pm_dense_f32(sw->src[0]) ||
        !pm_dense_f32(sw->src[1]) || !pm_dense_f32(sd) || !pm_same_shape(sw->src[0], gd) || !pm_same_shape(sw->src[1], ud) ||
        !pm_same_shape(sd, gd) || !pm_same_shape(gd, ud))
        return 0;
    /* Each warp writes gate, up, then the product of its (row, column): the product may replace
     * one of them exactly; no output may lie on the ids every block reads. */
    if (pm_overlap(gd, ud) || (pm_overlap(sd, gd) && sd->data != gd->data) || (pm_overlap(sd, ud) && sd->data != ud->data) ||
        pm_overlap(gd, ids) || pm_overlap(ud, ids) || pm_overlap(sd, ids))
        return 0;
    if (!(kernel = fused_kernel(0, sfx)) || (gd->ne[0] + 3) / 4 > 0x7fffffff) return 0;
    l->grid[0] = (uint32_t)((gd->ne[0] + 3) / 4);
    l->grid[1] = (uint32_t)(ids->ne[0] * ids->ne[1]);
    l->threads = 128;
    l->kernel = kernel;
    l->src[0] = (rf_tensor_ref){0, 0};
    l->src[1] = (rf_tensor_ref){1, 0};
    l->src[2] = (rf_tensor_ref){0, 2};
    l->dst = (rf_tensor_ref){0, RF_BIND_DST};
    l->src[3] = (rf_tensor_ref){1, RF_BIND_DST};
    l->src[4] = (rf_tensor_ref){2, RF_BIND_DST};
    l->aux[1] = x->ne[1];
    /* The backend's rule for rf_mvq_idc_*: the routed rows pulled in when they are small. */
    pm_decode_input_bytes(l, dev, pm_act_block(mg->src[0]->type), 2 * (uint64_t)(ids->ne[0] * ids->ne[1]) * (uint64_t)(gd->ne[0] * mg->src[0]->nb[1]), 1);
    return 3;
}

static int32_t claim_moe_down_sum(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    const rf_node *md, *ms;
    const rf_tensor *x, *ids, *d, *w, *out;
    const char *sfx, *kernel;
    int64_t S, M, N, R;
    if (first + 1 >= g->n_nodes) return 0;
    md = g->nodes[first], ms = g->nodes[first + 1];
    if (ms->op != RF_OP_MOE_SUM || !(sfx = idc_suffix(dev, md))) return 0;
    x = md->src[1], ids = md->src[2], d = md->dst, w = ms->src[1], out = ms->dst;
    S = ids->ne[0], M = ids->ne[1], N = d->ne[0];
    if (x->ne[1] != S || M > 65535) return 0; /* one activation row per slot */
    /* From 4 slots a block's warps read one row of each of S experts and wait for the slowest
     * before the sum: rf_mvq_idc (4 rows of one expert a block) then rf_moe_sum is faster
     * (docs/PERFORMANCE.md, MoE decode fusions). */
    if (S >= 4) return 0;
    if (!ms->src[0] || ms->src[0]->data != d->data || !pm_same_shape(ms->src[0], d) || !pm_dense_f32(ms->src[0]) || !w || !pm_dense_f32(w) ||
        w->ne[0] != S || w->ne[1] != M || w->ne[2] != 1 || w->ne[3] != 1 || !pm_dense_f32(out) || out->ne[0] != N || out->ne[1] != M ||
        out->ne[2] != 1 || out->ne[3] != 1)
        return 0;
    /* The sum is written after the block's products: it may lie on nothing the kernel reads or
     * writes (the activations are read from their q8_1 copy, made before the launch). */
    if (pm_overlap(out, d) || pm_overlap(out, w) || pm_overlap(out, ids) || pm_overlap(d, w) || pm_overlap(d, ids)) return 0;
    if (!(kernel = fused_kernel(1, sfx))) return 0;
    R = 4 / S; /* 4 warps a block (3 for 3 slots) */
    if ((N + R - 1) / R > 0x7fffffff) return 0;
    l->grid[0] = (uint32_t)((N + R - 1) / R);
    l->grid[1] = (uint32_t)M;
    l->threads = (uint32_t)(32 * R * S);
    l->kernel = kernel;
    l->src[0] = (rf_tensor_ref){0, 0};
    l->src[1] = (rf_tensor_ref){1, 1};
    l->src[2] = (rf_tensor_ref){0, 2};
    l->src[3] = (rf_tensor_ref){0, RF_BIND_DST};
    l->dst = (rf_tensor_ref){1, RF_BIND_DST};
    pm_decode_input_bytes(l, dev, pm_act_block(md->src[0]->type), (uint64_t)(S * M) * (uint64_t)(N * md->src[0]->nb[1]), 1);
    return 2;
}

static float *at3(const rf_ktensor *t, int64_t n, int64_t s, int64_t m) {
    return (float *)((char *)t->data + s * t->nb[1] + m * t->nb[2]) + n;
}

/* The expert of column col, or -1 for an id outside 0..E-1 (its products are 0). */
static int expert_of(const rf_ktensor *ids, const rf_ktensor *w, int64_t col) {
    const int32_t e = ((const int32_t *)ids->data)[col];
    return e >= 0 && e < w->ne[2] ? e : -1;
}

static float routed_dot(const rf_ktensor *w, int e, int64_t n, const unsigned char *col) {
    return e < 0 ? 0.f : pm_dot_q8_1(w->type, (const unsigned char *)w->data + e * w->nb[2] + n * w->nb[1], col, w->ne[0]);
}

static int32_t host_moe_gate_up(const rf_kargs *a, const rf_fusion_launch *l) {
    const rf_ktensor *wg = &a->src[0], *wu = &a->src[1], *ids = &a->src[2];
    const int64_t N = wg->ne[1], S = ids->ne[0], M = ids->ne[1], S1 = a->aux[1], stride = a->aux[l->q8_aux_stride];
    int64_t c, n;
    if (!a->scratch || !pm_q8_dot_type(wg->type) || !pm_q8_dot_type(wu->type) || S1 < 1) return RF_ERR_INVALID;
    for (c = 0; c < S * M; ++c) {
        const int64_t s = c % S, m = c / S;
        const unsigned char *col = (const unsigned char *)a->scratch + (m * S1 + (S1 == 1 ? 0 : s)) * stride;
        const int eg = expert_of(ids, wg, c);
        for (n = 0; n < N; ++n) {
            const float v = routed_dot(wg, eg, n, col), u = routed_dot(wu, eg, n, col);
            *at3(&a->dst, n, s, m) = v;
            *at3(&a->src[3], n, s, m) = u;
            *at3(&a->src[4], n, s, m) = (v / (1.f + expf(-v))) * u;
        }
    }
    return RF_OK;
}

static int32_t host_moe_down_sum(const rf_kargs *a, const rf_fusion_launch *l) {
    const rf_ktensor *wd = &a->src[0], *wt = &a->src[1], *ids = &a->src[2];
    const int64_t N = wd->ne[1], S = ids->ne[0], M = ids->ne[1], stride = a->aux[l->q8_aux_stride];
    int64_t m, n, s;
    if (!a->scratch || !pm_q8_dot_type(wd->type) || S < 1) return RF_ERR_INVALID;
    for (m = 0; m < M; ++m) {
        const float *wm = (const float *)((const char *)wt->data + m * wt->nb[1]);
        for (n = 0; n < N; ++n) {
            float sum = 0.f;
            for (s = 0; s < S; ++s) {
                const int64_t c = s + S * m;
                const float v = routed_dot(wd, expert_of(ids, wd, c), n, (const unsigned char *)a->scratch + c * stride);
                const float p = wm[s] * v;
                *at3(&a->src[3], n, s, m) = v;
                sum = s == 0 ? p : sum + p;
            }
            ((float *)((char *)a->dst.data + m * a->dst.nb[1]))[n] = sum;
        }
    }
    return RF_OK;
}

const rf_fusion rf_fusion_moe_gate_up = {
    /* .struct_size = */ sizeof(rf_fusion),
    /* .name        = */ "moe_gate_up",
    /* .kernel      = */ "rf_mvq_idcg_q4_k",
    /* .first_op    = */ RF_OP_MATMUL_ID,
    /* .claim       = */ claim_moe_gate_up,
    /* .host_run    = */ host_moe_gate_up,
};

const rf_fusion rf_fusion_moe_down_sum = {
    /* .struct_size = */ sizeof(rf_fusion),
    /* .name        = */ "moe_down_sum",
    /* .kernel      = */ "rf_mvq_idcs_q4_k",
    /* .first_op    = */ RF_OP_MATMUL_ID,
    /* .claim       = */ claim_moe_down_sum,
    /* .host_run    = */ host_moe_down_sum,
};
