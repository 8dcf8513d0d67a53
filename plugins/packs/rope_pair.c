/* The "rope_pair" fusion of ROCmForge's kernel packs: ROPE(K) ROPE(Q) [SET_ROWS(K pool)], a
 * layer's two rotations with the same angles and K's append, as one rf_rope_f32 launch
 * (kernels/rope.hip: Q's heads as the launch's second tensor, aux[0] = K's head groups; the
 * append through aux[1..3]). Layers with Q / K head norms (Qwen 3, Gemma 3) reach it: their norms
 * stand between the products and the ropes, so the projections fusion cannot take the ropes
 * (the graph puts both norms first, then the two ropes and K's append). Each pair is rotated as
 * by the rope's own launch: the same floats. */
#include "matmul_fusion.h"
#include "pack_fusions.h"
#include "pack_match.h"
#include "proj_runs_host.h"

static int32_t claim_rope_pair(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    const rf_node *k, *q, *ap = NULL;
    const rf_tensor *kd, *qd;
    int64_t gk, gq;
    int i, w = 0;
    (void)dev;
    if (first + 1 >= g->n_nodes) return 0;
    k = g->nodes[first], q = g->nodes[first + 1];
    if (!pm_plain_rope(k) || !pm_plain_rope(q) || !pm_same_angles(k, q) || k->iparams[0] != q->iparams[0] ||
        k->src[0]->ne[2] != q->src[0]->ne[2])
        return 0;
    kd = k->dst, qd = q->dst;
    /* Both run at once, head groups in any order: neither writes what the other reads or writes. */
    if (pm_overlap(kd, q->src[0]) || pm_overlap(qd, k->src[0]) || pm_overlap(kd, qd)) return 0;
    for (i = 1; i < 4; ++i)
        if (k->src[i] && (pm_overlap(kd, k->src[i]) || pm_overlap(qd, k->src[i]))) return 0;
    /* K's append: its whole rotation as [D * H, T] rows, into a pool that overlaps nothing here. */
    if (first + 2 < g->n_nodes && pm_pool_append(g->nodes[first + 2])) {
        const rf_node *a = g->nodes[first + 2];
        const rf_tensor *x = a->src[0], *pool = a->dst, *slots = a->src[1];
        int ok = x->data == kd->data && x->ne[0] == kd->ne[0] * kd->ne[1] && x->ne[1] == kd->ne[2] && x->nb[1] == kd->nb[2] &&
                 !pm_overlap(pool, slots) && !pm_overlap(pool, kd) && !pm_overlap(pool, qd) && !pm_overlap(pool, k->src[0]) &&
                 !pm_overlap(pool, q->src[0]) && !pm_overlap(slots, kd) && !pm_overlap(slots, qd);
        for (i = 1; i < 4; ++i) ok = ok && !(k->src[i] && pm_overlap(pool, k->src[i]));
        if (ok) ap = a;
    }
    gk = (k->src[0]->ne[1] + 7) / 8, gq = (q->src[0]->ne[1] + 7) / 8;
    if (gk + gq > 65535) return 0;
    l->grid[0] = (uint32_t)(k->src[0]->ne[2] < 65535 ? k->src[0]->ne[2] : 65535);
    l->grid[1] = (uint32_t)(gk + gq);
    l->threads = 256;
    l->dst = (rf_tensor_ref){0, RF_BIND_DST};
    l->src[0] = (rf_tensor_ref){0, 0};
    l->src[1] = (rf_tensor_ref){0, pm_rope_angles_slot(k)}; /* positions, or the angles' rows */
    if (k->src[2]) l->src[2] = (rf_tensor_ref){0, 2};
    l->src[3] = (rf_tensor_ref){1, 0};
    l->src[4] = (rf_tensor_ref){1, RF_BIND_DST};
    l->aux[0] = gk;
    /* The rope node's parameters as they are: rf_kp_rope's mode, n_rot and freq_* sit at its slots. */
    for (i = 0; i < 8; ++i) l->iparams[i] = k->iparams[i], l->fparams[i] = k->fparams[i];
    if (ap) {
        l->words[w++] = (rf_kargs_word){RF_KFIELD_AUX0 + 1, (rf_tensor_ref){2, RF_BIND_DST}, 0};
        l->words[w++] = (rf_kargs_word){RF_KFIELD_AUX0 + 2, (rf_tensor_ref){2, 1}, 0};
        l->aux[3] = ap->dst->nb[1];
        l->rope.pool_type = ap->dst->type;
    }
    return ap ? 3 : 2;
}

const rf_fusion rf_fusion_rope_pair = {
    /* .struct_size = */ sizeof(rf_fusion),
    /* .name        = */ "rope_pair",
    /* .kernel      = */ "rf_rope_f32",
    /* .first_op    = */ RF_OP_ROPE,
    /* .claim       = */ claim_rope_pair,
    /* .host_run    = */ pm_host_rope,
};
