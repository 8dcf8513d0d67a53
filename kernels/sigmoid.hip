// SIGMOID (abi.h; the gate of Qwen2-MoE's shared expert): dst = 1 / (1 + exp(-src0)), by strides.
#include "compat.h"

// expf, not __expf: the CPU backend's (and ggml's) libm exp, so opcheck can hold it to 1e-10.
RF_KERNEL void rf_sigmoid_f32(rf_kargs a) {
    rf_kernel_start();
    const rf_ktensor &d = a.dst, &x = a.src[0];
    const i64 n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
        i64 i0, i1, i2, i3;
        unravel(d, i, i0, i1, i2, i3);
        const float u = *(const float *)elem_ptr(x, i0, i1, i2, i3);
        *(float *)elem_ptr(d, i0, i1, i2, i3) = __fdiv_rn(1.f, __fadd_rn(1.f, expf(-u)));
    }
}
