// The observer's own kernel (stamps.h, backends/hip/exec_observer.h): launched with one block
// (a) after a compute()'s last launch: its stamp is the end of that launch, and it copies the
//     call's stamps (stamp.n_stamps of them, ending with its own) to mapped host memory at dst.data,
//     so the host reads them without a copy of its own;
// (b) before a launch group whose first kernel writes no stamp (a kernel pack without the
//     stamp constant): its stamp is the group's start (stamp.n_stamps = 0, nothing copied);
// (c) on an idle stream, as the anchor of the device clock on the host's (stamp.n_stamps = 1).
#include "compat.h"

RF_KERNEL void rf_stamp_mark(rf_kargs a) {
    rf_kernel_start();
    const int n = a.stamp.n_stamps;
    if (n <= 0) return;
    __syncthreads(); // thread 0's stamp (and its counter increment) before the others read
    const unsigned int end = *(volatile unsigned int *)rf_stamp_ctl_v1.counter; // own index + 1
    // As two 8-byte words per entry (t; idx and tag): fewer stores over the bus to host memory.
    unsigned long long *dst = (unsigned long long *)a.dst.data;
    const volatile unsigned long long *ring = (const volatile unsigned long long *)rf_stamp_ctl_v1.ring;
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
        // volatile: written by earlier kernels' first threads, read past any cached copy
        const unsigned int at = (end - (unsigned int)n + (unsigned int)k) & rf_stamp_ctl_v1.mask;
        dst[2 * k] = ring[2 * at];
        dst[2 * k + 1] = ring[2 * at + 1];
    }
}
