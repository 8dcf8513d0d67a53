// SWIGLU_OAI (abi.h; gpt-oss's experts, ggml's swiglu_oai): x = min(gate, limit), y = clamp(up,
// -limit, limit), dst = x / (1 + exp(-alpha x)) * (y + 1); fparams[0] = alpha, fparams[1] = limit.
#include "compat.h"

// expf and the steps rounded one by one (no fused multiply-add): the CPU backend's arithmetic.
RF_KERNEL void rf_swiglu_oai_f32(rf_kargs a) {
    rf_kernel_start();
    const rf_ktensor &d = a.dst, &g = a.src[0], &u = a.src[1];
    const float alpha = a.fparams[0], limit = a.fparams[1];
    const i64 n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
        i64 i0, i1, i2, i3;
        unravel(d, i, i0, i1, i2, i3);
        const float x = fminf(*(const float *)elem_ptr(g, i0, i1, i2, i3), limit);
        const float y = fminf(fmaxf(*(const float *)elem_ptr(u, i0, i1, i2, i3), -limit), limit);
        const float glu = __fdiv_rn(x, __fadd_rn(1.f, expf(__fmul_rn(alpha, -x))));
        *(float *)elem_ptr(d, i0, i1, i2, i3) = __fmul_rn(glu, __fadd_rn(y, 1.f));
    }
}
