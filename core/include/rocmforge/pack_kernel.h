/* Device-side helper for the kernels of a ROCmForge kernel pack (rocmforge/pack_abi.h).
 * Include it from the .hip/.cu source of the pack's code object (nvcc, hipcc, NVRTC, hipRTC);
 * it includes no system header. */
#ifndef ROCMFORGE_PACK_KERNEL_H
#define ROCMFORGE_PACK_KERNEL_H

#include "kernel_args.h"

/* Call first in every kernel of a pack that sets RF_PACK_KERNELS_WAIT, before touching memory.
 * The HIP backend replays decode steps as graphs whose kernels may be chained with programmatic
 * edges (NVIDIA sm_90+): the next grid is launched while the previous one still runs, and this
 * waits until the previous kernel has finished and its writes are visible, then lets the grid
 * after this one launch. Elsewhere it does nothing. (The base kernels' rf_kernel_start in
 * kernels/compat.h does the same and, for a profiler, also writes a timestamp; a pack's kernels
 * write none, and an observed backend queues a stamp kernel of its own before a pack launch that
 * starts a launch group, so the pack needs nothing for that.) */
static __device__ __forceinline__ void rf_pack_kernel_start(void) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

#endif
