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
struct MvqIq4Nl {
    enum { LANES = 1, ELEMS = 32, UNROLL = 2 };
    u32 lo[4], hi[4];
    float d;
    RF_DEV void load(const u8 *row, i64 b, int) {
        Window24 w;
        w.load(row + b * 18);
        d = h2f(w.half_at(w.mis));
        u32 q[4];
        w.bytes16(w.mis + 2, q);
#pragma unroll
        for (int i = 0; i < 4; ++i) iq4nl_levels8(q[i], lo[i], hi[i]);
    }
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
