/* The "head_norm_rope" fusion of ROCmForge's kernel packs: a layer's Q / K head norms, their two
 * rotations and K's append, RMS_NORM(K) MUL RMS_NORM(Q) MUL ROPE(K) ROPE(Q) [SET_ROWS(K pool)]
 * in the order the graph builds them (core/model/forward_graph.cpp), as one rf_head_norm_rope_f32
 * launch (kernels/head_norm_rope.hip) instead of two rf_rms_norm_mul_rows and one rf_rope_f32.
 * Every layer of a model with head norms takes it: Qwen 3 (dense and MoE), Gemma 3, OLMo 2.
 * Every intermediate is still written. */
#include <math.h>

#include "matmul_fusion.h"
#include "pack_fusions.h"
#include "pack_match.h"
#include "proj_runs_host.h"

#define HNR_MAX_D 256
#define HNR_MAX_SHARED (48 * 1024) /* the default dynamic shared memory limit */

/* Heads [D, H, T] of dense f32, the layout every tensor of the claim has. */
static int dense_heads(const rf_tensor *t, int64_t D, int64_t H, int64_t T) {
    return pm_dense_f32(t) && t->ne[0] == D && t->ne[1] == H && t->ne[2] == T && t->ne[3] == 1 && (uintptr_t)t->data % 16 == 0;
}

/* Two tensors of the claim that a block-per-token launch may not leave overlapping: bytes shared
 * other than as the same tensor (then each token's rows are one block's). */
static int cross_token_overlap(const rf_tensor *a, const rf_tensor *b) {
    return pm_overlap(a, b) && !(a->data == b->data && pm_same_shape(a, b));
}

static int32_t claim_head_norm_rope(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    pm_norm_mul k, q;
    const rf_node *rk, *rq, *ap = NULL;
    const rf_tensor *heads[8], *fixed[6] = {0};
    int64_t D, Hk, Hq, T, rows;
    int i, j, w = 0;
    (void)dev;
    if (first + 5 >= g->n_nodes || !pm_match_norm_mul(g, first, &k) || !pm_match_norm_mul(g, first + 2, &q)) return 0;
    rk = g->nodes[first + 4], rq = g->nodes[first + 5];
    if (!pm_plain_rope(rk) || !pm_plain_rope(rq) || !pm_same_angles(rk, rq) || rk->iparams[0] != rq->iparams[0]) return 0;
    if (rk->src[0]->data != k.md->data || rq->src[0]->data != q.md->data || k.norm->fparams[0] != q.norm->fparams[0]) return 0;
    D = k.x->ne[0], Hk = k.x->ne[1], Hq = q.x->ne[1], T = k.x->ne[2], rows = Hk + Hq;
    if (D % 4 || D > HNR_MAX_D || rk->iparams[1] <= 0 || rk->iparams[1] % 2 || rk->iparams[1] > D) return 0;
    if (rows * (D + 1) * 4 > HNR_MAX_SHARED) return 0;
    if (!dense_heads(k.x, D, Hk, T) || !dense_heads(k.nd, D, Hk, T) || !dense_heads(k.md, D, Hk, T) || !dense_heads(rk->dst, D, Hk, T) ||
        !dense_heads(q.x, D, Hq, T) || !dense_heads(q.nd, D, Hq, T) || !dense_heads(q.md, D, Hq, T) || !dense_heads(rq->dst, D, Hq, T))
        return 0;
    heads[0] = k.x, heads[1] = q.x, heads[2] = k.nd, heads[3] = k.md, heads[4] = rk->dst, heads[5] = q.nd, heads[6] = q.md;
    heads[7] = rq->dst;
    fixed[0] = k.w, fixed[1] = q.w, fixed[2] = rk->src[1], fixed[3] = rk->src[2], fixed[4] = rk->src[3];
    /* K's append: its whole rotation as [D * Hk, T] rows, into a pool that overlaps nothing here. */
    if (first + 6 < g->n_nodes && pm_pool_append(g->nodes[first + 6])) {
        const rf_node *a = g->nodes[first + 6];
        const rf_tensor *x = a->src[0];
        if (x->data == rk->dst->data && x->ne[0] == D * Hk && x->ne[1] == T && x->nb[1] == rk->dst->nb[2]) ap = a, fixed[5] = a->src[1];
    }
    /* The results land on no weight, angle or slot; on the activations only where the kernel's
     * order keeps them right: anywhere with one block (one token), else as the same tensor. */
    for (i = 0; i < 8; ++i)
        for (j = 0; j < 6; ++j)
            if (pm_overlap(heads[i], fixed[j])) return 0;
    if (T > 1)
        for (i = 0; i < 8; ++i)
            for (j = i + 1; j < 8; ++j)
                if (cross_token_overlap(heads[i], heads[j])) return 0;
    if (ap)
        for (i = 0; i < 8; ++i)
            if (pm_overlap(ap->dst, heads[i]) || (i < 6 && pm_overlap(ap->dst, fixed[i]))) return 0;
    l->grid[0] = (uint32_t)(T < 65535 ? T : 65535);
    l->threads = (uint32_t)(rows >= 32 ? 1024 : 32 * rows);
    l->shared_bytes = (uint32_t)(rows * (D + 1) * 4);
    l->src[0] = (rf_tensor_ref){0, 0};
    l->src[1] = (rf_tensor_ref){4, pm_rope_angles_slot(rk)}; /* positions, or the angles' rows */
    if (rk->src[2]) l->src[2] = (rf_tensor_ref){4, 2};
    l->src[3] = (rf_tensor_ref){2, 0};
    l->src[4] = (rf_tensor_ref){5, RF_BIND_DST};
    l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_NE0 + 0, (rf_tensor_ref){0, RF_BIND_DST}, 0};
    l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_NE0 + 1, (rf_tensor_ref){1, RF_BIND_DST}, 0};
    l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_NE0 + 2, (rf_tensor_ref){4, RF_BIND_DST}, 0};
    l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_NE0 + 3, (rf_tensor_ref){2, RF_BIND_DST}, 0};
    l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_NB0 + 0, (rf_tensor_ref){3, RF_BIND_DST}, 0};
    l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_NB0 + 1, (rf_tensor_ref){1, 1}, 0};
    l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_NB0 + 2, (rf_tensor_ref){3, 1}, 0};
    l->rope.mode = rk->iparams[0];
    l->rope.n_rot = rk->iparams[1];
    l->rope.freq_base = rk->fparams[0];
    l->rope.freq_scale = rk->fparams[1];
    l->rope.norm_eps = k.norm->fparams[0];
    if (ap) {
        l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_NB0 + 3, (rf_tensor_ref){6, RF_BIND_DST}, 0};
        l->words[w++] = (rf_kargs_word){RF_KFIELD_AUX0 + 0, (rf_tensor_ref){6, 1}, 0};
        l->aux[1] = ap->dst->nb[1];
        l->rope.pool_type = ap->dst->type;
    }
    return ap ? 7 : 6;
}

/* The kernel on the host, node by node: every token's norms, products, rotations and append. */
static int32_t host_head_norm_rope(const rf_kargs *a, const rf_fusion_launch *l) {
    const int64_t D = a->src[0].ne[0], Hk = a->src[0].ne[1], Hq = a->src[3].ne[1], T = a->src[0].ne[2];
    const int mode = a->rope.mode, n_rot = a->rope.n_rot;
    float *out[5] = {(float *)(uintptr_t)a->dst.ne[0], (float *)(uintptr_t)a->dst.ne[1], (float *)(uintptr_t)a->dst.ne[2],
                     (float *)(uintptr_t)a->dst.ne[3], (float *)(uintptr_t)a->dst.nb[0]};
    const float *wk = (const float *)(uintptr_t)a->dst.nb[1], *wq = (const float *)(uintptr_t)a->dst.nb[2];
    char *pool = (char *)(uintptr_t)a->dst.nb[3];
    const int32_t *slots = (const int32_t *)(uintptr_t)a->aux[0];
    float *rq = (float *)a->src[4].data;
    int64_t t, h, e, i;
    (void)l;
    if (!a->src[0].data || !a->src[3].data || !rq || !a->src[1].data || !wk || !wq || (pool && !slots)) return RF_ERR_INVALID;
    for (i = 0; i < 5; ++i)
        if (!out[i]) return RF_ERR_INVALID;
    for (t = 0; t < T; ++t) {
        /* All of the token's heads read first, as the kernel does, then each node's results. */
        const int64_t rows = Hk + Hq;
        float *xs = (float *)malloc((size_t)(rows * D) * sizeof(float)), *inv = (float *)malloc((size_t)rows * sizeof(float));
        int stage;
        if (!xs || !inv) return free(xs), free(inv), RF_ERR_OUT_OF_MEMORY;
        for (h = 0; h < rows; ++h) {
            const rf_ktensor *x = h < Hk ? &a->src[0] : &a->src[3];
            const float *row = (const float *)pm_row(x, (h < Hk ? h : h - Hk) + t * x->ne[1]);
            double s = 0;
            for (e = 0; e < D; ++e) xs[h * D + e] = row[e], s += (double)row[e] * row[e];
            inv[h] = (float)(1.0 / sqrt(s / (double)D + (double)a->rope.norm_eps));
        }
        for (stage = 0; stage < 7; ++stage) {
            const int q_rows = stage == 2 || stage == 3 || stage == 5;
            const int64_t h0 = q_rows ? Hk : 0, h1 = q_rows ? rows : Hk;
            const float *w = q_rows ? wq : wk;
            if (stage == 6 && !pool) break;
            for (h = h0; h < h1; ++h) {
                const int64_t head = h - h0, at = (head + t * (h1 - h0)) * D; /* dense heads [D, H, T] */
                const float *xr = xs + h * D;
                if (stage < 4) {
                    float *o = out[stage == 0 ? 0 : stage == 1 ? 1 : stage == 2 ? 3 : 4];
                    for (e = 0; e < D; ++e) o[at + e] = stage % 2 ? xr[e] * inv[h] * w[e] : xr[e] * inv[h];
                    continue;
                }
                for (i = 0; i < D / 2; ++i) {
                    const int rot = i < n_rot / 2;
                    const int64_t j0 = rot && mode == RF_ROPE_NEOX ? i : 2 * i, j1 = rot && mode == RF_ROPE_NEOX ? i + n_rot / 2 : 2 * i + 1;
                    const float m0 = xr[j0] * inv[h] * w[j0], m1 = xr[j1] * inv[h] * w[j1];
                    float y0 = m0, y1 = m1;
                    if (rot)
                        pm_rope_pair(m0, m1, i, &a->src[1], t, n_rot, a->rope.freq_base, a->rope.freq_scale, (const float *)a->src[2].data, &y0,
                                     &y1);
                    if (stage == 6) {
                        char *prow = pool + (int64_t)slots[t] * a->aux[1];
                        pm_pool_store(prow, a->rope.pool_type, head * D + j0, y0);
                        pm_pool_store(prow, a->rope.pool_type, head * D + j1, y1);
                    } else {
                        float *o = stage == 4 ? out[2] : rq;
                        o[at + j0] = y0, o[at + j1] = y1;
                    }
                }
            }
        }
        free(xs);
        free(inv);
    }
    return RF_OK;
}

const rf_fusion rf_fusion_head_norm_rope = {
    /* .struct_size = */ sizeof(rf_fusion),
    /* .name        = */ "head_norm_rope",
    /* .kernel      = */ "rf_head_norm_rope_f32",
    /* .first_op    = */ RF_OP_RMS_NORM,
    /* .claim       = */ claim_head_norm_rope,
    /* .host_run    = */ host_head_norm_rope,
};
