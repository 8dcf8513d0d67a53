// The decode matmuls' per-lane pieces (the interface of mvq_blocks.h) for the i-quants: IQ4_XS and
// IQ4_NL, whose nibbles index the 16 non-linear levels. The levels are looked up eight at a time
// as packed int8 (iq4nl_levels8, iq_grids.h), so the dot products stay dp4a over the q8_1
// columns, as for Q4_K / Q4_0.
#pragma once
#include "mvq_blocks.h"

// IQ4_XS (136-byte blocks, 8-byte aligned rows): 8 lanes per 256-element block, lane j takes
// sub-block j: the 16 quant bytes at 8 + 16j (low nibbles = elements 32j + 0..15, high = 32j +
// 16..31) and the 8-byte header (d, scales_h, scales_l) in two and one 8-byte loads. The column
// is quantized in blocks of 256 (q8_K on the CPU), so the sub-blocks share its d.
struct MvqIq4Xs {
#if RF_NVIDIA
    enum { LANES = 8, ELEMS = 256, UNROLL = 4 };
#else
    enum { LANES = 8, ELEMS = 256, UNROLL = 1 }; // more spilled on gfx1100 (the table lookups' registers)
#endif
    u32 lo[4], hi[4]; // levels of elements 0..15 and 16..31
    float d;
    int ls; // the sub-block's 6-bit scale minus 32
    RF_DEV void load(const u8 *row, i64 b, int lane) {
        const int j = lane & 7;
        const u8 *blk = row + b * 136;
        u32 h0, h1, q[4];
        ld_g8(blk, h0, h1);
        ld_g8(blk + 8 + 16 * j, q[0], q[1]);
        ld_g8(blk + 16 + 16 * j, q[2], q[3]);
        d = h2f((u16)h0);
        ls = (int)(((h1 >> (4 * j)) & 0xF) | (((h0 >> (16 + 2 * j)) & 3) << 4)) - 32;
#pragma unroll
        for (int i = 0; i < 4; ++i) iq4nl_levels8(q[i], lo[i], hi[i]);
    }
    RF_DEV int sum(uint4 x0, uint4 x1) const {
        return dot16_i8(u4(hi[0], hi[1], hi[2], hi[3]), x1, dot16_i8(u4(lo[0], lo[1], lo[2], lo[3]), x0, 0));
    }
    RF_DEV void add(int s, float dx, float &acc) const { acc = ffma(fmul(d, dx), (float)(s * ls), acc); }
    RF_DEV void dot(Q8Col x, i64 b, int lane, float &acc) const {
        const i64 e0 = b * 256 + 32 * (lane & 7);
        add(sum(*(const uint4 *)(x.q + e0), *(const uint4 *)(x.q + e0 + 16)), x.ds[2 * (e0 / 32)], acc);
    }
    struct Act { uint4 x0, x1; float dx; };
    RF_DEV static Act act(Q8Col x, i64 b, int lane) {
        const i64 e0 = b * 256 + 32 * (lane & 7);
        return Act{*(const uint4 *)(x.q + e0), *(const uint4 *)(x.q + e0 + 16), x.ds[2 * (e0 / 32)]};
    }
    RF_DEV void dot(const Act &x, float &acc) const { add(sum(x.x0, x.x1), x.dx, acc); }
};

// IQ4_NL (18-byte blocks, 2-byte aligned): one lane per block from three aligned 8-byte loads,
// as Q4_0; the levels are signed, so no offset term.
struct MvqIq4Nl : MvqLevels32 {
    RF_DEV void load(const u8 *row, i64 b, int) {
        Window24 w;
        w.load(row + b * 18);
        d = h2f(w.half_at(w.mis));
        u32 q[4];
        w.bytes16(w.mis + 2, q);
#pragma unroll
        for (int i = 0; i < 4; ++i) iq4nl_levels8(q[i], lo[i], hi[i]);
    }
};

// ---- the grid formats -----------------------------------------------------------------------
// Each 8 (IQ2, IQ1) or 4 (IQ3) elements are one grid entry of unsigned magnitudes plus sign bits
// (IQ1: signed entries plus a delta): a lane looks its entries up, applies the signs to the
// packed bytes and dots them with the q8_1 column (dp4a), so one lookup serves every column of
// the launch.
//
// Where the grids are read: the typed kernels (rf_mvq_<type>, rf_mvqn_*, rf_mvq_proj*_<type>)
// copy theirs into shared memory first (prefetch_grid, before rf_kernel_start: the tables are
// constants), because a warp's lanes look up scattered entries: a shared-memory gather costs
// its bank conflicts, a global one through L1 about one pass per distinct cache line (the 1-4 KB
// tables span 8-32 lines), and the lookups bound these kernels' rate. IQ2_S's and IQ1's grids (8
// and 16 KB) stay global: a staged copy would cost each block more L2 traffic than the weight rows
// it reads. The any-type kernels
// (rf_mvq_multi, rf_mvq_proj through mvq_row) read the global tables (iq_grids.h) instead of
// staging every format's grid; both read the same values, so the same integers and floats.

// Bytes 0..3 of s's low 4 bits as 0 / 1 (bit i -> byte i).
RF_DEV u32 sign_ones4(u32 s) { return ((s & 0xFu) * 0x00204081u) & 0x01010101u; }
// Four unsigned grid magnitudes (1..127, one per byte) negated where bits 0..3 of s are set, as
// packed int8: ~g + 1 per negated byte, which never carries into the next byte.
RF_DEV u32 signed4(u32 g, u32 s) {
    const u32 one = sign_ones4(s);
    return (g ^ (one * 0xFFu)) + one;
}

// The staged copies: one static shared array per grid, filled by the block's threads.
RF_DEV unsigned long long *iq2xxs_grid_smem() { __shared__ unsigned long long g[256]; return g; }
RF_DEV u32 *iq3xxs_grid_smem() { __shared__ u32 g[256]; return g; }
RF_DEV u32 *iq3s_grid_smem() { __shared__ u32 g[512]; return g; }
RF_DEV unsigned long long *iq2xs_grid_smem() { __shared__ unsigned long long g[512]; return g; }
template <class T, int N> RF_DEV void copy_grid(T *dst, const T (&src)[N]) {
    for (int i = threadIdx.x; i < N; i += blockDim.x) dst[i] = src[i];
    __syncthreads();
}

// The weight-independent part of a 32-element sub-block's dot for the grid formats: lane j of a
// block takes sub-block j (32 elements, e0 = 256 b + 32 j), like MvqIq4Xs; the column is
// quantized in blocks of 256 (q8_K on the CPU), so the sub-blocks share its d.
// q[0..7]: the 32 signed values, 4 per word; d: the block's scale with the format's constant
// factor; ls: the sub-block's integer scale (HALVES: ls for elements 0..15, ls1 for 16..31).
template <bool HALVES = false> struct MvqGridSub {
    enum { LANES = 8, ELEMS = 256 };
#if RF_NVIDIA
    enum { UNROLL = 4 }; // as MvqK4 and MvqIq4Xs
#else
    enum { UNROLL = 2 }; // as MvqK4 (gfx1100's 128-VGPR cap)
#endif
    u32 q[8];
    float d;
    int ls, ls1;
    RF_DEV int sum(uint4 x0, uint4 x1) const {
        if constexpr (HALVES)
            return dot16_i8(u4(q[0], q[1], q[2], q[3]), x0, 0) * ls + dot16_i8(u4(q[4], q[5], q[6], q[7]), x1, 0) * ls1;
        else
            return dot16_i8(u4(q[4], q[5], q[6], q[7]), x1, dot16_i8(u4(q[0], q[1], q[2], q[3]), x0, 0)) * ls;
    }
    RF_DEV void add(int s, float dx, float &acc) const { acc = ffma(fmul(d, dx), (float)s, acc); }
    RF_DEV void dot(Q8Col x, i64 b, int lane, float &acc) const {
        const i64 e0 = b * 256 + 32 * (lane & 7);
        add(sum(*(const uint4 *)(x.q + e0), *(const uint4 *)(x.q + e0 + 16)), x.ds[2 * (e0 / 32)], acc);
    }
    struct Act { uint4 x0, x1; float dx; };
    RF_DEV static Act act(Q8Col x, i64 b, int lane) {
        const i64 e0 = b * 256 + 32 * (lane & 7);
        return Act{*(const uint4 *)(x.q + e0), *(const uint4 *)(x.q + e0 + 16), x.ds[2 * (e0 / 32)]};
    }
    RF_DEV void dot(const Act &x, float &acc) const { add(sum(x.x0, x.x1), x.dx, acc); }
};

// IQ2_XXS (66-byte blocks, 2-byte aligned rows): d, then per sub-block 8 bytes at 2 + 8j (four
// 8-bit grid indices, a word of 4 x 7 sign bits and the 4-bit scale), read with two aligned
// 8-byte loads. As ggml's dot: sum (2 scale + 1) * integer sum, times d / 8.
template <bool SMEM> struct MvqIq2XxsT : MvqGridSub<> {
    RF_DEV void load(const u8 *row, i64 b, int lane) {
        const u8 *blk = row + b * 66;
        const unsigned long long *grid = SMEM ? iq2xxs_grid_smem() : kIq2xxsGridD.v;
        u32 idx, meta;
        ld8_a2(blk + 2 + 8 * (lane & 7), idx, meta);
        this->d = fmul(h2f(*(const u16 *)blk), 0.125f);
        this->ls = 2 * (int)(meta >> 28) + 1;
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            const unsigned long long g = grid[(idx >> (8 * l)) & 0xFF];
            const u32 s = iq_signs8((meta >> (7 * l)) & 127);
            this->q[2 * l] = signed4((u32)g, s);
            this->q[2 * l + 1] = signed4((u32)(g >> 32), s >> 4);
        }
    }
};
typedef MvqIq2XxsT<true> MvqIq2Xxs;

// IQ3_XXS (98-byte blocks, 2-byte aligned): d, 64 bytes of 8-bit grid indices (8 per sub-block,
// at 2 + 8j), then per sub-block a word of 4 x 7 sign bits and the 4-bit scale (at 66 + 4j). As
// ggml's dot: sum (2 scale + 1) * integer sum, times d / 4.
template <bool SMEM> struct MvqIq3XxsT : MvqGridSub<> {
    RF_DEV void load(const u8 *row, i64 b, int lane) {
        const int j = lane & 7;
        const u8 *blk = row + b * 98;
        const u32 *grid = SMEM ? iq3xxs_grid_smem() : kIq3xxsGridD.v;
        u32 i0, i1;
        ld8_a2(blk + 2 + 8 * j, i0, i1);
        const u32 meta = ld_u32_a2(blk + 66 + 4 * j);
        this->d = fmul(h2f(*(const u16 *)blk), 0.25f);
        this->ls = 2 * (int)(meta >> 28) + 1;
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            const u32 iw = (l < 2 ? i0 : i1) >> (16 * (l & 1)), s = iq_signs8((meta >> (7 * l)) & 127);
            this->q[2 * l] = signed4(grid[iw & 0xFF], s);
            this->q[2 * l + 1] = signed4(grid[(iw >> 8) & 0xFF], s >> 4);
        }
    }
};
typedef MvqIq3XxsT<true> MvqIq3Xxs;

// IQ3_S (110-byte blocks, 2-byte aligned): d, the indices' low 8 bits (8 per sub-block at 2 + 8j),
// a byte of their ninth bits per sub-block (66 + j), 4 sign bytes per sub-block (74 + 4j), 4-bit
// scales two to a byte (106 + j / 2). As ggml's dot: sum (2 scale + 1) * integer sum, times d.
template <bool SMEM> struct MvqIq3ST : MvqGridSub<> {
    RF_DEV void load(const u8 *row, i64 b, int lane) {
        const int j = lane & 7;
        const u8 *blk = row + b * 110;
        const u32 *grid = SMEM ? iq3s_grid_smem() : kIq3sGridD.v;
        u32 i0, i1;
        ld8_a2(blk + 2 + 8 * j, i0, i1);
        const u32 qh = blk[66 + j], signs = ld_u32_a2(blk + 74 + 4 * j);
        this->d = h2f(*(const u16 *)blk);
        this->ls = 2 * (int)((blk[106 + j / 2] >> (4 * (j & 1))) & 0xF) + 1;
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            const u32 idx = (((k < 4 ? i0 : i1) >> (8 * (k & 3))) & 0xFF) | (((qh >> k) & 1) << 8);
            this->q[k] = signed4(grid[idx], signs >> (4 * k));
        }
    }
};
typedef MvqIq3ST<true> MvqIq3S;

// IQ2_XS (74-byte blocks, 2-byte aligned): d, per sub-block four u16 at 2 + 8j (a 9-bit grid
// index and 7 sign bits each), two 4-bit scales a sub-block (byte 66 + j: elements 0..15, 16..31).
// As ggml's dot: sum (2 scale + 1) * integer sum per half, times d / 8.
template <bool SMEM> struct MvqIq2XsT : MvqGridSub<true> {
    RF_DEV void load(const u8 *row, i64 b, int lane) {
        const int j = lane & 7;
        const u8 *blk = row + b * 74;
        const unsigned long long *grid = SMEM ? iq2xs_grid_smem() : kIq2xsGridD.v;
        u32 w0, w1;
        ld8_a2(blk + 2 + 8 * j, w0, w1);
        const u32 sc = blk[66 + j];
        this->d = fmul(h2f(*(const u16 *)blk), 0.125f);
        this->ls = 2 * (int)(sc & 0xF) + 1;
        this->ls1 = 2 * (int)(sc >> 4) + 1;
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            const u32 v = ((l < 2 ? w0 : w1) >> (16 * (l & 1))) & 0xFFFF, s = iq_signs8(v >> 9);
            const unsigned long long g = grid[v & 511];
            this->q[2 * l] = signed4((u32)g, s);
            this->q[2 * l + 1] = signed4((u32)(g >> 32), s >> 4);
        }
    }
};
typedef MvqIq2XsT<true> MvqIq2Xs;

// IQ2_S (82-byte blocks, 2-byte aligned): d, the indices' low bytes (4 per sub-block at 2 + 4j),
// 8 explicit sign bits per 8 elements (34 + 4j), the indices' bits 8-9 (byte 66 + j), two 4-bit
// scales a sub-block (74 + j). As IQ2_XS otherwise. Its 8 KB grid is read from global memory in
// every kernel (a staged copy would cost each block more L2 traffic than its weight rows).
struct MvqIq2S : MvqGridSub<true> {
    RF_DEV void load(const u8 *row, i64 b, int lane) {
        const int j = lane & 7;
        const u8 *blk = row + b * 82;
        const u32 idx = ld_u32_a2(blk + 2 + 4 * j), signs = ld_u32_a2(blk + 34 + 4 * j), qh = blk[66 + j], sc = blk[74 + j];
        this->d = fmul(h2f(*(const u16 *)blk), 0.125f);
        this->ls = 2 * (int)(sc & 0xF) + 1;
        this->ls1 = 2 * (int)(sc >> 4) + 1;
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            const unsigned long long g = kIq2sGridD.v[((idx >> (8 * l)) & 0xFF) | (((qh >> (2 * l)) & 3) << 8)];
            const u32 s = signs >> (8 * l);
            this->q[2 * l] = signed4((u32)g, s);
            this->q[2 * l + 1] = signed4((u32)(g >> 32), s >> 4);
        }
    }
};

// IQ1_S / IQ1_M: grid entries of -1, 0, 1 shifted by a delta of +-1/8 per sub-block (IQ1_S) or per
// 8 elements (IQ1_M). The lanes hold 8 g +- 1 (-9..9, exact int8), so the delta costs no extra
// dot, and d carries the 1/8. Their 16 KB grid is read from global memory (as IQ2_S's).
// 8 g + 1 (neg: 8 g - 1) for four grid bytes g, bytewise without carries.
RF_DEV u32 iq1_levels4(u32 g, bool neg) {
    const u32 e = (g << 3) & 0xF8F8F8F8u; // 8 g: 0xF8, 0x00, 0x08
    return neg ? ((e & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) ^ (~e & 0x80808080u) : e + 0x01010101u;
}

// IQ1_S (50-byte blocks, 2-byte aligned): d, the indices' low bytes (4 per sub-block at 2 + 4j), a
// u16 per sub-block at 34 + 2j (3 high bits per index, the 3-bit scale, the delta's sign).
// Sum (2 scale + 1) * sum (8 g +- 1) x, times d / 8 (ggml: d (sum + delta sum x)).
struct MvqIq1S : MvqGridSub<> {
    RF_DEV void load(const u8 *row, i64 b, int lane) {
        const int j = lane & 7;
        const u8 *blk = row + b * 50;
        const u32 idx = ld_u32_a2(blk + 2 + 4 * j), qh = *(const u16 *)(blk + 34 + 2 * j);
        const bool neg = (qh & 0x8000u) != 0;
        this->d = fmul(h2f(*(const u16 *)blk), 0.125f);
        this->ls = 2 * (int)((qh >> 12) & 7) + 1;
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            const unsigned long long g = kIq1sGridD.v[((idx >> (8 * l)) & 0xFF) | (((qh >> (3 * l)) & 7) << 8)];
            this->q[2 * l] = iq1_levels4((u32)g, neg);
            this->q[2 * l + 1] = iq1_levels4((u32)(g >> 32), neg);
        }
    }
};

// IQ1_M (56-byte blocks, 2-byte aligned): the indices' low bytes (4 per sub-block at 4j), a nibble
// per 8 elements at 32 + 2j (3 high index bits, the delta's sign), four u16 at 48 holding 3-bit
// scales (two per sub-block: elements 0..15, 16..31) and, in their top nibbles, the f16 d.
struct MvqIq1M : MvqGridSub<true> {
    RF_DEV void load(const u8 *row, i64 b, int lane) {
        const int j = lane & 7;
        const u8 *blk = row + b * 56;
        const u32 idx = ld_u32_a2(blk + 4 * j), h = *(const u16 *)(blk + 32 + 2 * j);
        u32 w0, w1; // the scale words 0, 1 and 2, 3
        ld8_a2(blk + 48, w0, w1);
        const u32 dh = ((w0 >> 12) & 0xF) | ((w0 >> 24) & 0xF0) | ((w1 >> 4) & 0xF00) | ((w1 >> 16) & 0xF000);
        const u32 sw = ((j < 4 ? w0 : w1) >> (16 * ((j >> 1) & 1) + 6 * (j & 1))) & 0x3F;
        this->d = fmul(h2f((u16)dh), 0.125f);
        this->ls = 2 * (int)(sw & 7) + 1;
        this->ls1 = 2 * (int)(sw >> 3) + 1;
#pragma unroll
        for (int l = 0; l < 4; ++l) {
            const u32 nib = (h >> (4 * l)) & 0xF;
            const unsigned long long g = kIq1sGridD.v[((idx >> (8 * l)) & 0xFF) | ((nib & 7) << 8)];
            this->q[2 * l] = iq1_levels4((u32)g, (nib & 8) != 0);
            this->q[2 * l + 1] = iq1_levels4((u32)(g >> 32), (nib & 8) != 0);
        }
    }
};

// TQ2_0 (66-byte blocks, 2-byte aligned: 64 bytes of 2-bit codes q, then d): element 128 h + 32 k
// + m is bits 2k of byte 32 h + m, its value q - 1. Lane j (h = j / 4, k = j % 4) reads the 32
// bytes of its half (8-byte loads; the four lanes of a half read the same ones); the -1 goes
// through the column's block sum: d (s dx - dx sum).
struct MvqTq2_0 {
    enum { LANES = 8, ELEMS = 256 };
#if RF_NVIDIA
    enum { UNROLL = 4 };
#else
    enum { UNROLL = 2 };
#endif
    u32 q[8];
    float d;
    RF_DEV void load(const u8 *row, i64 b, int lane) {
        const int j = lane & 7, sh = 2 * (j & 3);
        const u8 *blk = row + b * 66, *p = blk + 32 * (j >> 2);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            u32 w0, w1;
            ld8_a2(p + 8 * i, w0, w1);
            q[2 * i] = (w0 >> sh) & 0x03030303u;
            q[2 * i + 1] = (w1 >> sh) & 0x03030303u;
        }
        d = h2f(*(const u16 *)(blk + 64));
    }
    RF_DEV int sum(uint4 x0, uint4 x1) const {
        return dot16_i8(u4(q[4], q[5], q[6], q[7]), x1, dot16_i8(u4(q[0], q[1], q[2], q[3]), x0, 0));
    }
    RF_DEV void add(int s, float2 ds, float &acc) const { acc = ffma(d, ffma((float)s, ds.x, -ds.y), acc); }
    RF_DEV void dot(Q8Col x, i64 b, int lane, float &acc) const {
        const i64 e0 = b * 256 + 32 * (lane & 7);
        add(sum(*(const uint4 *)(x.q + e0), *(const uint4 *)(x.q + e0 + 16)), *(const float2 *)(x.ds + 2 * (e0 / 32)), acc);
    }
    struct Act { uint4 x0, x1; float2 ds; };
    RF_DEV static Act act(Q8Col x, i64 b, int lane) {
        const i64 e0 = b * 256 + 32 * (lane & 7);
        return Act{*(const uint4 *)(x.q + e0), *(const uint4 *)(x.q + e0 + 16), *(const float2 *)(x.ds + 2 * (e0 / 32))};
    }
    RF_DEV void dot(const Act &x, float &acc) const { add(sum(x.x0, x.x1), x.ds, acc); }
};

// A format in the any-type kernels (mvq_row: rf_mvq_multi, rf_mvq_proj): one block in flight, so
// that the grid formats do not raise those kernels' registers (the widest case's) for the others.
template <class B> struct MvqAnyRow : B { enum { UNROLL = 1 }; };

// Grid staging of the typed kernels (see above): nothing for a format without a grid.
RF_DEV void stage_grid(const void *) {}
RF_DEV void stage_grid(const MvqIq2Xxs *) { copy_grid(iq2xxs_grid_smem(), kIq2xxsGridD.v); }
RF_DEV void stage_grid(const MvqIq3Xxs *) { copy_grid(iq3xxs_grid_smem(), kIq3xxsGridD.v); }
RF_DEV void stage_grid(const MvqIq3S *) { copy_grid(iq3s_grid_smem(), kIq3sGridD.v); }
RF_DEV void stage_grid(const MvqIq2Xs *) { copy_grid(iq2xs_grid_smem(), kIq2xsGridD.v); }
template <class B> RF_DEV void prefetch_grid() { stage_grid((const B *)nullptr); }
