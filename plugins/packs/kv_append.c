/* The "kv_append" fusion of ROCmForge's kernel packs: SET_ROWS(K pool) SET_ROWS(V pool), the two
 * appends of a layer's new K and V rows into f16/f32 cache pools, as one rf_set_rows2 launch
 * (kernels/kv_cache.hip): one thread per appended element, the K rows first. Decode of one sequence
 * never reaches it (the backend's own projection fusion appends there); several sequences and
 * prompts do. */
#include <stdint.h>
#include <string.h>

#include "pack_fusions.h"
#include "pack_match.h"

#define THREADS 256

/* A SET_ROWS the kernel covers: dense f32 rows x [E, T], i32 slots [T], an f16/f32 pool whose
 * rows hold at least E elements; E * T within 32 bits (the kernel's element index). */
static int pool_append(const rf_node *n) {
    const rf_tensor *x, *s, *p;
    if (n->op != RF_OP_SET_ROWS || !n->src[0] || !n->src[1] || !n->dst) return 0;
    x = n->src[0], s = n->src[1], p = n->dst;
    if (x->type != RF_TYPE_F32 || x->nb[0] != 4 || x->ne[2] * x->ne[3] != 1 || x->ne[0] < 1 || x->ne[1] < 1) return 0;
    if (s->type != RF_TYPE_I32 || s->nb[0] != 4 || s->ne[0] != x->ne[1]) return 0;
    if ((p->type != RF_TYPE_F16 && p->type != RF_TYPE_F32) || p->ne[0] < x->ne[0] || p->nb[0] != (p->type == RF_TYPE_F16 ? 2 : 4))
        return 0;
    return x->ne[0] * x->ne[1] < ((int64_t)1 << 30);
}

static int32_t claim_kv_append(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    const rf_node *k, *v;
    int64_t total, blocks;
    (void)dev;
    if (first + 1 >= g->n_nodes) return 0;
    k = g->nodes[first];
    v = g->nodes[first + 1];
    if (!pool_append(k) || !pool_append(v)) return 0;
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

/* IEEE binary16 of f, rounded to nearest even (the kernels' f2h; pack-check compares with the CPU
 * backend's SET_ROWS). */
static uint16_t half_of(float f) {
    uint32_t x, sign, mag, e, m, q, rest;
    memcpy(&x, &f, 4);
    sign = (x >> 16) & 0x8000u;
    mag = x & 0x7fffffffu;
    if (mag >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0)); /* inf, nan */
    if (mag >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);                                      /* overflows */
    e = mag >> 23;
    if (e < 113) { /* a subnormal half (or zero): the value in units of 2^-24 */
        if (e < 102) return (uint16_t)sign;
        m = (mag & 0x7fffffu) | 0x800000u;
        q = m >> (126 - e);
        rest = m & ((1u << (126 - e)) - 1);
        if (rest > (1u << (125 - e)) || (rest == (1u << (125 - e)) && (q & 1))) ++q;
        return (uint16_t)(sign | q);
    }
    q = ((e - 112) << 10) | ((mag >> 13) & 0x3ffu);
    rest = mag & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (q & 1))) ++q; /* a carry into the exponent is right */
    return (uint16_t)(sign | q);
}

static void append_rows(const rf_ktensor *x, const rf_ktensor *slots, const rf_ktensor *pool) {
    long long t, e;
    for (t = 0; t < x->ne[1]; ++t) {
        const float *xr = (const float *)((const char *)x->data + t * x->nb[1]);
        char *row = (char *)pool->data + (long long)((const int32_t *)slots->data)[t] * pool->nb[1];
        for (e = 0; e < x->ne[0]; ++e) {
            if (pool->type == RF_TYPE_F16) ((uint16_t *)row)[e] = half_of(xr[e]);
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
