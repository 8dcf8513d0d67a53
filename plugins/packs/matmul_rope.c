/* The "matmul_rope" fusion of ROCmForge's kernel packs: a decode projection and the ROPE NORMAL
 * over its product, MATMUL ROPE (the K and Q projections of a layer whose projections the
 * backend does not join), as one launch that writes the product and its rotation
 * (kernels/matmul_vec.hip): one activation row on rf_mvq_multi's rope form, 2..8 rows (16, 24,
 * ... in chunks of 8) on rf_mvqn_<type>_<NC>f's, each warp two rows of the product, i.e. one
 * rotation pair. The activations are read as the backend lends them (ABI 2.6: q8_1 columns in
 * the weight type's block, the f32 row for F16), so the product has the floats of the unfused
 * matmul, and the rotation is rope.hip's (the same cos / sin and rounding). */
#include "matmul_fusion.h"
#include "pack_fusions.h"
#include "pack_match.h"
#include "q8_dot.h"

static int32_t claim_matmul_rope(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    const rf_node *mm, *rp;
    int32_t form;
    int type, block;
    int64_t N, M;
    if (first + 1 >= g->n_nodes) return 0;
    mm = g->nodes[first], rp = g->nodes[first + 1];
    if (rp->op != RF_OP_ROPE || !pm_plain_matmul(mm) || !pm_rope_of_product(mm, rp)) return 0;
    form = rf_pack_matmul_form(dev, mm);
    type = mm->src[0]->type;
    block = pm_act_in_block(type);
    if (form == RF_MATMUL_OTHER || !block) return 0;
    N = mm->dst->ne[0], M = mm->dst->ne[1];
    if (form == RF_MATMUL_COLUMNS) return pm_nvidia(dev) && pm_cols_launch(l, dev, mm, rp, 0) ? 2 : 0;
    if (M != 1 || N / 4 > 0x7fffffff) return 0;
    l->grid[0] = (uint32_t)(N / 4); /* rf_mvq_multi: 4 warps of one row each, two pairs per block */
    l->aux[3] = 1;                  /* one segment */
    l->threads = 128;
    pm_bind_rope_form(l, rp, 0);
    pm_decode_input(l, dev, block, mm->src[0], M);
    return 2;
}

/* The launch on the host: the product as the kernels compute it, then each head's rotation
 * pairs as rope.hip rotates them. */
static int32_t host_matmul_rope(const rf_kargs *a, const rf_fusion_launch *l) {
    const rf_ktensor *w = &a->src[0], *rd = &a->src[3];
    const int64_t K = w->ne[0], N = a->dst.ne[0], M = a->dst.ne[1], stride = a->aux[l->q8_aux_stride];
    const int64_t D = a->mv.head_dim, n_rot = a->mv.n_rot;
    const int f32_row = l->act_in_block == RF_ACT_IN_F32;
    int64_t m, n;
    if (!a->scratch || (!f32_row && !pm_q8_dot_type(w->type))) return RF_ERR_INVALID;
    for (m = 0; m < M; ++m) {
        const unsigned char *act = (const unsigned char *)a->scratch + m * stride;
        float *prod = (float *)pm_row(&a->dst, m), *rot = (float *)((char *)rd->data + m * 4 * N);
        for (n = 0; n < N; ++n) prod[n] = pm_matmul_out(w->type, f32_row, (const unsigned char *)w->data + n * w->nb[1], act, K);
        for (n = 0; n < N; n += 2) {
            const int64_t r = (n % D) / 2;
            const float x0 = prod[n], x1 = prod[n + 1];
            if (r < n_rot / 2) pm_rope_pair(x0, x1, r, &a->src[1], m, (int)n_rot, a->mv.freq_base, a->mv.freq_scale, (const float *)a->src[2].data, &rot[n], &rot[n + 1]);
            else rot[n] = x0, rot[n + 1] = x1;
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
