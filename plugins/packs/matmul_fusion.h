/* What the kernel packs' matmul fusions (gate_up.c, matmul_rope.c) share: the decode matmul
 * kernels' names and launch rules (kernels/matmul_vec.hip), the tests of the matmuls they
 * replace, and their A/B settings. Plain C, as pack_match.h. */
#ifndef ROCMFORGE_PACK_MATMUL_FUSION_H
#define ROCMFORGE_PACK_MATMUL_FUSION_H
#include <stdint.h>

#include "rocmforge/pack_abi.h"

/* Columns one launch of the column kernels covers (rf_mvqn_<type>_<NC>f, NC = 1..8). */
#define PM_MAX_COLS 8

/* rf_mvqn_<type>_<nc>f for the five dp4a weight types (Q4_K, Q5_K, Q6_K, Q4_0, Q8_0), nc = 1..8:
 * a string literal; NULL for another type or count. */
const char *pm_cols_kernel(int type, int64_t nc);
/* The column chunks of one launch over M columns (grid y): 1 for M <= 8 (*nc = M), M / 8 for a
 * multiple of 8 (*nc = 8), else 0 (no single launch covers them). */
int64_t pm_column_chunks(int64_t M, int64_t *nc);
/* How a launch reads the activations of a matmul of weight type `type` (rf_fusion_launch.
 * act_in_block): the f32 row for F16, else the q8_1 block of the type (pm_act_block); 0: neither. */
int pm_act_in_block(int type);

/* f32, rows contiguous and evenly spaced (no gaps between rows or slices). */
int pm_dense_f32(const rf_tensor *t);
/* A matmul the fused decode kernels cover: one weight matrix, one batch slice, dense f32 output,
 * rows of a multiple of 32 elements, at most 2^30 rows, and an output that does not overlap its
 * input vector. */
int pm_plain_matmul(const rf_node *n);

/* The A/B settings of the decode launches, read from the environment once (claims run for every
 * walked graph). */
enum pm_decode_setting {
    PM_ONE_COLUMN = 1, /* one activation row may take rf_mvqn_<type>_1f (ROCMFORGE_HIP_GATE_UP_COLS, default 1) */
    PM_PREFETCH = 2,   /* weight rows pulled into L2 before the previous kernel ends (ROCMFORGE_HIP_PREFETCH=1) */
};
int pm_decode_settings(void);
/* Whether the device runs NVIDIA packs' kernels (the column kernels exist only there). */
int pm_nvidia(const rf_pack_device *dev);

#endif
