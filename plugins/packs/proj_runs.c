/* A layer's projections over several tokens as one claim of several launches (ABI 2.7):
 * MATMUL [ROPE] MATMUL [ROPE] [MATMUL [ROPE]] (K, V, Q with their rotations; or gate and up), then
 * optionally the K and V appends (two SET_ROWS). Two fusions of ROCmForge's kernel packs:
 *
 * "mmq_run", 5..64 tokens on the integer tensor-core tiles. The matrices whose tile launch is the
 * same kernel (rf_pack_device.matmul_tiles: weight type, column tile, K split) share one rf_mmq
 * launch (grid z = matrix), so a Q4_K_M layer's K and Q are one launch and its Q6_K V another; then
 * the rotations, two in one rf_rope_f32 launch where they agree (K + Q of 7B joined take less
 * than their two launches apart). The V append is written by V's matmul epilogue and the K append by the
 * rope: one launch fewer each.
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
 *
 * "cols_run", 2..8 tokens (16, 24, .. in chunks of 8) on the dp4a column kernels: each matrix one
 * rf_mvqn_<type>_<NC>f launch in graph order (its rope in the same launch, as matmul_rope.c; a
 * matrix without rope in the kernel's plain form, the bits of rf_mvqn_<type>_<NC>x2), the K and V
 * appends written by the launches of their matrices: the SET_ROWS launch after the run is saved.
 * Only the appends move (earlier): the pools overlap nothing the run reads or writes, and no later
 * output overlaps a final output the appends read. For 2..4 tokens, where every matrix's kernel
 * allows, the whole run is one rf_mvqn_proj_<type>_<NC> launch instead (cols_join_launch). */
#include <string.h>

#include "matmul_fusion.h"
#include "proj_runs_host.h"
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

/* A run at node `first`: its segments, what it writes (in node order) and reads (the activations,
 * weights, positions, factors), and the node after it (`end`). */
struct mr_run {
    struct mr_seg segs[MR_MAX_SEGS];
    int nseg, nout, nread;
    const rf_tensor *outs[2 * MR_MAX_SEGS], *reads[1 + 4 * MR_MAX_SEGS];
    int out_seg[2 * MR_MAX_SEGS], out_product[2 * MR_MAX_SEGS];
    int32_t end;
    int64_t M;
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

/* Two ropes one rf_rope_f32 launch does: the same tokens, angles (pm_same_angles) and mode. */
static int mr_same_rotation(const rf_node *p, const rf_node *q) {
    return pm_same_angles(p, q) && p->iparams[0] == q->iparams[0] && p->src[0]->ne[2] == q->src[0]->ne[2] &&
           p->src[0]->ne[3] == 1 && q->src[0]->ne[3] == 1;
}

/* The K and V appends after the run at node j: SET_ROWS of one segment's rotation (found[0]) and of
 * another's product without rope (found[1]), either order, each source that whole output seen as
 * [N, M] dense rows, into f16/f32 pools. The pools overlap each other, the slots and everything the
 * run reads or writes in no byte; the slots overlap none of the run's outputs (they are read while
 * those are written). */
static int mr_find_appends(const rf_graph *g, const struct mr_run *r, const rf_node *found[2], int seg_of[2]) {
    const int32_t j = r->end;
    int k, i, o;
    found[0] = found[1] = NULL;
    if (j + 1 >= g->n_nodes) return 0;
    for (k = 0; k < 2; ++k) {
        const rf_node *n = g->nodes[j + k];
        const rf_tensor *x = n->src[0];
        int seg = -1, slot;
        if (!pm_pool_append(n) || n->dst->nb[1] > 0x7fffffff) return 0;
        for (i = 0; i < r->nseg; ++i) {
            const rf_tensor *f = mr_final(&r->segs[i]);
            const int64_t N = f->ne[0] * f->ne[1] * f->ne[2] / r->M; /* the product's rows */
            if (x->data == f->data && x->ne[0] == N && x->ne[1] == r->M && x->nb[1] == 4 * N) seg = i;
        }
        if (seg < 0) return 0;
        slot = r->segs[seg].rp ? 0 : 1;
        if (found[slot]) return 0; /* two of one kind */
        found[slot] = n, seg_of[slot] = seg;
    }
    if (pm_overlap(found[0]->dst, found[1]->dst)) return 0;
    for (k = 0; k < 2; ++k) {
        const rf_tensor *pool = found[k]->dst;
        for (i = 0; i < 2; ++i)
            if (pm_overlap(pool, found[i]->src[1])) return 0;
        for (o = 0; o < r->nout; ++o)
            if (pm_overlap(pool, r->outs[o]) || pm_overlap(found[k]->src[1], r->outs[o])) return 0;
        for (i = 0; i < r->nread; ++i)
            if (pm_overlap(pool, r->reads[i])) return 0;
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
    for (i = 1; i < n; ++i) { /* kernels/matmul_mmq.hip mmq_segment(): weights src[1 + i], output aux[i], row stride out_col_bytes[i - 1] */
        const struct mr_seg *s = &segs[idx[i]];
        l->src[1 + i] = (rf_tensor_ref){(int16_t)s->node, 0};
        l->words[w++] = s->dead ? (rf_kargs_word){RF_KFIELD_AUX0 + i, (rf_tensor_ref){RF_BIND_LENT, 0}, (long long)s->lent_at}
                                : (rf_kargs_word){RF_KFIELD_AUX0 + i, (rf_tensor_ref){(int16_t)s->node, RF_BIND_DST}, 0};
        l->mmq.out_col_bytes[i - 1] = (int32_t)s->mm->dst->nb[1];
    }
    l->mmq.no_row_prefetch = n > 1 ? 1 : s0->t.tuning.no_row_prefetch; /* the L2 prefetch reads src[0]'s rows: one matrix only */
    l->mmq.prefetch_window = s0->t.tuning.prefetch_window;
    l->mmq.bulk_copy = s0->t.tuning.bulk_copy;
    for (i = 0; i < n && app; ++i) { /* mmq_store(): the V append, column m into pool row slots[m] */
        if (idx[i] != app_seg) continue;
        l->words[w++] = (rf_kargs_word){RF_KFIELD_AUX0 + 3, (rf_tensor_ref){(int16_t)app_node, RF_BIND_DST}, 0};
        l->src[4] = (rf_tensor_ref){(int16_t)app_node, 1};
        l->mmq.pool_row_bytes = (int32_t)app->dst->nb[1];
        l->mmq.pool_type = app->dst->type;
        l->mmq.append_segment = i + 1;
    }
    l->act_in = (rf_tensor_ref){(int16_t)s0->node, 1};
    l->act_in_block = pm_act_block(s0->mm->src[0]->type);
    l->q8_aux_stride = 0;
}

/* One rf_rope_f32 launch of segment p's rope (x from lent scratch when its product is dead), with
 * segment q's as the second tensor where q >= 0 (aux[0] = p's head groups), and the K append
 * (kernels/rope.hip aux[1..3], rope.pool_type) when app is given. */
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
    l->src[1] = (rf_tensor_ref){rn, pm_rope_angles_slot(r)}; /* positions, or the angles' rows */
    /* The rope node's parameters as they are: rf_kp_rope's mode, n_rot and freq_* sit at its slots. */
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
        l->rope.pool_type = app->dst->type;
    }
}

/* Whether matmul mm can be a segment of the run: on the tiles (`tiles`, *t = its tile launch) or on
 * the column kernels (two rows per warp: an even row count; whether a launch covers its columns,
 * which all segments share, pm_cols_launch says). */
static int mr_takes(const rf_pack_device *dev, int tiles, const rf_node *mm, rf_matmul_tiles *t) {
    if (mm->op != RF_OP_MATMUL) return 0;
    if (tiles) return rf_pack_matmul_tiles(dev, mm, t);
    return rf_pack_matmul_form(dev, mm) == RF_MATMUL_COLUMNS && pm_plain_matmul(mm) && mm->dst->ne[0] % 2 == 0;
}

/* The segments of the run at `first` (matmuls of one activation tensor and q8_1 block, each with
 * the rope over its product when one follows) and what they write and read; 0 where fewer than two.
 * No output may overlap a weight or a rope's positions / factors / angles (the activations are checked by
 * each fusion). */
static int mr_gather(const rf_graph *g, int32_t first, const rf_pack_device *dev, int tiles, struct mr_run *r) {
    const rf_node *f = g->nodes[first];
    int i, k;
    int32_t j = first;
    r->nseg = r->nout = r->nread = 0;
    r->M = f->src[1] ? f->src[1]->ne[1] : 0;
    while (r->nseg < MR_MAX_SEGS && j < g->n_nodes) {
        const rf_node *mm = g->nodes[j];
        struct mr_seg *s = &r->segs[r->nseg];
        if (!mr_takes(dev, tiles, mm, &s->t)) break;
        if (mm != f && (!pm_same_shape(mm->src[1], f->src[1]) || mm->src[1]->data != f->src[1]->data ||
                        pm_act_block(mm->src[0]->type) != pm_act_block(f->src[0]->type)))
            break;
        s->mm = mm, s->node = j - first, s->dead = 0, s->lent_at = 0;
        s->rp = j + 1 < g->n_nodes && pm_rope_of_product(mm, g->nodes[j + 1]) ? g->nodes[j + 1] : NULL;
        ++r->nseg;
        j += s->rp ? 2 : 1;
    }
    r->end = j;
    if (r->nseg < 2) return 0;
    r->reads[r->nread++] = f->src[1];
    for (i = 0; i < r->nseg; ++i) {
        const struct mr_seg *s = &r->segs[i];
        r->outs[r->nout] = s->mm->dst, r->out_seg[r->nout] = i, r->out_product[r->nout++] = 1;
        r->reads[r->nread++] = s->mm->src[0];
        if (s->rp) {
            r->outs[r->nout] = s->rp->dst, r->out_seg[r->nout] = i, r->out_product[r->nout++] = 0;
            r->reads[r->nread++] = s->rp->src[1];
            r->reads[r->nread++] = s->rp->src[2];
            r->reads[r->nread++] = s->rp->src[3];
        }
    }
    for (k = 0; k < r->nout; ++k)
        for (i = 1; i < r->nread; ++i) /* not the activations */
            if (pm_overlap(r->outs[k], r->reads[i])) return 0;
    return 1;
}

/* Node index (relative to the claim's first) of append node `app`, one of the two after the run. */
static int mr_app_node(const rf_graph *g, int32_t first, const struct mr_run *r, const rf_node *app) {
    return (int)(r->end - first + (app == g->nodes[r->end] ? 0 : 1));
}

static int32_t claim_mmq_run(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *ls, int32_t max_launches,
                             int32_t *n_launches) {
    struct mr_run run;
    struct mr_seg *segs = run.segs;
    int group_of[MR_MAX_SEGS], i, k, joined = 0, appends = 0, app_seg[2] = {-1, -1};
    const rf_node *apps[2] = {NULL, NULL}, *f = g->nodes[first];
    uint64_t lent = 0;
    int32_t n = 0;
    if (!pm_nvidia(dev) || !mr_gather(g, first, dev, 1, &run)) return 0;
    /* Groups of one tile kernel (a Q4_K_M layer's V is often Q6_K), in node order. */
    for (i = 0; i < run.nseg; ++i) {
        group_of[i] = -1;
        for (k = 0; k < i; ++k)
            if (group_of[i] < 0 && group_of[k] == k && mr_joinable(&segs[k], &segs[i])) group_of[i] = k, joined = 1;
        if (group_of[i] < 0) group_of[i] = i;
    }
    if (!joined) return 0;
    for (k = 0; k < run.nout; ++k)
        for (i = k + 1; i < run.nout; ++i) {
            if (!pm_overlap(run.outs[k], run.outs[i])) continue;
            if (run.out_product[k] && !run.out_product[i] && run.out_seg[i] == run.out_seg[k] && run.outs[i]->data == run.outs[k]->data)
                continue; /* rope in place */
            if (!run.out_product[k]) return 0; /* a rotation is read after the run */
            segs[run.out_seg[k]].dead = 1;
        }
    for (i = 0; i < run.nseg; ++i) {
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
    appends = mr_find_appends(g, &run, apps, app_seg);
    /* Launches: one per group, then the rotations (the one that appends first: the kernel appends
     * its first tensor only), two in one where they agree. */
    {
        int ropes[MR_MAX_SEGS], nr = 0, pair;
        for (i = 0; i < run.nseg; ++i) {
            int idx[MR_MAX_SEGS], c = 0;
            if (group_of[i] != i) continue;
            for (k = i; k < run.nseg; ++k)
                if (group_of[k] == i) idx[c++] = k;
            if (n >= max_launches) return 0;
            mr_mmq_launch(&ls[n], segs, idx, c, appends ? apps[1] : NULL, app_seg[1], appends ? mr_app_node(g, first, &run, apps[1]) : 0);
            /* The groups read the same activations and write their own outputs (a dead product into
             * its own part of the lent scratch): each may run beside the one before (ABI 2.8). */
            if (n > 0 && rf_pack_launch_has(dev, offsetof(rf_fusion_launch, beside_previous) + sizeof(uint32_t)))
                ls[n].beside_previous = 1;
            ++n;
        }
        for (i = 0; i < run.nseg; ++i)
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
            mr_rope_launch(&ls[n++], p, pair ? &segs[ropes[1]] : NULL, app ? apps[0] : NULL, app ? mr_app_node(g, first, &run, apps[0]) : 0);
        }
    }
    ls[0].lent_bytes = lent;
    *n_launches = n;
    return run.end - first + (appends ? 2 : 0);
}

/* Segment s's rf_mvqn_<type>_<NC>f launch: its rope form (with the rope) or plain form, and the
 * append of its final output when app is given (node app_node). */
static int mr_cols_launch(rf_fusion_launch *l, const rf_pack_device *dev, const struct mr_seg *s, const rf_node *app, int app_node) {
    if (!pm_cols_launch(l, dev, s->mm, s->rp, (int16_t)s->node)) return 0;
    if (app) {
        l->src[4] = (rf_tensor_ref){(int16_t)app_node, RF_BIND_DST};
        l->words[0] = (rf_kargs_word){RF_KFIELD_AUX0 + 2, (rf_tensor_ref){(int16_t)app_node, 1}, 0};
        l->mv.append = 1;
    }
    return 1;
}

/* The run as one rf_mvqn_proj_<type>_<NC> launch (kernels/matmul_vec.hip) where that kernel takes
 * it: 2..4 tokens, weight types of one kernel (pm_proj_cols_kernel), every matrix's rows a multiple
 * of 8, the ropes agreeing (one cos / sin per pair and column). Every output is written at once, so
 * a product that a later output overlaps is not written (the executor reuses its bytes after its
 * rope, the product's last reader); any other overlap between outputs declines. The appends read
 * the final outputs from registers. */
static int cols_join_launch(const rf_graph *g, int32_t first, const struct mr_run *r, const rf_node *const apps[2],
                            const int app_seg[2], rf_fusion_launch *l) {
    const rf_node *rope0 = NULL;
    int types[2] = {0, 0}, nt = 0, dead[MR_MAX_SEGS] = {0}, i, k, w = 0;
    int64_t blocks = 0;
    for (i = 0; i < r->nseg; ++i) {
        const struct mr_seg *s = &r->segs[i];
        const int t = s->mm->src[0]->type;
        if (s->mm->dst->ne[0] % 8) return 0;
        if (nt == 0 || (t != types[0] && (nt == 1 || t != types[1]))) {
            if (nt == 2) return 0;
            types[nt++] = t;
        }
        if (s->rp && rope0 && (!mr_same_rotation(rope0, s->rp) || rope0->src[0]->ne[0] != s->rp->src[0]->ne[0])) return 0;
        if (s->rp && !rope0) rope0 = s->rp;
        blocks += s->mm->dst->ne[0] / 8;
    }
    if (blocks > 0x7fffffff || !(l->kernel = pm_proj_cols_kernel(types[0], types[nt - 1], r->M))) return 0;
    for (k = 0; k < r->nout; ++k)
        for (i = k + 1; i < r->nout; ++i) {
            if (!pm_overlap(r->outs[k], r->outs[i])) continue;
            if (!r->out_product[k] || !r->segs[r->out_seg[k]].rp) return 0;
            dead[r->out_seg[k]] = 1;
        }
    for (i = 0; i < r->nseg; ++i) { /* weights src[i], product dst.ne[i], rotation dst.nb[i] */
        const struct mr_seg *s = &r->segs[i];
        const int16_t rn = (int16_t)(s->node + 1);
        l->src[i] = (rf_tensor_ref){(int16_t)s->node, 0};
        if (!dead[i]) l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_NE0 + i, (rf_tensor_ref){(int16_t)s->node, RF_BIND_DST}, 0};
        if (s->rp) l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_NB0 + i, (rf_tensor_ref){rn, RF_BIND_DST}, 0};
        if (s->rp && s->rp == rope0) {
            l->src[3] = (rf_tensor_ref){rn, pm_rope_angles_slot(rope0)};
            if (rope0->src[2]) l->src[4] = (rf_tensor_ref){rn, 2};
        }
    }
    { /* pool A (the rotated segment's append): aux[1], slots aux[3], row stride dst.nb[3]; pool B
       * (the other's): aux[2], slots dst.ne[3], row stride mvn_proj.pool_b_row_bytes */
        const int16_t na = (int16_t)mr_app_node(g, first, r, apps[0]), nb = (int16_t)mr_app_node(g, first, r, apps[1]);
        l->words[w++] = (rf_kargs_word){RF_KFIELD_AUX0 + 1, (rf_tensor_ref){na, RF_BIND_DST}, 0};
        l->words[w++] = (rf_kargs_word){RF_KFIELD_AUX0 + 3, (rf_tensor_ref){na, 1}, 0};
        l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_NB0 + 3, (rf_tensor_ref){RF_BIND_NONE, 0}, apps[0]->dst->nb[1]};
        l->words[w++] = (rf_kargs_word){RF_KFIELD_AUX0 + 2, (rf_tensor_ref){nb, RF_BIND_DST}, 0};
        l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_NE0 + 3, (rf_tensor_ref){nb, 1}, 0};
        l->mvn_proj.pool_b_row_bytes = (int32_t)apps[1]->dst->nb[1];
        l->mvn_proj.pool_segment[0] = app_seg[0] + 1, l->mvn_proj.pool_segment[1] = app_seg[1] + 1;
        l->mvn_proj.pool_type[0] = apps[0]->dst->type, l->mvn_proj.pool_type[1] = apps[1]->dst->type;
    }
    if (rope0) {
        l->mvn_proj.n_rot = rope0->iparams[1];
        l->mvn_proj.head_dim = (int32_t)rope0->src[0]->ne[0];
        l->mvn_proj.freq_base = rope0->fparams[0], l->mvn_proj.freq_scale = rope0->fparams[1];
    }
    l->mvn_proj.n_segments = r->nseg;
    l->grid[0] = (uint32_t)blocks;
    l->threads = 128;
    l->act_in = (rf_tensor_ref){0, 1};
    l->act_in_block = pm_act_block(types[0]);
    l->q8_aux_stride = 0;
    return 1;
}

static int32_t claim_cols_run(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *ls, int32_t max_launches,
                              int32_t *n_launches) {
    struct mr_run run;
    const rf_node *apps[2] = {NULL, NULL};
    int app_seg[2] = {-1, -1}, i, k;
    if (!pm_nvidia(dev) || !mr_gather(g, first, dev, 0, &run) || run.nseg > max_launches) return 0;
    /* The launches keep the graph's order; only the appends move earlier, so no later output may
     * overlap a final output they read (nor any rotation, read after the run). */
    for (k = 0; k < run.nout; ++k) {
        const struct mr_seg *s = &run.segs[run.out_seg[k]];
        if (run.out_product[k] && s->rp) continue; /* a product its own rope replaced is dead */
        for (i = k + 1; i < run.nout; ++i)
            if (pm_overlap(run.outs[k], run.outs[i])) return 0;
    }
    if (!mr_find_appends(g, &run, apps, app_seg)) return 0; /* nothing to gain without them */
    if (cols_join_launch(g, first, &run, apps, app_seg, &ls[0])) {
        *n_launches = 1;
        return run.end - first + 2;
    }
    for (i = 0; i < run.nseg; ++i) {
        const int a = i == app_seg[0] ? 0 : i == app_seg[1] ? 1 : -1;
        if (!mr_cols_launch(&ls[i], dev, &run.segs[i], a >= 0 ? apps[a] : NULL, a >= 0 ? mr_app_node(g, first, &run, apps[a]) : 0)) return 0;
    }
    *n_launches = run.nseg;
    return run.end - first + 2;
}

/* What a backend before 2.7 calls: it cannot run several launches, so the run stays unclaimed. */
static int32_t claim_one(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    (void)g, (void)first, (void)dev, (void)l;
    return 0;
}

const rf_fusion rf_fusion_mmq_run = {
    /* .struct_size    = */ sizeof(rf_fusion),
    /* .name           = */ "mmq_run",
    /* .kernel         = */ "rf_rope_f32", /* each launch names its own; this one is in every arch's pack */
    /* .first_op       = */ RF_OP_MATMUL,
    /* .claim          = */ claim_one,
    /* .host_run       = */ pm_host_mmq_run,
    /* .claim_launches = */ claim_mmq_run,
};

const rf_fusion rf_fusion_cols_run = {
    /* .struct_size    = */ sizeof(rf_fusion),
    /* .name           = */ "cols_run",
    /* .kernel         = */ "rf_mvq_multi", /* each launch names its own; this one is in every arch's pack */
    /* .first_op       = */ RF_OP_MATMUL,
    /* .claim          = */ claim_one,
    /* .host_run       = */ pm_host_cols_run,
    /* .claim_launches = */ claim_cols_run,
};
