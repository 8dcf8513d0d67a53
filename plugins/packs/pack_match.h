/* Tensor tests the fusions of ROCmForge's kernel packs share (the .c files of plugins/packs): what the
 * kernels assume of their operands, and overlap of the bytes two tensors cover (the executor
 * reuses memory after a tensor's last reader, so a fused kernel's outputs may lie on its
 * inputs). Plain C: the packs build against the installed headers only. */
#ifndef ROCMFORGE_PACK_MATCH_H
#define ROCMFORGE_PACK_MATCH_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rocmforge/pack_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* f32 with contiguous elements. */
static inline int pm_plain_f32(const rf_tensor *t) { return t && t->type == RF_TYPE_F32 && t->nb[0] == 4; }
static inline int pm_same_shape(const rf_tensor *a, const rf_tensor *b) { return memcmp(a->ne, b->ne, sizeof a->ne) == 0; }
/* Data and row/slice strides multiples of a bytes (absent: true). */
static inline int pm_aligned(const rf_tensor *t, int64_t a) {
    return !t || ((uintptr_t)t->data % (uintptr_t)a == 0 && t->nb[1] % a == 0 && t->nb[2] % a == 0 && t->nb[3] % a == 0);
}
static inline int pm_rows16(const rf_tensor *t) { return pm_aligned(t, 16); }
/* A dense 2-D tensor of `type` with elements of elem bytes. */
static inline int pm_dense_2d(const rf_tensor *t, int type, int elem) {
    return t && t->type == type && t->nb[0] == elem && t->nb[1] == elem * t->ne[0] && t->ne[2] == 1 && t->ne[3] == 1;
}
/* One past the last byte of t (f32, i32, f16 rows of ne[0] elements, rows of any other type nb[1]
 * bytes; outer dims by their strides). */
static inline uintptr_t pm_end(const rf_tensor *t) {
    const int64_t es = t->type == RF_TYPE_F16 || t->type == RF_TYPE_BF16 ? 2 : t->type == RF_TYPE_F32 || t->type == RF_TYPE_I32 ? 4 : 0;
    uintptr_t end = (uintptr_t)t->data + (uintptr_t)(es ? es * t->ne[0] : t->nb[1]);
    int d;
    for (d = 1; d < RF_MAX_DIMS; ++d) end += (uintptr_t)((t->ne[d] - 1) * t->nb[d]);
    return end;
}
static inline int pm_overlap(const rf_tensor *a, const rf_tensor *b) {
    if (!a || !b || !a->data || !b->data) return 0;
    return (uintptr_t)a->data < pm_end(b) && (uintptr_t)b->data < pm_end(a);
}
/* Whether the device runs NVIDIA packs' kernels (the column kernels rf_mvqn_* exist only there:
 * the AMD packs' claims take one activation row only). */
static inline int pm_nvidia(const rf_pack_device *dev) { return dev->arch && strncmp(dev->arch, "sm_", 3) == 0; }
/* The device's sm number (90 for "sm_90"), 0 for any other arch (AMD). */
static inline int pm_nvidia_sm(const rf_pack_device *dev) { return pm_nvidia(dev) ? atoi(dev->arch + 3) : 0; }
/* Whether the backend's rf_fusion_launch has the q8_1 members (ABI 2.4). */
static inline int pm_launch_has_q8(const rf_pack_device *dev) {
    return rf_pack_launch_has(dev, offsetof(rf_fusion_launch, q8_aux_block) + sizeof(int32_t));
}

/* Row r of t (its rows in ne[1], ne[2], ne[3] order), for the host_runs. */
static inline char *pm_row(const rf_ktensor *t, int64_t r) {
    const int64_t i1 = r % t->ne[1], i2 = r / t->ne[1] % t->ne[2], i3 = r / (t->ne[1] * t->ne[2]);
    return (char *)t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

/* The q8_1 column of n floats (n % 32 == 0) at x into col, as the pack ABI describes it (host_run
 * of the fusions that write columns): blocks of `block` (32 or 256) elements. */
void pm_quantize_q8_1(const float *x, int64_t n, int block, unsigned char *col);

/* A SET_ROWS into a KV pool the kernels cover: dense f32 rows x [E, T], i32 slots [T], an f16/f32
 * pool whose rows hold at least E elements; E * T below 2^30 (rf_set_rows2's element index). */
int pm_pool_append(const rf_node *n);
/* RMS_NORM (x -> nd) then MUL (nd by a row weight w -> md) at nodes at, at + 1, all plain f32 of
 * one shape: 1 and the tensors, else 0. */
typedef struct pm_norm_mul {
    const rf_node *norm;
    const rf_tensor *x, *nd, *md, *w;
} pm_norm_mul;
int pm_match_norm_mul(const rf_graph *g, int32_t at, pm_norm_mul *m);
/* IEEE binary16 of f, rounded to nearest even (the kernels' f2h), for the host_runs of appends. */
uint16_t pm_half_of(float f);
/* Element e of an f16 / f32 pool row set to v (host_runs of appends). */
void pm_pool_store(char *row, int type, int64_t e, float v);

#ifdef __cplusplus
}
#endif

#endif
