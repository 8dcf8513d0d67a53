/* Kernel argument block shared by the host (backends/hip) and every kernel, the base kernels of
 * kernels/ and those of kernel packs (rocmforge/pack_abi.h): one struct passed by value, so the
 * host launches all kernels the same way. Plain C layout with 8-byte members first; host and
 * device compilers agree on it. Do not include system headers here (NVRTC/hipRTC compile it). */
#ifndef RF_KERNEL_ARGS_H
#define RF_KERNEL_ARGS_H

#include "kernel_params.h"

#define RF_KMAX_SRC 5
/* Bump when rf_kargs or any kernel signature changes: packs declare it (kargs_version) and the
 * HIP backend refuses a pack of another version. */
/* 2: a ROPE kernel's positions slot may hold the (cos, sin) rows instead (f32); 3: the attention
 * kernels' aux[3] holds ATTENTION's sinks (kernels/attention_sinks.h), no longer the decode
 * partials' offset (an older pack's decode kernels would read the address as that offset). */
#define RF_KARGS_VERSION 3

typedef struct rf_ktensor {
    void *data;
    long long ne[4];
    long long nb[4]; /* byte strides */
    int type;        /* enum rf_type value */
    int pad_;
} rf_ktensor;

typedef struct rf_kargs {
    rf_ktensor dst;
    rf_ktensor src[RF_KMAX_SRC];
    void *scratch;      /* op-specific device scratch (e.g. quantized activations) */
    long long aux[4];   /* op-specific integers computed on the host */
    /* The launch family's parameters (rocmforge/kernel_params.h): a.mv, a.mmq, a.norm, ..., or
     * the raw iparams[8], fparams[8] of ABI 2.10 (the same bytes). */
    RF_KERNEL_PARAMS_UNION;
} rf_kargs;

/* The layout of RF_KARGS_VERSION 2, which the named parameters (ABI 2.11) and version 3 keep. */
RF_KP_OFFSET_ASSERT(__builtin_offsetof(rf_kargs, iparams) == 520 && __builtin_offsetof(rf_kargs, fparams) == 552 &&
                        __builtin_offsetof(rf_kargs, mv) == 520 && sizeof(rf_kargs) == 584,
                    "rf_kargs is not the layout of kernel-argument version 2");

#endif
