/* Host semantics of the launches the "mmq_run" fusion (proj_runs.c) makes, for its host_run: the
 * integer tensor-core tile matmuls over up to three joined matrices (rf_mmq_<type>_<cols>_k<split>,
 * kernels/matmul_mmq.hip) and the rotations (rf_rope_f32, kernels/rope.hip), each with its optional
 * cache-pool append. Every block of the launch's grid, so a grid that misses rows, columns, heads
 * or matrices leaves them unwritten as the GPU would. Plain C, as pack_match.h. */
#ifndef ROCMFORGE_PACK_MMQ_HOST_H
#define ROCMFORGE_PACK_MMQ_HOST_H
#include "rocmforge/pack_abi.h"

/* rf_mmq_* on the host (the kernel named by l->kernel: its weight type, column tile and K split),
 * every segment of the launch's grid z, with the V append of mmq.append_segment. RF_OK or an rf_status:
 * RF_ERR_INVALID for another kernel name, a weight whose type is not the kernel's, no activation
 * columns (scratch), a missing output or slots. */
int32_t pm_host_mmq(const rf_kargs *a, const rf_fusion_launch *l);
/* rf_rope_f32 on the host (one rope, or two with aux[0] = G > 0; the first one's append). */
int32_t pm_host_rope(const rf_kargs *a, const rf_fusion_launch *l);
/* One launch of either kind, by l->kernel: "rf_mmq_..." or "rf_rope_f32" (also NULL, mmq_run's own
 * kernel). The fusion's host_run. */
int32_t pm_host_mmq_run(const rf_kargs *a, const rf_fusion_launch *l);
/* rf_mvqn_<type>_<NC>f in its rope (RF_KP_MV_ROPE) or plain (RF_KP_MV_PLAIN) form with the append
 * of mv.append, or the joined rf_mvqn_proj_<type>_<NC> (by l->kernel): cols_run's host_run. */
int32_t pm_host_cols_run(const rf_kargs *a, const rf_fusion_launch *l);

#endif
