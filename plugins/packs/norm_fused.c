/* The fused norm of ROCmForge's kernel packs: [ADD] RMS_NORM MUL(norm weight) as one launch per
 * row (kernels/norm_fused.hip), every intermediate still written (the sum, the normalised row,
 * the product), and, where the backend lends them (ABI 2.4), the q8_1 columns of the product for
 * the matmul that reads it next (decode's Q/K/V and gate/up projections, prefill on the integer
 * tensor cores): each of these ops alone would be one more launch.
 * The kernel holds a row in registers as float4 pieces, C per thread (rf_add_rms_norm_mul_1,
 * rf_add_rms_norm_mul, rf_add_rms_norm_mul_4: C = 1, 2, 4) and as many threads as that needs (a
 * multiple of 64: the q8_1 blocks of 256 pair warps). A row is one SM's work: fewer threads with
 * more pieces each issue fewer instructions per row, more threads have shorter chains; one piece
 * was as fast or faster at 1..16 sequences, so C = 1, raised where the row needs more (the
 * backend option norm_pieces=1|2|4 sets it for all, rf_pack_options).
 * On sm_90 the one-piece rows of whole 256-blocks go to the cluster form instead
 * (rf_add_rms_norm_mul_c2 / _c4 / _c8: a row's pieces over the blocks of a cluster, the sum of
 * squares shared through distributed shared memory; norm_cluster_blocks), 4 blocks by default.
 * The measurements behind both choices: docs/notes/decode_latency.md, "The fused add + norm".
 * One fusion per kernel and first node (ADD or RMS_NORM): a fusion names one kernel. */
#include <math.h>
#include <stddef.h>

#include "matmul_fusion.h"
#include "pack_fusions.h"
#include "pack_match.h"

#define NORM_MAX_ROW (1024 * 4 * 4) /* elements: 1024 threads x 4 pieces of 4 */
#define NORM_CLUSTER_DEFAULT 4    /* blocks a row in the cluster form, at most */

/* Pieces per thread for rows of K elements (K % 4 == 0), and the block size:
 * rf_pack_options.norm_pieces, else 1, doubled while the row needs more than 1024 threads. */
static int norm_pieces(int64_t K, const rf_pack_device *dev, uint32_t *threads) {
    const int64_t pieces = K / 4;
    const int set = pm_options(dev)->norm_pieces;
    int c = set == 1 || set == 2 || set == 4 ? set : 1;
    while (c < 4 && pieces > 1024 * (int64_t)c) c *= 2;
    *threads = (uint32_t)(((pieces + c - 1) / c + 63) / 64 * 64);
    return c;
}

/* Blocks of a thread-block cluster sharing a row of K elements in the one-piece form
 * (rf_add_rms_norm_mul_c<N>, sm_90): N parts of whole q8_1 blocks of 256 elements and at most 1024
 * threads each; 1 (the one-block kernels) where no N fits or the device has no clusters.
 * rf_pack_options.norm_cluster_blocks is the most (1: none). */
static int norm_cluster_blocks(int64_t K, const rf_pack_device *dev) {
    const int most = pm_options(dev)->norm_cluster_blocks;
    int n = most == 1 || most == 2 || most == 4 || most == 8 ? most : NORM_CLUSTER_DEFAULT;
    if (pm_nvidia_sm(dev) < 90 || !rf_pack_launch_has(dev, offsetof(rf_fusion_launch, kernel) + sizeof(const char *)))
        return 1;
    for (; n > 1; n /= 2)
        if (K % (256 * n) == 0 && K / (4 * n) <= 1024) return n;
    return 1;
}

/* [ADD] RMS_NORM MUL at `first` for the kernel with `want` pieces per thread. */
static int32_t claim_norm(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l, int with_add, int want) {
    const rf_node *add = with_add ? g->nodes[first] : NULL, *norm;
    const rf_tensor *x, *nd, *md, *w, *add_a = NULL, *add_b = NULL, *add_d = NULL;
    const int at = first + (with_add ? 1 : 0), used = with_add ? 3 : 2;
    int64_t K, rows;
    uint32_t threads = 0;
    int blocks;
    pm_norm_mul m;
    if ((add && add->op != RF_OP_ADD) || !pm_match_norm_mul(g, at, &m)) return 0;
    norm = m.norm, x = m.x, nd = m.nd, md = m.md, w = m.w;
    K = x->ne[0];
    if (add) {
        add_a = add->src[0], add_b = add->src[1], add_d = add->dst;
        if (!pm_plain_f32(add_a) || !pm_plain_f32(add_b) || !pm_plain_f32(add_d) || !pm_same_shape(add_a, add_d) ||
            !pm_same_shape(add_b, add_d) || add_d->data != x->data || !pm_same_shape(add_d, x))
            return 0;
    }
    rows = x->ne[1] * x->ne[2] * x->ne[3];
    if (rows <= 0 || rows > 65535 || K > NORM_MAX_ROW || K % 4 || (uintptr_t)w->data % 16) return 0;
    if (!pm_rows16(x) || !pm_rows16(nd) || !pm_rows16(md) || !pm_rows16(add_a) || !pm_rows16(add_b)) return 0;
    /* Several rows run as separate blocks: a result on another row of an input (the executor
     * recycles bytes after a tensor's last reader) would be written while that row's block may
     * still read it. Only element-for-element aliasing is safe (each thread reads its elements
     * before writing them). One row: every read precedes the block's barrier. */
    if (rows > 1) {
        const rf_tensor *outs[3], *others[6];
        int i, j;
        outs[0] = add_d, outs[1] = nd, outs[2] = md;
        others[0] = add ? add_a : x, others[1] = add_b, others[2] = w, others[3] = add_d, others[4] = nd, others[5] = md;
        for (i = 0; i < 3; ++i)
            for (j = 0; j < 6; ++j) {
                const rf_tensor *o = outs[i], *t = others[j];
                if (o && t && o != t && pm_overlap(o, t) && (o->data != t->data || !pm_same_shape(o, t) || o->nb[1] != t->nb[1]))
                    return 0;
            }
    }
    /* The cluster form goes with the one-piece fusion, whatever pieces one block would take. */
    blocks = norm_cluster_blocks(K, dev);
    if (blocks > 1 ? want != 1 : norm_pieces(K, dev, &threads) != want) return 0;
    l->grid[0] = (uint32_t)rows;
    l->threads = threads;
    if (blocks > 1) { /* a cluster of `blocks` a row */
        static const char *const cluster_kernel[9] = {[2] = "rf_add_rms_norm_mul_c2", [4] = "rf_add_rms_norm_mul_c4",
                                                      [8] = "rf_add_rms_norm_mul_c8"};
        l->kernel = cluster_kernel[blocks];
        l->grid[0] = (uint32_t)(rows * blocks);
        l->threads = (uint32_t)(K / 4 / blocks);
        l->norm.cluster_blocks = blocks;
    }
    l->src[0] = (rf_tensor_ref){0, 0}; /* the add's first operand, or x */
    if (add) {
        l->src[1] = (rf_tensor_ref){0, 1};
        l->src[3] = (rf_tensor_ref){0, RF_BIND_DST};
    }
    l->src[2] = (rf_tensor_ref){(int16_t)(used - 1), 1};
    l->src[4] = (rf_tensor_ref){(int16_t)(used - 2), RF_BIND_DST};
    l->dst = (rf_tensor_ref){(int16_t)(used - 1), RF_BIND_DST};
    l->norm.eps = norm->fparams[0];
    l->norm.weight_is_model = (w->flags & RF_TENSOR_WEIGHT) ? 1 : 0; /* read before the previous kernel ends */
    l->norm.prefetch_add = add && pm_options(dev)->norm_prefetch; /* the add's operands into L2 meanwhile */
    if (K % 32 == 0 && pm_launch_has_q8(dev)) { /* the kernel's q8_1 arguments: aux[0] stride, aux[1] block */
        l->q8_of = l->dst;
        l->q8_aux_stride = 0;
        l->q8_aux_block = 1;
    }
    return used;
}

static int32_t claim_add_norm_1(const rf_graph *g, int32_t f, const rf_pack_device *d, rf_fusion_launch *l) { return claim_norm(g, f, d, l, 1, 1); }
static int32_t claim_add_norm_2(const rf_graph *g, int32_t f, const rf_pack_device *d, rf_fusion_launch *l) { return claim_norm(g, f, d, l, 1, 2); }
static int32_t claim_add_norm_4(const rf_graph *g, int32_t f, const rf_pack_device *d, rf_fusion_launch *l) { return claim_norm(g, f, d, l, 1, 4); }
static int32_t claim_norm_1(const rf_graph *g, int32_t f, const rf_pack_device *d, rf_fusion_launch *l) { return claim_norm(g, f, d, l, 0, 1); }
static int32_t claim_norm_2(const rf_graph *g, int32_t f, const rf_pack_device *d, rf_fusion_launch *l) { return claim_norm(g, f, d, l, 0, 2); }
static int32_t claim_norm_4(const rf_graph *g, int32_t f, const rf_pack_device *d, rf_fusion_launch *l) { return claim_norm(g, f, d, l, 0, 4); }

/* RMS_NORM MUL of 2..32 rows of at most 128 elements (attention heads' Q/K norms) in one block, a
 * warp a row (rf_rms_norm_mul_rows), also where claim_norm declines because the product lies partly
 * over another row's input, which one block's barrier between its reads and its writes makes safe.
 * Tried before the other RMS_NORM fusions: for these rows its sums are theirs bit for bit
 * (rf_add_rms_norm_mul_1's with 64 threads), on one block instead of one a row. */
static int32_t claim_norm_rows(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    const rf_tensor *x, *nd, *md, *w;
    int64_t K, rows;
    pm_norm_mul m;
    (void)dev;
    if (!pm_match_norm_mul(g, first, &m)) return 0;
    x = m.x, nd = m.nd, md = m.md, w = m.w;
    K = x->ne[0];
    rows = x->ne[1] * x->ne[2] * x->ne[3];
    if (rows < 2 || rows > 32 || K % 4 || K > 128 || (uintptr_t)w->data % 16) return 0;
    if (!pm_rows16(x) || !pm_rows16(nd) || !pm_rows16(md)) return 0;
    /* A matmul of the product next: the other fusions also write its q8_1 columns. */
    if (first + 2 < g->n_nodes && g->nodes[first + 2]->op == RF_OP_MATMUL && g->nodes[first + 2]->src[1] &&
        g->nodes[first + 2]->src[1]->data == md->data)
        return 0;
    /* The norm's own output beside its input: written after the barrier, read by no one before. */
    if (pm_overlap(nd, x) || (pm_overlap(nd, md) && nd->data != md->data)) return 0;
    l->grid[0] = 1;
    l->threads = (uint32_t)(32 * rows);
    l->src[0] = (rf_tensor_ref){0, 0};
    l->src[2] = (rf_tensor_ref){1, 1};
    l->src[4] = (rf_tensor_ref){0, RF_BIND_DST};
    l->dst = (rf_tensor_ref){1, RF_BIND_DST};
    l->norm.eps = m.norm->fparams[0];
    l->norm.weight_is_model = (w->flags & RF_TENSOR_WEIGHT) ? 1 : 0;
    return 2;
}

/* The kernel on the host: the sum (src3) if there is an add, the normalised row (src4), the
 * product (dst) and, when lent, the q8_1 column of the product, for every row (block). */
static int32_t host_norm_rows(const rf_kargs *a, const rf_fusion_launch *l, int64_t rows) {
    const int64_t K = a->src[0].ne[0];
    const float *w = (const float *)a->src[2].data;
    const float eps = a->norm.eps;
    int64_t r, i;
    for (r = 0; r < rows; ++r) {
        const float *x0 = (const float *)pm_row(&a->src[0], r);
        const float *x1 = a->src[1].data ? (const float *)pm_row(&a->src[1], r) : NULL;
        float *s = a->src[3].data ? (float *)pm_row(&a->src[3], r) : NULL;
        float *n = (float *)pm_row(&a->src[4], r), *y = (float *)pm_row(&a->dst, r);
        double sum_sq = 0;
        float scale;
        for (i = 0; i < K; ++i) {
            const float v = x1 ? x0[i] + x1[i] : x0[i];
            if (s) s[i] = v;
            sum_sq += (double)v * v;
        }
        scale = (float)(1.0 / sqrt(sum_sq / (double)K + (double)eps));
        for (i = 0; i < K; ++i) {
            const float v = s ? s[i] : x0[i];
            n[i] = v * scale;
            y[i] = n[i] * w[i];
        }
        if (a->scratch && l->q8_aux_block >= 0 && a->aux[l->q8_aux_block])
            pm_quantize_q8_1(y, K, (int)a->aux[l->q8_aux_block], (unsigned char *)a->scratch + r * a->aux[l->q8_aux_stride]);
    }
    return RF_OK;
}

static int32_t host_norm(const rf_kargs *a, const rf_fusion_launch *l) {
    return host_norm_rows(a, l, l->grid[0] / (a->norm.cluster_blocks > 1 ? a->norm.cluster_blocks : 1));
}

/* rf_rms_norm_mul_rows: every row of the one block (src0's rows), no add, no q8_1 form. */
static int32_t host_norm_block(const rf_kargs *a, const rf_fusion_launch *l) {
    return host_norm_rows(a, l, a->src[0].ne[1] * a->src[0].ne[2] * a->src[0].ne[3]);
}

const rf_fusion rf_fusion_norm_rows = {sizeof(rf_fusion), "rms_norm_mul_rows", "rf_rms_norm_mul_rows", RF_OP_RMS_NORM,
                                       claim_norm_rows, host_norm_block};

#define NORM_FUSION(var, label, kern, op, fn) \
    const rf_fusion var = {sizeof(rf_fusion), label, kern, op, fn, host_norm};
NORM_FUSION(rf_fusion_add_norm_1, "add_rms_norm_mul_1", "rf_add_rms_norm_mul_1", RF_OP_ADD, claim_add_norm_1)
NORM_FUSION(rf_fusion_add_norm_2, "add_rms_norm_mul", "rf_add_rms_norm_mul", RF_OP_ADD, claim_add_norm_2)
NORM_FUSION(rf_fusion_add_norm_4, "add_rms_norm_mul_4", "rf_add_rms_norm_mul_4", RF_OP_ADD, claim_add_norm_4)
NORM_FUSION(rf_fusion_norm_1, "rms_norm_mul_1", "rf_add_rms_norm_mul_1", RF_OP_RMS_NORM, claim_norm_1)
NORM_FUSION(rf_fusion_norm_2, "rms_norm_mul", "rf_add_rms_norm_mul", RF_OP_RMS_NORM, claim_norm_2)
NORM_FUSION(rf_fusion_norm_4, "rms_norm_mul_4", "rf_add_rms_norm_mul_4", RF_OP_RMS_NORM, claim_norm_4)
