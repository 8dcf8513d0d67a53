/* Shared-memory layout of the integer tensor-core matmuls (kernels/matmul_mmq.hip), read by the
 * kernels and by the host (backends/hip/matmul_mmq.cpp), which sizes the dynamic shared memory
 * of the prefill kernels from it. Per weight format: elements per K step, weight bytes of a
 * full step per row, 16-byte granules staged per row (enough for the bytes at any 2-byte
 * misalignment), staged row stride (== 32 or 96 mod 128: the lanes' 8-byte reads of 8 rows hit
 * distinct banks), 16-byte granules of (d, sum) pairs staged per column. Plain C, no includes. */
#ifndef RF_MMQ_LAYOUT_H
#define RF_MMQ_LAYOUT_H

#define RF_MMQ_Q4_K_STEP 256
#define RF_MMQ_Q4_K_SB 144
#define RF_MMQ_Q4_K_G 9
#define RF_MMQ_Q4_K_WS 160
#define RF_MMQ_Q4_K_XDG 4

#define RF_MMQ_Q5_K_STEP 256
#define RF_MMQ_Q5_K_SB 176
#define RF_MMQ_Q5_K_G 11
#define RF_MMQ_Q5_K_WS 192
#define RF_MMQ_Q5_K_XDG 4

#define RF_MMQ_Q6_K_STEP 256
#define RF_MMQ_Q6_K_SB 210
#define RF_MMQ_Q6_K_G 14
#define RF_MMQ_Q6_K_WS 224
#define RF_MMQ_Q6_K_XDG 1

#define RF_MMQ_Q4_0_STEP 128
#define RF_MMQ_Q4_0_SB 72
#define RF_MMQ_Q4_0_G 6
#define RF_MMQ_Q4_0_WS 96
#define RF_MMQ_Q4_0_XDG 2

/* Q5_0: prefill kernels (rf_mmqp_q5_0_*) only. */
#define RF_MMQ_Q5_0_STEP 128
#define RF_MMQ_Q5_0_SB 88
#define RF_MMQ_Q5_0_G 7
#define RF_MMQ_Q5_0_WS 160
#define RF_MMQ_Q5_0_XDG 2

#define RF_MMQ_Q8_0_STEP 128
#define RF_MMQ_Q8_0_SB 136
#define RF_MMQ_Q8_0_G 10
#define RF_MMQ_Q8_0_WS 160
#define RF_MMQ_Q8_0_XDG 2

/* One stage: `rows` weight rows of WS bytes, `cols` columns of (STEP + 32) quant bytes (32 of
 * padding against bank conflicts), then `cols` x XDG x 16 bytes of (d, sum) pairs. */
#define RF_MMQ_STAGE_BYTES(STEP, WS, XDG, rows, cols) ((rows) * (WS) + (cols) * ((STEP) + 32) + (cols) * (XDG) * 16)

/* Prefill kernels rf_mmqp_<type>_<C>: 128 weight rows x C = 64 or 128 columns per block,
 * 256 threads, RF_MMQP_STAGES stages of dynamic shared memory. */
#define RF_MMQP_ROWS 128
#define RF_MMQP_THREADS 256
#define RF_MMQP_STAGES 3

#endif
