/* Tiling of the tensor-core prefill attention (kernels/attention_prefill_mma.hip), read by the
 * kernel and by the host (backends/hip/ops.cpp), which sizes the grid and the dynamic shared
 * memory from it. Plain C, no includes. */
#ifndef RF_ATTENTION_MMA_LAYOUT_H
#define RF_ATTENTION_MMA_LAYOUT_H

#define RF_ATM_THREADS 128 /* 4 warps x 16 queries */
#define RF_ATM_BQ 64       /* queries per block */
#define RF_ATM_BKV 64      /* KV positions per shared-memory stage */
/* f16 elements per staged K or V row: D + 8 of padding (conflict-free ldmatrix rows). */
#define RF_ATM_LD(D) ((D) + 8)
/* Head sizes whose Q fragments live in shared memory instead of registers. */
#define RF_ATM_Q_SHARED(D) ((D) > 128)
/* Dynamic shared memory: two stages of a K and a V tile of RF_ATM_BKV rows, then (Q_SHARED) the
 * block's RF_ATM_BQ query rows. */
#define RF_ATM_SMEM_BYTES(D) ((2 * 2 * RF_ATM_BKV + (RF_ATM_Q_SHARED(D) ? RF_ATM_BQ : 0)) * RF_ATM_LD(D) * 2)

#endif
