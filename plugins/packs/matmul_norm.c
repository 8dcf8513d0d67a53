/* The "matmul_add_norm" fusion of ROCmForge's kernel packs: a decode projection, the residual add
 * after it and the next RMS norm with its weight, MATMUL ADD RMS_NORM MUL (a layer's O or FFN-down
 * projection, 1..4 activation rows), as one launch of rf_mvq_norm_<type>_<NC>
 * (kernels/matmul_norm.hip): the blocks compute the product as the backend's vector / column
 * kernels do, the last block to finish (ABI 2.9 arrival counters) adds, normalises and multiplies
 * every row as the fused norm does, and writes the q8_1 columns of the result for the next matmul
 * where the backend wants them (beside the activations it reads: ABI 2.9). NVIDIA packs. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "matmul_fusion.h"
#include "pack_fusions.h"
#include "pack_match.h"
#include "q8_dot.h"

#define MN_THREADS 1024 /* 32 warps, a row each */
#define MN_MAX_ROW 4096 /* the last block's norm row: 1024 threads x a piece of 4 floats */
#define MN_MAX_COLS 4

static const char *norm_kernel(int type, int64_t nc) {
#define MN_NAMES(t) {"rf_mvq_norm_" t "_1", "rf_mvq_norm_" t "_2", "rf_mvq_norm_" t "_3", "rf_mvq_norm_" t "_4"}
    static const char *const names[5][MN_MAX_COLS] = {MN_NAMES("q4_k"), MN_NAMES("q5_k"), MN_NAMES("q6_k"), MN_NAMES("q4_0"),
                                                       MN_NAMES("q8_0")};
#undef MN_NAMES
    const int t = type == RF_TYPE_Q4_K ? 0 : type == RF_TYPE_Q5_K ? 1 : type == RF_TYPE_Q6_K ? 2 : type == RF_TYPE_Q4_0 ? 3
                  : type == RF_TYPE_Q8_0 ? 4 : -1;
    return t < 0 || nc < 1 || nc > MN_MAX_COLS ? NULL : names[t][nc - 1];
}

/* ROCMFORGE_HIP_MATMUL_NORM=0: the matmul and the fused norm as two launches (A/B). */
static int matmul_norm_on(void) {
    static atomic_int on = -1; /* -1: not read yet */
    int v = atomic_load_explicit(&on, memory_order_relaxed);
    if (v < 0) {
        const char *s = getenv("ROCMFORGE_HIP_MATMUL_NORM");
        v = !(s && *s == '0');
        atomic_store_explicit(&on, v, memory_order_relaxed);
    }
    return v;
}

/* f32 [K, M] with rows 4 K bytes apart, 16-byte aligned (the kernel's layout for all five). */
static int dense_rows(const rf_tensor *t, int64_t K, int64_t M) {
    return pm_dense_f32(t) && t->ne[0] == K && t->ne[1] == M && t->ne[2] == 1 && t->ne[3] == 1 && (uintptr_t)t->data % 16 == 0;
}

static int32_t claim_matmul_norm(const rf_graph *g, int32_t first, const rf_pack_device *dev, rf_fusion_launch *l) {
    const rf_node *mm, *add, *norm, *mul;
    const rf_tensor *prod, *res, *sum, *nd, *y, *w;
    int64_t N, M;
    int type, form;
    if (first + 3 >= g->n_nodes || !pm_nvidia(dev) || !rf_pack_launch_has(dev, offsetof(rf_fusion_launch, counters) + sizeof(uint32_t)))
        return 0;
    mm = g->nodes[first], add = g->nodes[first + 1], norm = g->nodes[first + 2], mul = g->nodes[first + 3];
    if (add->op != RF_OP_ADD || norm->op != RF_OP_RMS_NORM || mul->op != RF_OP_MUL || !matmul_norm_on() || !pm_plain_matmul(mm)) return 0;
    prod = mm->dst, N = prod->ne[0], M = prod->ne[1], type = mm->src[0]->type;
    if (M < 1 || M > MN_MAX_COLS || N > MN_MAX_ROW || N % 32 || !norm_kernel(type, M)) return 0;
    form = rf_pack_matmul_form(dev, mm);
    if (form != (M == 1 ? RF_MATMUL_VECTOR : RF_MATMUL_COLUMNS)) return 0;
    /* The add of the product and the residual (either order), normalised, times a weight row. */
    res = add->src[0] == prod ? add->src[1] : add->src[1] == prod ? add->src[0] : NULL;
    sum = add->dst, nd = norm->dst, y = mul->dst, w = mul->src[1];
    if (!res || norm->src[0] != sum || mul->src[0] != nd) return 0;
    if (!dense_rows(prod, N, M) || !dense_rows(res, N, M) || !dense_rows(sum, N, M) || !dense_rows(nd, N, M) || !dense_rows(y, N, M) ||
        !dense_rows(w, N, 1))
        return 0;
    /* The product is stored while other blocks still compute theirs: on nothing the last block
     * reads. That block works a row at a time, each element's reads before its writes: an output
     * may lie exactly on an input (the same bytes, element for element), nowhere else on one. */
    if (pm_overlap(prod, res) || pm_overlap(prod, w) || pm_overlap(prod, mm->src[0])) return 0;
    {
        const rf_tensor *outs[3] = {sum, nd, y}, *ins[5] = {prod, res, w, sum, nd};
        int i, j;
        for (i = 0; i < 3; ++i)
            for (j = 0; j < 5; ++j)
                if (outs[i] != ins[j] && pm_overlap(outs[i], ins[j]) && (outs[i]->data != ins[j]->data || j == 2)) return 0;
    }
    l->kernel = norm_kernel(type, M);
    l->threads = MN_THREADS;
    l->grid[0] = (uint32_t)(N / 32); /* a row a warp */
    l->src[0] = (rf_tensor_ref){0, 0};                                        /* weights */
    l->src[1] = (rf_tensor_ref){1, (int16_t)(add->src[0] == prod ? 1 : 0)}; /* residual */
    l->src[2] = (rf_tensor_ref){3, 1};                                        /* norm weight */
    l->src[3] = (rf_tensor_ref){1, RF_BIND_DST};                              /* sum */
    l->src[4] = (rf_tensor_ref){2, RF_BIND_DST};                              /* normalised */
    l->words[0] = (rf_kargs_word){RF_KFIELD_DST_NE0 + 0, {0, RF_BIND_DST}, 0}; /* product */
    l->words[1] = (rf_kargs_word){RF_KFIELD_DST_NE0 + 1, {3, RF_BIND_DST}, 0}; /* MUL's result */
    l->words[2] = (rf_kargs_word){RF_KFIELD_DST_NE0 + 2, {RF_BIND_COUNTERS, 0}, 0};
    l->words[3] = (rf_kargs_word){RF_KFIELD_DST_NE0 + 3, {RF_BIND_Q8_OF, 0}, 0};
    l->words[4] = (rf_kargs_word){RF_KFIELD_AUX0 + 2, {RF_BIND_LENT, 0}, 0}; /* the blocks' partial sums */
    l->lent_bytes = (uint64_t)(N / 32 * M * 8 + 15) / 16 * 16;
    l->counters = 1;
    l->fparams[0] = norm->fparams[0];
    pm_decode_input(l, pm_act_block(type), mm->src[0], M); /* act_in: aux[0] stride; iparams[7] */
    l->q8_of = (rf_tensor_ref){3, RF_BIND_DST};
    l->q8_aux_block = 1;
    return 4;
}

/* The launch on the host: the product as the decode kernels compute it, then each column as
 * norm_fused.c's host run: sum, normalised, times the weight, the q8_1 column where lent. */
static int32_t host_matmul_norm(const rf_kargs *a, const rf_fusion_launch *l) {
    const rf_ktensor *w = &a->src[0];
    const int64_t K = w->ne[0], N = w->ne[1], M = a->src[3].ne[1], stride = a->aux[l->q8_aux_stride];
    float *prod = (float *)(uintptr_t)a->dst.ne[0], *y = (float *)(uintptr_t)a->dst.ne[1];
    unsigned char *q8 = (unsigned char *)(uintptr_t)a->dst.ne[3];
    const float *res = (const float *)a->src[1].data, *nw = (const float *)a->src[2].data;
    float *sum = (float *)a->src[3].data, *nd = (float *)a->src[4].data;
    int64_t m, n;
    if (!a->scratch || !pm_q8_dot_type(w->type) || *(const int *)(uintptr_t)a->dst.ne[2] != 0) return RF_ERR_INVALID;
    for (m = 0; m < M; ++m)
        for (n = 0; n < N; ++n)
            prod[m * N + n] = pm_matmul_out(w->type, 0, (const unsigned char *)w->data + n * w->nb[1], (const unsigned char *)a->scratch + m * stride, K);
    for (m = 0; m < M; ++m) {
        double sum_sq = 0;
        float scale;
        for (n = 0; n < N; ++n) {
            const float v = prod[m * N + n] + res[m * N + n];
            sum[m * N + n] = v;
            sum_sq += (double)v * v;
        }
        scale = (float)(1.0 / sqrt(sum_sq / (double)N + (double)l->fparams[0]));
        for (n = 0; n < N; ++n) {
            nd[m * N + n] = sum[m * N + n] * scale;
            y[m * N + n] = nd[m * N + n] * nw[n];
        }
        if (q8 && a->aux[l->q8_aux_block])
            pm_quantize_q8_1(y + m * N, N, (int)a->aux[l->q8_aux_block], q8 + m * RF_Q8_1_COLUMN_BYTES(N));
    }
    return RF_OK;
}

const rf_fusion rf_fusion_matmul_norm = {
    /* .struct_size = */ sizeof(rf_fusion),
    /* .name        = */ "matmul_add_norm",
    /* .kernel      = */ "rf_mvq_multi", /* each launch names its own; this one is in every arch's pack */
    /* .first_op    = */ RF_OP_MATMUL,
    /* .claim       = */ claim_matmul_norm,
    /* .host_run    = */ host_matmul_norm,
};
