/* The i-quant grids for the packs' host reference of the decode dot products (q8_dot.c), expanded
 * from the index lists the CPU backend and the kernels expand (rocmforge/iq_grid_index.h), so all
 * three read the same magnitudes. Plain C interface; the tables are built at compile time. */
#ifndef ROCMFORGE_PACK_IQ_GRIDS_HOST_H
#define ROCMFORGE_PACK_IQ_GRIDS_HOST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Entry k of the grid of weight type `type` (RF_TYPE_IQ2_XXS, ...): element i's magnitude in byte i
 * (8 bytes for the IQ2 grids, 4 for the IQ3 ones, IQ1_S's signed bytes -1, 0, 1); 0 for a type
 * without a grid or k outside it. */
uint64_t pm_iq_grid(int type, int k);

#ifdef __cplusplus
}
#endif

#endif
