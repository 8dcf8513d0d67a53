/* The "kv_append" fusion of ROCmForge's kernel packs: SET_ROWS(K pool) SET_ROWS(V pool), the two
 * appends of a layer's new K and V rows into f16/f32 cache pools, as one rf_set_rows2 launch
 * (kernels/kv_cache.hip): one thread per appended element, the K rows first. Decode of one sequence
 * never reaches it (the joined projections append there, projections.c); several sequences and
 * prompts do. */
#include <stdint.h>

#include "pack_fusions.h"
#include "pack_match.h"

#define THREADS 256

static int32_t claim_kv_append(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    const rf_node *k, *v;
    int64_t total, blocks;
    (void)dev;
    if (first + 1 >= g->n_nodes) return 0;
    k = g->nodes[first];
    v = g->nodes[first + 1];
    if (!pm_pool_append(k) || !pm_pool_append(v)) return 0;
    /* Both appends run at once: neither pool may overlap the other or anything either reads. */
    if (pm_overlap(k->dst, v->dst) || pm_overlap(k->dst, k->src[0]) || pm_overlap(k->dst, k->src[1]) || pm_overlap(k->dst, v->src[0]) ||
        pm_overlap(k->dst, v->src[1]) || pm_overlap(v->dst, k->src[0]) || pm_overlap(v->dst, k->src[1]) || pm_overlap(v->dst, v->src[0]) ||
        pm_overlap(v->dst, v->src[1]))
        return 0;
    total = k->src[0]->ne[0] * k->src[0]->ne[1] + v->src[0]->ne[0] * v->src[0]->ne[1];
    blocks = (total + THREADS - 1) / THREADS;
    l->grid[0] = (uint32_t)(blocks < 65536 ? blocks : 65536); /* the kernel strides over the rest */
    l->threads = THREADS;
    l->src[0] = (rf_tensor_ref){0, 0};
    l->src[1] = (rf_tensor_ref){0, 1};
    l->dst = (rf_tensor_ref){0, RF_BIND_DST};
    l->src[2] = (rf_tensor_ref){1, 0};
    l->src[3] = (rf_tensor_ref){1, 1};
    l->src[4] = (rf_tensor_ref){1, RF_BIND_DST};
    return 2;
}

static void append_rows(const rf_ktensor *x, const rf_ktensor *slots, const rf_ktensor *pool) {
    long long t, e;
    for (t = 0; t < x->ne[1]; ++t) {
        const float *xr = (const float *)((const char *)x->data + t * x->nb[1]);
        char *row = (char *)pool->data + (long long)((const int32_t *)slots->data)[t] * pool->nb[1];
        for (e = 0; e < x->ne[0]; ++e) {
            if (pool->type == RF_TYPE_F16) ((uint16_t *)row)[e] = pm_half_of(xr[e]);
            else ((float *)row)[e] = xr[e];
        }
    }
}

static int32_t host_kv_append(const rf_kargs *a, const rf_fusion_launch *l) {
    (void)l;
    append_rows(&a->src[0], &a->src[1], &a->dst);
    append_rows(&a->src[2], &a->src[3], &a->src[4]);
    return RF_OK;
}

const rf_fusion rf_fusion_kv_append = {
    /* .struct_size = */ sizeof(rf_fusion),
    /* .name        = */ "kv_append",
    /* .kernel      = */ "rf_set_rows2",
    /* .first_op    = */ RF_OP_SET_ROWS,
    /* .claim       = */ claim_kv_append,
    /* .host_run    = */ host_kv_append,
};
