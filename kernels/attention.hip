// ATTENTION over a paged KV pool (abi.h): causal, GQA, pools f32/f16/q8_0.
// Grid (Hq, T); 4 warps per block split the visible positions; each warp keeps an online
// softmax (running max, sum, V accumulator with D/32 values per lane); the block merges them.
#include "compat.h"
#include "quant_decode.h"

#define RF_ATT_WARPS 4
#define RF_ATT_MAXD 256
#define RF_ATT_PER_LANE (RF_ATT_MAXD / RF_WARP)

RF_DEV float kv_value(const rf_ktensor &pool, int slot, i64 e) { // element e of row `slot`
    const u8 *row = (const u8 *)pool.data + (i64)slot * pool.nb[1];
    if (pool.type == T_F16) return h2f(((const u16 *)row)[e]);
    if (pool.type == T_Q8_0) {
        const u8 *b = row + (e >> 5) * 34;
        return h2f(ld_u16(b)) * (float)(i8)b[2 + (e & 31)];
    }
    return ((const float *)row)[e];
}

RF_KERNEL __launch_bounds__(128) void rf_attention(rf_kargs a) {
    __shared__ float sh_m[RF_ATT_WARPS], sh_l[RF_ATT_WARPS];
    __shared__ float sh_acc[RF_ATT_WARPS][RF_ATT_MAXD];
    const rf_ktensor &q = a.src[0], &kp = a.src[1], &vp = a.src[2], &tab = a.src[3], &info = a.src[4];
    const int D = (int)q.ne[0], Hq = (int)q.ne[1];
    const int Hkv = (int)(kp.ne[0] / D);
    const int h = blockIdx.x, t = blockIdx.y;
    const int kvh = h / (Hq / Hkv);
    const int lane = threadIdx.x % RF_WARP, w = threadIdx.x / RF_WARP;
    const int *ti = (const int *)((const u8 *)info.data + (i64)t * info.nb[1]);
    const int seq = ti[0], pos = ti[1];
    const int *slots = (const int *)((const u8 *)tab.data + (i64)seq * tab.nb[1]);
    const float scale = a.fparams[0];
    const float *qr = (const float *)((const u8 *)q.data + (i64)h * q.nb[1] + (i64)t * q.nb[2]);

    float qv[RF_ATT_PER_LANE], acc[RF_ATT_PER_LANE];
#pragma unroll
    for (int j = 0; j < RF_ATT_PER_LANE; ++j) {
        const int dd = lane + RF_WARP * j;
        qv[j] = dd < D ? qr[dd] * scale : 0.f;
        acc[j] = 0.f;
    }
    float m = -__int_as_float(0x7f800000), l = 0.f;
    const i64 koff = (i64)kvh * D;
    for (int p = w; p <= pos; p += RF_ATT_WARPS) {
        const int slot = slots[p];
        float s = 0.f;
#pragma unroll
        for (int j = 0; j < RF_ATT_PER_LANE; ++j) {
            const int dd = lane + RF_WARP * j;
            if (dd < D) s += qv[j] * kv_value(kp, slot, koff + dd);
        }
        s = warp_sum(s);
        const float mn = fmaxf(m, s);
        const float corr = __expf(m - mn), e = __expf(s - mn);
        l = l * corr + e;
#pragma unroll
        for (int j = 0; j < RF_ATT_PER_LANE; ++j) {
            const int dd = lane + RF_WARP * j;
            acc[j] = acc[j] * corr + (dd < D ? e * kv_value(vp, slot, koff + dd) : 0.f);
        }
        m = mn;
    }
    if (lane == 0) { sh_m[w] = m; sh_l[w] = l; }
#pragma unroll
    for (int j = 0; j < RF_ATT_PER_LANE; ++j) {
        const int dd = lane + RF_WARP * j;
        if (dd < D) sh_acc[w][dd] = acc[j];
    }
    __syncthreads();
    float M = sh_m[0];
    for (int i = 1; i < RF_ATT_WARPS; ++i) M = fmaxf(M, sh_m[i]);
    float L = 0.f;
    for (int i = 0; i < RF_ATT_WARPS; ++i) L += sh_m[i] == -__int_as_float(0x7f800000) ? 0.f : sh_l[i] * __expf(sh_m[i] - M);
    float *out = (float *)((u8 *)a.dst.data + (i64)t * a.dst.nb[1]) + (i64)h * D;
    for (int dd = threadIdx.x; dd < D; dd += blockDim.x) {
        float o = 0.f;
        for (int i = 0; i < RF_ATT_WARPS; ++i)
            if (sh_m[i] != -__int_as_float(0x7f800000)) o += sh_acc[i][dd] * __expf(sh_m[i] - M);
        out[dd] = o / L;
    }
}

// ---- decode: split over the context (flash-decoding) ------------------------------------------
// Grid (Hkv, n_chunks, T), 128 threads. A block takes one KV head, the G = Hq/Hkv query heads
// that share it, and chunk c of the context: positions [c*C, min(c*C + C, pos+1)). K/V rows are
// read once for all G heads. Steps: scores (thread = position), softmax of the chunk per head
// (warp per head), P.V (thread = pair of output elements, position groups reduced in shared
// memory). One chunk: the result is written directly. Otherwise each block stores its partial
// (unnormalised o, max, sum) in scratch and the last block of its (KV head, token) merges them.
// aux[0] = C (<= 128), aux[1] = n_chunks, aux[2] bit 0: f16 K rows allow 16-byte loads,
// aux[3] = byte offset of the partials in scratch (the first T*Hkv ints are arrival counters,
// zero between launches). Host limits: G <= 8, D even and <= 256, pools f16 or q8_0.
#define RF_ATD_MAXG 8
#define RF_ATD_MAXC 128

RF_DEV void kv_pair(const rf_ktensor &pool, int slot, i64 e, float &v0, float &v1) { // elements e, e+1 (e even)
    const u8 *row = (const u8 *)pool.data + (i64)slot * pool.nb[1];
    if (pool.type == T_F16) {
        const u32 v = *(const u32 *)((const u16 *)row + e);
        v0 = h2f((u16)v); v1 = h2f((u16)(v >> 16));
    } else {
        const u8 *b = row + (e >> 5) * 34;
        const float d = h2f(*(const u16 *)b);
        const u32 v = *(const u16 *)(b + 2 + (e & 31));
        v0 = d * (float)(i8)(v & 0xFF); v1 = d * (float)(i8)(v >> 8);
    }
}

RF_KERNEL __launch_bounds__(128) void rf_attention_decode(rf_kargs a) {
    __shared__ float sh_q[RF_ATD_MAXG * RF_ATT_MAXD];
    __shared__ float sh_p[RF_ATD_MAXG][RF_ATD_MAXC];
    __shared__ float sh_o[RF_ATD_MAXG * 256];
    __shared__ float sh_m[RF_ATD_MAXG], sh_l[RF_ATD_MAXG];
    __shared__ int sh_last;
    const rf_ktensor &q = a.src[0], &kp = a.src[1], &vp = a.src[2], &tab = a.src[3], &info = a.src[4];
    const int D = (int)q.ne[0], Hq = (int)q.ne[1], Hkv = (int)(kp.ne[0] / D), G = Hq / Hkv;
    const int kvh = blockIdx.x, c = blockIdx.y, t = blockIdx.z, tid = threadIdx.x;
    const int C = (int)a.aux[0], nch = (int)a.aux[1];
    const int *ti = (const int *)((const u8 *)info.data + (i64)t * info.nb[1]);
    const int seq = ti[0], pos = ti[1];
    const int *slots = (const int *)((const u8 *)tab.data + (i64)seq * tab.nb[1]);
    const int p0 = c * C, n = min(p0 + C, pos + 1) - p0; // positions in this chunk (may be <= 0)
    const float NEG_INF = -__int_as_float(0x7f800000);
    const i64 koff = (i64)kvh * D;

    for (int i = tid; i < G * D; i += blockDim.x)
        sh_q[i] = ((const float *)((const u8 *)q.data + (i64)(kvh * G + i / D) * q.nb[1] + (i64)t * q.nb[2]))[i % D] * a.fparams[0];
    __syncthreads();

    // 1. scores of the G heads at position p0 + tid
    if (tid < n) {
        const int slot = slots[p0 + tid];
        float s[RF_ATD_MAXG];
#pragma unroll
        for (int g = 0; g < RF_ATD_MAXG; ++g) s[g] = 0.f;
        if (kp.type == T_F16 && (a.aux[2] & 1)) {
            const u16 *kr = (const u16 *)((const u8 *)kp.data + (i64)slot * kp.nb[1]) + koff;
            for (int d = 0; d < D; d += 8) {
                const uint4 v = *(const uint4 *)(kr + d);
                const float k[8] = {h2f((u16)v.x), h2f((u16)(v.x >> 16)), h2f((u16)v.y), h2f((u16)(v.y >> 16)),
                                    h2f((u16)v.z), h2f((u16)(v.z >> 16)), h2f((u16)v.w), h2f((u16)(v.w >> 16))};
#pragma unroll
                for (int g = 0; g < RF_ATD_MAXG; ++g)
                    if (g < G) {
                        const float *qg = sh_q + g * D + d;
#pragma unroll
                        for (int e = 0; e < 8; ++e) s[g] += qg[e] * k[e];
                    }
            }
        } else {
            for (int d = 0; d < D; d += 2) {
                float k0, k1;
                kv_pair(kp, slot, koff + d, k0, k1);
#pragma unroll
                for (int g = 0; g < RF_ATD_MAXG; ++g)
                    if (g < G) s[g] += sh_q[g * D + d] * k0 + sh_q[g * D + d + 1] * k1;
            }
        }
#pragma unroll
        for (int g = 0; g < RF_ATD_MAXG; ++g)
            if (g < G) sh_p[g][tid] = s[g];
    }
    __syncthreads();

    // 2. softmax numerators of the chunk, per head (warp w: heads w, w+4, ...)
    const int lane = tid % RF_WARP, w = tid / RF_WARP;
    for (int g = w; g < G; g += (int)blockDim.x / RF_WARP) {
        float m = NEG_INF;
        for (int i = lane; i < n; i += RF_WARP) m = fmaxf(m, sh_p[g][i]);
        m = warp_max(m);
        float l = 0.f;
        for (int i = lane; i < n; i += RF_WARP) { const float e = __expf(sh_p[g][i] - m); sh_p[g][i] = e; l += e; }
        l = warp_sum(l);
        if (lane == 0) { sh_m[g] = m; sh_l[g] = l; }
    }
    __syncthreads();

    // 3. P.V: thread = (position group grp, output pair pr)
    const int P = D / 2, ngrp = (int)blockDim.x / P, pr = tid % P, grp = tid / P;
    if (grp < ngrp) {
        float o0[RF_ATD_MAXG], o1[RF_ATD_MAXG];
#pragma unroll
        for (int g = 0; g < RF_ATD_MAXG; ++g) { o0[g] = 0.f; o1[g] = 0.f; }
        for (int i = grp; i < n; i += ngrp) {
            float v0, v1;
            kv_pair(vp, slots[p0 + i], koff + 2 * pr, v0, v1);
#pragma unroll
            for (int g = 0; g < RF_ATD_MAXG; ++g)
                if (g < G) { const float pg = sh_p[g][i]; o0[g] += pg * v0; o1[g] += pg * v1; }
        }
#pragma unroll
        for (int g = 0; g < RF_ATD_MAXG; ++g)
            if (g < G) { sh_o[(grp * G + g) * D + 2 * pr] = o0[g]; sh_o[(grp * G + g) * D + 2 * pr + 1] = o1[g]; }
    }
    __syncthreads();

    float *part = (float *)((u8 *)a.scratch + a.aux[3]);
    float *out = (float *)((u8 *)a.dst.data + (i64)t * a.dst.nb[1]) + (i64)kvh * G * D;
    for (int i = tid; i < G * D; i += blockDim.x) {
        const int g = i / D, d = i % D;
        float v = 0.f;
        for (int gr = 0; gr < ngrp; ++gr) v += sh_o[(gr * G + g) * D + d];
        if (nch == 1) out[i] = v / sh_l[g];
        else part[(((i64)t * Hq + kvh * G + g) * nch + c) * (D + 2) + d] = v;
    }
    if (nch == 1) return;
    if (tid < G) {
        float *pm = part + (((i64)t * Hq + kvh * G + tid) * nch + c) * (D + 2) + D;
        pm[0] = sh_m[tid];
        pm[1] = sh_l[tid];
    }
    // The last block to finish this (KV head, token) merges the chunks.
    __threadfence();
    __syncthreads();
    if (tid == 0) {
        int *cnt = (int *)a.scratch + (i64)t * Hkv + kvh;
        const int done = atomicAdd(cnt, 1);
        sh_last = done == nch - 1;
        if (sh_last) *cnt = 0; // ready for the next launch
    }
    __syncthreads();
    if (!sh_last) return;
    __threadfence();
    // Merge: chunk weights exp(m_k - M) per head first (warp per head, lanes over chunks; kept in
    // sh_p while they fit), then every output element sums its nch partials (independent loads).
    const bool cached_w = nch <= RF_ATD_MAXC;
    for (int g = w; g < G; g += (int)blockDim.x / RF_WARP) {
        const volatile float *pp = part + ((i64)t * Hq + kvh * G + g) * nch * (D + 2);
        float M = NEG_INF;
        for (int k = lane; k < nch; k += RF_WARP) M = fmaxf(M, pp[k * (D + 2) + D]);
        M = warp_max(M);
        float L = 0.f;
        for (int k = lane; k < nch; k += RF_WARP) {
            const float mk = pp[k * (D + 2) + D];
            const float wk = mk == NEG_INF ? 0.f : __expf(mk - M);
            L += pp[k * (D + 2) + D + 1] * wk;
            if (cached_w) sh_p[g][k] = wk;
        }
        L = warp_sum(L);
        if (lane == 0) { sh_m[g] = M; sh_l[g] = L; }
    }
    __syncthreads();
    for (int i = tid; i < G * D; i += blockDim.x) {
        const int g = i / D, d = i % D;
        const volatile float *pp = part + ((i64)t * Hq + kvh * G + g) * nch * (D + 2);
        float acc = 0.f;
        if (cached_w) {
#pragma unroll 4
            for (int k = 0; k < nch; ++k) acc += pp[k * (D + 2) + d] * sh_p[g][k];
        } else {
            for (int k = 0; k < nch; ++k) {
                const float mk = pp[k * (D + 2) + D];
                if (mk != NEG_INF) acc += pp[k * (D + 2) + d] * __expf(mk - sh_m[g]);
            }
        }
        out[i] = acc / sh_l[g];
    }
}
