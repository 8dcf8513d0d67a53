/* The "matmul_rope" fusion of ROCmForge's kernel packs: a decode projection and the ROPE NORMAL
 * over its product, MATMUL ROPE (the K and Q projections of a layer whose projections the
 * backend does not join), as one launch that writes the product and its rotation
 * (kernels/matmul_vec.hip): one activation row on rf_mvq_multi's rope form, 2..8 rows (16, 24,
 * ... in chunks of 8) on rf_mvqn_<type>_<NC>f's, each warp two rows of the product, i.e. one
 * rotation pair. The activations are read as the backend lends them (ABI 2.6: q8_1 columns in
 * the weight type's block, the f32 row for F16), so the product has the floats of the unfused
 * matmul, and the rotation is rope.hip's (the same cos / sin and rounding). */
#include <math.h>

#include "matmul_fusion.h"
#include "pack_fusions.h"
#include "pack_match.h"
#include "q8_dot.h"

/* A ROPE NORMAL over the whole product of mm, one token per activation row: heads of D elements
 * (even), dense, the positions one i32 per token, the frequency factors f32 (or none). The
 * rotated rows may replace the product exactly, or lie on the matmul's input vector for
 * quantized weights (the kernels read only its q8_1 copy, made before the launch); no other
 * overlap. */
static int rope_of_product(const rf_node *mm, const rf_node *rp) {
    const rf_tensor *md = mm->dst, *rx = rp->src[0], *rd = rp->dst, *pos = rp->src[1], *ff = rp->src[2];
    const int64_t N = md->ne[0], M = md->ne[1];
    int64_t D;
    const int n_rot = rp->iparams[1];
    if (rp->op != RF_OP_ROPE || rp->iparams[0] != RF_ROPE_NORMAL || !rx || !rd || !pos) return 0;
    D = rx->ne[0];
    if (rx->data != md->data || !pm_dense_f32(rx) || !pm_dense_f32(rd) || !pm_same_shape(rx, rd)) return 0;
    if (rx->ne[0] * rx->ne[1] != N || rx->ne[2] != M || rx->ne[3] != 1 || N % 4 || D % 2) return 0;
    if (pos->type != RF_TYPE_I32 || pos->ne[0] != M || pos->ne[1] * pos->ne[2] * pos->ne[3] != 1 || pos->nb[0] != 4) return 0;
    if (n_rot <= 0 || n_rot % 2 || n_rot > D) return 0;
    if (ff && (ff->type != RF_TYPE_F32 || ff->nb[0] != 4 || ff->ne[0] * ff->ne[1] * ff->ne[2] * ff->ne[3] < n_rot / 2)) return 0;
    if ((pm_overlap(rd, md) && rd->data != md->data) || pm_overlap(rd, mm->src[0]) || pm_overlap(rd, pos) || pm_overlap(rd, ff))
        return 0;
    return mm->src[0]->type != RF_TYPE_F16 || !pm_overlap(rd, mm->src[1]); /* F16: the kernel reads x itself */
}

static int32_t claim_matmul_rope(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    const rf_node *mm, *rp;
    int32_t form;
    int type, block;
    int64_t N, M;
    if (first + 1 >= g->n_nodes) return 0;
    mm = g->nodes[first], rp = g->nodes[first + 1];
    if (rp->op != RF_OP_ROPE || !pm_plain_matmul(mm) || !rope_of_product(mm, rp)) return 0;
    form = rf_pack_matmul_form(dev, mm);
    type = mm->src[0]->type;
    block = pm_act_in_block(type);
    if (form == RF_MATMUL_OTHER || !block) return 0;
    N = mm->dst->ne[0], M = mm->dst->ne[1];
    if (form == RF_MATMUL_COLUMNS) {
        int64_t nc = 0;
        const int64_t chunks = pm_column_chunks(M, &nc);
        if (!chunks || !(l->kernel = pm_cols_kernel(type, nc)) || (N + 7) / 8 > 0x7fffffff) return 0;
        l->grid[0] = (uint32_t)((N + 7) / 8); /* 4 warps of one rotation pair each */
        l->grid[1] = (uint32_t)chunks;
        l->aux[1] = 0; /* first column */
    } else {
        if (M != 1 || N / 4 > 0x7fffffff) return 0;
        l->grid[0] = (uint32_t)(N / 4); /* rf_mvq_multi: 4 warps of one row each, two pairs per block */
        l->aux[3] = 1;                  /* one segment */
    }
    l->threads = 128;
    l->src[0] = (rf_tensor_ref){0, 0}; /* weight */
    l->src[1] = (rf_tensor_ref){1, 1}; /* positions */
    if (rp->src[2]) l->src[2] = (rf_tensor_ref){1, 2}; /* frequency factors */
    l->src[3] = (rf_tensor_ref){1, RF_BIND_DST};
    l->dst = (rf_tensor_ref){0, RF_BIND_DST};
    l->iparams[0] = 2; /* matmul + rope form */
    l->iparams[1] = rp->iparams[1];
    l->iparams[2] = (int32_t)rp->src[0]->ne[0];
    l->iparams[7] = (pm_decode_settings() & PM_PREFETCH) ? 0 : 1;
    l->fparams[0] = rp->fparams[0];
    l->fparams[1] = rp->fparams[1];
    l->act_in = (rf_tensor_ref){0, 1};
    l->act_in_block = block;
    l->q8_aux_stride = 0; /* aux[0]: column stride */
    return 2;
}

/* The launch on the host: the product as the kernels compute it, then each head's rotation
 * pairs as rope.hip rotates them (angles in double, products rounded separately). */
static int32_t host_matmul_rope(const rf_kargs *a, const rf_fusion_launch *l) {
    const rf_ktensor *w = &a->src[0], *rd = &a->src[3];
    const int64_t K = w->ne[0], N = a->dst.ne[0], M = a->dst.ne[1], stride = a->aux[l->q8_aux_stride];
    const int64_t D = a->iparams[2], n_rot = a->iparams[1];
    const int f16 = l->act_in_block == RF_ACT_IN_F32;
    const int32_t *pos = (const int32_t *)a->src[1].data;
    const float *ff = (const float *)a->src[2].data;
    int64_t m, n;
    if (!a->scratch || (!f16 && !pm_q8_dot_type(w->type))) return RF_ERR_INVALID;
    for (m = 0; m < M; ++m) {
        const unsigned char *col = (const unsigned char *)a->scratch + m * stride;
        float *prod = (float *)pm_row(&a->dst, m), *rot = (float *)((char *)rd->data + m * 4 * N);
        for (n = 0; n < N; ++n) {
            const unsigned char *row = (const unsigned char *)w->data + n * w->nb[1];
            prod[n] = f16 ? pm_dot_f16((const uint16_t *)row, (const float *)col, K) : pm_dot_q8_1(w->type, row, col, K);
        }
        for (n = 0; n < N; n += 2) {
            const int64_t r = (n % D) / 2;
            const float x0 = prod[n], x1 = prod[n + 1];
            if (r < n_rot / 2) {
                double theta = (double)pos[m] * (double)a->fparams[1] * pow((double)a->fparams[0], -2.0 * (double)r / (double)n_rot);
                float c, s;
                if (ff) theta /= (double)ff[r];
                c = (float)cos(theta), s = (float)sin(theta);
                rot[n] = x0 * c - x1 * s;
                rot[n + 1] = x0 * s + x1 * c;
            } else {
                rot[n] = x0, rot[n + 1] = x1;
            }
        }
    }
    return RF_OK;
}

const rf_fusion rf_fusion_matmul_rope = {
    /* .struct_size = */ sizeof(rf_fusion),
    /* .name        = */ "matmul_rope",
    /* .kernel      = */ "rf_mvq_multi",
    /* .first_op    = */ RF_OP_MATMUL,
    /* .claim       = */ claim_matmul_rope,
    /* .host_run    = */ host_matmul_rope,
};
