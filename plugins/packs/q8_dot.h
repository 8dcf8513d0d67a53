/* Host (CPU) reference of the decode matmuls' dot products (kernels/matmul_vec.hip with the
 * per-format pieces of kernels/mvq_blocks.h), for the host_run of the pack fusions that end in
 * a matmul: a weight row of a quantized type dotted with one q8_1 activation column (the layout
 * of rocmforge/pack_abi.h, as pm_quantize_q8_1 writes it), and an F16 row with an f32 vector.
 *
 * The arithmetic is the kernels': int32 sums of weight quants times activation quants per lane
 * piece (Q4_K / Q5_K: 16 elements of a 32-element sub-block; Q6_K: 8 elements of a 16-element
 * scale group; Q4_0, Q5_0: the 32-element block; Q8_0: 16 elements; IQ4_XS and the grid i-quants:
 * a 32-element sub-block), then the float scaling steps of
 * the kernel, fused multiply-adds where the kernel writes them (fmaf), accumulated in float by
 * 32 emulated lanes over the blocks the kernel gives each lane and summed with the warp's
 * butterfly. Exact bits with the GPU are not promised (see q8_dot.c), the formula is the same.
 * Plain C: the packs build against the installed headers only. */
#ifndef ROCMFORGE_PACK_Q8_DOT_H
#define ROCMFORGE_PACK_Q8_DOT_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when pm_dot_q8_1 handles weight type `type` (RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K,
 * RF_TYPE_Q4_0, RF_TYPE_Q5_0, RF_TYPE_Q8_0, RF_TYPE_IQ4_XS, RF_TYPE_IQ2_XXS,
 * RF_TYPE_IQ3_XXS, RF_TYPE_IQ3_S, RF_TYPE_IQ2_XS, RF_TYPE_IQ2_S,
 * RF_TYPE_IQ1_S, RF_TYPE_IQ1_M, RF_TYPE_TQ2_0), else 0. */
int pm_q8_dot_type(int type);
/* The q8_1 block the decode kernels quantize activations in for weight type `type`: 256 for the
 * K-quants (Q4_K, Q5_K, Q6_K), IQ4_XS and the grid i-quants, 32 for Q4_0, Q5_0 and Q8_0, 0 for any
 * other type. */
int pm_act_block(int type);
/* Dot product of one weight row (K elements of `type`, K a multiple of the type's block: 256 for
 * K-quants and the 256-element i-quants, 32 for Q4_0/Q5_0/Q8_0) with one q8_1 activation column (RF_Q8_1_COLUMN_BYTES(K) bytes,
 * quantized in blocks of pm_act_block(type)). NaN for a type pm_q8_dot_type refuses or a K that
 * is not a positive multiple of the block. No alignment is required of row or col. */
float pm_dot_q8_1(int type, const unsigned char *row, const unsigned char *col, int64_t K);
/* Dot product of an F16 row (IEEE half bits) with an f32 vector (any K >= 0). */
float pm_dot_f16(const uint16_t *row, const float *x, int64_t K);

#ifdef __cplusplus
}
#endif

#endif
