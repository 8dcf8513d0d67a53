/* See matmul_fusion.h. */
#include "matmul_fusion.h"

#include <math.h>
#include <stddef.h>

#include "pack_match.h"
#include "q8_dot.h"

#define PM_NAMES(t) {"rf_mvqn_" t "_1f", "rf_mvqn_" t "_2f", "rf_mvqn_" t "_3f", "rf_mvqn_" t "_4f", \
                     "rf_mvqn_" t "_5f", "rf_mvqn_" t "_6f", "rf_mvqn_" t "_7f", "rf_mvqn_" t "_8f"}
static const char *const cols_kernels[15][PM_MAX_COLS] = {PM_NAMES("q4_k"),    PM_NAMES("q5_k"),  PM_NAMES("q6_k"),   PM_NAMES("q4_0"),
                                                           PM_NAMES("q8_0"),    PM_NAMES("q5_0"),  PM_NAMES("iq4_xs"), PM_NAMES("iq2_xxs"),
                                                           PM_NAMES("iq3_xxs"), PM_NAMES("iq3_s"), PM_NAMES("iq2_xs"), PM_NAMES("iq2_s"),
                                                           PM_NAMES("iq1_s"),   PM_NAMES("iq1_m"), PM_NAMES("tq2_0")};

static const char *const proj_kernels[2][17] = {
    {"rf_mvq_proj_q4_k", "rf_mvq_proj_q5_k", "rf_mvq_proj_q6_k", "rf_mvq_proj_q4_0", "rf_mvq_proj_q8_0", "rf_mvq_proj_q5_0",
     "rf_mvq_proj_iq4_xs", "rf_mvq_proj_iq2_xxs", "rf_mvq_proj_iq3_xxs", "rf_mvq_proj_iq3_s", "rf_mvq_proj_iq2_xs",
     "rf_mvq_proj_iq2_s", "rf_mvq_proj_iq1_s", "rf_mvq_proj_iq1_m", "rf_mvq_proj_tq2_0", "rf_mvq_proj_q4_k_q6_k",
     "rf_mvq_proj_q5_k_q6_k"},
    {"rf_mvq_proj2_q4_k", "rf_mvq_proj2_q5_k", NULL, "rf_mvq_proj2_q4_0", "rf_mvq_proj2_q8_0", "rf_mvq_proj2_q5_0",
     "rf_mvq_proj2_iq4_xs", "rf_mvq_proj2_iq2_xxs", "rf_mvq_proj2_iq3_xxs", "rf_mvq_proj2_iq3_s", "rf_mvq_proj2_iq2_xs",
     "rf_mvq_proj2_iq2_s", "rf_mvq_proj2_iq1_s", "rf_mvq_proj2_iq1_m", "rf_mvq_proj2_tq2_0", "rf_mvq_proj2_q4_k_q6_k",
     "rf_mvq_proj2_q5_k_q6_k"}}; /* all Q6_K: none (96 registers: 7B Q6_K tg128 -3%) */

#define PM_JOIN_NAMES(t) {"rf_mvqn_proj_" t "_2", "rf_mvqn_proj_" t "_3", "rf_mvqn_proj_" t "_4"}
static const char *const join_kernels[17][PM_JOIN_MAX_COLS - 1] = {PM_JOIN_NAMES("q4_k"), PM_JOIN_NAMES("q5_k"), PM_JOIN_NAMES("q6_k"),
                                                                  PM_JOIN_NAMES("q4_0"), PM_JOIN_NAMES("q8_0"), PM_JOIN_NAMES("q5_0"),
                                                                  PM_JOIN_NAMES("iq4_xs"), PM_JOIN_NAMES("iq2_xxs"),
                                                                  PM_JOIN_NAMES("iq3_xxs"), PM_JOIN_NAMES("iq3_s"),
                                                                  PM_JOIN_NAMES("iq2_xs"), PM_JOIN_NAMES("iq2_s"),
                                                                  PM_JOIN_NAMES("iq1_s"), PM_JOIN_NAMES("iq1_m"), PM_JOIN_NAMES("tq2_0"),
                                                                  PM_JOIN_NAMES("q4_k_q6_k"), PM_JOIN_NAMES("q5_k_q6_k")};

/* Index of a q8_1 weight type in the name tables, -1 for any other. */
static int q8_type_index(int type) {
    return type == RF_TYPE_Q4_K ? 0 : type == RF_TYPE_Q5_K ? 1 : type == RF_TYPE_Q6_K ? 2 : type == RF_TYPE_Q4_0 ? 3
           : type == RF_TYPE_Q8_0 ? 4 : type == RF_TYPE_Q5_0 ? 5 : type == RF_TYPE_IQ4_XS ? 6 : type == RF_TYPE_IQ2_XXS ? 7
           : type == RF_TYPE_IQ3_XXS ? 8 : type == RF_TYPE_IQ3_S ? 9 : type == RF_TYPE_IQ2_XS ? 10 : type == RF_TYPE_IQ2_S ? 11
           : type == RF_TYPE_IQ1_S ? 12 : type == RF_TYPE_IQ1_M ? 13 : type == RF_TYPE_TQ2_0 ? 14 : -1;
}

/* The one-column two-row kernels for wide rows (SHARE in kernels/mvq_blocks.h): Q4_K and IQ4_XS (7B
 * Q5_K_M measured 0.9% slower with them, Q4_0 unchanged), and the grid i-quants as IQ4_XS. */
static const char *const proj_wide_kernels[17] = {"rf_mvq_proj2w_q4_k",    NULL, NULL, NULL, NULL, NULL, "rf_mvq_proj2w_iq4_xs",
                                                  "rf_mvq_proj2w_iq2_xxs", "rf_mvq_proj2w_iq3_xxs", "rf_mvq_proj2w_iq3_s",
                                                  "rf_mvq_proj2w_iq2_xs",  "rf_mvq_proj2w_iq2_s",   "rf_mvq_proj2w_iq1_s",
                                                  "rf_mvq_proj2w_iq1_m",   "rf_mvq_proj2w_tq2_0",   "rf_mvq_proj2w_q4_k_q6_k", NULL};

/* The grid i-quants' and TQ2_0's one-column gate / up form for wide rows (q8_type_index 7 on), as
 * IQ4_XS's. */
static const char *const wide_cols_kernels[8] = {"rf_mvqn_iq2_xxs_1fw", "rf_mvqn_iq3_xxs_1fw", "rf_mvqn_iq3_s_1fw", "rf_mvqn_iq2_xs_1fw",
                                                 "rf_mvqn_iq2_s_1fw",   "rf_mvqn_iq1_s_1fw",   "rf_mvqn_iq1_m_1fw", "rf_mvqn_tq2_0_1fw"};

const char *pm_cols_kernel(int type, int64_t nc, int64_t K) {
    const int t = q8_type_index(type);
    if (t < 0 || nc < 1 || nc > PM_MAX_COLS) return NULL;
    if (nc == 1 && K >= PM_WIDE_K && type == RF_TYPE_Q4_K) return "rf_mvqn_q4_k_1fw";
    if (nc == 1 && K >= PM_WIDE_K && type == RF_TYPE_IQ4_XS) return "rf_mvqn_iq4_xs_1fw";
    if (nc == 1 && K >= PM_WIDE_K && t >= 7) return wide_cols_kernels[t - 7]; /* the grid i-quants */
    return cols_kernels[t][nc - 1];
}

/* Index of the weight type pair (a, b) in proj_kernels' rows, -1 for none. */
static int proj_pair_index(int a, int b) {
    if (a == b) return q8_type_index(a);
    if (a == RF_TYPE_Q6_K) a = b; /* either order: the other type */
    else if (b != RF_TYPE_Q6_K) return -1;
    return a == RF_TYPE_Q4_K ? 15 : a == RF_TYPE_Q5_K ? 16 : -1;
}

const char *pm_proj_kernel(int a, int b, int rows, int64_t K) {
    const int i = proj_pair_index(a, b);
    if (i < 0) return NULL;
    if (rows == 2 && K >= PM_WIDE_K && proj_wide_kernels[i]) return proj_wide_kernels[i];
    return proj_kernels[rows == 2][i];
}

const char *pm_proj_cols_kernel(int a, int b, int64_t nc) {
    const int i = proj_pair_index(a, b); /* the same type pairs as the one-column launch */
    return i < 0 || nc < 2 || nc > PM_JOIN_MAX_COLS ? NULL : join_kernels[i][nc - 2];
}

int64_t pm_column_chunks(int64_t M, int64_t *nc) {
    if (M >= 1 && M <= PM_MAX_COLS) { *nc = M; return 1; }
    *nc = PM_MAX_COLS;
    return M > PM_MAX_COLS && M % PM_MAX_COLS == 0 && M / PM_MAX_COLS <= 65535 ? M / PM_MAX_COLS : 0;
}

int pm_act_in_block(int type) { return type == RF_TYPE_F16 ? RF_ACT_IN_F32 : pm_act_block(type); }

int pm_dense_f32(const rf_tensor *t) {
    return pm_plain_f32(t) && t->nb[1] == 4 * t->ne[0] && t->nb[2] == t->nb[1] * t->ne[1] && t->nb[3] == t->nb[2] * t->ne[2];
}

int pm_plain_matmul(const rf_node *n) {
    const rf_tensor *w = n->src[0], *x = n->src[1], *d = n->dst;
    return w && x && d && x->ne[2] * x->ne[3] == 1 && w->ne[2] * w->ne[3] == 1 && pm_dense_f32(d) && pm_plain_f32(x) &&
           w->ne[0] % 32 == 0 && w->ne[1] <= ((int64_t)1 << 30) && !pm_overlap(d, x);
}

const rf_pack_options *pm_options(const rf_pack_device *dev) {
    static const rf_pack_options defaults = {sizeof(rf_pack_options), RF_PACK_PREFETCH_SMALL, 1, 8ull << 20, 4ull << 20, 0, 4};
    const int has = dev && dev->struct_size >= offsetof(rf_pack_device, options) + sizeof(dev->options) && dev->options &&
                    dev->options->struct_size >= offsetof(rf_pack_options, norm_cluster_blocks) + sizeof(int32_t);
    return has ? dev->options : &defaults;
}

int64_t pm_prefetch_head(const rf_pack_device *dev, int64_t block_bytes, int64_t blocks) {
    const int64_t h = (int64_t)pm_options(dev)->prefetch_head_bytes;
    if (block_bytes <= 0) return 0;
    return h / block_bytes < blocks ? h / block_bytes : blocks;
}

void pm_cols_prefetch_head(rf_fusion_launch *l, const rf_pack_device *dev, int64_t block_bytes) {
    const int64_t head = l->mv.no_weight_prefetch ? pm_prefetch_head(dev, block_bytes, l->grid[0]) : 0;
    if (head > 0) l->mv.no_weight_prefetch = 0, l->mv.prefetch_head_blocks = (int32_t)head;
}

void pm_decode_input(rf_fusion_launch *l, const rf_pack_device *dev, int block, const rf_tensor *w, int64_t columns) {
    pm_decode_input_bytes(l, dev, block, (uint64_t)(pm_end(w) - (uintptr_t)w->data), columns);
}

void pm_decode_input_bytes(rf_fusion_launch *l, const rf_pack_device *dev, int block, uint64_t weight_bytes, int64_t columns) {
    const rf_pack_options *o = pm_options(dev);
    const int small = columns == 1 && weight_bytes <= o->prefetch_max_bytes;
    const int pulled = o->weight_prefetch == RF_PACK_PREFETCH_ALL || (small && o->weight_prefetch == RF_PACK_PREFETCH_SMALL);
    l->act_in = (rf_tensor_ref){0, 1};
    l->act_in_block = block;
    l->q8_aux_stride = 0;
    l->mv.no_weight_prefetch = pulled ? 0 : 1;
}

void pm_bind_rope_form(rf_fusion_launch *l, const rf_node *rp, int16_t node) {
    const int16_t rn = (int16_t)(node + 1);
    l->src[0] = (rf_tensor_ref){node, 0}; /* weight */
    l->dst = (rf_tensor_ref){node, RF_BIND_DST};
    l->src[1] = (rf_tensor_ref){rn, pm_rope_angles_slot(rp)}; /* positions, or the angles' rows */
    if (rp->src[2]) l->src[2] = (rf_tensor_ref){rn, 2}; /* frequency factors */
    l->src[3] = (rf_tensor_ref){rn, RF_BIND_DST};
    l->mv.form = RF_KP_MV_ROPE;
    l->mv.n_rot = rp->iparams[1];
    l->mv.head_dim = (int32_t)rp->src[0]->ne[0];
    l->mv.freq_base = rp->fparams[0];
    l->mv.freq_scale = rp->fparams[1];
}

int pm_cols_launch(rf_fusion_launch *l, const rf_pack_device *dev, const rf_node *mm, const rf_node *rp, int16_t node) {
    const int64_t N = mm->dst->ne[0];
    int64_t nc = 0;
    const int64_t chunks = pm_column_chunks(mm->dst->ne[1], &nc);
    if (!chunks || !(l->kernel = pm_cols_kernel(mm->src[0]->type, nc, mm->src[0]->ne[0])) || (N + 7) / 8 > 0x7fffffff) return 0;
    l->grid[0] = (uint32_t)((N + 7) / 8); /* 4 warps of two rows (one rotation pair) each */
    l->grid[1] = (uint32_t)chunks;
    l->threads = 128;
    l->aux[1] = 0; /* first column */
    if (rp) {
        pm_bind_rope_form(l, rp, node);
    } else {
        l->src[0] = (rf_tensor_ref){node, 0};
        l->dst = (rf_tensor_ref){node, RF_BIND_DST};
        l->mv.form = RF_KP_MV_PLAIN;
    }
    pm_decode_input(l, dev, pm_act_in_block(mm->src[0]->type), mm->src[0], mm->dst->ne[1]);
    pm_cols_prefetch_head(l, dev, 8 * mm->src[0]->nb[1]); /* a block: 4 warps of 2 rows */
    l->act_in = (rf_tensor_ref){node, 1};
    return 1;
}

float pm_matmul_out(int type, int f32_row, const unsigned char *row, const unsigned char *act, int64_t K) {
    return f32_row ? pm_dot_f16((const uint16_t *)row, (const float *)act, K) : pm_dot_q8_1(type, row, act, K);
}

void pm_rope_pair(float x0, float x1, int64_t r, const rf_ktensor *angles, int64_t t, int n_rot, float base, float fscale,
                  const float *factors, float *y0, float *y1) {
    float c, s;
    if (angles->type == RF_TYPE_F32) { /* the graph's (cos, sin) rows (rf_rope_angles_readable) */
        const float *cs = (const float *)((const char *)angles->data + t * angles->nb[2]) + 2 * r;
        c = cs[0], s = cs[1];
    } else {
        double theta = (double)((const int32_t *)angles->data)[t] * (double)fscale * pow((double)base, -2.0 * (double)r / (double)n_rot);
        if (factors) theta /= (double)factors[r];
        c = (float)cos(theta), s = (float)sin(theta);
    }
    *y0 = x0 * c - x1 * s;
    *y1 = x0 * s + x1 * c;
}

int16_t pm_rope_angles_slot(const rf_node *rope) { return (int16_t)(rf_rope_angles_readable(rope) ? 3 : 1); }

int pm_plain_rope(const rf_node *r) {
    const rf_tensor *x = r->src[0], *d = r->dst;
    if (r->op != RF_OP_ROPE || !x || !d || !r->src[1] || !pm_dense_f32(x) || !pm_dense_f32(d) || !pm_same_shape(x, d)) return 0;
    if (x->ne[0] % 2 || x->ne[3] != 1 || x->ne[2] < 1) return 0;
    if (r->iparams[0] == RF_ROPE_NEOX && r->iparams[1] > x->ne[0]) return 0;
    /* YaRN (ABI 2.14): the kernels evaluate only plain angles; the graph's rows carry YaRN's. */
    if (r->iparams[2] != 0 && !rf_rope_angles_readable(r)) return 0;
    return x->data == d->data || !pm_overlap(x, d);
}

int pm_same_angles(const rf_node *a, const rf_node *b) {
    const rf_tensor *fa = a->src[2], *fb = b->src[2], *ra = a->src[3], *rb = b->src[3];
    return a->src[1]->data == b->src[1]->data && (fa ? fb && fa->data == fb->data : !fb) && (ra ? rb && ra->data == rb->data : !rb) &&
           a->iparams[1] == b->iparams[1] && a->iparams[2] == b->iparams[2] && a->fparams[0] == b->fparams[0] && a->fparams[1] == b->fparams[1];
}

int pm_rope_of_product(const rf_node *mm, const rf_node *rp) {
    const rf_tensor *md = mm->dst, *rx = rp->src[0], *rd = rp->dst, *pos = rp->src[1], *ff = rp->src[2];
    const int64_t N = md->ne[0], M = md->ne[1];
    int64_t D;
    const int n_rot = rp->iparams[1];
    if (rp->op != RF_OP_ROPE || rp->iparams[0] != RF_ROPE_NORMAL || !rx || !rd || !pos) return 0;
    /* YaRN (ABI 2.14): the kernels evaluate only plain angles; the graph's rows carry YaRN's. */
    if (rp->iparams[2] != 0 && !rf_rope_angles_readable(rp)) return 0;
    D = rx->ne[0];
    if (rx->data != md->data || !pm_dense_f32(rx) || !pm_dense_f32(rd) || !pm_same_shape(rx, rd)) return 0;
    if (rx->ne[0] * rx->ne[1] != N || rx->ne[2] != M || rx->ne[3] != 1 || N % 4 || D % 2) return 0;
    if (pos->type != RF_TYPE_I32 || pos->ne[0] != M || pos->ne[1] * pos->ne[2] * pos->ne[3] != 1 || pos->nb[0] != 4) return 0;
    if (n_rot <= 0 || n_rot % 2 || n_rot > D) return 0;
    if (ff && (ff->type != RF_TYPE_F32 || ff->nb[0] != 4 || ff->ne[0] * ff->ne[1] * ff->ne[2] * ff->ne[3] < n_rot / 2)) return 0;
    if ((pm_overlap(rd, md) && rd->data != md->data) || pm_overlap(rd, mm->src[0]) || pm_overlap(rd, pos) || pm_overlap(rd, ff) ||
        pm_overlap(rd, rp->src[3]))
        return 0;
    return mm->src[0]->type != RF_TYPE_F16 || !pm_overlap(rd, mm->src[1]); /* F16: the kernel reads x itself */
}

