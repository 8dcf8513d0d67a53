// A layer's Q / K head norms and rotations in one launch (Qwen 3, Gemma 3, OLMo 2 ...): the graph's
// RMS_NORM(K) MUL(K norm) RMS_NORM(Q) MUL(Q norm) ROPE(K) ROPE(Q) [SET_ROWS(K pool)], every
// result still written, each as its own kernel computes it (rf_rms_norm_mul_rows' double sum of
// squares and compat.h's rms_scale, rope.hip's pairs and cos/sin table). Three launches of a
// decode step's smallest kernels become one (the pack fusion "head_norm_rope",
// plugins/packs/head_norm_rope.c, which checks every condition below).
//
// Grid (min(T, 65535)), block t takes tokens t, t + gridDim.x, ...: all rows of a token, the Hk
// K heads first, then the Hq Q heads, D <= 256 elements each (D % 4 == 0), a warp a row in turn.
// Every row of the token is read into shared memory before anything is written, and the seven
// results are written in the graph's node order with a barrier between them, so outputs on the
// bytes of inputs or of each other come out as running the nodes one by one leaves them (the host
// allows such overlaps only where they stay inside one token's rows, or where there is one block).
//
// Binding: src0 = K heads x_k [D, Hk, T], src1 = the rope's positions or angle rows, src2 its
// frequency factors (may be null), src3 = Q heads x_q [D, Hq, T], src4 = Q's rotation [D, Hq, T];
// every other result has the layout of its input (dense f32), so only its address is bound, in
// dst's integer members: dst.ne[0..3] = K's norm, K's product, K's rotation, Q's norm; dst.nb[0] =
// Q's product, nb[1] / nb[2] = the K / Q norm weights [D], nb[3] = the K pool (0: no append);
// aux[0] = the append's i32 slots, aux[1] = the pool's row stride in bytes. Parameters a.rope
// (mode, n_rot, freq_base, freq_scale, pool_type) and a.rope.norm_eps. Dynamic shared memory:
// (Hk + Hq) * D floats of the token's rows, then one norm scale per row.
#include "compat.h"
#include "quant_decode.h"

extern __shared__ __align__(16) u8 rf_hnr_smem[];

struct HeadNormRope {
    i64 D, Hk, Hq, T;
    float *k_norm, *k_prod, *k_rot, *q_norm, *q_prod;
    const float *wk, *wq;
    u8 *pool;
    const int *slots;
};

RF_DEV HeadNormRope head_norm_rope_args(const rf_kargs &a) {
    HeadNormRope h;
    h.D = a.src[0].ne[0], h.Hk = a.src[0].ne[1], h.Hq = a.src[3].ne[1], h.T = a.src[0].ne[2];
    h.k_norm = (float *)a.dst.ne[0], h.k_prod = (float *)a.dst.ne[1], h.k_rot = (float *)a.dst.ne[2];
    h.q_norm = (float *)a.dst.ne[3], h.q_prod = (float *)a.dst.nb[0];
    h.wk = (const float *)a.dst.nb[1], h.wq = (const float *)a.dst.nb[2];
    h.pool = (u8 *)a.dst.nb[3];
    h.slots = (const int *)a.aux[0];
    return h;
}

// Element e of head h of token t, in floats from the data of a tensor laid out as x.
RF_DEV i64 head_elem_at(const rf_ktensor &x, i64 h, i64 t, i64 e) { return (h * x.nb[1] + t * x.nb[2]) / 4 + e; }

RF_KERNEL void rf_head_norm_rope_f32(rf_kargs a) {
    prefetch_rope_table(a);
    rf_kernel_start();
    const HeadNormRope h = head_norm_rope_args(a);
    const i64 D = h.D, rows = h.Hk + h.Hq, half = D / 2;
    float *xs = (float *)rf_hnr_smem, *inv = xs + rows * D;
    const int lane = threadIdx.x % RF_WARP, warp = threadIdx.x / RF_WARP, warps = blockDim.x / RF_WARP;
    const int mode = a.rope.mode, n_rot = a.rope.n_rot, nr = rope_table_pairs(a);
    const float *factors = (const float *)a.src[2].data;
    for (i64 t = blockIdx.x; t < h.T; t += gridDim.x) {
        if (t != (i64)blockIdx.x) {
            __syncthreads(); // the previous token's rows and table are no longer read
            rope_table(a, t);
        }
        // Each row into shared memory and its norm scale: four elements a lane a piece, the
        // pieces' squares summed in double, then the warp's butterfly (rf_rms_norm_mul_rows).
        for (i64 r = warp; r < rows; r += warps) {
            const bool q = r >= h.Hk;
            const rf_ktensor &x = q ? a.src[3] : a.src[0];
            const float *row = (const float *)x.data + head_elem_at(x, q ? r - h.Hk : r, t, 0);
            double s = 0.0;
            for (i64 e = 4 * lane; e < D; e += 4 * RF_WARP) {
                const float4 v = *(const float4 *)(row + e);
                *(float4 *)(xs + r * D + e) = v;
                s += (double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z + (double)v.w * v.w;
            }
            s = warp_sum(s);
            if (lane == 0) inv[r] = rms_scale(s, D, a.rope.norm_eps);
        }
        __syncthreads(); // every read done: the writes below may land on any input's bytes
        // The results in node order: K norm, K product, Q norm, Q product, K rotation, Q rotation,
        // K append. Element (r, e) of a stage is always the same thread's: r * D + e strided.
        for (int stage = 0; stage < 7; ++stage) {
            const bool q_rows = stage == 2 || stage == 3 || stage == 5;
            const i64 r0 = q_rows ? h.Hk : 0, r1 = q_rows ? rows : h.Hk;
            const bool pairs = stage >= 4;
            if (stage == 6 && !h.pool) break;
            const i64 per_row = pairs ? half : D;
            for (i64 idx = threadIdx.x; idx < (r1 - r0) * per_row; idx += blockDim.x) {
                const i64 r = r0 + idx / per_row, i = idx % per_row, head = q_rows ? r - h.Hk : r;
                const float *xr = xs + r * D;
                const float *w = q_rows ? h.wq : h.wk;
                if (!pairs) {
                    const float n = xr[i] * inv[r];
                    const i64 at = head_elem_at(q_rows ? a.src[3] : a.src[0], head, t, i);
                    if (stage == 0) h.k_norm[at] = n;
                    else if (stage == 1) h.k_prod[at] = n * w[i];
                    else if (stage == 2) h.q_norm[at] = n;
                    else h.q_prod[at] = n * w[i];
                    continue;
                }
                i64 j0, j1;
                float y0, y1;
                if (i < n_rot / 2) {
                    j0 = mode == 2 ? i : 2 * i; // NeoX (abi.h RF_ROPE_NEOX): halves paired
                    j1 = mode == 2 ? i + n_rot / 2 : 2 * i + 1;
                } else {
                    j0 = 2 * i;
                    j1 = 2 * i + 1;
                }
                const float m0 = (xr[j0] * inv[r]) * w[j0], m1 = (xr[j1] * inv[r]) * w[j1];
                if (i < n_rot / 2) {
                    float c, s;
                    if (i < nr) c = rf_rope_cs[0][i], s = rf_rope_cs[1][i];
                    else rope_cs_token(a.src[1], factors, i, t, n_rot, a.rope.freq_base, a.rope.freq_scale, c, s);
                    rope_apply(m0, m1, c, s, y0, y1);
                } else {
                    y0 = m0, y1 = m1;
                }
                if (stage == 6) {
                    u8 *prow = h.pool + (i64)h.slots[t] * a.aux[1];
                    store_pool_elem(prow, a.rope.pool_type, head * D + j0, y0);
                    store_pool_elem(prow, a.rope.pool_type, head * D + j1, y1);
                } else {
                    float *out = q_rows ? (float *)a.src[4].data : h.k_rot;
                    const i64 at = head_elem_at(q_rows ? a.src[4] : a.src[0], head, t, 0);
                    out[at + j0] = y0;
                    out[at + j1] = y1;
                }
            }
            __syncthreads();
        }
    }
}
