// On-disk block layouts of the quantized types, identical to the ones llama.cpp writes into GGUF
// files. Shared by the reference quantizers (core/quant) and the compute backends.
#pragma once
#include <cstdint>

namespace rf {

constexpr int QK4_0 = 32, QK4_1 = 32, QK5_0 = 32, QK5_1 = 32, QK8_0 = 32, QK8_1 = 32;
constexpr int QK_K = 256;
constexpr int K_SCALE_SIZE = 12;
constexpr int QK_MXFP4 = 32;
constexpr int QK_MXFP6 = 32;
constexpr int QK4_NL = 32;

using fp16_t = uint16_t;

struct block_q4_0 { fp16_t d; uint8_t qs[QK4_0 / 2]; };
struct block_q4_1 { fp16_t d; fp16_t m; uint8_t qs[QK4_1 / 2]; };
struct block_q5_0 { fp16_t d; uint8_t qh[4]; uint8_t qs[QK5_0 / 2]; };
struct block_q5_1 { fp16_t d; fp16_t m; uint8_t qh[4]; uint8_t qs[QK5_1 / 2]; };
struct block_q8_0 { fp16_t d; int8_t qs[QK8_0]; };
struct block_q8_1 { fp16_t d; fp16_t s; int8_t qs[QK8_1]; };

struct block_q2_K { uint8_t scales[QK_K / 16]; uint8_t qs[QK_K / 4]; fp16_t d; fp16_t dmin; };
struct block_q3_K { uint8_t hmask[QK_K / 8]; uint8_t qs[QK_K / 4]; uint8_t scales[12]; fp16_t d; };
struct block_q4_K { fp16_t d; fp16_t dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qs[QK_K / 2]; };
struct block_q5_K { fp16_t d; fp16_t dmin; uint8_t scales[K_SCALE_SIZE]; uint8_t qh[QK_K / 8]; uint8_t qs[QK_K / 2]; };
struct block_q6_K { uint8_t ql[QK_K / 2]; uint8_t qh[QK_K / 4]; int8_t scales[QK_K / 16]; fp16_t d; };
struct block_q8_K { float d; int8_t qs[QK_K]; int16_t bsums[QK_K / 16]; };

// MXFP4 (OCP MX, as ggml stores it): E8M0 shared exponent + 32 E2M1 nibbles.
struct block_mxfp4 { uint8_t e; uint8_t qs[QK_MXFP4 / 2]; };
// MXFP6 (OCP MX spec; ROCmForge layout, docs/FORMATS.md): E8M0 shared exponent + 32 six-bit
// codes packed little-endian, 4 codes per 3 bytes.
struct block_mxfp6 { uint8_t e; uint8_t qs[QK_MXFP6 * 6 / 8]; };

// i-quants (ggml's layouts; the grids and sign tables they index are in iq_grids.h).
// IQ2_XXS: per 32 elements two u32: four 8-bit grid indices, then 4x7 sign bits + a 4-bit scale.
struct block_iq2_xxs { fp16_t d; uint16_t qs[QK_K / 8]; };
// IQ2_XS: per 8 elements a u16: 9-bit grid index + 7 sign bits; two 4-bit scales per 32.
struct block_iq2_xs { fp16_t d; uint16_t qs[QK_K / 8]; uint8_t scales[QK_K / 32]; };
// IQ2_S: 8-bit grid index low bits, then 8 sign bytes per 32; qh holds index bits 8-9.
struct block_iq2_s { fp16_t d; uint8_t qs[QK_K / 4]; uint8_t qh[QK_K / 32]; uint8_t scales[QK_K / 32]; };
// IQ3_XXS: 8-bit indices into a 4-element grid, then per 32 a u32 of 4x7 sign bits + scale.
struct block_iq3_xxs { fp16_t d; uint8_t qs[3 * QK_K / 8]; };
// IQ3_S: 9-bit indices (bit 8 in qh), explicit sign bits, one 4-bit scale per 32.
struct block_iq3_s { fp16_t d; uint8_t qs[QK_K / 4]; uint8_t qh[QK_K / 32]; uint8_t signs[QK_K / 8]; uint8_t scales[QK_K / 64]; };
// IQ1_S: 11-bit indices (3 high bits in qh), per 32 a 3-bit scale and the delta sign (qh bit 15).
struct block_iq1_s { fp16_t d; uint8_t qs[QK_K / 8]; uint16_t qh[QK_K / 32]; };
// IQ1_M: no d field: the f16 super-block scale is spread over the top nibbles of scales.
struct block_iq1_m { uint8_t qs[QK_K / 8]; uint8_t qh[QK_K / 16]; uint8_t scales[QK_K / 32]; };
// IQ4_NL: like Q4_0 but the nibble indexes the non-linear table kValuesIq4nl.
struct block_iq4_nl { fp16_t d; uint8_t qs[QK4_NL / 2]; };
// IQ4_XS: IQ4_NL nibbles in 256-blocks with a 6-bit scale (bias 32) per 32 elements.
struct block_iq4_xs { fp16_t d; uint16_t scales_h; uint8_t scales_l[QK_K / 64]; uint8_t qs[QK_K / 2]; };

// Ternary formats (values d * {-1, 0, 1}).
// TQ1_0: 5 trits per byte in qs (base 3, most significant first), 4 per byte in qh.
struct block_tq1_0 { uint8_t qs[(QK_K - 4 * QK_K / 64) / 5]; uint8_t qh[QK_K / 64]; fp16_t d; };
// TQ2_0: 2 bits per element (q - 1).
struct block_tq2_0 { uint8_t qs[QK_K / 4]; fp16_t d; };

static_assert(sizeof(block_q4_0) == 18 && sizeof(block_q4_1) == 20);
static_assert(sizeof(block_q5_0) == 22 && sizeof(block_q5_1) == 24);
static_assert(sizeof(block_q8_0) == 34 && sizeof(block_q8_1) == 36);
static_assert(sizeof(block_q2_K) == 84 && sizeof(block_q3_K) == 110);
static_assert(sizeof(block_q4_K) == 144 && sizeof(block_q5_K) == 176);
static_assert(sizeof(block_q6_K) == 210 && sizeof(block_q8_K) == 292);
static_assert(sizeof(block_mxfp4) == 17 && sizeof(block_mxfp6) == 25);
static_assert(sizeof(block_iq2_xxs) == 66 && sizeof(block_iq2_xs) == 74 && sizeof(block_iq2_s) == 82);
static_assert(sizeof(block_iq3_xxs) == 98 && sizeof(block_iq3_s) == 110);
static_assert(sizeof(block_iq1_s) == 50 && sizeof(block_iq1_m) == 56);
static_assert(sizeof(block_iq4_nl) == 18 && sizeof(block_iq4_xs) == 136);
static_assert(sizeof(block_tq1_0) == 54 && sizeof(block_tq2_0) == 66);

} // namespace rf
