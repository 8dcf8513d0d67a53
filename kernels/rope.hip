// ROPE: rotates pairs of src0[D, H, T] by position-dependent angles (abi.h semantics).
// One thread per output pair slot i in [0, D/2); dims >= n_rot are copied unchanged.
#include "compat.h"
#include "quant_decode.h"

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
// The cos/sin of rotation r for token t from a rope kernel's angle slot (the positions' slot of
// its arguments), which holds either the graph's rows of (cos, sin) (f32 [2, n_rot/2, T]: abi.h
// ROPE src3, evaluated by the host as rope_cos_sin does, in the layout rf_rope_angles_readable
// checks) or the tokens' positions (i32), from which they are evaluated here. Every rope form
// (rf_rope_f32, the matmul + rope and joined projection kernels) gets them from this function.
RF_DEV void rope_cs_token(const rf_ktensor &angles, const float *factors, i64 r, i64 t, int n_rot, float base, float fscale,
                          float &c, float &s) {
    if (angles.type == T_F32) {
        const float2 v = *(const float2 *)((const u8 *)angles.data + t * angles.nb[2] + r * 8);
        c = v.x;
        s = v.y;
        return;
    }
    rope_cos_sin(r, ((const int *)angles.data)[t], n_rot, base, fscale, factors, c, s);
}

// Pair slot i of token t's row: the two element indices it writes and their values.
RF_DEV void rope_pair(const float *xr, i64 i, i64 t, const rf_ktensor &angles, int mode, int n_rot, float base, float fscale,
                      const float *factors, i64 &j0, i64 &j1, float &y0, float &y1) {
    if (i >= n_rot / 2) { j0 = 2 * i; j1 = 2 * i + 1; y0 = xr[j0]; y1 = xr[j1]; return; }
    j0 = mode == 2 ? i : 2 * i;
    j1 = mode == 2 ? i + n_rot / 2 : 2 * i + 1;
    float c, s;
    rope_cs_token(angles, factors, i, t, n_rot, base, fscale, c, s);
    rope_apply(xr[j0], xr[j1], c, s, y0, y1);
}

// The cos/sin table of one token's rotated pairs (up to 256), shared by the block's heads.
__shared__ float rf_rope_cs[2][256];

RF_DEV int rope_table_pairs(const rf_kargs &a) { return a.rope.n_rot / 2 < 256 ? a.rope.n_rot / 2 : 256; }
RF_DEV void rope_table(const rf_kargs &a, i64 t) {
    const float *factors = (const float *)a.src[2].data; // may be null
    for (int i = threadIdx.x; i < rope_table_pairs(a); i += blockDim.x)
        rope_cs_token(a.src[1], factors, i, t, a.rope.n_rot, a.rope.freq_base, a.rope.freq_scale, rf_rope_cs[0][i], rf_rope_cs[1][i]);
}
// The table of the block's first token before rf_kernel_start (compat.h): positions, the angles'
// rows (graph inputs) and frequency factors (weights) are never written by a kernel, so under
// programmatic dependent launch this overlaps the previous kernel (the matmul whose output is
// rotated) instead of following it.
RF_DEV void prefetch_rope_table(const rf_kargs &a) {
    if ((i64)blockIdx.x < a.src[0].ne[2]) rope_table(a, blockIdx.x);
}

// Grid (min(T, 65535), ceil(H / 8)), 256 threads: block (x, y) rotates heads 8y..8y+7 of tokens
// x, x + gridDim.x, ..; the cos/sin of each rotated pair (double precision, as the CPU backend)
// are computed once per token and block into shared memory instead of once per head.
// aux[0] = G > 0: two ropes of the same tokens, positions and parameters in one launch (a
// layer's K and Q rotations): head groups y >= G rotate src[3] into src[4] (same T, its own D, H).
// aux[1] != 0: the first tensor's rotated rows also go to an f16/f32 cache pool, as SET_ROWS would
// append them (the K append): token t's [D * H] row into pool row slots[t] (aux[1] = the pool,
// aux[2] = the i32 slots, aux[3] = the pool's row stride in bytes, rope.pool_type = its type).
RF_KERNEL void rf_rope_f32(rf_kargs a) {
    prefetch_rope_table(a);
    rf_kernel_start();
    const i64 G = a.aux[0];
    const bool second = G > 0 && (i64)blockIdx.y >= G;
    const rf_ktensor &x = second ? a.src[3] : a.src[0], &d = second ? a.src[4] : a.dst;
    const i64 D = x.ne[0], H = x.ne[1], T = x.ne[2];
    const int mode = a.rope.mode, n_rot = a.rope.n_rot;
    const float base = a.rope.freq_base, fscale = a.rope.freq_scale;
    const float *factors = (const float *)a.src[2].data; // may be null
    const i64 half = D / 2, h0 = ((i64)blockIdx.y - (second ? G : 0)) * 8, nh = H - h0 < 8 ? H - h0 : 8;
    const int nr = rope_table_pairs(a);
    for (i64 t = blockIdx.x; t < T; t += gridDim.x) {
        if (t != (i64)blockIdx.x) {
            __syncthreads(); // the previous token's table is no longer read
            rope_table(a, t);
        }
        __syncthreads();
        for (i64 idx = threadIdx.x; idx < half * nh; idx += blockDim.x) {
            const i64 i = idx % half, h = h0 + idx / half;
            const float *xr = (const float *)((const u8 *)x.data + h * x.nb[1] + t * x.nb[2]);
            float *yr = (float *)((u8 *)d.data + h * d.nb[1] + t * d.nb[2]);
            i64 j0, j1;
            float y0, y1;
            if (i < nr) {
                j0 = mode == 2 ? i : 2 * i;
                j1 = mode == 2 ? i + n_rot / 2 : 2 * i + 1;
                rope_apply(xr[j0], xr[j1], rf_rope_cs[0][i], rf_rope_cs[1][i], y0, y1);
            } else {
                rope_pair(xr, i, t, a.src[1], mode, n_rot, base, fscale, factors, j0, j1, y0, y1);
            }
            yr[j0] = y0;
            yr[j1] = y1;
            if (!second && a.aux[1]) {
                u8 *prow = (u8 *)a.aux[1] + (i64)((const int *)a.aux[2])[t] * a.aux[3];
                store_pool_elem(prow, a.rope.pool_type, h * D + j0, y0);
                store_pool_elem(prow, a.rope.pool_type, h * D + j1, y1);
            }
        }
    }
}
