// Per-lane pieces of the decode matmuls' integer dot products (matmul_vec.hip): one weight
// block piece of each quantized format, dotted with q8_1 activation columns.
//
// A format F gives a struct with
//   LANES   lanes that share one weight block (a warp step covers RF_WARP / LANES blocks),
//   ELEMS   elements per block, UNROLL the block-loop unroll that suited the M = 1 kernel,
//   load(row, b, lane)          issue this lane's loads of block b of a weight row and unpack
//                               them into registers (done once, whatever the column count),
//   dot(col, b, lane, acc)      add this lane's part of block b's dot product with one q8_1
//                               column to acc,
//   Act, act(col, b, lane),     the same in two steps: the column's pieces this lane reads, then
//   dot(act, acc)               the arithmetic (the same), so that several rows share one load
//                               of the pieces (mvq_dot_lane, from three columns on).
// Splitting load from dot lets one weight read serve several activation columns (batched
// decode) with, per column, exactly the arithmetic of the one-column kernel: a batch of
// sequences gets the same floats as each sequence decoded alone.
#pragma once
#include "compat.h"
#include "quant_decode.h"

// Pulls `bytes` of weights at p into L2, one 128-byte line per lane and step. Kernels call it
// before rf_kernel_start() (compat.h): weights are never written, so under programmatic
// dependent launch the reads overlap the previous kernel (a norm, the attention) instead of
// starting after it. kernels/pack_tool.py accepts prefetch_* calls before rf_kernel_start().
RF_DEV void prefetch_l2(const u8 *p, i64 bytes) {
#if RF_NVIDIA
    for (i64 o = (i64)(threadIdx.x % RF_WARP) * 128; o < bytes; o += RF_WARP * 128)
        prefetch_line_l2(p + o);
#endif
}

// One q8_1 column (quantize_act.hip): K int8 quants, then per 32 elements (d, d * sum).
struct Q8Col { const i8 *q; const float *ds; };
RF_DEV Q8Col q8_col(const i8 *first, i64 stride, int c, i64 K) {
    const i8 *q = first + (i64)c * stride;
    return Q8Col{q, (const float *)(q + K)};
}

// Float steps written out one at a time, fused multiply-adds only where written (ffma): left to
// itself the compiler contracts a * b + c differently in different kernels (seen with Q4_0: the
// fused column kernels and the plain ones disagreed in the last bit), and every kernel that dots a
// row with a column must give the same bits, whatever the launch it is part of.
RF_DEV float fmul(float a, float b) { return __fmul_rn(a, b); }
RF_DEV float fadd(float a, float b) { return __fadd_rn(a, b); }
RF_DEV float fsub(float a, float b) { return __fsub_rn(a, b); }
RF_DEV float ffma(float a, float b, float c) { return __fmaf_rn(a, b, c); } // explicit: the same in every kernel

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

RF_DEV void ld_g8(const u8 *p, u32 &x, u32 &y) { // 8 bytes at an 8-byte aligned p (read-only data)
#if RF_NVIDIA
    // volatile: a plain asm counts as free of side effects and could be hoisted out of the loop's
    // bound check, i.e. issued for a block past the row. Not .nc (the read-only path): Q6_K decode
    // is faster without it, Q4_0 / Q8_0 / Q4_K_M the same (docs/notes/decode_matmul.md).
    asm volatile("ld.global.v2.u32 {%0,%1}, [%2];" : "=r"(x), "=r"(y) : "l"(p));
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

// 8 bytes at a 2-byte aligned p (Q4_0 / Q8_0 quants: 18- and 34-byte blocks) as two u32: two
// aligned 8-byte loads (one when p is 8-byte aligned) instead of four 2-byte ones. Both words
// hold needed bytes, so neither lies past an allocation.
RF_DEV void ld8_a2(const u8 *p, u32 &o0, u32 &o1) {
    const int mis = (int)((unsigned long long)p & 7);
    const u8 *lo = p - mis;
    ld8_mis(lo, lo + (mis ? 8 : 0), mis >= 4, 8 * (mis & 3), o0, o1);
}

// Q4_K / Q5_K: 8 lanes per 256-element block; lane j = 2p + h reads quant bytes [16j, 16j+16):
// low nibbles = elements 64p + 16h + [0,16) (sub-block 2p), high nibbles = 64p + 32 + 16h +
// [0,16) (sub-block 2p+1). Q5_K adds bit 2p / 2p+1 of qh bytes [16h, 16h+16). The min terms
// use the q8_1 block sums, one sub-block's per lane (2p + h).
template <int T> struct MvqK4 {
#if RF_NVIDIA
    // Four blocks of a warp's row in flight per lane: faster two-column decode. The AMD packs keep
    // two (four spilled in gfx1100's rf_mvq_id_q4_k).
    enum { LANES = 8, ELEMS = 256, UNROLL = 4 };
#else
    enum { LANES = 8, ELEMS = 256, UNROLL = 2 };
#endif
    uint4 lo, hi;
    int sc0, sc1;     // 6-bit scales of sub-blocks 2p, 2p+1
    float d;
    float dm;         // dmin * min of sub-block 2p + h: each lane of the pair adds one min term
    RF_DEV void load(const u8 *row, i64 b, int lane) {
        const int j = lane & 7, p = j >> 1, h = j & 1;
        const u8 *blk = row + b * (T == T_Q4_K ? 144 : 176);
        const uint4 q = *(const uint4 *)(blk + (T == T_Q4_K ? 16 : 48) + 16 * j);
        lo = and4(q, 0x0F0F0F0Fu);
        hi = and4(shr4(q, 4), 0x0F0F0F0Fu);
        if (T == T_Q5_K) {
            const uint4 qh = *(const uint4 *)(blk + 16 + 16 * h);
            lo = or4(lo, fifth_bit4(qh, 2 * p));
            hi = or4(hi, fifth_bit4(qh, 2 * p + 1));
        }
        // The header (d, dmin, 12 bytes of 6-bit scales) in one 16-byte load (blocks of 144 and
        // 176 bytes keep 16-byte alignment), the scale / min pairs of sub-blocks 2p, 2p+1 picked
        // with word operations on every lane alike (ggml's get_scale_min_k4 per byte put two
        // divergent branches and up to six byte loads in each block).
        const uint4 hd = *(const uint4 *)blk;
        const float dmin = h2f((u16)(hd.x >> 16));
        d = h2f((u16)hd.x);
        const int s = 16 * (p & 1); // bytes 2p % 4, 2p % 4 + 1 of each scale word
        const u32 a = hd.y >> s, bw = hd.z >> s, c = hd.w >> s;
        const u32 sc = p < 2 ? a & 0x3F3Fu : (c & 0x0F0Fu) | ((a >> 2) & 0x3030u);
        const u32 mn = p < 2 ? bw & 0x3F3Fu : ((c >> 4) & 0x0F0Fu) | ((bw >> 2) & 0x3030u);
        sc0 = (int)(sc & 0xFF);
        sc1 = (int)(sc >> 8);
        dm = fmul(dmin, (float)(h ? mn >> 8 : mn & 0xFF));
    }
    // K-quants read q8_1 columns quantized in blocks of 256 (quantize_act.hip): sub-blocks 2p and
    // 2p+1 share the column's d, so the two scaled integer sums are added as integers (exact:
    // |s| < 2^24, so also exact as a float) and scaled once, as ggml's q4_K x q8_K dot does.
    RF_DEV void dot(Q8Col x, i64 b, int lane, float &acc) const {
        const int j = lane & 7, p = j >> 1, h = j & 1;
        const i64 e0 = b * 256 + 64 * p + 16 * h;
        const int s0 = dot16_i8(lo, *(const uint4 *)(x.q + e0), 0);
        const int s1 = dot16_i8(hi, *(const uint4 *)(x.q + e0 + 32), 0);
        // (d, d * sum) of this lane's min sub-block 2p + h (8-byte aligned)
        add(s0, s1, *(const float2 *)(x.ds + 2 * (b * 8 + 2 * p + h)), acc);
    }
    struct Act { uint4 x0, x1; float2 ds; };
    RF_DEV static Act act(Q8Col x, i64 b, int lane) {
        const int j = lane & 7, p = j >> 1, h = j & 1;
        const i64 e0 = b * 256 + 64 * p + 16 * h;
        return Act{*(const uint4 *)(x.q + e0), *(const uint4 *)(x.q + e0 + 32), *(const float2 *)(x.ds + 2 * (b * 8 + 2 * p + h))};
    }
    RF_DEV void dot(const Act &x, float &acc) const { add(dot16_i8(lo, x.x0, 0), dot16_i8(hi, x.x1, 0), x.ds, acc); }
    RF_DEV void add(int s0, int s1, float2 ds, float &acc) const {
        acc = ffma(fmul(d, ds.x), (float)(s0 * sc0 + s1 * sc1), acc);
        acc = ffma(-dm, ds.y, acc);
    }
};

// Q6_K (210-byte blocks, 2-byte aligned): 8 lanes per block. Lane j: half n = j/4, positions
// l = l0 + [0,8) with l0 = 8(j%4), all four quarters q (element 128n + 32q + l): 2 ints each of
// ql (two runs) and qh, scale index 8n + l0/16 + 2q.
// Loads: each of the lane's pieces (ql at 64n + l0 and 64n + 32 + l0, qh at 128 + 32n + l0,
// scales at 192 + 8n, 8 bytes each) starts at a multiple of 8 within the block, so at the
// block's offset mis = blk % 8 (0, 2, 4 or 6) within an aligned 8-byte word. A piece comes from
// two aligned 8-byte loads, of the words holding its first and its last byte (the same word
// when mis == 0): 8 loads instead of 12 two-byte and 4 one-byte ones. Bytes read beyond the
// needed ones lie in those words, never past an allocation.
// OffsetInDot: the quants stay unsigned (0..63) and dot takes their offset of 32 with one dp4a per
// activation word (0xE0 = -32 in every byte), where subtracting 32 from the packed quants takes
// four instructions a word: fewer instructions for one column (its one-row kernels run faster),
// more for several (the dot runs
// once per column): MvqQ6K and MvqQ6KCols below. Both give the same integers, so the same floats.
template <bool OffsetInDot> struct MvqQ6KT {
    enum { LANES = 8, ELEMS = 256, UNROLL = 4 };
    int v[2][4]; // 6-bit quants, minus 32 unless OffsetInDot: [word of the 8 positions][quarter q]
    u32 sc; // int8 scales of the lane's four quarters, one per byte (fewer registers than four ints)
    float d;
    RF_DEV void load(const u8 *row, i64 b, int lane) {
        const int j = lane & 7, n = j >> 2, l0 = 8 * (j & 3);
        const u8 *blk = row + b * 210;
        const int mis = (int)((unsigned long long)blk & 7), r = 8 * (mis & 3);
        const bool k = mis >= 4;
        const u8 *lo = blk - mis, *hi = lo + (mis ? 8 : 0);
        u32 p[4][2];
        ld8_mis(lo + 64 * n + l0, hi + 64 * n + l0, k, r, p[0][0], p[0][1]);
        ld8_mis(lo + 64 * n + 32 + l0, hi + 64 * n + 32 + l0, k, r, p[1][0], p[1][1]);
        ld8_mis(lo + 128 + 32 * n + l0, hi + 128 + 32 * n + l0, k, r, p[2][0], p[2][1]);
        ld8_mis(lo + 192 + 8 * n, hi + 192 + 8 * n, k, r, p[3][0], p[3][1]); // scale bytes 8n + [0,8)
        d = h2f(*(const u16 *)(blk + 208));
        unpack(p, lane);
    }
    // The lane's pieces as loaded (ql runs, qh, scale bytes: p[0..3], two words each) into v and sc.
    RF_DEV void unpack(const u32 (&p)[4][2], int lane) {
        const int s8 = 8 * ((8 * (lane & 3)) >> 4); // 8 * (l0 >> 4), from lane (one instruction less)
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const u32 qa = p[0][i], qb = p[1][i], hh = p[2][i];
            v[i][0] = (int)((qa & 0x0F0F0F0Fu) | ((hh << 4) & 0x30303030u));
            v[i][1] = (int)((qb & 0x0F0F0F0Fu) | ((hh << 2) & 0x30303030u));
            v[i][2] = (int)(((qa >> 4) & 0x0F0F0F0Fu) | (hh & 0x30303030u));
            v[i][3] = (int)(((qb >> 4) & 0x0F0F0F0Fu) | ((hh >> 2) & 0x30303030u));
            if (!OffsetInDot)
#pragma unroll
                for (int q = 0; q < 4; ++q) v[i][q] = (int)sub32_6bit((u32)v[i][q]);
        }
        // Scales 8n + l0/16 + 2q: bytes l0/16 and l0/16 + 2 of each scale word.
        const u32 a = p[3][0] >> s8, c = p[3][1] >> s8; // scales at bytes 0 and 2 of each
        sc = (a & 0xFFu) | ((a >> 8) & 0xFF00u) | ((c & 0xFFu) << 16) | ((c << 8) & 0xFF000000u);
    }
    RF_DEV void dot(Q8Col x, i64 b, int lane, float &acc) const {
        const int j = lane & 7, n = j >> 2, l0 = 8 * (j & 3);
        int2 xv[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) xv[q] = *(const int2 *)(x.q + b * 256 + 128 * n + 32 * q + l0);
        const int s = scaled_sum(xv);
        add(s, x.ds[2 * b * 8], acc);
    }
    struct Act { int2 xv[4]; float ds; };
    RF_DEV static Act act(Q8Col x, i64 b, int lane) {
        const int j = lane & 7, n = j >> 2, l0 = 8 * (j & 3);
        Act a;
#pragma unroll
        for (int q = 0; q < 4; ++q) a.xv[q] = *(const int2 *)(x.q + b * 256 + 128 * n + 32 * q + l0);
        a.ds = x.ds[2 * b * 8];
        return a;
    }
    RF_DEV void dot(const Act &x, float &acc) const { add(scaled_sum(x.xv), x.ds, acc); }
    RF_DEV void add(int s, float ds, float &acc) const { acc = ffma(fmul(d, ds), (float)s, acc); }
    // The four quarters' integer sums, each times its 6-bit scale, added (the block's sum before d).
    RF_DEV int scaled_sum(const int2 (&xv)[4]) const {
        // sum over (quant - 32) * x
        int sum[4] = {0, 0, 0, 0};
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int xw = i == 0 ? xv[q].x : xv[q].y;
                sum[q] = dot4_i8(v[i][q], xw, sum[q]);
                if (OffsetInDot) sum[q] = dot4_i8((int)0xE0E0E0E0u, xw, sum[q]);
            }
        // The column's d of the 256 block (quantized in blocks of 256, as for MvqK4): the four
        // scaled quarter sums added as integers (|s| < 2^24: exact), scaled once.
        return sum[0] * (i8)sc + sum[1] * (i8)(sc >> 8) + sum[2] * (i8)(sc >> 16) + sum[3] * (i8)(sc >> 24);
    }
};

#if RF_NVIDIA
typedef MvqQ6KT<true> MvqQ6K;      // one column a weight block (and the one-row kernels)
#else
typedef MvqQ6KT<false> MvqQ6K;     // the AMD packs keep the form they were tuned with (rf_mvq_multi
                                   // and rf_mvq_proj spilled on gfx1100 with the other)
#endif
typedef MvqQ6KT<false> MvqQ6KCols; // several columns a weight block

// 24 bytes from the aligned 8-byte word at or below p (2-byte aligned): the window holding the 18
// bytes [p, p + 18) whatever p % 8 (0, 2, 4 or 6), or 17 at any p (MXFP4). Every word holds a byte of that range, so no
// load lies past an allocation that contains it. mis = p % 8. Six named words, not an array: a
// run-time pick from an array went to scratch memory on AMD.
struct Window24 {
    u32 w0, w1, w2, w3, w4, w5;
    int mis;
    RF_DEV void load(const u8 *p) {
        mis = (int)((unsigned long long)p & 7);
        const u8 *lo = p - mis;
        ld_g8(lo, w0, w1);
        ld_g8(lo + 8, w2, w3);
        ld_g8(lo + 16, w4, w5);
    }
    // Word i of the window shifted by base (0..2) words.
    RF_DEV u32 word(int i, int base) const {
        const u32 a[6] = {w0, w1, w2, w3, w4, w5}; // constant indices after unrolling
        const u32 v0 = a[i < 6 ? i : 5], v1 = a[i + 1 < 6 ? i + 1 : 5], v2 = a[i + 2 < 6 ? i + 2 : 5];
        return base == 0 ? v0 : base == 1 ? v1 : v2;
    }
    // The 2 bytes at offset off (0..6, even) as a half.
    RF_DEV u16 half_at(int off) const { return (u16)funnel_r(word(0, off >> 2), word(1, off >> 2), 8 * (off & 3)); }
    // The 16 bytes at offset off (0..8) as four little-endian u32.
    RF_DEV void bytes16(int off, u32 (&o)[4]) const {
        const int base = off >> 2, r = 8 * (off & 3);
#pragma unroll
        for (int i = 0; i < 4; ++i) o[i] = funnel_r(word(i, base), word(i + 1, base), r);
    }
};

// Q4_0 (18-byte blocks, 2-byte aligned): one lane per block, the whole block (scale and 16 quant
// bytes: low nibbles = elements 0..15, high = 16..31) from three aligned 8-byte loads (half the
// loads of two lanes taking 8 quant bytes each). The -8 offset is applied through the q8_1 block
// sum.
struct MvqQ4_0 {
    enum { LANES = 1, ELEMS = 32, UNROLL = 2 };
    u32 q[4];
    float d;
    RF_DEV void load(const u8 *row, i64 b, int) {
        Window24 w;
        w.load(row + b * 18);
        d = h2f(w.half_at(w.mis));
        w.bytes16(w.mis + 2, q);
    }
    RF_DEV void dot(Q8Col x, i64 b, int, float &acc) const {
        const uint4 x0 = *(const uint4 *)(x.q + b * 32), x1 = *(const uint4 *)(x.q + b * 32 + 16);
        const int s = sum(x0, x1);
        add(s, *(const float2 *)(x.ds + 2 * b), acc);
    }
    struct Act { uint4 x0, x1; float2 ds; };
    RF_DEV static Act act(Q8Col x, i64 b, int) {
        return Act{*(const uint4 *)(x.q + b * 32), *(const uint4 *)(x.q + b * 32 + 16), *(const float2 *)(x.ds + 2 * b)};
    }
    RF_DEV void dot(const Act &x, float &acc) const { add(sum(x.x0, x.x1), x.ds, acc); }
    RF_DEV int sum(uint4 x0, uint4 x1) const {
        const uint4 lo = and4(u4(q[0], q[1], q[2], q[3]), 0x0F0F0F0Fu), hi = and4(shr4(u4(q[0], q[1], q[2], q[3]), 4), 0x0F0F0F0Fu);
        return dot16_i8(hi, x1, dot16_i8(lo, x0, 0));
    }
    RF_DEV void add(int s, float2 ds, float &acc) const {
        acc = ffma(d, ffma((float)s, ds.x, fmul(-8.f, ds.y)), acc); // d (s dx - 8 dx sum): quants - 8
    }
};

// The dot of a 32-element block whose 32 levels (signed int8, elements 0..15 in lo, 16..31 in hi)
// and one float scale d the format's load() has set: dp4a with the q8_1 column, no offset term
// (IQ4_NL, MXFP4).
struct MvqLevels32 {
    enum { LANES = 1, ELEMS = 32, UNROLL = 2 };
    u32 lo[4], hi[4];
    float d;
    RF_DEV int sum(uint4 x0, uint4 x1) const {
        return dot16_i8(u4(hi[0], hi[1], hi[2], hi[3]), x1, dot16_i8(u4(lo[0], lo[1], lo[2], lo[3]), x0, 0));
    }
    RF_DEV void add(int s, float dx, float &acc) const { acc = ffma(fmul(d, dx), (float)s, acc); }
    RF_DEV void dot(Q8Col x, i64 b, int, float &acc) const {
        add(sum(*(const uint4 *)(x.q + b * 32), *(const uint4 *)(x.q + b * 32 + 16)), x.ds[2 * b], acc);
    }
    struct Act { uint4 x0, x1; float dx; };
    RF_DEV static Act act(Q8Col x, i64 b, int) {
        return Act{*(const uint4 *)(x.q + b * 32), *(const uint4 *)(x.q + b * 32 + 16), x.ds[2 * b]};
    }
    RF_DEV void dot(const Act &x, float &acc) const { add(sum(x.x0, x.x1), x.dx, acc); }
};

// MXFP4 (17-byte blocks: the E8M0 exponent e, then 16 bytes of codes, low nibbles = elements
// 0..15, high = 16..31; rows and blocks at any byte): one lane per block from the 24-byte window
// (it holds the 17 bytes at every offset 0..7 of their first word). The doubled values are
// integers, so the dot is dp4a as for IQ4_NL, scaled by 2^(e - 128) (ggml's
// GGML_E8M0_TO_FP32_HALF); the column is quantized in blocks of 32, as the CPU's q8_32, whose
// dot (dot_mxfp4) takes the same operands but adds 12 to the values and 12 d s_x back after.
struct MvqMxfp4 : MvqLevels32 {
    RF_DEV void load(const u8 *row, i64 b, int) {
        Window24 w;
        w.load(row + b * 17);
        d = e8m0_half((u8)(w.word(0, w.mis >> 2) >> (8 * (w.mis & 3))));
        u32 q[4];
        w.bytes16(w.mis + 1, q);
#pragma unroll
        for (int i = 0; i < 4; ++i) mxfp4_levels8(q[i], lo[i], hi[i]);
    }
};

// Q8_0 (34-byte blocks, 2-byte aligned): 2 lanes per block; lane h takes quants [16h, 16h + 16)
// from the 24-byte window at its piece (three aligned 8-byte loads), lane 0 the scale from the
// same window, lane 1 with one 2-byte load.
struct MvqQ8_0 {
    enum { LANES = 2, ELEMS = 32, UNROLL = 2 };
    u32 q[4];
    float d;
    RF_DEV void load(const u8 *row, i64 b, int lane) {
        const int h = lane & 1;
        const u8 *blk = row + b * 34;
        Window24 w;
        w.load(blk + 16 * h);
        d = h2f(h ? *(const u16 *)blk : w.half_at(w.mis));
        w.bytes16(w.mis + 2, q);
    }
    RF_DEV void dot(Q8Col x, i64 b, int lane, float &acc) const {
        const uint4 xv = *(const uint4 *)(x.q + b * 32 + 16 * (lane & 1));
        const int s = dot16_i8(u4(q[0], q[1], q[2], q[3]), xv, 0);
        acc = ffma(fmul(d, (float)s), x.ds[2 * b], acc);
    }
    struct Act { uint4 xv; float ds; };
    RF_DEV static Act act(Q8Col x, i64 b, int lane) { return Act{*(const uint4 *)(x.q + b * 32 + 16 * (lane & 1)), x.ds[2 * b]}; }
    // (The one-step dot's product written out, not through a shared helper: passing the scale as
    // an argument moves its load ahead of the product in the one-column kernels' PTX.)
    RF_DEV void dot(const Act &x, float &acc) const { acc = ffma(fmul(d, (float)dot16_i8(u4(q[0], q[1], q[2], q[3]), x.xv, 0)), x.ds, acc); }
};

// Up to 32 bytes from the aligned 8-byte word at or below p: a whole Q4_1, Q5_0 or Q5_1 block
// (`bytes` = 20, 22, 24) wherever in its 8-byte word it starts, in three 8-byte loads, or four
// where the block reaches into a fourth word (none reads a word the block does not touch, so
// none lies past an allocation).
struct Window32 {
    u32 w[8];
    int mis;
    RF_DEV void load(const u8 *p, int bytes) {
        mis = (int)((unsigned long long)p & 7);
        const u8 *lo = p - mis;
#pragma unroll
        for (int i = 0; i < 3; ++i) ld_g8(lo + 8 * i, w[2 * i], w[2 * i + 1]);
        w[6] = w[7] = 0;
        if (mis + bytes > 24) ld_g8(lo + 24, w[6], w[7]);
    }
    // Word i (constant after unrolling) counted from word `base` (0..4): selects, no local memory.
    RF_DEV u32 word(int i, int base) const {
        u32 v = w[i < 8 ? i : 7];
#pragma unroll
        for (int k = 1; k <= 4; ++k)
            if (base == k) v = w[i + k < 8 ? i + k : 7];
        return v;
    }
    // The 4 bytes at byte offset off (0..16) as a little-endian u32.
    RF_DEV u32 u32_at(int off, int i = 0) const {
        return funnel_r(word(i, off >> 2), word(i + 1, off >> 2), 8 * (off & 3));
    }
};

// Four bits (bits 0..3 of v) moved to bit 4 of four bytes: Q5's fifth quant bit of 4 elements.
RF_DEV u32 spread4_bit4(u32 v) { return ((v & 0xFu) * 0x00204081u & 0x01010101u) << 4; }

// Q4_1 (20 bytes: d, m, 16 quant bytes), Q5_0 (22: d, 32 fifth bits, 16 quant bytes) and Q5_1
// (24: d, m, fifth bits, quants): one lane per block from a 32-byte window. The quants (low
// nibbles = elements 0..15, high = 16..31, plus the fifth bit) are unsigned; Q5_0's -16 offset
// is applied through the q8_1 block sum, Q4_1's and Q5_1's minimum m the same way:
//   Q5_0: d (s dx - 16 dx sum), Q4_1 / Q5_1: d s dx + m dx sum.
template <int T> struct MvqLegacy {
    enum { LANES = 1, ELEMS = 32, UNROLL = 2 };
    enum { BYTES = T == T_Q4_1 ? 20 : T == T_Q5_0 ? 22 : 24, QS = T == T_Q4_1 ? 4 : T == T_Q5_0 ? 6 : 8 };
    u32 lo[4], hi[4]; // elements 0..15 and 16..31, one per byte
    float d, m;
    RF_DEV void load(const u8 *row, i64 b, int) {
        Window32 win;
        win.load(row + b * BYTES, BYTES);
        const int o = win.mis;
        const u32 dm = win.u32_at(o);
        d = h2f((u16)dm);
        m = T == T_Q5_0 ? 0.f : h2f((u16)(dm >> 16));
        u32 qh = 0;
        if (T != T_Q4_1) qh = win.u32_at(o + (T == T_Q5_0 ? 2 : 4));
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const u32 q = win.u32_at(o + QS, i);
            lo[i] = q & 0x0F0F0F0Fu;
            hi[i] = (q >> 4) & 0x0F0F0F0Fu;
            if (T != T_Q4_1) {
                lo[i] |= spread4_bit4(qh >> (4 * i));
                hi[i] |= spread4_bit4(qh >> (16 + 4 * i));
            }
        }
    }
    RF_DEV int sum(uint4 x0, uint4 x1) const {
        return dot16_i8(u4(hi[0], hi[1], hi[2], hi[3]), x1, dot16_i8(u4(lo[0], lo[1], lo[2], lo[3]), x0, 0));
    }
    RF_DEV void add(int s, float2 ds, float &acc) const {
        if (T == T_Q5_0) acc = ffma(d, ffma((float)s, ds.x, fmul(-16.f, ds.y)), acc);
        else acc = ffma(m, ds.y, ffma(fmul(d, (float)s), ds.x, acc));
    }
    RF_DEV void dot(Q8Col x, i64 b, int, float &acc) const {
        add(sum(*(const uint4 *)(x.q + b * 32), *(const uint4 *)(x.q + b * 32 + 16)), *(const float2 *)(x.ds + 2 * b), acc);
    }
    struct Act { uint4 x0, x1; float2 ds; };
    RF_DEV static Act act(Q8Col x, i64 b, int) {
        return Act{*(const uint4 *)(x.q + b * 32), *(const uint4 *)(x.q + b * 32 + 16), *(const float2 *)(x.ds + 2 * b)};
    }
    RF_DEV void dot(const Act &x, float &acc) const { add(sum(x.x0, x.x1), x.ds, acc); }
};

// This lane's part of acc[r][c] = dot product of weight row r (rows at w + r * w_stride; rows
// r >= rows_valid repeat the last valid one) with q8_1 column c (columns at xq + c * x_stride).
// SHARE: the column's pieces loaded once for the R rows also at one and two columns (the
// wide-row kernels, rf_mvq_proj2w_*, rf_mvqn_q4_k_1fw).
template <class B, int NC, int R, bool SHARE = false>
RF_DEV void mvq_dot_lane(const u8 *w, i64 w_stride, int rows_valid, const i8 *xq, i64 x_stride, i64 K, float (&acc)[R][NC]) {
    const int lane = threadIdx.x % RF_WARP;
    const i64 nb = K / B::ELEMS;
    // Two columns of a K-quant: eight blocks in flight per lane (faster two-sequence decode); one
    // column and four were slower with eight.
#if RF_NVIDIA
    enum { U = NC == 2 && B::ELEMS == 256 ? 8 : B::UNROLL };
#else
    enum { U = B::UNROLL };
#endif
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int c = 0; c < NC; ++c) acc[r][c] = 0.f;
#pragma unroll U
    for (i64 b = lane / B::LANES; b < nb; b += RF_WARP / B::LANES) {
        B wb[R];
#pragma unroll
        for (int r = 0; r < R; ++r) wb[r].load(w + (r < rows_valid ? r : rows_valid - 1) * w_stride, b, lane);
#pragma unroll
        for (int c = 0; c < NC; ++c) {
            const Q8Col x = q8_col(xq, x_stride, c, K);
            // Three or more columns: the column's pieces loaded once for the R rows (the compiler
            // does not merge the rows' identical loads: 29 loads a step in the two-column Q4_K
            // kernel where 10 do): faster decode of 3 and 4 sequences. One and two columns
            // were slower that way (the same loads in another order, scheduled otherwise), so
            // they keep the loads inside each row's dot (their kernels' code as before, PTX
            // byte-identical). At one column and two rows the sharing paid for 7B's K = 4096
            // but not for TinyLlama's K = 2048 (its rows run in the loop's remainder): a
            // second kernel (SHARE) that the packs pick by K.
            if constexpr (NC >= 3 || SHARE) {
                const typename B::Act xa = B::act(x, b, lane);
#pragma unroll
                for (int r = 0; r < R; ++r) wb[r].dot(xa, acc[r][c]);
            } else {
#pragma unroll
                for (int r = 0; r < R; ++r) wb[r].dot(x, b, lane, acc[r][c]);
            }
        }
    }
}

// The column sums of several columns split over the warp (warp_sum_cols): the first S steps of
// warp_sum's butterfly each hand half of a lane's columns to its partner (lane bit 16, then 8,
// ...), so afterwards lanes agreeing in their top S bits hold one column. NC padded to 1 << S.
template <int NC> struct SplitSteps { enum { S = NC <= 1 ? 0 : NC <= 2 ? 1 : NC <= 4 ? 2 : NC <= 8 ? 3 : 4 }; };
// The column this lane holds after warp_sum_cols (>= NC: a padding column).
template <int NC> RF_DEV int split_col(int lane) {
    constexpr int S = SplitSteps<NC>::S;
    int c = 0;
#pragma unroll
    for (int k = 0; k < S; ++k) c += (lane & (RF_WARP >> (k + 1))) ? (1 << S) >> (k + 1) : 0;
    return c;
}
// The one lane of each real column that stores it.
template <int NC> RF_DEV bool split_writer(int lane) {
    return (lane & ((RF_WARP >> SplitSteps<NC>::S) - 1)) == 0 && split_col<NC>(lane) < NC;
}
// acc[r][c] summed over the warp with warp_sum's tree, so with its bits (each step adds a
// lane's value to its partner's, commutative in IEEE arithmetic), but in (2^S - 1) * R + (5 - S)
// * R shuffles instead of 5 * NC * R (2 rows x 2 columns: 10 instead of 20): lane l's column
// split_col<NC>(l) of every row ends in acc[r][0].
template <int NC, int R> RF_DEV void warp_sum_cols(float (&acc)[R][NC]) {
    constexpr int S = SplitSteps<NC>::S, P = 1 << S;
    const int lane = threadIdx.x % RF_WARP;
    float v[R][P];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int c = 0; c < P; ++c) v[r][c] = c < NC ? acc[r][c] : 0.f;
#pragma unroll
    for (int k = 0; k < S; ++k) {
        const int o = RF_WARP >> (k + 1), h = P >> (k + 1);
        const bool up = (lane & o) != 0; // keeps the upper half of its columns
#pragma unroll
        for (int j = 0; j < h; ++j)
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const float keep = up ? v[r][j + h] : v[r][j], send = up ? v[r][j] : v[r][j + h];
                v[r][j] = keep + shfl_xor_f(send, o);
            }
    }
#pragma unroll
    for (int o = RF_WARP >> (S + 1); o > 0; o >>= 1)
#pragma unroll
        for (int r = 0; r < R; ++r) v[r][0] += shfl_xor_f(v[r][0], o);
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r][0] = v[r][0];
}

// mvq_dot_lane summed over the warp: lane l holds column split_col<NC>(l) of every row r in
// acc[r][0] (the column kernels; one column: every lane, as warp_sum).
template <class B, int NC, int R, bool SHARE = false>
RF_DEV void mvq_dot_cols(const u8 *w, i64 w_stride, int rows_valid, const i8 *xq, i64 x_stride, i64 K, float (&acc)[R][NC]) {
    mvq_dot_lane<B, NC, R, SHARE>(w, w_stride, rows_valid, xq, x_stride, K, acc);
    warp_sum_cols<NC, R>(acc);
}

// One row, one column (the M = 1 kernels and the fused multi-matmul).
template <class B> RF_DEV float mvq_dot_row(const u8 *w, const i8 *xq, i64 K) {
    float acc[1][1];
    mvq_dot_cols<B, 1, 1>(w, 0, 1, xq, 0, K, acc);
    return acc[0][0];
}
