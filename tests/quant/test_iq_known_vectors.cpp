// The i-quants and ternary formats: grid tables against values copied from ggml-common.h, and
// dequantize_row against a per-element decoding of the byte layout written here from the
// format description (byte offsets and bit positions, not the library's structs or loops),
// in double precision. Every product in these formats is exact in float for normal scales,
// so the one rounding to float must equal the library's result bit for bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "rocmforge/iq_grids.h"
#include "rocmforge/types.h"

namespace {

using Bytes = std::vector<uint8_t>;
using namespace rf::iq;

double half_value(const uint8_t *p) {
    const unsigned h = p[0] | (p[1] << 8);
    const int exp = (h >> 10) & 0x1F, man = h & 0x3FF;
    const double mag = exp == 0 ? std::ldexp(man, -24) : std::ldexp(1024 + man, exp - 25);
    return (h & 0x8000) ? -mag : mag;
}
double half_value(unsigned h) {
    const uint8_t b[2] = {uint8_t(h & 0xFF), uint8_t(h >> 8)};
    return half_value(b);
}
unsigned u16(const uint8_t *p) { return p[0] | (p[1] << 8); }
uint32_t u32(const uint8_t *p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (uint32_t(p[3]) << 24); }

void put_half(uint8_t *p, std::mt19937 &rng) {
    const unsigned e = 10 + rng() % 10, m = rng() % 1024, s = rng() & 1;
    const unsigned h = (s << 15) | (e << 10) | m;
    p[0] = h & 0xFF;
    p[1] = h >> 8;
}

// Byte j of a grid entry.
int grid_byte(uint64_t g, int j) { return int((g >> (8 * j)) & 0xFF); }

// Sign of element j (0..7) of a group whose 7 stored sign bits are s7: bit j for j < 7; the
// eighth sign makes the count of negative elements even.
double sign7(unsigned s7, int j) {
    int neg;
    if (j < 7) neg = (s7 >> j) & 1;
    else {
        neg = 0;
        for (int b = 0; b < 7; ++b) neg ^= (s7 >> b) & 1;
    }
    return neg ? -1.0 : 1.0;
}

// Trit n (0 = most significant) of a TQ1_0 byte q that encodes t as ceil(t * 256 / 3^k).
int tq1_trit(int q, int n) {
    int p = 1;
    for (int i = 0; i < n; ++i) p *= 3;
    return ((q * p) % 256) * 3 / 256;
}

struct Format {
    int type;
    int block_bytes;
    int block_elems;
    std::function<void(uint8_t *, std::mt19937 &)> fix_scales;
    std::function<double(const uint8_t *, int)> element;
};

std::vector<Format> formats() {
    std::vector<Format> f;
    auto d_at0 = [](uint8_t *b, std::mt19937 &r) { put_half(b, r); };
    // IQ2_XXS: d @0; per 32 elements 8 bytes @2+8*ib: 4 grid indices, then u32 meta
    // (4 x 7 sign bits, scale in bits 28..31).
    f.push_back({RF_TYPE_IQ2_XXS, 66, 256, d_at0, [](const uint8_t *b, int e) {
                     const int ib = e / 32, l = e % 32 / 8, j = e % 8;
                     const uint32_t meta = u32(b + 2 + 8 * ib + 4);
                     const double db = half_value(b) * ((meta >> 28) + 0.5) / 4;
                     return db * grid_byte(kIq2xxsGrid[b[2 + 8 * ib + l]], j) * sign7((meta >> (7 * l)) & 127, j);
                 }});
    // IQ2_XS: d @0; 32 u16 @2 (9-bit index, 7 sign bits); 8 scale bytes @66 (low nibble: first
    // 16 elements of the 32, high nibble: last 16).
    f.push_back({RF_TYPE_IQ2_XS, 74, 256, d_at0, [](const uint8_t *b, int e) {
                     const int ib = e / 32, l = e % 32 / 8, j = e % 8;
                     const unsigned q = u16(b + 2 + 2 * (4 * ib + l));
                     const int sc = l < 2 ? b[66 + ib] & 15 : b[66 + ib] >> 4;
                     return half_value(b) * (sc + 0.5) / 4 * grid_byte(kIq2xsGrid[q & 511], j) * sign7(q >> 9, j);
                 }});
    // IQ2_S: d @0; 32 index bytes @2; 32 sign bytes @34; qh @66 (2 index bits per group);
    // scales @74.
    f.push_back({RF_TYPE_IQ2_S, 82, 256, d_at0, [](const uint8_t *b, int e) {
                     const int ib = e / 32, l = e % 32 / 8, j = e % 8;
                     const int idx = b[2 + 4 * ib + l] | (((b[66 + ib] >> (2 * l)) & 3) << 8);
                     const int sc = l < 2 ? b[74 + ib] & 15 : b[74 + ib] >> 4;
                     const double s = (b[34 + 4 * ib + l] >> j) & 1 ? -1.0 : 1.0;
                     return half_value(b) * (sc + 0.5) / 4 * grid_byte(kIq2sGrid[idx], j) * s;
                 }});
    // IQ3_XXS: d @0; 64 index bytes @2 (8 per 32 elements, 4 elements each); 8 u32 @66.
    f.push_back({RF_TYPE_IQ3_XXS, 98, 256, d_at0, [](const uint8_t *b, int e) {
                     const int ib = e / 32, l = e % 32 / 8, j = e % 8;
                     const uint32_t meta = u32(b + 66 + 4 * ib);
                     const int idx = b[2 + 8 * ib + 2 * l + j / 4];
                     return half_value(b) * ((meta >> 28) + 0.5) / 2 * grid_byte(kIq3xxsGrid[idx], j % 4) *
                            sign7((meta >> (7 * l)) & 127, j);
                 }});
    // IQ3_S: d @0; 64 index bytes @2; qh @66 (bit 8 of each index); 32 sign bytes @74;
    // 4 scale bytes @106 (low nibble for even 32-blocks).
    f.push_back({RF_TYPE_IQ3_S, 110, 256, d_at0, [](const uint8_t *b, int e) {
                     const int ib = e / 32, l = e % 32 / 8, j = e % 8, k = 2 * l + j / 4;
                     const int idx = b[2 + 8 * ib + k] | (((b[66 + ib] >> k) & 1) << 8);
                     const int sc = ib % 2 ? b[106 + ib / 2] >> 4 : b[106 + ib / 2] & 15;
                     const double s = (b[74 + 4 * ib + l] >> j) & 1 ? -1.0 : 1.0;
                     return half_value(b) * (1 + 2 * sc) * grid_byte(kIq3sGrid[idx], j % 4) * s;
                 }});
    // IQ1_S: d @0; 32 index bytes @2; 8 u16 @34: 3 high index bits per group, scale in bits
    // 12..14, delta sign in bit 15.
    f.push_back({RF_TYPE_IQ1_S, 50, 256, d_at0, [](const uint8_t *b, int e) {
                     const int ib = e / 32, l = e % 32 / 8, j = e % 8;
                     const unsigned qh = u16(b + 34 + 2 * ib);
                     const int idx = b[2 + 4 * ib + l] | (((qh >> (3 * l)) & 7) << 8);
                     const double delta = qh & 0x8000 ? -0.125 : 0.125;
                     const int g = int8_t(grid_byte(kIq1sGrid[idx], j));
                     return half_value(b) * (2 * ((qh >> 12) & 7) + 1) * (g + delta);
                 }});
    // IQ1_M: 32 index bytes @0; 16 qh bytes @32 (per group of 8: 3 index bits + delta sign,
    // two groups per byte); 4 u16 @48: 3-bit scales per 16 elements, f16 d in the top nibbles.
    f.push_back({RF_TYPE_IQ1_M, 56, 256,
                 [](uint8_t *b, std::mt19937 &r) {
                     uint8_t h[2];
                     put_half(h, r);
                     const unsigned d = h[0] | (h[1] << 8);
                     for (int w = 0; w < 4; ++w) b[48 + 2 * w + 1] = uint8_t((b[48 + 2 * w + 1] & 0x0F) | (((d >> (4 * w)) & 15) << 4));
                 },
                 [](const uint8_t *b, int e) {
                     const int ib = e / 32, l = e % 32 / 8, j = e % 8;
                     unsigned dbits = 0;
                     for (int w = 0; w < 4; ++w) dbits |= (u16(b + 48 + 2 * w) >> 12) << (4 * w);
                     const int qh = l % 2 ? b[32 + 2 * ib + l / 2] >> 4 : b[32 + 2 * ib + l / 2] & 15;
                     const int idx = b[4 * ib + l] | ((qh & 7) << 8);
                     const double delta = qh & 8 ? -0.125 : 0.125;
                     const int sc = (u16(b + 48 + 2 * (ib / 2)) >> (6 * (ib % 2) + 3 * (l / 2))) & 7;
                     const int g = int8_t(grid_byte(kIq1sGrid[idx], j));
                     return half_value(dbits) * (2 * sc + 1) * (g + delta);
                 }});
    // IQ4_NL: d @0, 16 nibble bytes @2 (low nibbles: elements 0..15).
    f.push_back({RF_TYPE_IQ4_NL, 18, 32, d_at0, [](const uint8_t *b, int e) {
                     const int q = e < 16 ? b[2 + e] & 15 : b[2 + e - 16] >> 4;
                     return half_value(b) * kValuesIq4nl[q];
                 }});
    // IQ4_XS: d @0; scales_h u16 @2 (2 high scale bits per 32); scales_l @4 (nibbles);
    // 128 nibble bytes @8, 16 per 32 elements.
    f.push_back({RF_TYPE_IQ4_XS, 136, 256, d_at0, [](const uint8_t *b, int e) {
                     const int ib = e / 32, r = e % 32;
                     const int ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 15) | (((u16(b + 2) >> (2 * ib)) & 3) << 4);
                     const int q = r < 16 ? b[8 + 16 * ib + r] & 15 : b[8 + 16 * ib + r - 16] >> 4;
                     return half_value(b) * (ls - 32) * kValuesIq4nl[q];
                 }});
    // TQ1_0: 48 qs bytes @0 (bytes 0..31: 5 trits for elements n*32+m; bytes 32..47: elements
    // 160+n*16+m); 4 qh bytes @48 (4 trits, elements 240+n*4+j); d @52.
    f.push_back({RF_TYPE_TQ1_0, 54, 256, [](uint8_t *b, std::mt19937 &r) { put_half(b + 52, r); },
                 [](const uint8_t *b, int e) {
                     int t;
                     if (e < 160) t = tq1_trit(b[e % 32], e / 32);
                     else if (e < 240) t = tq1_trit(b[32 + (e - 160) % 16], (e - 160) / 16);
                     else t = tq1_trit(b[48 + (e - 240) % 4], (e - 240) / 4);
                     return (t - 1) * half_value(b + 52);
                 }});
    // TQ2_0: 64 qs bytes @0 (element 128h + 32l + m in bits 2l of byte 32h + m); d @64.
    f.push_back({RF_TYPE_TQ2_0, 66, 256, [](uint8_t *b, std::mt19937 &r) { put_half(b + 64, r); },
                 [](const uint8_t *b, int e) {
                     const int q = (b[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3;
                     return (q - 1) * half_value(b + 64);
                 }});
    return f;
}

std::vector<float> dequant(int type, const Bytes &data, int64_t n) {
    std::vector<float> out(size_t(n), -999.f);
    rf::dequantize_row(type, data.data(), out.data(), n);
    return out;
}

} // namespace

TEST_CASE("i-quant grids hold ggml's values", "[iq][grids]") {
    // Entries copied from ggml-common.h (first, last and interior ones of each table).
    CHECK(kIq2xxsGrid[0] == 0x0808080808080808ull);
    CHECK(kIq2xxsGrid[1] == 0x080808080808082bull);
    CHECK(kIq2xxsGrid[128] == 0x082b2b0808082b08ull);
    CHECK(kIq2xxsGrid[129] == 0x082b2b08082b0808ull);
    CHECK(kIq2xxsGrid[254] == 0x2b2b2b0819190808ull);
    CHECK(kIq2xxsGrid[255] == 0x2b2b2b1908081908ull);
    CHECK(kIq2xsGrid[7] == 0x080808080819192bull);
    CHECK(kIq2xsGrid[29] == 0x080808082b192b19ull);
    CHECK(kIq2xsGrid[256] == 0x190808080808192bull);
    CHECK(kIq2xsGrid[257] == 0x1908080808082b19ull);
    CHECK(kIq2xsGrid[484] == 0x2b2b0808082b2b2bull);
    CHECK(kIq2xsGrid[511] == 0x2b2b2b2b2b2b2b2bull);
    CHECK(kIq2sGrid[23] == 0x08080808192b192bull);
    CHECK(kIq2sGrid[300] == 0x08191908192b1908ull);
    CHECK(kIq2sGrid[512] == 0x19080819082b1919ull);
    CHECK(kIq2sGrid[513] == 0x1908081919080819ull);
    CHECK(kIq2sGrid[900] == 0x2b08192b082b2b19ull);
    CHECK(kIq2sGrid[1023] == 0x2b2b2b2b2b2b2b2bull);
    CHECK(kIq3xxsGrid[0] == 0x04040404u);
    CHECK(kIq3xxsGrid[100] == 0x14040c1cu);
    CHECK(kIq3xxsGrid[101] == 0x14041404u);
    CHECK(kIq3xxsGrid[236] == 0x3e04042cu);
    CHECK(kIq3xxsGrid[255] == 0x3e341c04u);
    CHECK(kIq3sGrid[0] == 0x01010101u);
    CHECK(kIq3sGrid[3] == 0x0101010bu);
    CHECK(kIq3sGrid[15] == 0x01010905u);
    CHECK(kIq3sGrid[496] == 0x0f050701u);
    CHECK(kIq3sGrid[511] == 0x0f0f0101u);
    CHECK(kIq1sGrid[0] == 0xffffffffffffffffull);
    CHECK(kIq1sGrid[1] == 0xffffffffffffff01ull);
    CHECK(kIq1sGrid[19] == 0xffffffff01ff0101ull);
    CHECK(kIq1sGrid[700] == 0x00ff00ff0000ff00ull);
    CHECK(kIq1sGrid[1024] == 0x0000000000ff0100ull);
    CHECK(kIq1sGrid[1025] == 0x000000000000ffffull);
    CHECK(kIq1sGrid[1536] == 0x01ff00000100ff01ull);
    CHECK(kIq1sGrid[1900] == 0x0101ff0000000101ull);
    CHECK(kIq1sGrid[2047] == 0x0101010101010101ull);
    // ksigns_iq2xs: first and last rows of ggml's table.
    const uint8_t first[16] = {0, 129, 130, 3, 132, 5, 6, 135, 136, 9, 10, 139, 12, 141, 142, 15};
    const uint8_t last[16] = {240, 113, 114, 243, 116, 245, 246, 119, 120, 249, 250, 123, 252, 125, 126, 255};
    for (int i = 0; i < 16; ++i) {
        CHECK(kSignsIq2xs[i] == first[i]);
        CHECK(kSignsIq2xs[112 + i] == last[i]);
    }
    CHECK(kSignMasksIq2xs[1] == 0xff000000000000ffull);
    CHECK(kSignMasksIq2xs[127] == 0xffffffffffffffffull);
    // Every byte of every grid is one of the format's levels.
    auto levels_ok = [](auto &grid, int bytes, std::vector<int> levels) {
        for (auto g : grid)
            for (int j = 0; j < bytes; ++j) {
                const int v = grid_byte(g, j);
                bool ok = false;
                for (int l : levels) ok |= (v == (l & 0xFF));
                if (!ok) return false;
            }
        return true;
    };
    CHECK(levels_ok(kIq2xxsGrid, 8, {8, 25, 43}));
    CHECK(levels_ok(kIq2xsGrid, 8, {8, 25, 43}));
    CHECK(levels_ok(kIq2sGrid, 8, {8, 25, 43}));
    CHECK(levels_ok(kIq1sGrid, 8, {-1, 0, 1}));
    CHECK(levels_ok(kIq3xxsGrid, 4, {4, 12, 20, 28, 36, 44, 52, 62}));
    CHECK(levels_ok(kIq3sGrid, 4, {1, 3, 5, 7, 9, 11, 13, 15}));
}

TEST_CASE("i-quant dequantize_row of random blocks equals the layout definition", "[iq][known]") {
    std::mt19937 rng(4242);
    for (const Format &f : formats()) {
        INFO("type " << rf::type_name(f.type));
        REQUIRE(rf::row_size(f.type, f.block_elems) == size_t(f.block_bytes));
        for (int trial = 0; trial < 40; ++trial) {
            const int nblocks = 3;
            Bytes data(size_t(nblocks) * f.block_bytes);
            // Every third trial: all bits set (the largest grid index, scale and sign fields).
            for (auto &b : data) b = trial % 3 == 2 ? 0xFF : uint8_t(rng());
            for (int k = 0; k < nblocks; ++k) f.fix_scales(data.data() + k * f.block_bytes, rng);
            const std::vector<float> out = dequant(f.type, data, int64_t(nblocks) * f.block_elems);
            for (int k = 0; k < nblocks; ++k)
                for (int i = 0; i < f.block_elems; ++i) {
                    const float expected = float(f.element(data.data() + k * f.block_bytes, i));
                    INFO("block " << k << " element " << i);
                    REQUIRE(out[size_t(k) * f.block_elems + i] == expected);
                }
        }
    }
}

TEST_CASE("i-quant blocks with every byte value decode in range", "[iq][corrupt]") {
    // Blocks of one repeated byte (0x00..0xFF, scales included, so d may be NaN or Inf):
    // decoding reads only the tables and writes exactly n floats.
    for (const Format &f : formats()) {
        INFO("type " << rf::type_name(f.type));
        for (int v = 0; v < 256; ++v) {
            Bytes data(size_t(2) * f.block_bytes, uint8_t(v));
            std::vector<float> out(size_t(2) * f.block_elems + 1, 12345.f);
            rf::dequantize_row(f.type, data.data(), out.data(), 2 * f.block_elems);
            REQUIRE(out.back() == 12345.f);
        }
    }
}

TEST_CASE("i-quant hand-written blocks", "[iq][known]") {
    SECTION("iq4_nl: d = 1 gives the table itself") {
        Bytes b(18, 0);
        b[1] = 0x3C; // 1.0
        for (int j = 0; j < 16; ++j) b[2 + j] = uint8_t(j | ((15 - j) << 4));
        const auto y = dequant(RF_TYPE_IQ4_NL, b, 32);
        const float table[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
        for (int j = 0; j < 16; ++j) {
            CHECK(y[j] == table[j]);
            CHECK(y[16 + j] == table[15 - j]);
        }
    }
    SECTION("iq4_xs: scale 6 bits with bias 32") {
        Bytes b(136, 0);
        b[1] = 0x38; // d = 0.5
        b[2] = 0x03; // scales_h: block 0 high bits = 3 -> ls = 48 + low
        b[4] = 0x21; // scales_l: block 0 low = 1 (ls 49), block 1 low = 2 (ls 2)
        b[8] = 0xF0; // block 0: element 0 nibble 0, element 16 nibble 15
        const auto y = dequant(RF_TYPE_IQ4_XS, b, 256);
        CHECK(y[0] == 0.5f * 17 * -127);
        CHECK(y[16] == 0.5f * 17 * 113);
        CHECK(y[32] == 0.5f * -30 * -127);
        CHECK(y[255] == 0.5f * -32 * -127); // blocks 2..7: ls = 0
    }
    SECTION("iq2_xxs: index 0, scale 0, no signs is d everywhere; sign bit 0 flips element 0 and 7") {
        Bytes b(66, 0);
        b[1] = 0x40; // d = 2
        auto y = dequant(RF_TYPE_IQ2_XXS, b, 256);
        for (float v : y) CHECK(v == 2.0f); // 2 * 0.5 * 0.25 * 8
        b[2 + 4] = 0x01; // first group: stored sign bit 0 set -> parity sets sign 7
        b[2 + 7] = 0x10; // scale 1: 2 * 1.5 * 0.25 = 0.75 per level
        b[2 + 0] = 1;    // grid 1: element 0 is 43
        y = dequant(RF_TYPE_IQ2_XXS, b, 256);
        CHECK(y[0] == -0.75f * 43);
        CHECK(y[1] == 0.75f * 8);
        CHECK(y[7] == -0.75f * 8);
        CHECK(y[8] == 0.75f * 8);
    }
    SECTION("iq1_s: the delta shifts every element of the 32-block") {
        Bytes b(50, 0);
        b[1] = 0x3C; // d = 1
        auto y = dequant(RF_TYPE_IQ1_S, b, 256);
        for (float v : y) CHECK(v == -0.875f); // grid 0 is all -1, + 0.125
        b[34 + 1] = 0x80; // block 0: delta -0.125
        b[34 + 1] |= 0x10; // scale 1 -> 3
        y = dequant(RF_TYPE_IQ1_S, b, 256);
        CHECK(y[0] == 3 * -1.125f);
        CHECK(y[32] == -0.875f);
    }
    SECTION("tq2_0 and tq1_0: ternary values") {
        Bytes b(66, 0);
        b[65] = 0x3C; // d = 1
        b[0] = 0b11100100; // elements 0, 32, 64, 96: q = 0, 1, 2, 3
        auto y = dequant(RF_TYPE_TQ2_0, b, 256);
        CHECK(y[0] == -1.f);
        CHECK(y[32] == 0.f);
        CHECK(y[64] == 1.f);
        CHECK(y[96] == 2.f); // code 3 is not produced by ggml's quantizer but decodes as 2
        Bytes t(54, 0);
        t[53] = 0x3C;
        // Trits (2, 0, 1, 2, 1) = 2*81 + 0 + 9 + 6 + 1 = 178 -> byte ceil(178 * 256 / 243) = 188.
        t[0] = 188;
        y = dequant(RF_TYPE_TQ1_0, t, 256);
        CHECK(y[0] == 1.f);
        CHECK(y[32] == -1.f);
        CHECK(y[64] == 0.f);
        CHECK(y[96] == 1.f);
        CHECK(y[128] == 0.f);
        CHECK(y[1] == -1.f); // byte 0: all trits 0
    }
}
