// ATTENTION for decode (few new tokens), split over the context (flash-decoding): a block takes
// one KV head, the G = Hq/Hkv query heads that share it, one token and chunk c of the context,
// positions [c*C, min(c*C + C, pos+1)); K/V rows are read once for all G heads. One chunk: the
// block writes the normalised result. Several: each block stores its partial (unnormalised o,
// max, sum) in scratch and the last block of its (KV head, token) merges them.
// Shared arguments: aux[0] = C, aux[1] = n_chunks, aux[2] bit 0: f16 rows allow 16-byte loads,
// aux[3] = the sinks (attention_sinks.h; they join where the final max and denominator are
// formed: the one-chunk write or the merge). Scratch: T*Hkv int arrival counters (zero between
// launches), the partials RF_ATD_COUNTER_BYTES in. Host limits: G <= 8, pools f16 or q8_0.
//  - rf_attention_dec{64,128}: head size known at compile time; a row is read by D/8 lanes, 8
//    elements each, so a warp reads 4 (D = 64) or 2 (D = 128) rows per instruction and every
//    thread issues all of its chunk's K (then V) loads before the first use. C <= 64.
//  - rf_attention_decode: any even D <= 256 (thread per position), C <= 128.
#pragma once
#include "compat.h"
#include "quant_decode.h"
#include "attention_sinks.h"

#define RF_ATD_MAXG 8
#define RF_ATD_MAXC 128
#define RF_ATD_MAXD 256
// Bytes of arrival counters at the front of the scratch (the host's kAttCounterBytes).
#define RF_ATD_COUNTER_BYTES (64 << 10)

// Partials of chunk k for query head hq of token t: D values, then (max, sum).
RF_DEV float *decode_partial(const rf_kargs &a, int t, int hq, int k) {
    const int Hq = (int)a.src[0].ne[1], D = (int)a.src[0].ne[0], nch = (int)a.aux[1];
    float *part = (float *)((u8 *)a.scratch + RF_ATD_COUNTER_BYTES);
    return part + (((i64)t * Hq + hq) * nch + k) * (D + 2);
}

// After a block stored its partials: true in every thread of the last block of its
// (KV head, token), which then merges (the arrival counter is reset for the next launch).
RF_DEV bool decode_last_block(const rf_kargs &a, int kvh, int t, int *sh_flag) {
    const int Hkv = (int)(a.src[1].ne[0] / a.src[0].ne[0]), nch = (int)a.aux[1];
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        int *cnt = (int *)a.scratch + (i64)t * Hkv + kvh;
        const int done = atomicAdd(cnt, 1);
        *sh_flag = done == nch - 1;
        if (*sh_flag) *cnt = 0;
    }
    __syncthreads();
    const bool last = *sh_flag != 0;
    if (last) __threadfence();
    return last;
}

// Merge of the G heads' chunks into out (G*D floats): chunk weights exp(m_k - M) per head first
// (warp per head, lanes over chunks; kept in wbuf[g * wcap + k] while nch <= wcap), then every
// output element sums its nch partials (independent loads). sh_m/sh_l: G floats of scratch. A
// head's sink joins M and adds exp(sink - M) to L.
RF_DEV void decode_merge(const rf_kargs &a, int kvh, int t, int G, float *out, float *wbuf, int wcap,
                         float *sh_m, float *sh_l) {
    const int D = (int)a.src[0].ne[0], nch = (int)a.aux[1];
    const int lane = threadIdx.x % RF_WARP, w = threadIdx.x / RF_WARP;
    const float NEG_INF = -__int_as_float(0x7f800000);
    const bool cached_w = nch <= wcap;
    const float *sinks = attention_sinks(a);
    for (int g = w; g < G; g += (int)blockDim.x / RF_WARP) {
        const volatile float *pp = decode_partial(a, t, kvh * G + g, 0);
        float M = NEG_INF;
        for (int k = lane; k < nch; k += RF_WARP) M = fmaxf(M, pp[k * (D + 2) + D]);
        M = warp_max(M);
        const float sink = sinks ? sinks[kvh * G + g] : NEG_INF;
        M = fmaxf(M, sink);
        float L = 0.f;
        for (int k = lane; k < nch; k += RF_WARP) {
            const float mk = pp[k * (D + 2) + D];
            const float wk = mk == NEG_INF ? 0.f : __expf(mk - M);
            L += pp[k * (D + 2) + D + 1] * wk;
            if (cached_w) wbuf[g * wcap + k] = wk;
        }
        L = warp_sum(L);
        if (sinks) L += __expf(sink - M);
        if (lane == 0) { sh_m[g] = M; sh_l[g] = L; }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < G * D; i += blockDim.x) {
        const int g = i / D, d = i % D;
        const volatile float *pp = decode_partial(a, t, kvh * G + g, 0);
        float acc = 0.f;
        if (cached_w) {
#pragma unroll 4
            for (int k = 0; k < nch; ++k) acc += pp[k * (D + 2) + d] * wbuf[g * wcap + k];
        } else {
            for (int k = 0; k < nch; ++k) {
                const float mk = pp[k * (D + 2) + D];
                if (mk != NEG_INF) acc += pp[k * (D + 2) + d] * __expf(mk - sh_m[g]);
            }
        }
        out[i] = acc / sh_l[g];
    }
}

// Softmax numerators of one chunk, per head (warp w: heads w, w + 4, ...): p[g * pcap + i]
// becomes exp(s - m); sh_m/sh_l get the chunk's max and sum (-inf, 0 for an empty chunk).
RF_DEV void decode_chunk_softmax(float *p, int pcap, int n, int G, float *sh_m, float *sh_l) {
    const int lane = threadIdx.x % RF_WARP, w = threadIdx.x / RF_WARP;
    const float NEG_INF = -__int_as_float(0x7f800000);
    for (int g = w; g < G; g += (int)blockDim.x / RF_WARP) {
        float m = NEG_INF;
        for (int i = lane; i < n; i += RF_WARP) m = fmaxf(m, p[g * pcap + i]);
        m = warp_max(m);
        float l = 0.f;
        for (int i = lane; i < n; i += RF_WARP) { const float e = __expf(p[g * pcap + i] - m); p[g * pcap + i] = e; l += e; }
        l = warp_sum(l);
        if (lane == 0) { sh_m[g] = m; sh_l[g] = l; }
    }
}

// The block's result for its G heads (o: G*D unnormalised values in shared memory, relative to
// the max sh_m with sum sh_l): written normalised when there is one chunk (the sinks joining
// there), else stored as a partial and merged by the last block.
RF_DEV void decode_finish(const rf_kargs &a, int kvh, int c, int t, int G, float *o, float *wbuf, int wcap,
                          float *sh_m, float *sh_l, int *sh_flag) {
    const int D = (int)a.src[0].ne[0], nch = (int)a.aux[1];
    float *out = (float *)((u8 *)a.dst.data + (i64)t * a.dst.nb[1]) + (i64)kvh * G * D;
    if (nch == 1) {
        const float *sinks = attention_sinks(a);
        for (int i = threadIdx.x; i < G * D; i += blockDim.x) {
            const int g = i / D;
            out[i] = sinks ? o[i] * attention_sink_factor(sh_m[g], sh_l[g], sinks[kvh * G + g]) : o[i] / sh_l[g];
        }
        return;
    }
    for (int i = threadIdx.x; i < G * D; i += blockDim.x) decode_partial(a, t, kvh * G + i / D, c)[i % D] = o[i];
    if (threadIdx.x < G) {
        float *pm = decode_partial(a, t, kvh * G + threadIdx.x, c) + D;
        pm[0] = sh_m[threadIdx.x];
        pm[1] = sh_l[threadIdx.x];
    }
    if (!decode_last_block(a, kvh, t, sh_flag)) return;
    decode_merge(a, kvh, t, G, out, wbuf, wcap, sh_m, sh_l);
}

// ---- rf_attention_dec{64,128} ------------------------------------------------------------------------

#define RF_ADV_WARPS 4
// Positions per chunk at most (the host's C). 32 for D = 128 on AMD: LLVM 15 caps gfx1100 at 128
// VGPRs and a 64-position chunk's K/V pieces would spill there.
#if RF_AMD
#define RF_ADV_MAXC(D) ((D) == 128 ? 32 : 64)
#else
#define RF_ADV_MAXC(D) 64
#endif

// Elements [e, e + 8) of row `slot` (e % 8 == 0) as floats. f16 rows: 16-byte loads when
// `wide`, else 4-byte; q8_0 rows: the block scale and two 4-byte pieces (2-byte aligned).
RF_DEV void kv_load8(const rf_ktensor &pool, int slot, i64 e, bool wide, float *v) {
    const u8 *row = (const u8 *)pool.data + (i64)slot * pool.nb[1];
    if (pool.type == T_F16) {
        const u16 *p = (const u16 *)row + e;
        u32 w[4];
        if (wide) {
            const uint4 q = *(const uint4 *)p;
            w[0] = q.x; w[1] = q.y; w[2] = q.z; w[3] = q.w;
        } else {
#pragma unroll
            for (int i = 0; i < 4; ++i) w[i] = *(const u32 *)(p + 2 * i);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) { v[2 * i] = h2f((u16)w[i]); v[2 * i + 1] = h2f((u16)(w[i] >> 16)); }
    } else {
        const u8 *b = row + (e >> 5) * 34;
        const float d = h2f(*(const u16 *)b);
        const u32 q0 = ld_u32_a2(b + 2 + (e & 31)), q1 = ld_u32_a2(b + 6 + (e & 31));
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            v[i] = d * (float)(i8)(q0 >> (8 * i));
            v[4 + i] = d * (float)(i8)(q1 >> (8 * i));
        }
    }
}

template <int D> RF_DEV void attn_dec(const rf_kargs &a) {
    constexpr int L = D / 8;                 // lanes per row
    constexpr int R = RF_WARP / L;           // rows per warp instruction
    constexpr int RB = RF_ADV_WARPS * R;     // rows per block step
    constexpr int NI = RF_ADV_MAXC(D) / RB;     // block steps per chunk (at most)
    __shared__ float sh_q[RF_ATD_MAXG * D];
    __shared__ float sh_p[RF_ATD_MAXG * RF_ADV_MAXC(D)];
    __shared__ float sh_o[RF_ADV_WARPS * RF_ATD_MAXG * D];
    __shared__ int sh_slot[RF_ADV_MAXC(D)];
    __shared__ float sh_m[RF_ATD_MAXG], sh_l[RF_ATD_MAXG];
    __shared__ int sh_flag;
    const rf_ktensor &q = a.src[0], &kp = a.src[1], &vp = a.src[2], &tab = a.src[3], &info = a.src[4];
    const int Hq = (int)q.ne[1], Hkv = (int)(kp.ne[0] / D), G = Hq / Hkv;
    const int kvh = blockIdx.x, c = blockIdx.y, t = blockIdx.z, tid = threadIdx.x;
    const int lane = tid % RF_WARP, w = tid / RF_WARP, r = lane / L, le = lane % L;
    const int C = (int)a.aux[0];
    const bool wide = (a.aux[2] & 1) != 0;
    const int *ti = (const int *)((const u8 *)info.data + (i64)t * info.nb[1]);
    const int seq = ti[0], pos = ti[1];
    const int *slots = (const int *)((const u8 *)tab.data + (i64)seq * tab.nb[1]);
    const int p0 = c * C, n = max(0, min(p0 + C, pos + 1) - p0);
    const i64 e0 = (i64)kvh * D + 8 * le;

    for (int i = tid; i < G * D; i += blockDim.x)
        sh_q[i] = ((const float *)((const u8 *)q.data + (i64)(kvh * G + i / D) * q.nb[1] + (i64)t * q.nb[2]))[i % D] *
                  a.attention.scale;
    for (int i = tid; i < n; i += blockDim.x) sh_slot[i] = slots[p0 + i];
    __syncthreads();

    // 1. scores: all of this thread's K pieces first, then the dots (reduced over the L lanes).
    float k[NI][8];
#pragma unroll
    for (int s = 0; s < NI; ++s) {
        const int i = s * RB + w * R + r;
        if (i < n) kv_load8(kp, sh_slot[i], e0, wide, k[s]);
    }
#pragma unroll
    for (int s = 0; s < NI; ++s) {
        const int i = s * RB + w * R + r;
        if (s * RB < n) { // uniform over the block (no break: the loop must unroll fully)
        float sc[RF_ATD_MAXG];
#pragma unroll
        for (int g = 0; g < RF_ATD_MAXG; ++g) {
            sc[g] = 0.f;
            if (g < G && i < n) {
                const float *qg = sh_q + g * D + 8 * le;
#pragma unroll
                for (int e = 0; e < 8; ++e) sc[g] += qg[e] * k[s][e];
            }
#pragma unroll
            for (int o = 1; o < L; o <<= 1) sc[g] += shfl_xor_f(sc[g], o);
        }
        if (le == 0 && i < n) {
#pragma unroll
            for (int g = 0; g < RF_ATD_MAXG; ++g)
                if (g < G) sh_p[g * RF_ADV_MAXC(D) + i] = sc[g];
        }
        }
    }
    __syncthreads();

    // 2. softmax numerators per head.
    decode_chunk_softmax(sh_p, RF_ADV_MAXC(D), n, G, sh_m, sh_l);
    __syncthreads();

    // 3. P.V with the same row layout; reduced over the R rows of a warp by shuffles, then
    // over the warps in shared memory.
#pragma unroll
    for (int s = 0; s < NI; ++s) {
        const int i = s * RB + w * R + r;
        if (i < n) kv_load8(vp, sh_slot[i], e0, wide, k[s]);
    }
    float o[RF_ATD_MAXG][8];
#pragma unroll
    for (int g = 0; g < RF_ATD_MAXG; ++g)
#pragma unroll
        for (int e = 0; e < 8; ++e) o[g][e] = 0.f;
#pragma unroll
    for (int s = 0; s < NI; ++s) {
        const int i = s * RB + w * R + r;
        if (i < n)
#pragma unroll
        for (int g = 0; g < RF_ATD_MAXG; ++g)
            if (g < G) {
                const float pg = sh_p[g * RF_ADV_MAXC(D) + i];
#pragma unroll
                for (int e = 0; e < 8; ++e) o[g][e] += pg * k[s][e];
            }
    }
#pragma unroll
    for (int g = 0; g < RF_ATD_MAXG; ++g) {
        if (g < G) { // uniform
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                float v = o[g][e];
#pragma unroll
                for (int x = L; x < RF_WARP; x <<= 1) v += shfl_xor_f(v, x);
                if (r == 0) sh_o[(w * RF_ATD_MAXG + g) * D + 8 * le + e] = v;
            }
        }
    }
    __syncthreads();
    for (int i = tid; i < G * D; i += blockDim.x) {
        const int g = i / D, d = i % D;
        float v = 0.f;
#pragma unroll
        for (int ww = 0; ww < RF_ADV_WARPS; ++ww) v += sh_o[(ww * RF_ATD_MAXG + g) * D + d];
        sh_o[i] = v; // row 0 of sh_o now holds the block's G*D sums (each i read then written by one thread)
    }
    __syncthreads();
    decode_finish(a, kvh, c, t, G, sh_o, sh_p, RF_ADV_MAXC(D), sh_m, sh_l, &sh_flag);
}

RF_KERNEL __launch_bounds__(128) void rf_attention_dec64(rf_kargs a) { rf_kernel_start(); attn_dec<64>(a); }
RF_KERNEL __launch_bounds__(128) void rf_attention_dec128(rf_kargs a) { rf_kernel_start(); attn_dec<128>(a); }

// ---- rf_attention_decode: any even D -----------------------------------------------------------
// Steps: scores (thread = position), softmax of the chunk per head (warp per head), P.V
// (thread = pair of output elements, position groups reduced in shared memory).

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
    rf_kernel_start();
    __shared__ float sh_q[RF_ATD_MAXG * RF_ATD_MAXD];
    __shared__ float sh_p[RF_ATD_MAXG * RF_ATD_MAXC];
    __shared__ float sh_o[RF_ATD_MAXG * 256];
    __shared__ float sh_m[RF_ATD_MAXG], sh_l[RF_ATD_MAXG];
    __shared__ int sh_flag;
    const rf_ktensor &q = a.src[0], &kp = a.src[1], &vp = a.src[2], &tab = a.src[3], &info = a.src[4];
    const int D = (int)q.ne[0], Hq = (int)q.ne[1], Hkv = (int)(kp.ne[0] / D), G = Hq / Hkv;
    const int kvh = blockIdx.x, c = blockIdx.y, t = blockIdx.z, tid = threadIdx.x;
    const int C = (int)a.aux[0];
    const int *ti = (const int *)((const u8 *)info.data + (i64)t * info.nb[1]);
    const int seq = ti[0], pos = ti[1];
    const int *slots = (const int *)((const u8 *)tab.data + (i64)seq * tab.nb[1]);
    const int p0 = c * C, n = min(p0 + C, pos + 1) - p0; // positions in this chunk (may be <= 0)
    const i64 koff = (i64)kvh * D;

    for (int i = tid; i < G * D; i += blockDim.x)
        sh_q[i] = ((const float *)((const u8 *)q.data + (i64)(kvh * G + i / D) * q.nb[1] + (i64)t * q.nb[2]))[i % D] * a.attention.scale;
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
            if (g < G) sh_p[g * RF_ATD_MAXC + tid] = s[g];
    }
    __syncthreads();

    // 2. softmax numerators of the chunk, per head
    decode_chunk_softmax(sh_p, RF_ATD_MAXC, n, G, sh_m, sh_l);
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
                if (g < G) { const float pg = sh_p[g * RF_ATD_MAXC + i]; o0[g] += pg * v0; o1[g] += pg * v1; }
        }
#pragma unroll
        for (int g = 0; g < RF_ATD_MAXG; ++g)
            if (g < G) { sh_o[(grp * G + g) * D + 2 * pr] = o0[g]; sh_o[(grp * G + g) * D + 2 * pr + 1] = o1[g]; }
    }
    __syncthreads();
    for (int i = tid; i < G * D; i += blockDim.x) {
        float v = 0.f;
        for (int gr = 0; gr < ngrp; ++gr) v += sh_o[gr * G * D + i];
        sh_q[i] = v; // sh_q is free again: the block's G*D sums
    }
    __syncthreads();
    decode_finish(a, kvh, c, t, G, sh_q, sh_p, RF_ATD_MAXC, sh_m, sh_l, &sh_flag);
}
