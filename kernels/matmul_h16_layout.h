// Tile and shared-memory layout of the F16 prefill matmuls rf_mm_h16_<BM> (matmul_h16.hip),
// shared with the host (backends/hip/matmul_h16.cpp), which passes the dynamic shared memory.
#pragma once

#define RF_H16_BN 128     // weight rows per block
#define RF_H16_BK 32      // halves of K per step
#define RF_H16_LD 40      // halves per shared row (32 + 8 pad): rows 80 bytes apart, ldmatrix conflict-free
#define RF_H16_STAGES 4   // K steps in shared memory at once
#define RF_H16_THREADS 256
#define RF_H16_SMEM(BM) (RF_H16_STAGES * (RF_H16_BN + (BM)) * RF_H16_LD * 2)

// rf_mm_h16w_128_k<KS> (matmul_h16_wgmma.hip, sm_90a): 128 tokens x 128 weight rows per block,
// K steps of 64 halves (one 128-byte swizzle row), two warpgroups; 1 KB of slack to align the
// stages to the swizzle pattern's 1024 bytes.
#define RF_H16W_BM 128
#define RF_H16W_BN 128
#define RF_H16W_STAGES 5
#define RF_H16W_THREADS 256
#define RF_H16W_SMEM (RF_H16W_STAGES * (RF_H16W_BM + RF_H16W_BN) * 128 + 1024)

// rf_mm_q16w_<type>_t<R>_k<KS> (the same tiles, weights dequantized to f16 in shared memory, R x 128
// tokens a block): RF_Q16W_STAGES activation stages, two f16 weight tiles, RF_Q16W_RAW_STAGES raw
// weight stages of 128 rows x G granules (G per format: matmul_h16_wgmma.hip Q16wFmt). A raw stage
// is free one step after its decode, an activation stage only once the tensor cores are done with
// it (two steps): one raw stage fewer.
#define RF_Q16W_STAGES 4
#define RF_Q16W_RAW_STAGES 3
// Granules staged per row for a step whose bytes span `span`: up to 14 bytes of misalignment
// before them (2-byte aligned rows), rounded up to 16 and made odd, so that rows 16 G bytes apart
// start in 8 different 16-byte bank groups and the decoding threads' word loads do not conflict.
#define RF_Q16W_GRANULES(span) ((((span) + 14 + 15) / 16) | 1)
// The K-quants stage only the granules a step reads, packed: Q4_K the header and the quarter's
// quants (16-byte aligned rows), Q5_K also the high bits, Q6_K (2-byte aligned) the half's low
// bits (5 granules), its high bits (3) and the scales with d (2), one granule of padding.
#define RF_Q16W_G_Q4_K 3
#define RF_Q16W_G_Q5_K 5
#define RF_Q16W_G_Q6_K 11
#define RF_Q16W_SMEM(R, G)                                                                                              \
    (RF_Q16W_STAGES * (R) * RF_H16W_BM * 128 + 2 * RF_H16W_BN * 128 + RF_Q16W_RAW_STAGES * RF_H16W_BN * 16 * (G) + 1024)
// The most dynamic shared memory a block may take on sm_90 (227 KB).
#define RF_Q16W_SMEM_MAX 232448
