// Thread-block clusters (sm_90): a block's rank in its cluster, the cluster barrier, and loads
// from another block's shared memory (distributed shared memory). Used where a few blocks of one
// cluster share a reduction: the K-split tensor-core matmuls (matmul_mmq.hip, matmul_h16*.hip)
// and the cluster form of the fused norm (norm_fused.hip). Where clusters do not exist (AMD,
// NVIDIA before sm_90) the rank is 0 and the rest does nothing: the hosts launch a kernel with
// more than one block per cluster only on sm_90.
#pragma once
#include "compat.h"

#if RF_NVIDIA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define RF_HAS_CLUSTERS 1
#endif

RF_DEV u32 cluster_rank() {
#ifdef RF_HAS_CLUSTERS
    u32 r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
#else
    return 0;
#endif
}
// The cluster barrier in its two halves: arrive (this block's earlier writes, shared and global,
// released to the cluster) and wait (until every block arrived; their writes acquired).
RF_DEV void cluster_arrive() {
#ifdef RF_HAS_CLUSTERS
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#endif
}
RF_DEV void cluster_wait() {
#ifdef RF_HAS_CLUSTERS
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}
RF_DEV void cluster_sync() {
#ifdef RF_HAS_CLUSTERS
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}
// Address `a` of this block's shared memory as the cluster's block `rank` sees it.
RF_DEV u32 cluster_map(u32 a, u32 rank) {
#ifdef RF_HAS_CLUSTERS
    u32 r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(rank));
    return r;
#else
    return a;
#endif
}
// The float or double at shared address `a` of the cluster's block `rank`.
template <class T> RF_DEV T cluster_ld(u32 a, u32 rank) {
#ifdef RF_HAS_CLUSTERS
    const u32 r = cluster_map(a, rank);
    T v;
    if constexpr (sizeof(T) == 8) asm volatile("ld.shared::cluster.f64 %0, [%1];" : "=d"(v) : "r"(r) : "memory");
    else asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(r) : "memory");
    return v;
#else
    (void)a, (void)rank;
    return T(0);
#endif
}
// A kernel's cluster dimensions (S blocks in x), only where clusters exist: the sm_90 device pass
// and nvcc's host pass (NVRTC and nvcc give the attribute to the launch).
#if RF_NVIDIA && !(defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900)
#define RF_CLUSTER_DIMS(S) __cluster_dims__(S, 1, 1)
#else
#define RF_CLUSTER_DIMS(S)
#endif
