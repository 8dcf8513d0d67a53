/* Timestamps written by the kernels themselves, for an observed HIP backend
 * (backends/hip/exec_observer.h): the contract between the base kernels (compat.h
 * rf_kernel_start, stamp.hip rf_stamp_mark) and the host. Plain C, no system headers (NVRTC and
 * hipRTC compile it; the host includes it too).
 *
 * Every module built from kernels/ defines one constant of type rf_stamp_ctl named
 * RF_STAMP_CTL_SYMBOL, zero (off) until the host writes it (hipModuleGetGlobal). While `on`, the
 * first thread of block (0,0,0) of every kernel takes the next index of *counter and, once the
 * previous kernel of the stream has completed (rf_kernel_start's wait), writes the device clock
 * with that index into ring[index & mask]. Kernels of one stream run in launch order, so the
 * indices are the launch order and the stamp of launch i + 1 is the end of launch i.
 *
 * The symbol's name carries the contract's version: a module without it (an older pack, an
 * out-of-tree pack) writes no stamps, and the host times its launches another way; change the
 * name when rf_stamp or rf_stamp_ctl change. */
#ifndef RF_STAMPS_H
#define RF_STAMPS_H

/* One ring entry (16 bytes). `t`: NVIDIA %globaltimer (ns); AMD the constant-rate wall clock
 * (s_memrealtime, ticks of hipDeviceAttributeWallClockRate kHz). */
typedef struct rf_stamp {
    unsigned long long t;
    unsigned int idx; /* the counter value taken: the entry's position in launch order */
    unsigned int tag; /* RF_STAMP_TAG once written */
} rf_stamp;

#define RF_STAMP_TAG 0x54534652u /* "RFST" */

typedef struct rf_stamp_ctl {
    rf_stamp *ring;        /* device memory, mask + 1 entries */
    unsigned int *counter; /* device memory: the next index */
    unsigned int mask;     /* ring entries - 1 (a power of two minus one) */
    unsigned int on;       /* 0: kernels write nothing */
} rf_stamp_ctl;

#define RF_STAMP_CTL_SYMBOL "rf_stamp_ctl_v1"
/* The stamp kernel (stamp.hip): one block; its own rf_kernel_start stamps; with stamp.n_stamps = n > 0
 * it then copies the n ring entries that end with its own stamp to (rf_stamp *)dst.data (mapped
 * host memory). */
#define RF_STAMP_MARK_KERNEL "rf_stamp_mark"

#endif
