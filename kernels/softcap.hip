// SOFTCAP (abi.h): dst = c * tanh(src0 / c), c = softcap.cap > 0 (Gemma 2's final logits).
// One thread per element, grid-stride, by strides (elementwise.hip's helpers: the unity file
// includes it first).
#include "compat.h"

RF_KERNEL void rf_softcap_f32(rf_kargs a) {
    rf_kernel_start();
    const rf_ktensor &d = a.dst, &x = a.src[0];
    const i64 n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    const float cap = a.softcap.cap, inv = 1.f / cap;
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
        i64 i0, i1, i2, i3; unravel(d, i, i0, i1, i2, i3);
        const float u = *(const float *)elem_ptr(x, i0, i1, i2, i3);
        *(float *)elem_ptr(d, i0, i1, i2, i3) = cap * tanhf(u * inv);
    }
}
