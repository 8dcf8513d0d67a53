// Tile and shared-memory layout of the F16 prefill matmuls rf_mm_h16_<BM> (matmul_h16.hip),
// shared with the host (backends/hip/matmul_h16.cpp), which passes the dynamic shared memory.
#pragma once

#define RF_H16_BN 128     // weight rows per block
#define RF_H16_BK 32      // halves of K per step
#define RF_H16_LD 40      // halves per shared row (32 + 8 pad): rows 80 bytes apart, ldmatrix conflict-free
#define RF_H16_STAGES 4   // K steps in shared memory at once
#define RF_H16_THREADS 256
#define RF_H16_SMEM(BM) (RF_H16_STAGES * (RF_H16_BN + (BM)) * RF_H16_LD * 2)
