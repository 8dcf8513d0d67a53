// GEGLU (abi.h): dst = gelu(src0) * src1 with the tanh approximation of GELU (Gemma's FFN gate).
// Same layout rules as SWIGLU in elementwise.hip (whose elem_ptr/unravel/dense_f32 it uses: the
// unity file includes that first): 4 elements per step on dense aligned rows, else by strides.
#include "compat.h"

RF_DEV float gelu_tanh(float x) {
    const float kSqrt2OverPi = 0.7978845608028654f;
    return 0.5f * x * (1.f + tanhf(kSqrt2OverPi * x * (1.f + 0.044715f * x * x)));
}

RF_KERNEL void rf_geglu_f32(rf_kargs a) {
    rf_kernel_start();
    const rf_ktensor &d = a.dst, &x = a.src[0], &y = a.src[1];
    const i64 n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    if (dense_f32(d) && dense_f32(x) && dense_f32(y) && n % 4 == 0 &&
        (((unsigned long long)d.data | (unsigned long long)x.data | (unsigned long long)y.data) & 15) == 0) {
        const float4 *xv = (const float4 *)x.data, *yv = (const float4 *)y.data;
        float4 *dv = (float4 *)d.data;
        for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n / 4; i += (i64)gridDim.x * blockDim.x) {
            const float4 u = xv[i], v = yv[i];
            dv[i] = float4{gelu_tanh(u.x) * v.x, gelu_tanh(u.y) * v.y, gelu_tanh(u.z) * v.z, gelu_tanh(u.w) * v.w};
        }
        return;
    }
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
        i64 i0, i1, i2, i3; unravel(d, i, i0, i1, i2, i3);
        const float u = *(const float *)elem_ptr(x, i0, i1, i2, i3);
        const float v = *(const float *)elem_ptr(y, i0, i1, i2, i3);
        *(float *)elem_ptr(d, i0, i1, i2, i3) = gelu_tanh(u) * v;
    }
}
