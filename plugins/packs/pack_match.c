/* See pack_match.h. */
#include "pack_match.h"

#include <math.h>
#include <string.h>

void pm_quantize_q8_1(const float *x, int64_t n, int block, unsigned char *col) {
    int64_t b, i;
    float *pairs = (float *)(col + n);
    for (b = 0; b < n; b += block) {
        float amax = 0.f, d, f;
        for (i = b; i < b + block && i < n; ++i) amax = fmaxf(amax, fabsf(x[i]));
        d = amax / 127.f;
        f = amax > 0.f ? 127.f / amax : 0.f;
        for (i = b; i < b + block && i < n; i += 32) {
            int64_t j;
            int sum = 0;
            for (j = i; j < i + 32; ++j) {
                const int q = amax > 0.f ? (int)rintf(x[j] * f) : 0;
                col[j] = (unsigned char)(signed char)q;
                sum += q;
            }
            pairs[2 * (i / 32)] = d;
            pairs[2 * (i / 32) + 1] = d * (float)sum;
        }
    }
}

int pm_pool_append(const rf_node *n) {
    const rf_tensor *x, *s, *p;
    if (n->op != RF_OP_SET_ROWS || !n->src[0] || !n->src[1] || !n->dst) return 0;
    x = n->src[0], s = n->src[1], p = n->dst;
    if (x->type != RF_TYPE_F32 || x->nb[0] != 4 || x->ne[2] * x->ne[3] != 1 || x->ne[0] < 1 || x->ne[1] < 1) return 0;
    if (s->type != RF_TYPE_I32 || s->nb[0] != 4 || s->ne[0] != x->ne[1]) return 0;
    if ((p->type != RF_TYPE_F16 && p->type != RF_TYPE_F32) || p->ne[0] < x->ne[0] || p->nb[0] != (p->type == RF_TYPE_F16 ? 2 : 4))
        return 0;
    return x->ne[0] * x->ne[1] < ((int64_t)1 << 30);
}

static int is_row(const rf_tensor *t, int64_t K) { return t->ne[0] == K && t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1; }

int pm_match_norm_mul(const rf_graph *g, int32_t at, pm_norm_mul *m) {
    const rf_node *mul;
    if (at + 1 >= g->n_nodes) return 0;
    m->norm = g->nodes[at];
    mul = g->nodes[at + 1];
    if (m->norm->op != RF_OP_RMS_NORM || mul->op != RF_OP_MUL) return 0;
    m->x = m->norm->src[0], m->nd = m->norm->dst, m->md = mul->dst, m->w = mul->src[1];
    if (!pm_plain_f32(m->x) || !pm_plain_f32(m->nd) || !pm_plain_f32(m->md) || !pm_plain_f32(mul->src[0]) || !pm_plain_f32(m->w))
        return 0;
    return mul->src[0]->data == m->nd->data && pm_same_shape(mul->src[0], m->nd) && pm_same_shape(m->md, m->nd) &&
           pm_same_shape(m->x, m->nd) && is_row(m->w, m->x->ne[0]);
}

uint16_t pm_half_of(float f) {
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


void pm_pool_store(char *row, int type, int64_t e, float v) {
    if (type == RF_TYPE_F16) ((uint16_t *)row)[e] = pm_half_of(v);
    else ((float *)row)[e] = v;
}
