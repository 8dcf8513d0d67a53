// ROPE: rotates pairs of src0[D, H, T] by position-dependent angles (abi.h semantics).
// One thread per output pair slot i in [0, D/2); dims >= n_rot are copied unchanged.
#include "compat.h"

// cos and sin of rotation r (< n_rot/2) at position pos. The angle, its cosine and sine are
// computed in double and rounded to float once, as the CPU backend does (a float angle at
// position p carries an error of ~p * 6e-8 rad, which later int8 activation rounding can magnify).
RF_DEV void rope_cos_sin(i64 r, int pos, int n_rot, float base, float fscale, const float *factors, float &c, float &s) {
    double theta = (double)pos * (double)fscale * pow((double)base, -2.0 * (double)r / (double)n_rot);
    if (factors) theta /= (double)factors[r];
    c = (float)cos(theta);
    s = (float)sin(theta);
}
// Products rounded separately (no fused multiply-add), as the CPU backend computes them: the
// result then does not depend on where the compiler inlines this.
RF_DEV void rope_apply(float x0, float x1, float c, float s, float &y0, float &y1) {
    y0 = __fmul_rn(x0, c) - __fmul_rn(x1, s);
    y1 = __fmul_rn(x0, s) + __fmul_rn(x1, c);
}
// Rotation r of the pair (x0, x1) at position pos (rf_mvq_multi's matmul + rope form uses the
// same two functions, so both give the same bits).
RF_DEV void rope_rotate(float x0, float x1, i64 r, int pos, int n_rot, float base, float fscale, const float *factors,
                        float &y0, float &y1) {
    float c, s;
    rope_cos_sin(r, pos, n_rot, base, fscale, factors, c, s);
    rope_apply(x0, x1, c, s, y0, y1);
}

// Pair slot i of one row: the two element indices it writes and their values.
RF_DEV void rope_pair(const float *xr, i64 i, int pos, int mode, int n_rot, float base, float fscale, const float *factors,
                      i64 &j0, i64 &j1, float &y0, float &y1) {
    if (i >= n_rot / 2) { j0 = 2 * i; j1 = 2 * i + 1; y0 = xr[j0]; y1 = xr[j1]; return; }
    j0 = mode == 2 ? i : 2 * i;
    j1 = mode == 2 ? i + n_rot / 2 : 2 * i + 1;
    rope_rotate(xr[j0], xr[j1], i, pos, n_rot, base, fscale, factors, y0, y1);
}

RF_KERNEL void rf_rope_f32(rf_kargs a) {
    rf_kernel_start();
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
        i64 j0, j1;
        float y0, y1;
        rope_pair(xr, i, pos[t], mode, n_rot, base, fscale, factors, j0, j1, y0, y1);
        yr[j0] = y0;
        yr[j1] = y1;
    }
}
