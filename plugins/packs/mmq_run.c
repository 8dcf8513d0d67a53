/* The "mmq_run" fusion of ROCmForge's kernel packs (ABI 2.7): a layer's projections over several
 * tokens on the integer tensor-core tiles, MATMUL [ROPE] MATMUL [ROPE] [MATMUL [ROPE]] (K, V, Q with
 * their rotations; or gate and up), then optionally the K and V appends (two SET_ROWS). The
 * matrices whose tile launch is the same kernel (rf_pack_device.matmul_tiles: weight type, column
 * tile, K split) share one rf_mmq launch (grid z = matrix), so a Q4_K_M layer's K and Q are one
 * launch and its Q6_K V another; then the rotations, two in one rf_rope_f32 launch where they
 * agree. K + Q of 7B at 16 columns: 20.6 us joined against 2 x 12.0. The V append is written by
 * V's matmul epilogue and the K append by the rope: one launch fewer each.
 *
 * The matmuls run before the ropes, which reorders the graph (a rope ran before the next matmul).
 * That is the same computation when:
 *  - a product that a later output of the run overlaps is dead (the executor recycles bytes after a
 *    tensor's last reader: its rope): it goes to scratch lent for the claim, its rope reads it
 *    there, and its own bytes get what the later output writes, as before;
 *  - every other overlap between outputs is a rope replacing its own product exactly (in place);
 *  - no output overlaps a weight or a rope's positions / factors, and no product written in place
 *    overlaps the activations. A rotation may lie on them: every launch reads their q8_1 copy,
 *    made before the first one (one copy: the same activation block for all weight types).
 * Each matrix keeps the tile launch it would get alone, so a joined launch changes no output bit.
 * ROCMFORGE_HIP_MMQ_SEGMENTS=0: not claimed; ROCMFORGE_HIP_MMQ_APPEND=0: the appends stay
 * separate launches (A/B). */
#include <string.h>

#include "matmul_fusion.h"
#include "mmq_host.h"
#include "pack_fusions.h"
#include "pack_match.h"
#include "q8_dot.h"

#define MR_MAX_SEGS 3 /* matrices one rf_mmq launch takes (grid z) */

struct mr_seg {
    const rf_node *mm, *rp;
    int node;          /* the matmul's node, relative to the claim's first */
    rf_matmul_tiles t; /* its tile launch alone */
    int dead;          /* a later output of the run reuses the product's bytes: it goes to lent scratch */
    uint64_t lent_at;  /* where, when dead */
};

/* The final output of a segment: its rotation, else its product. */
static const rf_tensor *mr_final(const struct mr_seg *s) { return s->rp ? s->rp->dst : s->mm->dst; }

/* Two matrices one launch computes as separate launches would: the same tile kernel (type, column
 * tile, split) over the same activations and K, and an f32 output whose row stride the kernel
 * takes as a 32-bit member. */
static int mr_joinable(const struct mr_seg *a, const struct mr_seg *b) {
    const rf_tensor *xa = a->mm->src[1], *xb = b->mm->src[1], *d = b->mm->dst;
    return strcmp(a->t.kernel, b->t.kernel) == 0 && a->t.split == b->t.split && a->mm->src[0]->ne[0] == b->mm->src[0]->ne[0] &&
           xa->data == xb->data && memcmp(xa->ne, xb->ne, sizeof xa->ne) == 0 && memcmp(xa->nb, xb->nb, sizeof xa->nb) == 0 &&
           d->type == RF_TYPE_F32 && d->nb[0] == 4 && d->nb[1] > 0 && d->nb[1] <= 0x7fffffff;
}

/* Two ropes one rf_rope_f32 launch does: the same tokens, positions, factors and parameters. */
static int mr_same_rotation(const rf_node *p, const rf_node *q) {
    const rf_tensor *fp = p->src[2], *fq = q->src[2];
    return p->src[1]->data == q->src[1]->data && (fp ? fq && fp->data == fq->data : !fq) && p->iparams[0] == q->iparams[0] &&
           p->iparams[1] == q->iparams[1] && p->fparams[0] == q->fparams[0] && p->fparams[1] == q->fparams[1] &&
           p->src[0]->ne[2] == q->src[0]->ne[2] && p->src[0]->ne[3] == 1 && q->src[0]->ne[3] == 1;
}

/* The K and V appends after the run at node j: SET_ROWS of one segment's rotation (found[0]) and of
 * another's product without rope (found[1]), either order, each source that whole output seen as
 * [N, M] dense rows, into f16/f32 pools. The pools overlap each other, the slots and everything the
 * run reads or writes in no byte; the slots overlap none of the run's outputs (they are read while
 * those are written). */
static int mr_find_appends(const rf_graph *g, int32_t j, const struct mr_seg *segs, int nseg, int64_t M, const rf_tensor *const *outs,
                           int nout, const rf_tensor *const *reads, int nread, const rf_node *found[2], int seg_of[2]) {
    int k, i, o;
    found[0] = found[1] = NULL;
    if (j + 1 >= g->n_nodes) return 0;
    for (k = 0; k < 2; ++k) {
        const rf_node *n = g->nodes[j + k];
        const rf_tensor *x = n->src[0];
        int seg = -1, slot;
        if (!pm_pool_append(n) || n->dst->nb[1] > 0x7fffffff) return 0;
        for (i = 0; i < nseg; ++i) {
            const rf_tensor *f = mr_final(&segs[i]);
            const int64_t N = f->ne[0] * f->ne[1] * f->ne[2] / M; /* the product's rows */
            if (x->data == f->data && x->ne[0] == N && x->ne[1] == M && x->nb[1] == 4 * N) seg = i;
        }
        if (seg < 0) return 0;
        slot = segs[seg].rp ? 0 : 1;
        if (found[slot]) return 0; /* two of one kind */
        found[slot] = n, seg_of[slot] = seg;
    }
    if (pm_overlap(found[0]->dst, found[1]->dst)) return 0;
    for (k = 0; k < 2; ++k) {
        const rf_tensor *pool = found[k]->dst;
        for (i = 0; i < 2; ++i)
            if (pm_overlap(pool, found[i]->src[1])) return 0;
        for (o = 0; o < nout; ++o)
            if (pm_overlap(pool, outs[o]) || pm_overlap(found[k]->src[1], outs[o])) return 0;
        for (i = 0; i < nread; ++i)
            if (pm_overlap(pool, reads[i])) return 0;
    }
    return 1;
}

/* The rf_mmq launch of the segments idx[0..n-1] (one tile kernel), the V append when `app` is one
 * of them. */
static void mr_mmq_launch(rf_fusion_launch *l, const struct mr_seg *segs, const int *idx, int n, const rf_node *app, int app_seg,
                          int app_node) {
    const struct mr_seg *s0 = &segs[idx[0]];
    int64_t N = 0;
    int i, w = 0;
    for (i = 0; i < n; ++i)
        if (segs[idx[i]].mm->src[0]->ne[1] > N) N = segs[idx[i]].mm->src[0]->ne[1]; /* the grid covers the tallest */
    l->kernel = s0->t.kernel;
    l->grid[0] = (uint32_t)((N + s0->t.rows_per_tile - 1) / s0->t.rows_per_tile * s0->t.split);
    l->grid[1] = s0->t.grid[1];
    l->grid[2] = (uint32_t)n;
    l->threads = s0->t.threads;
    l->src[0] = (rf_tensor_ref){(int16_t)s0->node, 0};
    l->src[1] = (rf_tensor_ref){(int16_t)s0->node, 1};
    l->dst = (rf_tensor_ref){(int16_t)s0->node, RF_BIND_DST};
    if (s0->dead) l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_DATA, (rf_tensor_ref){RF_BIND_LENT, 0}, (long long)s0->lent_at};
    for (i = 1; i < n; ++i) { /* kernels/matmul_mmq.hip mmq_segment(): weights src[1 + i], output aux[i], row stride iparams[4 + i] */
        const struct mr_seg *s = &segs[idx[i]];
        l->src[1 + i] = (rf_tensor_ref){(int16_t)s->node, 0};
        l->words[w++] = s->dead ? (rf_kargs_word){RF_KFIELD_AUX0 + i, (rf_tensor_ref){RF_BIND_LENT, 0}, (long long)s->lent_at}
                                : (rf_kargs_word){RF_KFIELD_AUX0 + i, (rf_tensor_ref){(int16_t)s->node, RF_BIND_DST}, 0};
        l->iparams[4 + i] = (int32_t)s->mm->dst->nb[1];
    }
    l->iparams[1] = n > 1 ? 1 : s0->t.iparams[1]; /* the L2 prefetch reads src[0]'s rows: one matrix only */
    l->iparams[2] = s0->t.iparams[2];
    l->iparams[3] = s0->t.iparams[3];
    for (i = 0; i < n && app; ++i) { /* mmq_store(): the V append, column m into pool row slots[m] */
        if (idx[i] != app_seg) continue;
        l->words[w++] = (rf_kargs_word){RF_KFIELD_AUX0 + 3, (rf_tensor_ref){(int16_t)app_node, RF_BIND_DST}, 0};
        l->src[4] = (rf_tensor_ref){(int16_t)app_node, 1};
        l->iparams[0] = (int32_t)app->dst->nb[1];
        l->iparams[4] = app->dst->type;
        l->iparams[7] = i + 1;
    }
    l->act_in = (rf_tensor_ref){(int16_t)s0->node, 1};
    l->act_in_block = pm_act_block(s0->mm->src[0]->type);
    l->q8_aux_stride = 0;
}

/* One rf_rope_f32 launch of segment p's rope (x from lent scratch when its product is dead), with
 * segment q's as the second tensor where q >= 0 (aux[0] = p's head groups), and the K append
 * (kernels/rope.hip aux[1..3], iparams[2]) when app is given. */
static void mr_rope_launch(rf_fusion_launch *l, const struct mr_seg *p, const struct mr_seg *q, const rf_node *app, int app_node) {
    const rf_node *r = p->rp;
    const int16_t rn = (int16_t)(p->node + 1);
    const int64_t gp = (r->src[0]->ne[1] + 7) / 8, gq = q ? (q->rp->src[0]->ne[1] + 7) / 8 : 0;
    int i, w = 0;
    l->kernel = "rf_rope_f32";
    l->grid[0] = (uint32_t)(r->src[0]->ne[2] < 65535 ? r->src[0]->ne[2] : 65535);
    l->grid[1] = (uint32_t)(gp + gq);
    l->threads = 256;
    l->dst = (rf_tensor_ref){rn, RF_BIND_DST};
    for (i = 0; i < 3; ++i)
        if (r->src[i]) l->src[i] = (rf_tensor_ref){rn, (int16_t)i};
    for (i = 0; i < 8; ++i) l->iparams[i] = r->iparams[i], l->fparams[i] = r->fparams[i];
    if (p->dead) l->words[w++] = (rf_kargs_word){RF_KFIELD_SRC0_DATA, (rf_tensor_ref){RF_BIND_LENT, 0}, (long long)p->lent_at};
    if (q) {
        const int16_t qn = (int16_t)(q->node + 1);
        l->src[3] = (rf_tensor_ref){qn, 0};
        l->src[4] = (rf_tensor_ref){qn, RF_BIND_DST};
        if (q->dead) l->words[w++] = (rf_kargs_word){RF_KFIELD_SRC0_DATA + 3, (rf_tensor_ref){RF_BIND_LENT, 0}, (long long)q->lent_at};
        l->aux[0] = gp;
    }
    if (app) {
        l->words[w++] = (rf_kargs_word){RF_KFIELD_AUX0 + 1, (rf_tensor_ref){(int16_t)app_node, RF_BIND_DST}, 0};
        l->words[w++] = (rf_kargs_word){RF_KFIELD_AUX0 + 2, (rf_tensor_ref){(int16_t)app_node, 1}, 0};
        l->aux[3] = app->dst->nb[1];
        l->iparams[2] = app->dst->type;
    }
}

static int32_t claim_mmq_run(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *ls, int32_t max_launches,
                             int32_t *n_launches) {
    struct mr_seg segs[MR_MAX_SEGS];
    int group_of[MR_MAX_SEGS], nseg = 0, nout = 0, nread = 0, i, k, joined = 0, appends = 0, app_seg[2] = {-1, -1};
    const rf_tensor *outs[2 * MR_MAX_SEGS], *reads[1 + 3 * MR_MAX_SEGS];
    int out_seg[2 * MR_MAX_SEGS], out_product[2 * MR_MAX_SEGS];
    const rf_node *apps[2] = {NULL, NULL}, *f = g->nodes[first];
    uint64_t lent = 0;
    int32_t j = first, n = 0;
    int64_t M;
    if (!(pm_decode_settings() & PM_MMQ_JOIN) || !pm_nvidia(dev) || !rf_pack_matmul_tiles(dev, f, &segs[0].t)) return 0;
    M = f->src[1]->ne[1];
    while (nseg < MR_MAX_SEGS && j < g->n_nodes) {
        const rf_node *mm = g->nodes[j];
        struct mr_seg *s = &segs[nseg];
        if (mm->op != RF_OP_MATMUL || !rf_pack_matmul_tiles(dev, mm, &s->t)) break;
        if (mm != f && (!pm_same_shape(mm->src[1], f->src[1]) || mm->src[1]->data != f->src[1]->data ||
                        pm_act_block(mm->src[0]->type) != pm_act_block(f->src[0]->type)))
            break;
        s->mm = mm, s->node = j - first, s->dead = 0, s->lent_at = 0;
        s->rp = j + 1 < g->n_nodes && pm_rope_of_product(mm, g->nodes[j + 1]) ? g->nodes[j + 1] : NULL;
        ++nseg;
        j += s->rp ? 2 : 1;
    }
    /* Groups of one tile kernel (a Q4_K_M layer's V is often Q6_K), in node order. */
    for (i = 0; i < nseg; ++i) {
        group_of[i] = -1;
        for (k = 0; k < i; ++k)
            if (group_of[i] < 0 && group_of[k] == k && mr_joinable(&segs[k], &segs[i])) group_of[i] = k, joined = 1;
        if (group_of[i] < 0) group_of[i] = i;
    }
    if (!joined) return 0;
    /* What the run writes (in node order) and reads: the activations, weights, positions, factors. */
    reads[nread++] = f->src[1];
    for (i = 0; i < nseg; ++i) {
        outs[nout] = segs[i].mm->dst, out_seg[nout] = i, out_product[nout++] = 1;
        reads[nread++] = segs[i].mm->src[0];
        if (segs[i].rp) {
            outs[nout] = segs[i].rp->dst, out_seg[nout] = i, out_product[nout++] = 0;
            reads[nread++] = segs[i].rp->src[1];
            reads[nread++] = segs[i].rp->src[2];
        }
    }
    for (k = 0; k < nout; ++k) {
        for (i = 1; i < nread; ++i) /* not the activations: below */
            if (pm_overlap(outs[k], reads[i])) return 0;
        for (i = k + 1; i < nout; ++i) {
            if (!pm_overlap(outs[k], outs[i])) continue;
            if (out_product[k] && !out_product[i] && out_seg[i] == out_seg[k] && outs[i]->data == outs[k]->data) continue; /* rope in place */
            if (!out_product[k]) return 0; /* a rotation is read after the run */
            segs[out_seg[k]].dead = 1;
        }
    }
    for (i = 0; i < nseg; ++i) {
        const rf_tensor *d = segs[i].mm->dst;
        if (segs[i].dead) {
            if (!segs[i].rp || !pm_dense_f32(d)) return 0;
            segs[i].lent_at = lent;
            lent += (uint64_t)(d->ne[0] * d->ne[1] * 4 + 15) / 16 * 16;
        } else if (pm_overlap(d, f->src[1])) {
            return 0;
        }
    }
    if (lent && !rf_pack_launch_has(dev, offsetof(rf_fusion_launch, lent_bytes) + sizeof(uint64_t))) return 0;
    appends = (pm_decode_settings() & PM_MMQ_APPEND) && mr_find_appends(g, j, segs, nseg, M, outs, nout, reads, nread, apps, app_seg);
    /* Launches: one per group, then the rotations (the one that appends first: the kernel appends
     * its first tensor only), two in one where they agree. */
    {
        int ropes[MR_MAX_SEGS], nr = 0, pair;
        for (i = 0; i < nseg; ++i) {
            int idx[MR_MAX_SEGS], c = 0;
            if (group_of[i] != i) continue;
            for (k = i; k < nseg; ++k)
                if (group_of[k] == i) idx[c++] = k;
            if (n >= max_launches) return 0;
            mr_mmq_launch(&ls[n++], segs, idx, c, appends ? apps[1] : NULL, app_seg[1], (int)(j - first + (apps[1] == g->nodes[j] ? 0 : 1)));
        }
        for (i = 0; i < nseg; ++i)
            if (segs[i].rp) {
                if (appends && i == app_seg[0]) {
                    memmove(ropes + 1, ropes, (size_t)nr * sizeof *ropes);
                    ropes[0] = i, ++nr;
                } else {
                    ropes[nr++] = i;
                }
            }
        pair = nr == 2 && mr_same_rotation(segs[ropes[0]].rp, segs[ropes[1]].rp);
        for (i = 0; i < (pair ? 1 : nr); ++i) {
            const struct mr_seg *p = &segs[ropes[i]];
            const int app = appends && ropes[i] == app_seg[0];
            if (n >= max_launches) return 0;
            mr_rope_launch(&ls[n++], p, pair ? &segs[ropes[1]] : NULL, app ? apps[0] : NULL,
                           (int)(j - first + (apps[0] == g->nodes[j] ? 0 : 1)));
        }
    }
    ls[0].lent_bytes = lent;
    *n_launches = n;
    return j - first + (appends ? 2 : 0);
}

/* What a backend before 2.7 calls: it cannot run several launches, so the run stays unclaimed. */
static int32_t claim_one(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    (void)g, (void)first, (void)dev, (void)l;
    return 0;
}

const rf_fusion rf_fusion_mmq_run = {
    /* .struct_size    = */ sizeof(rf_fusion),
    /* .name           = */ "mmq_run",
    /* .kernel         = */ "rf_rope_f32",
    /* .first_op       = */ RF_OP_MATMUL,
    /* .claim          = */ claim_one,
    /* .host_run       = */ pm_host_mmq_run,
    /* .claim_launches = */ claim_mmq_run,
};
