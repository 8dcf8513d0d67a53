/* The "gate_up_swiglu" fusion of ROCmForge's kernel packs: a feed-forward block's two decode
 * projections and their SwiGLU, MATMUL(gate) MATMUL(up) SWIGLU(gate, up) (or, for one activation
 * row and one weight type on the NVIDIA column kernels, GEGLU: Gemma's gate, on their GeGLU
 * twins rf_mvqn_<type>_1fg), as one launch that
 * reads each row pair of the gate and up weights with all its loads in flight and writes gate,
 * up and their product (kernels/matmul_vec.hip):
 *  - one activation row: rf_mvqn_<type>_1f (NVIDIA packs; gate and up of one weight type), else
 *    rf_mvq_multi in its SwiGLU form (F16 weights, mixed types, the AMD packs);
 *  - 2..8 activation rows (sequences decoding together; 16, 24, ... as chunks of 8):
 *    rf_mvqn_<type>_<NC>f.
 * It claims only where the backend would run both matmuls on those kernels' families itself
 * (rf_pack_device.matmul_form, ABI 2.6) and reads their activations as the backend lends them
 * (rf_fusion_launch.act_in: the q8_1 columns in the weight type's block, or the f32 row for F16),
 * so each product has the floats of the unfused matmul. */
#include <math.h>
#include <string.h>

#include "matmul_fusion.h"
#include "pack_fusions.h"
#include "pack_match.h"
#include "q8_dot.h"

/* The GeGLU twin of a SwiGLU kernel name (one column only; NULL: none). */
static const char *geglu_kernel(const char *swiglu) {
    static const char *const pairs[][2] = {
        {"rf_mvqn_q4_k_1f", "rf_mvqn_q4_k_1fg"}, {"rf_mvqn_q4_k_1fw", "rf_mvqn_q4_k_1fwg"}, {"rf_mvqn_q5_k_1f", "rf_mvqn_q5_k_1fg"},
        {"rf_mvqn_q6_k_1f", "rf_mvqn_q6_k_1fg"}, {"rf_mvqn_q4_0_1f", "rf_mvqn_q4_0_1fg"}, {"rf_mvqn_q8_0_1f", "rf_mvqn_q8_0_1fg"},
        {"rf_mvqn_q5_0_1f", "rf_mvqn_q5_0_1fg"}, {"rf_mvqn_iq4_xs_1f", "rf_mvqn_iq4_xs_1fg"},
        {"rf_mvqn_iq4_xs_1fw", "rf_mvqn_iq4_xs_1fwg"}, {"rf_mvqn_iq2_xxs_1f", "rf_mvqn_iq2_xxs_1fg"},
        {"rf_mvqn_iq2_xxs_1fw", "rf_mvqn_iq2_xxs_1fwg"}, {"rf_mvqn_iq3_xxs_1f", "rf_mvqn_iq3_xxs_1fg"},
        {"rf_mvqn_iq3_xxs_1fw", "rf_mvqn_iq3_xxs_1fwg"}, {"rf_mvqn_iq3_s_1f", "rf_mvqn_iq3_s_1fg"},
        {"rf_mvqn_iq3_s_1fw", "rf_mvqn_iq3_s_1fwg"}, {"rf_mvqn_iq2_xs_1f", "rf_mvqn_iq2_xs_1fg"},
        {"rf_mvqn_iq2_xs_1fw", "rf_mvqn_iq2_xs_1fwg"}, {"rf_mvqn_iq2_s_1f", "rf_mvqn_iq2_s_1fg"},
        {"rf_mvqn_iq2_s_1fw", "rf_mvqn_iq2_s_1fwg"}, {"rf_mvqn_iq1_s_1f", "rf_mvqn_iq1_s_1fg"},
        {"rf_mvqn_iq1_s_1fw", "rf_mvqn_iq1_s_1fwg"}, {"rf_mvqn_iq1_m_1f", "rf_mvqn_iq1_m_1fg"},
        {"rf_mvqn_iq1_m_1fw", "rf_mvqn_iq1_m_1fwg"}, {"rf_mvqn_tq2_0_1f", "rf_mvqn_tq2_0_1fg"},
        {"rf_mvqn_tq2_0_1fw", "rf_mvqn_tq2_0_1fwg"}};
    size_t i;
    if (!swiglu) return NULL; /* rf_mvq_multi has no GeGLU form */
    for (i = 0; i < sizeof pairs / sizeof pairs[0]; ++i)
        if (strcmp(pairs[i][0], swiglu) == 0) return pairs[i][1];
    return NULL;
}

static int32_t claim_gate_up(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    const rf_node *mg, *mu, *sw;
    const rf_tensor *x, *gd, *ud, *sd;
    int32_t form;
    int type, block;
    int64_t N, M;
    const char *kernel = NULL;
    if (first + 2 >= g->n_nodes) return 0;
    mg = g->nodes[first], mu = g->nodes[first + 1], sw = g->nodes[first + 2];
    if (mu->op != RF_OP_MATMUL || (sw->op != RF_OP_SWIGLU && sw->op != RF_OP_GEGLU) || !pm_plain_matmul(mg) || !pm_plain_matmul(mu))
        return 0;
    x = mg->src[1], gd = mg->dst, ud = mu->dst, sd = sw->dst;
    if (mu->src[1]->data != x->data || mu->src[1]->ne[0] != x->ne[0] || mu->src[1]->ne[1] != x->ne[1]) return 0;
    form = rf_pack_matmul_form(dev, mg);
    if (form == RF_MATMUL_OTHER || rf_pack_matmul_form(dev, mu) != form) return 0;
    type = mg->src[0]->type;
    /* One vector read by both: their activation blocks agree (F16: the f32 row). */
    block = pm_act_in_block(type);
    if (pm_act_in_block(mu->src[0]->type) != block || !block) return 0;
    if (sw->src[0]->data != gd->data || sw->src[1]->data != ud->data || !pm_dense_f32(sw->src[0]) || !pm_dense_f32(sw->src[1]) ||
        !pm_dense_f32(sd) || !pm_same_shape(sw->src[0], gd) || !pm_same_shape(sw->src[1], ud) || !pm_same_shape(sd, gd) ||
        !pm_same_shape(gd, ud))
        return 0;
    /* Each warp writes gate, up, then the product of its row n: the product may replace one of
     * them exactly, nothing may overlap partially or alias the vector (F16 launches read it;
     * gate and up do not, pm_plain_matmul). */
    if (pm_overlap(sd, x) || pm_overlap(gd, ud) ||
        (pm_overlap(sd, gd) && sd->data != gd->data) || (pm_overlap(sd, ud) && sd->data != ud->data))
        return 0;
    N = gd->ne[0], M = x->ne[1];
    if (sw->op == RF_OP_GEGLU && M != 1) return 0;
    if (form == RF_MATMUL_COLUMNS ||
        (type == mu->src[0]->type && type != RF_TYPE_F16 && pm_nvidia(dev))) {
        /* The column kernels read gate and up rows as one weight type; one launch covers up to 8
         * columns, or chunks of 8 (grid y). */
        int64_t nc = 0;
        const int64_t chunks = pm_column_chunks(M, &nc);
        if (!pm_nvidia(dev) || type != mu->src[0]->type || !chunks || !(kernel = pm_cols_kernel(type, nc, x->ne[0]))) return 0;
        l->grid[1] = (uint32_t)chunks;
        l->aux[1] = 0; /* first column */
    } else if (M != 1) {
        return 0;
    } else {
        l->aux[1] = (N + 3) / 4; /* rf_mvq_multi: the up segment's first block */
        l->aux[3] = 2;           /* two segments */
    }
    if ((N + 3) / 4 > 0x7fffffff) return 0;
    l->grid[0] = (uint32_t)((N + 3) / 4); /* 4 warps of one row each (one row pair of gate and up) */
    l->threads = 128;
    l->kernel = kernel; /* NULL: the fusion's rf_mvq_multi */
    l->src[0] = (rf_tensor_ref){0, 0};  /* gate weight */
    l->src[1] = (rf_tensor_ref){1, 0};  /* up weight */
    l->dst = (rf_tensor_ref){0, RF_BIND_DST};
    l->src[3] = (rf_tensor_ref){1, RF_BIND_DST};
    l->src[4] = (rf_tensor_ref){2, RF_BIND_DST};
    l->mv.form = RF_KP_MV_GATED;
    if (sw->op == RF_OP_GEGLU) {
        if (!(l->kernel = geglu_kernel(kernel))) return 0;
        l->mv.geglu = 1; /* read by host_gate_up only: the product is GeGLU's */
    }
    pm_decode_input(l, dev, block, mg->src[0], M);
    pm_cols_prefetch_head(l, dev, 8 * mg->src[0]->nb[1]); /* a block: 4 rows of gate and of up (either kernel) */
    return 3;
}

/* GELU's tanh form step by step as kernels/gelu.hip evaluates it. */
static float gelu_tanh_host(float x) {
    const float inner = (0.7978845608028654f * x) * (1.f + 0.044715f * (x * x));
    return (0.5f * x) * (1.f + tanhf(inner));
}

/* The launch on the host: every product as the kernels compute it (q8_1 columns lent: integer
 * dot products with the weight blocks; F16: the f32 row), then silu(gate) * up or gelu(gate) * up. */
static int32_t host_gate_up(const rf_kargs *a, const rf_fusion_launch *l) {
    const rf_ktensor *wg = &a->src[0], *wu = &a->src[1];
    const int64_t K = wg->ne[0], N = a->dst.ne[0], M = a->dst.ne[1], stride = a->aux[l->q8_aux_stride];
    const int f16 = l->act_in_block == RF_ACT_IN_F32;
    int64_t m, n;
    if (!a->scratch || (!f16 && (!pm_q8_dot_type(wg->type) || !pm_q8_dot_type(wu->type)))) return RF_ERR_INVALID;
    for (m = 0; m < M; ++m) {
        const unsigned char *col = (const unsigned char *)a->scratch + m * stride;
        float *gate = (float *)pm_row(&a->dst, m), *up = (float *)pm_row(&a->src[3], m), *prod = (float *)pm_row(&a->src[4], m);
        for (n = 0; n < N; ++n) {
            const unsigned char *rg = (const unsigned char *)wg->data + n * wg->nb[1], *ru = (const unsigned char *)wu->data + n * wu->nb[1];
            const float v = pm_matmul_out(wg->type, f16, rg, col, K), u = pm_matmul_out(wu->type, f16, ru, col, K);
            gate[n] = v;
            up[n] = u;
            prod[n] = a->mv.geglu == 1 ? gelu_tanh_host(v) * u : (v / (1.f + expf(-v))) * u;
        }
    }
    return RF_OK;
}

const rf_fusion rf_fusion_gate_up = {
    /* .struct_size = */ sizeof(rf_fusion),
    /* .name        = */ "gate_up_swiglu",
    /* .kernel      = */ "rf_mvq_multi",
    /* .first_op    = */ RF_OP_MATMUL,
    /* .claim       = */ claim_gate_up,
    /* .host_run    = */ host_gate_up,
};
