/* The "swiglu_q8" fusion of ROCmForge's kernel packs: a SWIGLU whose product a matmul on the
 * integer tensor cores or the dp4a column kernels reads next (batched decode, prefill) computed by
 * rf_swiglu_q8_1 (kernels/quantize_act.hip), which also writes the product's q8_1 columns when
 * the backend lends them (ABI 2.4): the matmul then skips its own quantizing launch. Lent none,
 * the kernel writes the product only, as rf_swiglu_f32 would. */
#include <math.h>

#include "pack_fusions.h"
#include "pack_match.h"

static int32_t claim_swiglu_q8(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    const rf_node *sw = g->nodes[first];
    const rf_tensor *u = sw->src[0], *v = sw->src[1], *s = sw->dst;
    int64_t K, rows;
    if (!pm_launch_has_q8(dev) || first + 1 >= g->n_nodes || g->nodes[first + 1]->op != RF_OP_MATMUL) return 0;
    if (!pm_plain_f32(u) || !pm_plain_f32(v) || !pm_plain_f32(s) || !pm_same_shape(u, s) || !pm_same_shape(v, s)) return 0;
    K = s->ne[0], rows = s->ne[1];
    if (s->ne[2] * s->ne[3] != 1 || K % 32 || rows < 1 || rows > 65535 || !pm_rows16(u) || !pm_rows16(v) || !pm_rows16(s)) return 0;
    /* Each lane reads its eight elements of both inputs before writing them: the product may
     * replace an input exactly (same rows), nothing else may overlap. */
    if ((pm_overlap(s, u) && (s->data != u->data || s->nb[1] != u->nb[1])) || (pm_overlap(s, v) && (s->data != v->data || s->nb[1] != v->nb[1])))
        return 0;
    l->grid[0] = (uint32_t)((K + 2047) / 2048); /* 8 warps x 256 elements per block */
    l->grid[2] = (uint32_t)rows;
    l->threads = 256;
    l->src[0] = (rf_tensor_ref){0, 0};
    l->src[1] = (rf_tensor_ref){0, 1};
    l->dst = (rf_tensor_ref){0, RF_BIND_DST};
    l->q8_of = l->dst; /* the kernel's q8_1 arguments: aux[0] stride (0: none), aux[1] block */
    l->q8_aux_stride = 0;
    l->q8_aux_block = 1;
    return 1;
}

static int32_t host_swiglu_q8(const rf_kargs *a, const rf_fusion_launch *l) {
    const int64_t K = a->dst.ne[0], rows = a->dst.ne[1];
    int64_t r, i;
    for (r = 0; r < rows; ++r) {
        const float *u = (const float *)pm_row(&a->src[0], r), *v = (const float *)pm_row(&a->src[1], r);
        float *s = (float *)pm_row(&a->dst, r);
        for (i = 0; i < K; ++i) s[i] = (u[i] / (1.f + expf(-u[i]))) * v[i];
        if (a->scratch && a->aux[l->q8_aux_stride])
            pm_quantize_q8_1(s, K, (int)a->aux[l->q8_aux_block], (unsigned char *)a->scratch + r * a->aux[l->q8_aux_stride]);
    }
    return RF_OK;
}

const rf_fusion rf_fusion_swiglu_q8 = {
    /* .struct_size = */ sizeof(rf_fusion),
    /* .name        = */ "swiglu_q8",
    /* .kernel      = */ "rf_swiglu_q8_1",
    /* .first_op    = */ RF_OP_SWIGLU,
    /* .claim       = */ claim_swiglu_q8,
    /* .host_run    = */ host_swiglu_q8,
};
