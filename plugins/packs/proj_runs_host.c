/* See proj_runs_host.h. The tile kernels sum their integer products in another order than the dp4a
 * kernels whose float pm_matmul_out gives (q8_dot.c), so a product may differ from the GPU's in
 * the last bits; the rotations are rope.hip's bit for bit (pm_rope_pair). */
#include "proj_runs_host.h"

#include <string.h>

#include "matmul_fusion.h"
#include "pack_match.h"
#include "q8_dot.h"

#define MMQ_ROWS 64 /* weight rows per tile (RF_MMQ_ROWS) */

/* The kernel's weight type, columns per block and blocks per cluster from its name,
 * rf_mmq_<type>_<cols>_k<split>; 0 for a name of no rf_mmq kernel. */
static int mmq_kernel_of(const char *name, int *type, int64_t *cols, int64_t *split) {
    static const struct { const char *suffix; int type; } types[] = {
        {"q4_k", RF_TYPE_Q4_K}, {"q5_k", RF_TYPE_Q5_K}, {"q6_k", RF_TYPE_Q6_K}, {"q4_0", RF_TYPE_Q4_0}, {"q8_0", RF_TYPE_Q8_0}};
    const char *p;
    size_t i;
    if (!name || strncmp(name, "rf_mmq_", 7) != 0) return 0;
    p = name + 7;
    for (i = 0; i < sizeof types / sizeof types[0]; ++i)
        if (strncmp(p, types[i].suffix, 4) == 0 && p[4] == '_') break;
    if (i == sizeof types / sizeof types[0]) return 0;
    *type = types[i].type;
    p += 5;
    if (strncmp(p, "8_k", 3) == 0) *cols = 8, p += 3;
    else if (strncmp(p, "16_k", 4) == 0) *cols = 16, p += 4;
    else if (strncmp(p, "32_k", 4) == 0) *cols = 32, p += 4;
    else return 0;
    if ((p[0] != '1' && p[0] != '2' && p[0] != '4') || p[1]) return 0;
    *split = p[0] - '0';
    return 1;
}

/* store_pool_elem (kernels/quant_decode.h): element e of a pool row, f16 or f32. */
int32_t pm_host_mmq(const rf_kargs *a, const rf_fusion_launch *l) {
    const int64_t K = a->src[0].ne[0], M = a->src[1].ne[1], xs = a->aux[0];
    const int append = a->mmq.append_segment;
    int type = 0;
    int64_t cols = 0, split = 0, rows_done, cols_done, z;
    if (!mmq_kernel_of(l->kernel, &type, &cols, &split) || !a->scratch || l->grid[2] < 1 || l->grid[2] > 3 || l->grid[0] % split)
        return RF_ERR_INVALID;
    /* Blocks (x, y): cluster x / split takes rows from 64 (x / split), y the columns from cols y. */
    rows_done = (int64_t)(l->grid[0] / split) * MMQ_ROWS;
    cols_done = (int64_t)l->grid[1] * cols;
    if (append && (append > (int)l->grid[2] || !a->aux[3] || !a->src[4].data ||
                   (a->mmq.pool_type != RF_TYPE_F16 && a->mmq.pool_type != RF_TYPE_F32)))
        return RF_ERR_INVALID;
    for (z = 0; z < (int64_t)l->grid[2]; ++z) { /* mmq_segment() */
        const rf_ktensor *w = z == 0 ? &a->src[0] : z == 1 ? &a->src[2] : &a->src[3];
        char *out = z == 0 ? (char *)a->dst.data : (char *)(uintptr_t)a->aux[z];
        const int64_t onb = z == 0 ? a->dst.nb[1] : a->mmq.out_col_bytes[z - 1];
        const int64_t N = w->ne[1] < rows_done ? w->ne[1] : rows_done;
        int64_t m, n;
        if (w->type != type || !w->data || !out) return RF_ERR_INVALID;
        for (m = 0; m < M && m < cols_done; ++m) {
            const unsigned char *col = (const unsigned char *)a->scratch + m * xs;
            char *pool = append == z + 1 ? (char *)(uintptr_t)a->aux[3] + (int64_t)((const int32_t *)a->src[4].data)[m] * a->mmq.pool_row_bytes : NULL;
            for (n = 0; n < N; ++n) { /* mmq_store() */
                const float v = pm_matmul_out(type, 0, (const unsigned char *)w->data + n * w->nb[1], col, K);
                ((float *)(out + m * onb))[n] = v;
                if (pool) pm_pool_store(pool, a->mmq.pool_type, n, v);
            }
        }
    }
    return RF_OK;
}

/* Head group y of one tensor of rf_rope_f32 (heads 8y..8y+7 of every token): x into d, token t's
 * rotated rows also into pool row slots[t] when pool is given. */
static void rope_group(const rf_kargs *a, const rf_ktensor *x, const rf_ktensor *d, int64_t y, const char *pool) {
    const int64_t D = x->ne[0], H = x->ne[1], T = x->ne[2], half = D / 2, h0 = 8 * y;
    const int mode = a->rope.mode, n_rot = a->rope.n_rot;
    const float *factors = (const float *)a->src[2].data; /* may be NULL */
    int64_t t, h, i;
    for (t = 0; t < T; ++t)
        for (h = h0; h < h0 + 8 && h < H; ++h) {
            const float *xr = (const float *)((const char *)x->data + h * x->nb[1] + t * x->nb[2]);
            float *yr = (float *)((char *)d->data + h * d->nb[1] + t * d->nb[2]);
            char *prow = pool ? (char *)(uintptr_t)a->aux[1] + (int64_t)((const int32_t *)pool)[t] * a->aux[3] : NULL;
            for (i = 0; i < half; ++i) {
                int64_t j0 = 2 * i, j1 = 2 * i + 1;
                float y0, y1;
                if (i < n_rot / 2) {
                    if (mode == RF_ROPE_NEOX) j0 = i, j1 = i + n_rot / 2;
                    pm_rope_pair(xr[j0], xr[j1], i, &a->src[1], t, n_rot, a->rope.freq_base, a->rope.freq_scale, factors, &y0, &y1);
                } else {
                    y0 = xr[j0], y1 = xr[j1];
                }
                yr[j0] = y0, yr[j1] = y1;
                if (prow) {
                    pm_pool_store(prow, a->rope.pool_type, h * D + j0, y0);
                    pm_pool_store(prow, a->rope.pool_type, h * D + j1, y1);
                }
            }
        }
}

int32_t pm_host_rope(const rf_kargs *a, const rf_fusion_launch *l) {
    const int64_t G = a->aux[0], groups = l->grid[1];
    const int n_rot = a->rope.n_rot;
    const char *slots = a->aux[1] ? (const char *)(uintptr_t)a->aux[2] : NULL;
    int64_t y;
    if (!a->src[0].data || !a->dst.data || !a->src[1].data || (G > 0 && (!a->src[3].data || !a->src[4].data))) return RF_ERR_INVALID;
    if (a->aux[1] && (!slots || (a->rope.pool_type != RF_TYPE_F16 && a->rope.pool_type != RF_TYPE_F32))) return RF_ERR_INVALID;
    /* NeoX pairs reach n_rot / 2 elements ahead: past the row where n_rot exceeds a head. */
    if (a->rope.mode == RF_ROPE_NEOX && (n_rot > a->src[0].ne[0] || (G > 0 && n_rot > a->src[3].ne[0]))) return RF_ERR_INVALID;
    /* Every token is some block x's (x, x + grid x, ..): only the head groups depend on the grid. */
    for (y = 0; y < groups; ++y) {
        if (G > 0 && y >= G) rope_group(a, &a->src[3], &a->src[4], y - G, NULL);
        else rope_group(a, &a->src[0], &a->dst, y, slots);
    }
    return RF_OK;
}

int32_t pm_host_mmq_run(const rf_kargs *a, const rf_fusion_launch *l) {
    if (l->kernel && strncmp(l->kernel, "rf_mmq_", 7) == 0) return pm_host_mmq(a, l);
    if (!l->kernel || strcmp(l->kernel, "rf_rope_f32") == 0) return pm_host_rope(a, l);
    return RF_ERR_INVALID;
}

/* rf_mvqn_proj_<type>_<NC> (kernels/matmul_vec.hip): every segment's rows over the NC columns (the
 * kernel name's last digit), the rotations, the two pools' appends. */
static int32_t host_cols_join(const rf_kargs *a, const rf_fusion_launch *l) {
    const int nseg = a->mvn_proj.n_segments, n_rot = a->mvn_proj.n_rot;
    const int64_t D = a->mvn_proj.head_dim, stride = a->aux[0], M = l->kernel[strlen(l->kernel) - 1] - '0';
    const int32_t *slots[2] = {(const int32_t *)(uintptr_t)a->aux[3], (const int32_t *)(uintptr_t)a->dst.ne[3]};
    char *pools[2] = {(char *)(uintptr_t)a->aux[1], (char *)(uintptr_t)a->aux[2]};
    const int64_t pool_row[2] = {a->dst.nb[3], a->mvn_proj.pool_b_row_bytes};
    int s, p;
    int64_t m, n;
    if (!a->scratch || nseg < 2 || nseg > 3 || M < 2 || M > 4) return RF_ERR_INVALID;
    for (p = 0; p < 2; ++p)
        if (a->mvn_proj.pool_segment[p] &&
            (!pools[p] || !slots[p] || (a->mvn_proj.pool_type[p] != RF_TYPE_F16 && a->mvn_proj.pool_type[p] != RF_TYPE_F32)))
            return RF_ERR_INVALID;
    for (s = 0; s < nseg; ++s) {
        const rf_ktensor *w = &a->src[s];
        const int64_t N = w->ne[1];
        float *prod = (float *)(uintptr_t)(s == 0 ? a->dst.ne[0] : s == 1 ? a->dst.ne[1] : a->dst.ne[2]);
        float *rot = (float *)(uintptr_t)(s == 0 ? a->dst.nb[0] : s == 1 ? a->dst.nb[1] : a->dst.nb[2]);
        if (!pm_q8_dot_type(w->type) || N % 8 || (rot && (!a->src[3].data || D < 2))) return RF_ERR_INVALID;
        for (m = 0; m < M; ++m) {
            const unsigned char *act = (const unsigned char *)a->scratch + m * stride;
            for (n = 0; n < N; n += 2) {
                const float x0 = pm_matmul_out(w->type, 0, (const unsigned char *)w->data + n * w->nb[1], act, w->ne[0]);
                const float x1 = pm_matmul_out(w->type, 0, (const unsigned char *)w->data + (n + 1) * w->nb[1], act, w->ne[0]);
                const int64_t r = rot ? (n % D) / 2 : 0; /* D = 0 where the run has no rope */
                float y0 = x0, y1 = x1;
                if (rot && r < n_rot / 2)
                    pm_rope_pair(x0, x1, r, &a->src[3], m, n_rot, a->mvn_proj.freq_base, a->mvn_proj.freq_scale, (const float *)a->src[4].data, &y0, &y1);
                if (prod) prod[m * N + n] = x0, prod[m * N + n + 1] = x1;
                if (rot) rot[m * N + n] = y0, rot[m * N + n + 1] = y1;
                for (p = 0; p < 2; ++p) {
                    char *row = a->mvn_proj.pool_segment[p] == s + 1 ? pools[p] + (int64_t)slots[p][m] * pool_row[p] : NULL;
                    if (row) pm_pool_store(row, a->mvn_proj.pool_type[p], n, y0), pm_pool_store(row, a->mvn_proj.pool_type[p], n + 1, y1);
                }
            }
        }
    }
    return RF_OK;
}

/* rf_mvqn_<type>_<NC>f: one matrix, its rope or plain form, its append. */
static int32_t host_cols_launch(const rf_kargs *a, const rf_fusion_launch *l) {
    const rf_ktensor *w = &a->src[0], *rd = &a->src[3], *pool = &a->src[4];
    const int64_t K = w->ne[0], N = a->dst.ne[0], M = a->dst.ne[1], stride = a->aux[l->q8_aux_stride];
    const int64_t D = a->mv.head_dim, n_rot = a->mv.n_rot;
    const int rope = a->mv.form == RF_KP_MV_ROPE, append = a->mv.append != 0;
    const int32_t *slots = (const int32_t *)(uintptr_t)a->aux[2];
    int64_t m, n;
    if (!a->scratch || !pm_q8_dot_type(w->type) || (a->mv.form != RF_KP_MV_ROPE && a->mv.form != RF_KP_MV_PLAIN) || N % 2) return RF_ERR_INVALID;
    if (append && (!pool->data || !slots || (pool->type != RF_TYPE_F16 && pool->type != RF_TYPE_F32))) return RF_ERR_INVALID;
    for (m = 0; m < M; ++m) {
        const unsigned char *act = (const unsigned char *)a->scratch + m * stride;
        float *prod = (float *)pm_row(&a->dst, m), *rot = rope ? (float *)((char *)rd->data + m * 4 * N) : NULL;
        char *prow = append ? (char *)pool->data + (int64_t)slots[m] * pool->nb[1] : NULL;
        for (n = 0; n < N; n += 2) { /* a warp's pair of rows: rotation pair (n, n + 1) of head n / D */
            const float x0 = pm_matmul_out(w->type, 0, (const unsigned char *)w->data + n * w->nb[1], act, K);
            const float x1 = pm_matmul_out(w->type, 0, (const unsigned char *)w->data + (n + 1) * w->nb[1], act, K);
            float y0 = x0, y1 = x1;
            const int64_t r = rope ? (n % D) / 2 : 0;
            if (rope && r < n_rot / 2) pm_rope_pair(x0, x1, r, &a->src[1], m, (int)n_rot, a->mv.freq_base, a->mv.freq_scale, (const float *)a->src[2].data, &y0, &y1);
            prod[n] = x0, prod[n + 1] = x1;
            if (rot) rot[n] = y0, rot[n + 1] = y1;
            if (prow) pm_pool_store(prow, pool->type, n, y0), pm_pool_store(prow, pool->type, n + 1, y1);
        }
    }
    return RF_OK;
}

int32_t pm_host_cols_run(const rf_kargs *a, const rf_fusion_launch *l) {
    if (l->kernel && strncmp(l->kernel, "rf_mvqn_proj_", 13) == 0) return host_cols_join(a, l);
    return host_cols_launch(a, l);
}
