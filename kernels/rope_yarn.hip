// ROPE's YaRN form (abi.h iparams[2] = 1, gpt-oss) for nodes without the graph's (cos, sin) rows
// (prompts longer than the rows the host gives; with rows rf_rope_f32 reads them, YaRN
// included). The angle as the CPU backend evaluates it (rope_yarn.h): extrapolated angle in
// double, the ramp in f32 between the correction dims, cos / sin in double times mscale, rounded
// once. The host computes the f32 corr dims (fparams[6], fparams[7]) and mscale (aux[0], a
// double's bits) as the CPU backend does, so both see the same values.
// Grid (min(T, 65535), ceil(H / 8)), 256 threads: the token's table of pairs once per block.
#include "compat.h"

__shared__ float rf_yarn_cs[2][256];

RF_DEV void yarn_cos_sin(const rf_kargs &a, i64 r, int pos, float &c, float &s) {
    const int n_rot = a.iparams[1];
    const float *factors = (const float *)a.src[2].data; // may be null
    double extrap = (double)pos * pow((double)a.fparams[0], -2.0 * (double)r / (double)n_rot);
    if (factors) extrap /= (double)factors[r];
    double theta = extrap * (double)a.fparams[1];
    const float ext = a.fparams[2], c0 = a.fparams[6], c1 = a.fparams[7];
    if (ext != 0.f) {
        const float t = __fdiv_rn((float)r - c0, fmaxf(0.001f, c1 - c0));
        const double mix = (double)(1.0f - fminf(1.0f, fmaxf(0.0f, t))) * (double)ext;
        theta = theta * (1.0 - mix) + extrap * mix;
    }
    const double mscale = __longlong_as_double(a.aux[0]);
    c = (float)(cos(theta) * mscale);
    s = (float)(sin(theta) * mscale);
}

RF_KERNEL void rf_rope_yarn_f32(rf_kargs a) {
    rf_kernel_start();
    const rf_ktensor &x = a.src[0], &d = a.dst;
    const i64 D = x.ne[0], H = x.ne[1], T = x.ne[2], half = D / 2;
    const int mode = a.iparams[0], n_rot = a.iparams[1];
    const i64 pairs = n_rot / 2 < 256 ? n_rot / 2 : 256;
    const i64 h0 = (i64)blockIdx.y * 8, nh = H - h0 < 8 ? H - h0 : 8;
    const int *pos = (const int *)a.src[1].data;
    for (i64 t = blockIdx.x; t < T; t += gridDim.x) {
        __syncthreads(); // the previous token's table is no longer read
        for (i64 i = threadIdx.x; i < pairs; i += blockDim.x) yarn_cos_sin(a, i, pos[t], rf_yarn_cs[0][i], rf_yarn_cs[1][i]);
        __syncthreads();
        for (i64 idx = threadIdx.x; idx < half * nh; idx += blockDim.x) {
            const i64 i = idx % half, h = h0 + idx / half;
            const float *xr = (const float *)((const u8 *)x.data + h * x.nb[1] + t * x.nb[2]);
            float *yr = (float *)((u8 *)d.data + h * d.nb[1] + t * d.nb[2]);
            if (i >= n_rot / 2) { // past the rotated dims: copied
                yr[2 * i] = xr[2 * i];
                yr[2 * i + 1] = xr[2 * i + 1];
                continue;
            }
            const i64 j0 = mode == 2 ? i : 2 * i, j1 = mode == 2 ? i + n_rot / 2 : 2 * i + 1;
            float c, s;
            if (i < pairs) c = rf_yarn_cs[0][i], s = rf_yarn_cs[1][i];
            else yarn_cos_sin(a, i, pos[t], c, s);
            const float x0 = xr[j0], x1 = xr[j1];
            yr[j0] = __fmul_rn(x0, c) - __fmul_rn(x1, s);
            yr[j1] = __fmul_rn(x0, s) + __fmul_rn(x1, c);
        }
    }
}
