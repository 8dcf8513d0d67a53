/* What the kernel packs' matmul fusions (gate_up.c, matmul_rope.c) share: the decode matmul
 * kernels' names and launch rules (kernels/matmul_vec.hip), the tests of the matmuls they
 * replace, and the backend options they read (rf_pack_options). Plain C, as pack_match.h. */
#ifndef ROCMFORGE_PACK_MATMUL_FUSION_H
#define ROCMFORGE_PACK_MATMUL_FUSION_H
#include <stdint.h>

#include "rocmforge/pack_abi.h"

/* Columns one launch of the column kernels covers (rf_mvqn_<type>_<NC>f, NC = 1..8). */
#define PM_MAX_COLS 8

/* Rows of at least this many elements take the wide-row forms of the one-column two-row kernels
 * (rf_mvqn_q4_k_1fw, rf_mvq_proj2w_q4_k*): a column's q8_1 pieces loaded once for both rows.
 * That paid for 7B's K = 4096 and lost for TinyLlama's 2048. */
#define PM_WIDE_K 4096
/* rf_mvqn_<type>_<nc>f for the five dp4a weight types (Q4_K, Q5_K, Q6_K, Q4_0, Q8_0), nc = 1..8
 * (rf_mvqn_q4_k_1fw for nc = 1, rows of K >= PM_WIDE_K): a string literal; NULL
 * for another type or count. */
const char *pm_cols_kernel(int type, int64_t nc, int64_t K);
/* The joined projections' kernel for weights of types a and b (in either order) and rows of K
 * elements: rf_mvq_proj_<type> where both are one q8_1 type, rf_mvq_proj_<type>_q6_k for Q4_K or
 * Q5_K with Q6_K (a K-quant "_M" layer), else NULL (rf_mvq_proj, any types); rows = 2: their
 * two-rows-a-warp forms (rf_mvq_proj2_*, NVIDIA packs; rf_mvq_proj2w_* for Q4_K at K >=
 * PM_WIDE_K), none for Q6_K alone. */
const char *pm_proj_kernel(int a, int b, int rows, int64_t K);
/* Columns the joined column projections take (rf_mvqn_proj_<type>_<NC>, NC = 2..4). */
#define PM_JOIN_MAX_COLS 4
/* Their kernel for weights of types a and b over nc columns: the type pairs of pm_proj_kernel
 * (with Q6_K alone too), nc = 2..PM_JOIN_MAX_COLS; else NULL. */
const char *pm_proj_cols_kernel(int a, int b, int64_t nc);
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

/* A ROPE NORMAL over the whole product of mm (rp), one token per activation row: heads of D
 * elements (even), dense, the positions one i32 per token, the frequency factors f32 (or none).
 * The rotated rows may replace the product exactly, or lie on the matmul's input vector for
 * quantized weights (the kernels read only its q8_1 copy, made before the launch); no other
 * overlap. */
int pm_rope_of_product(const rf_node *mm, const rf_node *rp);
/* Where a rope kernel reads the angles of ROPE node `rope` (the slot its launches bind in place
 * of the positions): the node's (cos, sin) rows (src3) where the kernels can read them
 * (rf_rope_angles_readable), else its positions (src1). */
int16_t pm_rope_angles_slot(const rf_node *rope);
/* A rope rf_rope_f32 takes as either of its tensors: dense f32 heads [D, H, T], in place or on
 * bytes of its own, NeoX pairs within a head, plain angles or the graph's angle rows. */
int pm_plain_rope(const rf_node *r);
/* Two ROPE nodes with the same angles: positions, rows, factors, n_rot, base and scale. */
int pm_same_angles(const rf_node *a, const rf_node *b);

/* The backend's options for the packs (rf_pack_device.options), or the defaults where the
 * backend passes none (an older backend, a NULL pointer). */
const rf_pack_options *pm_options(const rf_pack_device *dev);

/* The activation input of an rf_mvq_multi / rf_mvqn_*f launch replacing the matmul at claimed
 * node 0: its src[1] lent as `block` says (pm_act_in_block), the column stride in aux[0], and
 * mv.no_weight_prefetch = 1 (no L2 prefetch of the weight rows before the wait)
 * unless weight w is pulled in as rf_pack_options.weight_prefetch says: every matrix, none, or
 * (the default) one launch (one activation column) of a matrix of at most prefetch_max_bytes, as
 * the backend does for its own decode matmuls (backends/hip/ops.cpp no_weight_prefetch). */
void pm_decode_input(rf_fusion_launch *l, const rf_pack_device *dev, int block, const rf_tensor *w, int64_t columns);
/* The same with the bytes the launch reads of its weights given (a MATMUL_ID reads only the routed
 * experts' rows). */
void pm_decode_input_bytes(rf_fusion_launch *l, const rf_pack_device *dev, int block, uint64_t weight_bytes, int64_t columns);

/* The head of a launch's weights pulled into L2 before rf_kernel_start, while the kernel before
 * it (the fused norm: short, and no weight traffic) runs: the first blocks' rows, about
 * rf_pack_options.prefetch_head_bytes (0: none), in the gate/up, joined projection and column
 * launches (the whole matrix competes with the matmul before for bandwidth and does not stay in
 * L2: docs/PERFORMANCE.md). The number of blocks whose rows (block_bytes each) make up the head,
 * at most `blocks`; 0: none. */
int64_t pm_prefetch_head(const rf_pack_device *dev, int64_t block_bytes, int64_t blocks);
/* For an rf_mvqn_<type>_<NC>f or rf_mvq_multi launch that pulls none of its weights into L2
 * (mv.no_weight_prefetch = 1): its head instead (no_weight_prefetch = 0, prefetch_head_blocks = the
 * blocks that prefetch), block_bytes a block. */
void pm_cols_prefetch_head(rf_fusion_launch *l, const rf_pack_device *dev, int64_t block_bytes);

/* The rope form's bindings of a decode matmul launch (rf_mvq_multi, rf_mvqn_<type>_<NC>f): the
 * matmul at claimed node `node` and its rope rp at node + 1 (weights src[0], product dst, positions
 * src[1], factors src[2] when rp has them, rotation src[3]; mv.form RF_KP_MV_ROPE, n_rot, head_dim,
 * freq_base, freq_scale). */
void pm_bind_rope_form(rf_fusion_launch *l, const rf_node *rp, int16_t node);
/* rf_mvqn_<type>_<NC>f for matmul mm at claimed node `node`: its rope form with rp (at node + 1),
 * without rp its plain form (RF_KP_MV_PLAIN: two rows of mm a warp); the columns in chunks
 * (pm_column_chunks, grid y), the activations as the backend lends them. 0 where no launch covers
 * mm's columns (the launch is then partly written: the claim must decline). */
int pm_cols_launch(rf_fusion_launch *l, const rf_pack_device *dev, const rf_node *mm, const rf_node *rp, int16_t node);

/* For the host_runs: one output of a matmul as the decode kernels compute it, weight row `row`
 * dotted with the activations lent (a q8_1 column, or for f32_row the f32 row itself: F16 weights). */
float pm_matmul_out(int type, int f32_row, const unsigned char *row, const unsigned char *act, int64_t K);
/* Rotation pair r (< n_rot / 2) of token t's head, as rope.hip rotates it: its (cos, sin) from the
 * kernel's angle slot (the graph's rows when f32, else i32 positions: the angle in double;
 * factors: the frequency factors or NULL). */
void pm_rope_pair(float x0, float x1, int64_t r, const rf_ktensor *angles, int64_t t, int n_rot, float base, float fscale,
                  const float *factors, float *y0, float *y1);

#endif
