// MATMUL with M = 1 (decode). Memory-bound: one warp per weight row, each lane reads a
// contiguous piece of a block with the widest loads its alignment allows.
//  - F16: dotted against the f32 activations.
//  - Q4_K, Q5_K, Q6_K, Q4_0, Q8_0 (rf_mvq_*): the activation vector is first quantized to
//    q8_1-like blocks (rf_quantize_q8_1: 32 int8 + scale + scaled sum) in plugin scratch, then each
//    lane dots packed weight quants with it 4 at a time (dp4a / sdot4). Reading int8 instead of
//    f32 activations cuts the L1 traffic per weight byte ~8x, which bounded the f32 kernels.
#include "compat.h"
#include "quant_decode.h"

#define RF_MV_WARPS 4

struct MvRow { const u8 *w; const float *x; float *y; i64 K; };

RF_DEV bool mv_setup(const rf_kargs &a, MvRow &r) {
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 n = (i64)blockIdx.x * RF_MV_WARPS + threadIdx.x / RF_WARP;
    if (n >= w.ne[1]) return false;
    int i2 = 0, i3 = 0, w2 = 0, w3 = 0;
    batch_coords(blockIdx.z, x, w, i2, i3, w2, w3);
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

// ---- q8_1 activations (written by quantize_act.hip or the fused norm) ----------------------
// Column z (batch index) of the scratch: K int8 quants, then K/32 pairs (scale d, d * sum of the
// 32 quants); aux[0] = column stride in bytes.
struct MvqRow { const u8 *w; const i8 *xq; const float *xds; float *y; i64 K; };

RF_DEV bool mvq_setup(const rf_kargs &a, MvqRow &r) {
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 n = (i64)blockIdx.x * RF_MV_WARPS + threadIdx.x / RF_WARP;
    if (n >= w.ne[1]) return false;
    int i2 = 0, i3 = 0, w2 = 0, w3 = 0;
    batch_coords(blockIdx.z, x, w, i2, i3, w2, w3);
    r.K = w.ne[0];
    r.w = (const u8 *)w.data + w2 * w.nb[2] + w3 * w.nb[3] + n * w.nb[1];
    r.xq = (const i8 *)a.scratch + (i64)blockIdx.z * a.aux[0];
    r.xds = (const float *)(r.xq + r.K);
    r.y = (float *)((u8 *)d.data + i2 * d.nb[2] + i3 * d.nb[3]) + n;
    return true;
}

RF_DEV int dot16_i8(uint4 w, uint4 x, int acc) {
    return dot4_i8((int)w.w, (int)x.w, dot4_i8((int)w.z, (int)x.z, dot4_i8((int)w.y, (int)x.y, dot4_i8((int)w.x, (int)x.x, acc))));
}
RF_DEV uint4 u4(u32 a, u32 b, u32 c, u32 d) { uint4 r; r.x = a; r.y = b; r.z = c; r.w = d; return r; }
RF_DEV uint4 and4(uint4 v, u32 m) { return u4(v.x & m, v.y & m, v.z & m, v.w & m); }
RF_DEV uint4 shr4(uint4 v, int s) { return u4(v.x >> s, v.y >> s, v.z >> s, v.w >> s); }
RF_DEV uint4 or4(uint4 a, uint4 b) { return u4(a.x | b.x, a.y | b.y, a.z | b.z, a.w | b.w); }
// Bit s of each byte of qh moved to bit 4 (Q5_K's fifth quant bit).
RF_DEV uint4 fifth_bit4(uint4 qh, int s) {
    const uint4 b = and4(shr4(qh, s), 0x01010101u);
    return u4(b.x << 4, b.y << 4, b.z << 4, b.w << 4);
}
// Four unsigned 6-bit values (one per byte) minus 32, as signed bytes (no carries between bytes).
RF_DEV u32 sub32_6bit(u32 v) {
    const u32 s = v ^ 0x20202020u, sign = s & 0x20202020u;
    return s | (sign << 1) | (sign << 2);
}

// Q4_K / Q5_K: 8 lanes per 256-element block, 4 blocks per warp step; lane j = 2p + h reads
// quant bytes [16j, 16j+16): low nibbles = elements 64p + 16h + [0,16) (sub-block 2p), high
// nibbles = 64p + 32 + 16h + [0,16) (sub-block 2p+1). Q5_K adds bit 2p / 2p+1 of qh bytes
// [16h, 16h+16). The min term uses the q8_1 block sums, added once per sub-block (h == 0).
// Row functions (mvq_row_*) return the warp-summed dot product of one weight row with the q8_1
// vector (xq quants, xds (scale, sum) pairs); every lane gets the result.
template <int T> RF_DEV float mvq_row_k4(const u8 *w, const i8 *xq, const float *xds, i64 K) {
    const int lane = threadIdx.x % RF_WARP, j = lane & 7, p = j >> 1, h = j & 1;
    const int bytes = T == T_Q4_K ? 144 : 176, qs_at = T == T_Q4_K ? 16 : 48;
    const i64 nb = K / 256;
    float acc = 0.f;
#pragma unroll 2
    for (i64 b = lane >> 3; b < nb; b += RF_WARP / 8) {
        const u8 *blk = w + b * bytes;
        uint4 q = *(const uint4 *)(blk + qs_at + 16 * j);
        uint4 lo = and4(q, 0x0F0F0F0Fu), hi = and4(shr4(q, 4), 0x0F0F0F0Fu);
        if (T == T_Q5_K) {
            const uint4 qh = *(const uint4 *)(blk + 16 + 16 * h);
            lo = or4(lo, fifth_bit4(qh, 2 * p));
            hi = or4(hi, fifth_bit4(qh, 2 * p + 1));
        }
        const i64 e0 = b * 256 + 64 * p + 16 * h;
        const int s0 = dot16_i8(lo, *(const uint4 *)(xq + e0), 0);
        const int s1 = dot16_i8(hi, *(const uint4 *)(xq + e0 + 32), 0);
        const u32 dm = *(const u32 *)blk;
        const float d = h2f((u16)dm), dmin = h2f((u16)(dm >> 16));
        int sc0, m0, sc1, m1;
        scale_min_k4(2 * p, blk + 4, sc0, m0);
        scale_min_k4(2 * p + 1, blk + 4, sc1, m1);
        const float *ds = xds + 2 * (b * 8 + 2 * p); // (d, sum) of sub-blocks 2p, 2p+1
        acc += d * ((float)(sc0 * s0) * ds[0] + (float)(sc1 * s1) * ds[2]);
        const float mins = dmin * ((float)m0 * ds[1] + (float)m1 * ds[3]);
        acc -= h == 0 ? mins : 0.f; // branch-free: LLVM 15 crashed on a branch here (gfx1100)
    }
    return warp_sum(acc);
}
template <int T> RF_DEV void mvq_k4(const rf_kargs &a) {
    MvqRow r;
    if (!mvq_setup(a, r)) return;
    const float acc = mvq_row_k4<T>(r.w, r.xq, r.xds, r.K);
    if (threadIdx.x % RF_WARP == 0) *r.y = acc;
}
RF_KERNEL __launch_bounds__(128) void rf_mvq_q4_k(rf_kargs a) { mvq_k4<T_Q4_K>(a); }
RF_KERNEL __launch_bounds__(128) void rf_mvq_q5_k(rf_kargs a) { mvq_k4<T_Q5_K>(a); }

// Q6_K (210-byte blocks, 2-byte aligned): 8 lanes per block, 4 blocks per warp step. Lane j:
// half n = j/4, positions l = l0 + [0,8) with l0 = 8(j%4), all four quarters q (element
// 128n + 32q + l): 2 ints each of ql (two runs) and qh, scale index 8n + l0/16 + 2q.
// Loads: each of the lane's pieces (ql at 64n + l0 and 64n + 32 + l0, qh at 128 + 32n + l0,
// scales at 192 + 8n, 8 bytes each) starts at a multiple of 8 within the block, so at the
// block's offset mis = blk % 8 (0, 2, 4 or 6) within an aligned 8-byte word; blocks b and b + 4
// lie 840 bytes apart, so mis is the same for all of a lane's blocks. A piece comes from two
// aligned 8-byte loads, of the words holding its first and its last byte (the same word when
// mis == 0): 8 loads instead of 12 two-byte and 4 one-byte ones. Bytes read beyond the needed
// ones lie in those words, never past an allocation.
RF_DEV void ld_g8(const u8 *p, u32 &x, u32 &y) { // 8 bytes at an 8-byte aligned p (read-only data)
#if RF_NVIDIA
    // volatile: a plain asm counts as free of side effects and could be hoisted out of the loop's
    // bound check, i.e. issued for a block past the row.
    asm volatile("ld.global.nc.v2.u32 {%0,%1}, [%2];" : "=r"(x), "=r"(y) : "l"(p));
#else
    const uint2 v = *(const uint2 *)p;
    x = v.x;
    y = v.y;
#endif
}
RF_DEV u32 funnel_r(u32 lo, u32 hi, int r) { // bits [r, r + 32) of hi:lo, 0 <= r < 32
#if RF_NVIDIA
    return __funnelshift_r(lo, hi, r);
#else
    return r ? (lo >> r) | (hi << (32 - r)) : lo; // one v_alignbit_b32 on AMD
#endif
}
// Bytes [mis, mis + 8) of the aligned words at lo and hi (hi = lo + 8, or lo when mis == 0) as
// two little-endian u32; k = mis >= 4, r = 8 * (mis % 4).
RF_DEV void ld8_mis(const u8 *lo, const u8 *hi, bool k, int r, u32 &o0, u32 &o1) {
    u32 w0, w1, w2, w3;
    ld_g8(lo, w0, w1);
    ld_g8(hi, w2, w3);
    const u32 x0 = k ? w1 : w0, x1 = k ? w2 : w1, x2 = k ? w3 : w2;
    o0 = funnel_r(x0, x1, r);
    o1 = funnel_r(x1, x2, r);
}
RF_DEV float mvq_row_q6_k(const u8 *w, const i8 *xq, const float *xds, i64 K) {
    const int lane = threadIdx.x % RF_WARP, j = lane & 7, n = j >> 2, l0 = 8 * (j & 3), s8 = 8 * (l0 >> 4);
    const i64 nb = K / 256;
    const int mis = (int)((unsigned long long)(w + (lane >> 3) * 210) & 7), r = 8 * (mis & 3), hstep = mis ? 8 : 0;
    const bool k = mis >= 4;
    float acc = 0.f;
#pragma unroll 4
    for (i64 b = lane >> 3; b < nb; b += RF_WARP / 8) {
        const u8 *blk = w + b * 210, *lo = blk - mis, *hi = lo + hstep;
        u32 qa[2], qb[2], hh[2], sc[2];
        ld8_mis(lo + 64 * n + l0, hi + 64 * n + l0, k, r, qa[0], qa[1]);
        ld8_mis(lo + 64 * n + 32 + l0, hi + 64 * n + 32 + l0, k, r, qb[0], qb[1]);
        ld8_mis(lo + 128 + 32 * n + l0, hi + 128 + 32 * n + l0, k, r, hh[0], hh[1]);
        ld8_mis(lo + 192 + 8 * n, hi + 192 + 8 * n, k, r, sc[0], sc[1]); // scale bytes 8n + [0,8)
        int2 x[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) x[q] = *(const int2 *)(xq + b * 256 + 128 * n + 32 * q + l0);
        int sum[4] = {0, 0, 0, 0};
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const u32 v[4] = {(qa[i] & 0x0F0F0F0Fu) | ((hh[i] << 4) & 0x30303030u), (qb[i] & 0x0F0F0F0Fu) | ((hh[i] << 2) & 0x30303030u),
                              ((qa[i] >> 4) & 0x0F0F0F0Fu) | (hh[i] & 0x30303030u), ((qb[i] >> 4) & 0x0F0F0F0Fu) | ((hh[i] >> 2) & 0x30303030u)};
#pragma unroll
            for (int q = 0; q < 4; ++q) sum[q] = dot4_i8((int)sub32_6bit(v[q]), i == 0 ? x[q].x : x[q].y, sum[q]);
        }
        // Scales 8n + l0/16 + 2q: bytes l0/16 and l0/16 + 2 of each scale word.
        const int sc0 = (i8)(sc[0] >> s8), sc1 = (i8)(sc[0] >> (16 + s8)), sc2 = (i8)(sc[1] >> s8), sc3 = (i8)(sc[1] >> (16 + s8));
        const float *ds = xds + 2 * (b * 8 + 4 * n);
        const float part = (float)(sc0 * sum[0]) * ds[0] + (float)(sc1 * sum[1]) * ds[2] + (float)(sc2 * sum[2]) * ds[4] +
                           (float)(sc3 * sum[3]) * ds[6];
        acc += h2f(*(const u16 *)(blk + 208)) * part;
    }
    return warp_sum(acc);
}

// Q4_0 (18-byte blocks): 2 lanes per block, 16 blocks per warp step; lane j reads quant bytes
// [8j, 8j+8): elements 8j + [0,8) (low nibbles) and 16 + 8j + [0,8) (high). The -8 offset is
// applied through the q8_1 block sum (lane 0 of the pair).
RF_DEV float mvq_row_q4_0(const u8 *w, const i8 *xq, const float *xds, i64 K) {
    const int lane = threadIdx.x % RF_WARP, j = lane & 1;
    const i64 nb = K / 32;
    float acc = 0.f;
#pragma unroll 4
    for (i64 b = lane >> 1; b < nb; b += RF_WARP / 2) {
        const u8 *blk = w + b * 18;
        const u32 q0 = ld_u32_a2(blk + 2 + 8 * j), q1 = ld_u32_a2(blk + 6 + 8 * j);
        const int *x = (const int *)(xq + b * 32 + 8 * j);
        int s = dot4_i8((int)(q0 & 0x0F0F0F0Fu), x[0], 0);
        s = dot4_i8((int)(q1 & 0x0F0F0F0Fu), x[1], s);
        s = dot4_i8((int)((q0 >> 4) & 0x0F0F0F0Fu), x[4], s);
        s = dot4_i8((int)((q1 >> 4) & 0x0F0F0F0Fu), x[5], s);
        const float d = h2f(*(const u16 *)blk), *ds = xds + 2 * b;
        acc += d * ((float)s * ds[0] - (j == 0 ? 8.f * ds[1] : 0.f));
    }
    return warp_sum(acc);
}

// Q8_0 (34-byte blocks): 4 lanes per block, 8 blocks per warp step; lane j reads quants [8j, 8j+8).
RF_DEV float mvq_row_q8_0(const u8 *w, const i8 *xq, const float *xds, i64 K) {
    const int lane = threadIdx.x % RF_WARP, j = lane & 3;
    const i64 nb = K / 32;
    float acc = 0.f;
#pragma unroll 4
    for (i64 b = lane >> 2; b < nb; b += RF_WARP / 4) {
        const u8 *blk = w + b * 34;
        const int *x = (const int *)(xq + b * 32 + 8 * j);
        const int s = dot4_i8((int)ld_u32_a2(blk + 6 + 8 * j), x[1], dot4_i8((int)ld_u32_a2(blk + 2 + 8 * j), x[0], 0));
        acc += h2f(*(const u16 *)blk) * (float)s * xds[2 * b];
    }
    return warp_sum(acc);
}

// One kernel per weight type: the row function of that type on each warp's row.
#define RF_MVQ_KERNEL(name, row)                                                     \
    RF_KERNEL __launch_bounds__(128) void name(rf_kargs a) {                         \
        MvqRow r;                                                                    \
        if (!mvq_setup(a, r)) return;                                                \
        const float acc = row(r.w, r.xq, r.xds, r.K);                                \
        if (threadIdx.x % RF_WARP == 0) *r.y = acc;                                  \
    }
RF_MVQ_KERNEL(rf_mvq_q6_k, mvq_row_q6_k)
RF_MVQ_KERNEL(rf_mvq_q4_0, mvq_row_q4_0)
RF_MVQ_KERNEL(rf_mvq_q8_0, mvq_row_q8_0)

RF_DEV float mvq_row(int type, const u8 *w, const i8 *xq, const float *xds, i64 K) {
    switch (type) {
    case T_Q4_K: return mvq_row_k4<T_Q4_K>(w, xq, xds, K);
    case T_Q5_K: return mvq_row_k4<T_Q5_K>(w, xq, xds, K);
    case T_Q6_K: return mvq_row_q6_k(w, xq, xds, K);
    case T_Q4_0: return mvq_row_q4_0(w, xq, xds, K);
    default: return mvq_row_q8_0(w, xq, xds, K);
    }
}

// Up to three M = 1 matmuls over the same q8_1 vector (decode: K, V, Q or gate, up) in one
// launch; each row is computed exactly as by its single-matmul kernel. Weight s = src[s] (s < 3),
// output s: dst, src[3], src[4]; segment s covers blocks [start(s), start(s+1)) with start(0) = 0,
// start(1) = aux[1], start(2) = aux[2], start(n) = gridDim.x (aux[3] = n segments). Weight rows are
// contiguous (nb[1] = row bytes), outputs contiguous f32, batch 1, scratch = the q8_1 vector.
// iparams[0] = 1 (SwiGLU form): two segments of equal N in blocks [0, aux[1]); each warp computes
// row n of both, writes both, and dst2 (src[4]) [n] = silu(gate) * up as rf_swiglu_f32 does.
// iparams[0] = 2 (matmul + ROPE NORMAL, one token): one segment, N % 4 == 0; the block's rows
// 4b..4b+3 hold two rotation pairs; src[3] = rotated output (dense, same element order), src[1] =
// positions, src[2] = factors (may be null), iparams[1] = n_rot, iparams[2] = head size D,
// fparams[0..1] = freq base, scale (rf_rope_f32's rope_rotate).
RF_KERNEL __launch_bounds__(128) void rf_mvq_multi(rf_kargs a) {
    __shared__ float sh_rows[RF_MV_WARPS];
    const bool swiglu = a.iparams[0] == 1;
    if (a.iparams[0] == 2) {
        const rf_ktensor &w = a.src[0];
        const int wi = threadIdx.x / RF_WARP;
        const i64 n = (i64)blockIdx.x * RF_MV_WARPS + wi, K = w.ne[0];
        const i8 *xq = (const i8 *)a.scratch;
        // The rotation's cos/sin (double precision, slow) first, while the row's loads are in flight.
        const int D = a.iparams[2], n_rot = a.iparams[1], j = (int)(n % D); // j even: pair (j, j + 1) of head n / D
        const bool rotates = threadIdx.x % RF_WARP == 0 && !(wi & 1) && j / 2 < n_rot / 2;
        float c = 1.f, sn = 0.f;
        if (rotates)
            rope_cos_sin(j / 2, ((const int *)a.src[1].data)[0], n_rot, a.fparams[0], a.fparams[1], (const float *)a.src[2].data,
                         c, sn);
        const float v = mvq_row(w.type, (const u8 *)w.data + n * w.nb[1], xq, (const float *)(xq + K), K);
        if (threadIdx.x % RF_WARP == 0) { ((float *)a.dst.data)[n] = v; sh_rows[wi] = v; }
        __syncthreads();
        if (threadIdx.x % RF_WARP != 0 || (wi & 1)) return;
        float y0 = sh_rows[wi], y1 = sh_rows[wi + 1];
        if (rotates) rope_apply(sh_rows[wi], sh_rows[wi + 1], c, sn, y0, y1);
        float *yr = (float *)a.src[3].data;
        yr[n] = y0;
        yr[n + 1] = y1;
        return;
    }
    const int nseg = (int)a.aux[3];
    int s = 0;
    i64 blk = blockIdx.x;
    if (!swiglu) {
        if (nseg > 2 && blk >= a.aux[2]) { s = 2; blk -= a.aux[2]; }
        else if (nseg > 1 && blk >= a.aux[1]) { s = 1; blk -= a.aux[1]; }
    }
    // Fields picked with constant indices: a.src[s] with a run-time s copies the whole argument
    // block to scratch memory on AMD (592 bytes per thread on gfx1030/gfx1100).
    const rf_ktensor &w0 = a.src[0], &w1 = a.src[1], &w2 = a.src[2];
    const i64 w_rows = s == 0 ? w0.ne[1] : s == 1 ? w1.ne[1] : w2.ne[1];
    const i64 w_stride = s == 0 ? w0.nb[1] : s == 1 ? w1.nb[1] : w2.nb[1];
    const int w_type = s == 0 ? w0.type : s == 1 ? w1.type : w2.type;
    const u8 *w_data = (const u8 *)(s == 0 ? w0.data : s == 1 ? w1.data : w2.data);
    const i64 n = blk * RF_MV_WARPS + threadIdx.x / RF_WARP;
    if (n >= w_rows) return;
    const i64 K = w0.ne[0];
    const i8 *xq = (const i8 *)a.scratch;
    const float *xds = (const float *)(xq + K);
    const float v = mvq_row(w_type, w_data + n * w_stride, xq, xds, K);
    const bool lane0 = threadIdx.x % RF_WARP == 0;
    if (!swiglu) {
        float *y = (float *)(s == 0 ? a.dst.data : s == 1 ? a.src[3].data : a.src[4].data);
        if (lane0) y[n] = v;
        return;
    }
    const rf_ktensor &wu = a.src[1];
    const float u = mvq_row(wu.type, (const u8 *)wu.data + n * wu.nb[1], xq, xds, K);
    if (lane0) {
        ((float *)a.dst.data)[n] = v;
        ((float *)a.src[3].data)[n] = u;
        ((float *)a.src[4].data)[n] = (v / (1.f + __expf(-v))) * u;
    }
}
