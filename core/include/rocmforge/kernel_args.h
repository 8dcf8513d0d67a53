/* Kernel argument block shared by the host (backends/hip) and every kernel, the base kernels of
 * kernels/ and those of kernel packs (rocmforge/pack_abi.h): one struct passed by value, so the
 * host launches all kernels the same way. Plain C layout with 8-byte members first; host and
 * device compilers agree on it. Do not include system headers here (NVRTC/hipRTC compile it). */
#ifndef RF_KERNEL_ARGS_H
#define RF_KERNEL_ARGS_H

#define RF_KMAX_SRC 5
/* Bump when rf_kargs or any kernel signature changes: packs declare it (kargs_version) and the
 * HIP backend refuses a pack of another version. */
#define RF_KARGS_VERSION 2 /* 2: a ROPE kernel's positions slot may hold the (cos, sin) rows instead (f32) */

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
    int iparams[8];
    float fparams[8];
} rf_kargs;

#endif
