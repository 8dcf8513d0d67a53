// MATMUL with M = 1 (decode) for the types the benchmark models use: Q4_K, Q6_K, Q8_0, F16.
// Memory-bound: one warp per weight row, each lane reads a contiguous piece of a block with
// the widest loads its alignment allows (Q4_K/F16: 16 bytes; Q6_K/Q8_0 blocks are only 2-byte
// aligned: 2-byte loads), and dots it against f32 activations (L1-resident).
#include "compat.h"
#include "quant_decode.h"

#define RF_MV_WARPS 4

struct MvRow { const u8 *w; const float *x; float *y; i64 K; };

RF_DEV bool mv_setup(const rf_kargs &a, MvRow &r) {
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 n = (i64)blockIdx.x * RF_MV_WARPS + threadIdx.x / RF_WARP;
    if (n >= w.ne[1]) return false;
    const i64 i2 = blockIdx.z % x.ne[2], i3 = blockIdx.z / x.ne[2];
    const i64 w2 = i2 / (x.ne[2] / w.ne[2]), w3 = i3 / (x.ne[3] / w.ne[3]);
    r.w = (const u8 *)w.data + w2 * w.nb[2] + w3 * w.nb[3] + n * w.nb[1];
    r.x = (const float *)((const u8 *)x.data + i2 * x.nb[2] + i3 * x.nb[3]);
    r.y = (float *)((u8 *)d.data + i2 * d.nb[2] + i3 * d.nb[3]) + n;
    r.K = w.ne[0];
    return true;
}

RF_DEV float dot16_nib(uint4 q, int shift, const float *x) { // 16 nibbles (bytes >> shift) . x[0..15]
    const u32 v[4] = {q.x, q.y, q.z, q.w};
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const float4 xv = *(const float4 *)(x + 4 * i);
        const u32 b = (v[i] >> shift) & 0x0F0F0F0Fu;
        s += (float)(b & 0xF) * xv.x + (float)((b >> 8) & 0xF) * xv.y + (float)((b >> 16) & 0xF) * xv.z + (float)(b >> 24) * xv.w;
    }
    return s;
}

RF_DEV float sum16(const float *x) {
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < 4; ++i) { const float4 v = *(const float4 *)(x + 4 * i); s += (v.x + v.y) + (v.z + v.w); }
    return s;
}

// Q4_K: 8 lanes per 256-element block; lane j reads qs bytes [16j, 16j+16): elements
// 64p + 16h + [0,16) (low nibbles, sub-block 2p) and 64p + 32 + 16h + [0,16) (high, 2p+1).
RF_KERNEL __launch_bounds__(128) void rf_mv_q4_k(rf_kargs a) {
    MvRow r;
    if (!mv_setup(a, r)) return;
    const int lane = threadIdx.x % RF_WARP, j = lane & 7;
    const int p = j >> 1, h = j & 1;
    const i64 nb = r.K / 256;
    float acc = 0.f;
#pragma unroll 2
    for (i64 b = lane >> 3; b < nb; b += RF_WARP / 8) {
        const u8 *blk = r.w + b * 144;
        const uint4 q = *(const uint4 *)(blk + 16 + 16 * j);
        const u32 dm = *(const u32 *)blk;
        const float d = h2f((u16)dm), dmin = h2f((u16)(dm >> 16));
        int sc0, m0, sc1, m1;
        scale_min_k4(2 * p, blk + 4, sc0, m0);
        scale_min_k4(2 * p + 1, blk + 4, sc1, m1);
        const float *x0 = r.x + b * 256 + 64 * p + 16 * h, *x1 = x0 + 32;
        acc += d * ((float)sc0 * dot16_nib(q, 0, x0) + (float)sc1 * dot16_nib(q, 4, x1)) -
               dmin * ((float)m0 * sum16(x0) + (float)m1 * sum16(x1));
    }
    acc = warp_sum(acc);
    if (lane == 0) *r.y = acc;
}

// Q6_K: 16 lanes per 256-element block (two blocks per warp step); lane t owns positions
// l = 2t, 2t+1 of both halves n and all four quarters k (element 128n + 32k + l): its 2-byte
// loads of ql/qh are adjacent to its neighbours', so each load instruction is coalesced.
RF_KERNEL __launch_bounds__(128) void rf_mv_q6_k(rf_kargs a) {
    MvRow r;
    if (!mv_setup(a, r)) return;
    const int lane = threadIdx.x % RF_WARP, t = lane & 15;
    const int l = 2 * t, hi16 = t >> 3;
    const i64 nb = r.K / 256;
    float acc = 0.f;
#pragma unroll 2
    for (i64 b = lane >> 4; b < nb; b += 2) {
        const u8 *blk = r.w + b * 210;
        const float d = h2f(*(const u16 *)(blk + 208));
        const i8 *sc = (const i8 *)(blk + 192);
        float part = 0.f;
#pragma unroll
        for (int n = 0; n < 2; ++n) {
            const u32 a0 = *(const u16 *)(blk + 64 * n + l), a1 = *(const u16 *)(blk + 64 * n + 32 + l);
            const u32 hh = *(const u16 *)(blk + 128 + 32 * n + l);
            const float *x = r.x + b * 256 + 128 * n + l;
            float s[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const u32 lo0 = (a0 >> (8 * e)) & 0xFF, lo1 = (a1 >> (8 * e)) & 0xFF, hb = (hh >> (8 * e)) & 0xFF;
                s[0] += (float)((int)((lo0 & 0xF) | ((hb & 3) << 4)) - 32) * x[e];
                s[1] += (float)((int)((lo1 & 0xF) | (((hb >> 2) & 3) << 4)) - 32) * x[e + 32];
                s[2] += (float)((int)((lo0 >> 4) | (((hb >> 4) & 3) << 4)) - 32) * x[e + 64];
                s[3] += (float)((int)((lo1 >> 4) | (((hb >> 6) & 3) << 4)) - 32) * x[e + 96];
            }
            const i8 *scn = sc + 8 * n + hi16;
            part += (float)scn[0] * s[0] + (float)scn[2] * s[1] + (float)scn[4] * s[2] + (float)scn[6] * s[3];
        }
        acc += d * part;
    }
    acc = warp_sum(acc);
    if (lane == 0) *r.y = acc;
}

// Q8_0: 8 lanes per 34-byte block, 4 blocks per warp step (136 contiguous bytes); lane j
// reads quants [4j, 4j+4) as two 2-byte loads.
RF_KERNEL __launch_bounds__(128) void rf_mv_q8_0(rf_kargs a) {
    MvRow r;
    if (!mv_setup(a, r)) return;
    const int lane = threadIdx.x % RF_WARP, j = lane & 7;
    const i64 nb = r.K / 32;
    float acc = 0.f;
#pragma unroll 4
    for (i64 b = lane >> 3; b < nb; b += 4) {
        const u16 *blk = (const u16 *)(r.w + b * 34);
        const float d = h2f(blk[0]);
        const u32 q01 = blk[1 + 2 * j], q23 = blk[2 + 2 * j];
        const float4 xv = *(const float4 *)(r.x + b * 32 + 4 * j);
        acc += d * ((float)(i8)(q01 & 0xFF) * xv.x + (float)(i8)(q01 >> 8) * xv.y + (float)(i8)(q23 & 0xFF) * xv.z +
                    (float)(i8)(q23 >> 8) * xv.w);
    }
    acc = warp_sum(acc);
    if (lane == 0) *r.y = acc;
}

// F16: 8 halves per 16-byte load (host guarantees K % 8 == 0 and 16-byte aligned rows).
RF_KERNEL __launch_bounds__(128) void rf_mv_f16(rf_kargs a) {
    MvRow r;
    if (!mv_setup(a, r)) return;
    const int lane = threadIdx.x % RF_WARP;
    const i64 n8 = r.K / 8;
    float acc = 0.f;
#pragma unroll 4
    for (i64 i = lane; i < n8; i += RF_WARP) {
        const uint4 q = *(const uint4 *)(r.w + 16 * i);
        const float4 x0 = *(const float4 *)(r.x + 8 * i), x1 = *(const float4 *)(r.x + 8 * i + 4);
        acc += h2f((u16)q.x) * x0.x + h2f((u16)(q.x >> 16)) * x0.y + h2f((u16)q.y) * x0.z + h2f((u16)(q.y >> 16)) * x0.w +
               h2f((u16)q.z) * x1.x + h2f((u16)(q.z >> 16)) * x1.y + h2f((u16)q.w) * x1.z + h2f((u16)(q.w >> 16)) * x1.w;
    }
    acc = warp_sum(acc);
    if (lane == 0) *r.y = acc;
}
