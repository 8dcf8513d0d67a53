/* The "projections" fusion of ROCmForge's kernel packs: a layer's decode projections over one
 * token, MATMUL [ROPE] MATMUL [ROPE] [MATMUL [ROPE]] (K, V, Q with their rotations; three without
 * any where head norms come between the products and the ropes), then up to two
 * SET_ROWS appending a segment's final output to an f16/f32 pool (the K and V appends), as one
 * rf_mvq_proj launch (kernels/matmul_vec.hip; rf_mvq_proj_<type> where every weight has that type:
 * the registers of one block format, not of a switch over all): one grid over the matrices, each row
 * and rotation with rf_mvq_multi's arithmetic, the appends from the same warps. One launch
 * instead of up to five. The products and the rotations are written where the graph keeps them,
 * except a product whose bytes a later output of the run reuses (the executor recycles bytes
 * after a tensor's last reader, here its rope, which the kernel feeds from shared memory).
 * The kernel has more operands than the argument block's tensor slots: the outputs, pools and
 * slots go in by address (rf_fusion_launch.words, ABI 2.6). On NVIDIA the typed launch takes two
 * rows a warp (rf_mvq_proj2_<type>). */
#include "matmul_fusion.h"
#include "pack_fusions.h"
#include "pack_match.h"
#include "q8_dot.h"

struct seg { const rf_node *mm, *rp; };

/* The ropes of one launch agree: their angles (pm_same_angles) and head size. */
static int same_rope(const rf_node *a, const rf_node *b) { return pm_same_angles(a, b) && a->src[0]->ne[0] == b->src[0]->ne[0]; }

/* The final output of segment s: its rotation, else its product. */
static const rf_tensor *final_of(const struct seg *s) { return s->rp ? s->rp->dst : s->mm->dst; }

static int32_t claim_projections(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    struct seg segs[3];
    const rf_node *apps[2], *rope0 = NULL, *f = g->nodes[first];
    const rf_tensor *outs[6], *ins[7];
    int app_seg[2], nseg = 0, napp = 0, nout = 0, nin = 0, i, k, block, w = 0;
    int32_t j = first;
    int64_t blocks = 0;
    if (!pm_plain_matmul(f) || f->src[1]->ne[1] != 1) return 0;
    block = pm_act_in_block(f->src[0]->type);
    if (!block || rf_pack_matmul_form(dev, f) != RF_MATMUL_VECTOR) return 0;
    while (nseg < 3 && j < g->n_nodes) {
        const rf_node *mm = g->nodes[j], *rp;
        if (mm->op != RF_OP_MATMUL || !pm_plain_matmul(mm) || mm->src[1]->data != f->src[1]->data || mm->src[1]->ne[0] != f->src[1]->ne[0] ||
            mm->src[1]->ne[1] != 1 || mm->dst->ne[0] % 4 || mm->src[0]->ne[0] != f->src[0]->ne[0] || pm_act_in_block(mm->src[0]->type) != block ||
            rf_pack_matmul_form(dev, mm) != RF_MATMUL_VECTOR)
            break;
        rp = j + 1 < g->n_nodes && g->nodes[j + 1]->op == RF_OP_ROPE && pm_rope_of_product(mm, g->nodes[j + 1]) ? g->nodes[j + 1] : NULL;
        if (rp && rope0 && !same_rope(rp, rope0)) break;
        if (rp && !rope0) rope0 = rp;
        segs[nseg].mm = mm, segs[nseg].rp = rp, ++nseg;
        j += rp ? 2 : 1;
    }
    /* Without a rotation (Q / K head norms stand between the products and their ropes) only a run
     * of three: two matmuls of one vector and nothing else are gate / up's (gate_up_swiglu). */
    if (nseg < 2 || (!rope0 && nseg < 3)) return 0;
    /* Outputs in node order; inputs the kernel reads (the vector only for F16, else its q8_1 copy). */
    if (rope0) {
        ins[nin++] = rope0->src[1];
        ins[nin++] = rope0->src[2];
        ins[nin++] = rope0->src[3];
    }
    if (block == RF_ACT_IN_F32) ins[nin++] = f->src[1];
    for (i = 0; i < nseg; ++i) {
        outs[nout++] = segs[i].mm->dst;
        if (segs[i].rp) outs[nout++] = segs[i].rp->dst;
        ins[nin++] = segs[i].mm->src[0];
    }
    for (i = 0; i < nout; ++i)
        for (k = 0; k < nin; ++k)
            if (pm_overlap(outs[i], ins[k])) return 0;
    /* The appends: a pool overlaps nothing the launch reads or writes; the slots are read only. */
    while (napp < 2 && j < g->n_nodes && pm_pool_append(g->nodes[j])) {
        const rf_node *ap = g->nodes[j];
        const rf_tensor *src = ap->src[0], *pool = ap->dst, *slots = ap->src[1];
        int s = -1, ok;
        for (i = 0; i < nseg; ++i)
            if (src->data == final_of(&segs[i])->data && src->ne[1] == 1 && src->ne[0] == segs[i].mm->dst->ne[0]) s = i;
        ok = s >= 0 && pool->ne[0] >= src->ne[0] && !pm_overlap(pool, slots);
        for (i = 0; i < nout; ++i) ok = ok && !pm_overlap(pool, outs[i]) && !pm_overlap(slots, outs[i]);
        for (i = 0; i < nin; ++i) ok = ok && !pm_overlap(pool, ins[i]);
        for (i = 0; i < napp; ++i) ok = ok && !pm_overlap(pool, apps[i]->dst) && !pm_overlap(pool, apps[i]->src[1]) && !pm_overlap(apps[i]->dst, slots);
        if (!ok) break;
        apps[napp] = ap, app_seg[napp] = s, ++napp;
        ++j;
    }
    /* Bindings: weights src[0..nseg-1], positions (or the angles' rows, pm_rope_angles_slot) src[3],
     * factors src[4]; outputs by address
     * (dst.ne[s] = product or 0 when a later output reuses its bytes, dst.nb[s] = rotation or 0),
     * the pools in aux[0..1], their slots in aux[2..3], their row strides in dst.ne[3] / dst.nb[3]. */
    /* The kernel's segments: the rotated ones first (K, Q, then V). Blocks start in grid order, so
     * the first wave takes the rotations, whose cos / sin (fetched before rf_kernel_start) then
     * overlap the previous kernel, and the blocks that start later, after it, have none to fetch.
     * This mattered where the kernels evaluate the angles in double precision (graphs that give
     * positions only: those rotations cost a visible part of a step where blocks of a later wave
     * computed them, docs/notes/decode_latency.md); with the angles' rows it is a load. */
    int order[3], node_at[3], kseg_of[3], no = 0;
    for (i = 0, k = 0; i < nseg; ++i) { /* k: segment i's matmul node, relative to first */
        node_at[i] = k;
        k += segs[i].rp ? 2 : 1;
    }
    for (i = 0; i < nseg; ++i)
        if (segs[i].rp) order[no++] = i;
    for (i = 0; i < nseg; ++i)
        if (!segs[i].rp) order[no++] = i;
    for (no = 0; no < nseg; ++no) { /* no: the kernel's segment */
        const int s = order[no];      /* its segment in node order */
        const rf_tensor *prod = segs[s].mm->dst;
        const int16_t at = (int16_t)node_at[s];
        int dead = 0, o;
        kseg_of[s] = no;
        for (o = 0; o < nout && outs[o] != prod; ++o) {}
        for (++o; o < nout; ++o) dead = dead || pm_overlap(prod, outs[o]);
        l->src[no] = (rf_tensor_ref){at, 0};
        if (!dead) l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_NE0 + no, (rf_tensor_ref){at, RF_BIND_DST}, 0};
        if (segs[s].rp) l->words[w++] = (rf_kargs_word){RF_KFIELD_DST_NB0 + no, (rf_tensor_ref){(int16_t)(at + 1), RF_BIND_DST}, 0};
        if (rope0 && segs[s].rp == rope0) {
            l->src[3] = (rf_tensor_ref){(int16_t)(at + 1), pm_rope_angles_slot(rope0)};
            if (rope0->src[2]) l->src[4] = (rf_tensor_ref){(int16_t)(at + 1), 2};
        }
        blocks += prod->ne[0] / 4;
    }
    for (i = 0; i < napp; ++i) {
        const int16_t at = (int16_t)(k + i); /* the append's node, relative to first */
        l->words[w++] = (rf_kargs_word){RF_KFIELD_AUX0 + i, (rf_tensor_ref){at, RF_BIND_DST}, 0};
        l->words[w++] = (rf_kargs_word){RF_KFIELD_AUX0 + 2 + i, (rf_tensor_ref){at, 1}, 0};
        l->words[w++] = (rf_kargs_word){i == 0 ? RF_KFIELD_DST_NE0 + 3 : RF_KFIELD_DST_NB0 + 3, (rf_tensor_ref){RF_BIND_NONE, 0},
                                        apps[i]->dst->nb[1]};
        l->mv_proj.pool_segment[i] = kseg_of[app_seg[i]] + 1;
        l->mv_proj.pool_type[i] = apps[i]->dst->type;
    }
    if (blocks > 0x7fffffff) return 0;
    l->grid[0] = (uint32_t)blocks;
    l->threads = 128;
    l->mv_proj.n_segments = nseg;
    if (rope0) {
        l->mv_proj.n_rot = rope0->iparams[1];
        l->mv_proj.head_dim = (int32_t)rope0->src[0]->ne[0];
        l->mv_proj.freq_base = rope0->fparams[0];
        l->mv_proj.freq_scale = rope0->fparams[1];
    }
    l->act_in = (rf_tensor_ref){0, 1}; /* rf_kp_mv_proj: no prefetch flag (that slot is pool B's type) */
    l->act_in_block = block;
    l->q8_aux_stride = -1; /* one vector; every aux member holds a pool or its slots */
    int64_t rows_per_warp = 1;
    /* One weight type in every segment, or Q4_K / Q5_K with Q6_K: the kernel fixed to those. */
    {
        int types[3], nt = 0, t;
        for (i = 0; i < nseg; ++i) {
            for (t = 0; t < nt && types[t] != segs[i].mm->src[0]->type; ++t) {}
            if (t == nt) types[nt++] = segs[i].mm->src[0]->type;
        }
        const int64_t K = segs[0].mm->src[0]->ne[0]; /* every segment reads the one vector */
        if (nt <= 2) l->kernel = pm_proj_kernel(types[0], types[nt - 1], 1, K);
        /* Two rows a warp where every segment's rows fill whole blocks of 8 (NVIDIA packs): a
         * rotation pair within one warp, each piece of the vector read once for two rows. */
        if (nt <= 2 && pm_nvidia(dev)) {
            int whole = 1;
            const char *rows2 = pm_proj_kernel(types[0], types[nt - 1], 2, K);
            for (i = 0; i < nseg; ++i) whole = whole && segs[i].mm->dst->ne[0] % 8 == 0;
            if (whole && rows2) {
                l->kernel = rows2;
                rows_per_warp = 2;
                l->grid[0] = (uint32_t)(blocks / 2);
            }
        }
    }
    /* The weights' head into L2 while the norm before runs (a block: 4 warps of rows_per_warp rows
     * of the first segment). */
    l->mv_proj.prefetch_head_blocks = (int32_t)pm_prefetch_head(dev, 4 * rows_per_warp * segs[order[0]].mm->src[0]->nb[1], l->grid[0]);
    return j - first;
}

/* Element n of segment s's final output into the pools that append it (rf_mvq_proj's proj_append). */
static void append(const rf_kargs *a, int s, int64_t n, float v) {
    int p;
    for (p = 0; p < 2; ++p) {
        if (a->mv_proj.pool_segment[p] != s + 1) continue;
        char *row = (char *)(uintptr_t)a->aux[p] + (int64_t)((const int32_t *)(uintptr_t)a->aux[2 + p])[0] * (p == 0 ? a->dst.ne[3] : a->dst.nb[3]);
        if (a->mv_proj.pool_type[p] == RF_TYPE_F16) ((uint16_t *)row)[n] = pm_half_of(v);
        else ((float *)row)[n] = v;
    }
}

/* The launch on the host: every segment's rows as the kernels compute them, the rotations as
 * rope.hip's, the appends of the final outputs. */
static int32_t host_projections(const rf_kargs *a, const rf_fusion_launch *l) {
    const int f32_row = l->act_in_block == RF_ACT_IN_F32, nseg = a->mv_proj.n_segments, n_rot = a->mv_proj.n_rot;
    const int64_t D = a->mv_proj.head_dim;
    int s;
    int64_t n;
    if (!a->scratch || nseg < 2 || nseg > 3) return RF_ERR_INVALID;
    for (s = 0; s < nseg; ++s) {
        const rf_ktensor *w = &a->src[s];
        float *prod = (float *)(uintptr_t)(s == 0 ? a->dst.ne[0] : s == 1 ? a->dst.ne[1] : a->dst.ne[2]);
        float *rot = (float *)(uintptr_t)(s == 0 ? a->dst.nb[0] : s == 1 ? a->dst.nb[1] : a->dst.nb[2]);
        if (!f32_row && !pm_q8_dot_type(w->type)) return RF_ERR_INVALID;
        for (n = 0; n < w->ne[1]; n += 2) {
            const float x0 = pm_matmul_out(w->type, f32_row, (const unsigned char *)w->data + n * w->nb[1], (const unsigned char *)a->scratch, w->ne[0]);
            const float x1 = pm_matmul_out(w->type, f32_row, (const unsigned char *)w->data + (n + 1) * w->nb[1], (const unsigned char *)a->scratch, w->ne[0]);
            float y0 = x0, y1 = x1;
            if (prod) prod[n] = x0, prod[n + 1] = x1;
            if (rot) {
                const int64_t r = (n % D) / 2;
                if (r < n_rot / 2) pm_rope_pair(x0, x1, r, &a->src[3], 0, n_rot, a->mv_proj.freq_base, a->mv_proj.freq_scale, (const float *)a->src[4].data, &y0, &y1);
                rot[n] = y0, rot[n + 1] = y1;
            }
            append(a, s, n, y0);
            append(a, s, n + 1, y1);
        }
    }
    return RF_OK;
}

const rf_fusion rf_fusion_projections = {
    /* .struct_size = */ sizeof(rf_fusion),
    /* .name        = */ "projections",
    /* .kernel      = */ "rf_mvq_proj",
    /* .first_op    = */ RF_OP_MATMUL,
    /* .claim       = */ claim_projections,
    /* .host_run    = */ host_projections,
};
