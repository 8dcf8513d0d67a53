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

static_assert(sizeof(block_q4_0) == 18 && sizeof(block_q4_1) == 20);
static_assert(sizeof(block_q5_0) == 22 && sizeof(block_q5_1) == 24);
static_assert(sizeof(block_q8_0) == 34 && sizeof(block_q8_1) == 36);
static_assert(sizeof(block_q2_K) == 84 && sizeof(block_q3_K) == 110);
static_assert(sizeof(block_q4_K) == 144 && sizeof(block_q5_K) == 176);
static_assert(sizeof(block_q6_K) == 210 && sizeof(block_q8_K) == 292);
static_assert(sizeof(block_mxfp4) == 17 && sizeof(block_mxfp6) == 25);

} // namespace rf
