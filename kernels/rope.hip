// ROPE: rotates pairs of src0[D, H, T] by position-dependent angles (abi.h semantics).
// One thread per output pair slot i in [0, D/2); dims >= n_rot are copied unchanged.
#include "compat.h"

RF_KERNEL void rf_rope_f32(rf_kargs a) {
    const rf_ktensor &x = a.src[0], &d = a.dst;
    const i64 D = x.ne[0], H = x.ne[1], T = x.ne[2];
    const int mode = a.iparams[0], n_rot = a.iparams[1];
    const float base = a.fparams[0], fscale = a.fparams[1];
    const int *pos = (const int *)a.src[1].data;
    const float *factors = (const float *)a.src[2].data; // may be null
    const i64 half = D / 2, n = half * H * T;
    for (i64 idx = blockIdx.x * (i64)blockDim.x + threadIdx.x; idx < n; idx += (i64)gridDim.x * blockDim.x) {
        const i64 i = idx % half, h = (idx / half) % H, t = idx / (half * H);
        const float *xr = (const float *)((const u8 *)x.data + h * x.nb[1] + t * x.nb[2]);
        float *yr = (float *)((u8 *)d.data + h * d.nb[1] + t * d.nb[2]);
        if (i >= n_rot / 2) { yr[2 * i] = xr[2 * i]; yr[2 * i + 1] = xr[2 * i + 1]; continue; }
        const i64 j0 = mode == 2 ? i : 2 * i, j1 = mode == 2 ? i + n_rot / 2 : 2 * i + 1;
        const i64 r = i; // rotation index of the pair
        float theta = (float)pos[t] * fscale * powf(base, -2.f * (float)r / (float)n_rot);
        if (factors) theta /= factors[r];
        float s, c;
        sincosf(theta, &s, &c);
        const float x0 = xr[j0], x1 = xr[j1];
        yr[j0] = x0 * c - x1 * s;
        yr[j1] = x0 * s + x1 * c;
    }
}
