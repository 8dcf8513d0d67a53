#include "matmul_weights.h"

#include <cstring>
#include <random>

#include "rocmforge/types.h"

namespace cputest {

const std::vector<int> kMatmulWeightTypes = {
    RF_TYPE_F32,  RF_TYPE_F16,  RF_TYPE_BF16, RF_TYPE_Q4_0,  RF_TYPE_Q4_1,       RF_TYPE_Q5_0,
    RF_TYPE_Q5_1, RF_TYPE_Q8_0, RF_TYPE_Q2_K, RF_TYPE_Q3_K,  RF_TYPE_Q4_K,       RF_TYPE_Q5_K,
    RF_TYPE_Q6_K, RF_TYPE_MXFP4, RF_TYPE_MXFP6_E2M3, RF_TYPE_MXFP6_E3M2,
    // No quantizer here: random blocks (random_blocks).
    RF_TYPE_IQ2_XXS, RF_TYPE_IQ2_XS, RF_TYPE_IQ2_S, RF_TYPE_IQ3_XXS, RF_TYPE_IQ3_S, RF_TYPE_IQ1_S,
    RF_TYPE_IQ1_M, RF_TYPE_IQ4_NL, RF_TYPE_IQ4_XS, RF_TYPE_TQ1_0, RF_TYPE_TQ2_0};

namespace {

// Random bytes for every field, then the f16 super-block scale set to a normal value near
// 2^-6 (IQ1_M keeps it in the top nibbles of its 4 scale words).
void random_blocks(int type, uint8_t *dst, int64_t k, std::mt19937 &rng) {
    const rf::TypeTraits *t = rf::type_traits(type);
    const size_t bytes = size_t(k / t->block_size) * t->type_size;
    for (size_t i = 0; i < bytes; ++i) dst[i] = uint8_t(rng());
    for (uint8_t *b = dst; b < dst + bytes; b += t->type_size) {
        const uint16_t d = uint16_t(((rng() & 1) << 15) | ((9 + rng() % 3) << 10) | (rng() % 1024));
        if (type == RF_TYPE_IQ1_M) {
            for (int w = 0; w < 4; ++w) b[48 + 2 * w + 1] = uint8_t((b[48 + 2 * w + 1] & 0x0F) | (((d >> (4 * w)) & 15) << 4));
            continue;
        }
        const size_t off = type == RF_TYPE_TQ1_0 ? 52 : type == RF_TYPE_TQ2_0 ? 64 : 0;
        std::memcpy(b + off, &d, 2);
    }
}

} // namespace

float id_activation(int type, float x) {
    return type == RF_TYPE_F16 ? rf::fp16_to_fp32(rf::fp32_to_fp16(x)) : x;
}

double matmul_threshold(int type) {
    if (type == RF_TYPE_F32 || type == RF_TYPE_F16 || type == RF_TYPE_BF16) return 1e-9;
    return 1e-3;
}

Tensor make_weight(int type, int64_t K, int64_t N, int64_t ne2, std::vector<float> *deq) {
    Tensor w(type, {K, N, ne2});
    std::vector<float> row(size_t(K), 0.f);
    std::mt19937 rng(uint32_t(type * 7919 + K));
    deq->assign(size_t(K * N * ne2), 0.f);
    for (int64_t r = 0; r < N * ne2; ++r) {
        fill_normal(row.data(), K, 0.5f);
        uint8_t *dst = static_cast<uint8_t *>(w.t.data) + r * w.t.nb[1];
        if (type == RF_TYPE_F32) std::memcpy(dst, row.data(), size_t(K) * 4);
        else if (rf::can_quantize(type)) rf::quantize_row(type, row.data(), dst, K);
        else random_blocks(type, dst, K, rng);
        rf::dequantize_row(type, dst, deq->data() + r * K, K);
    }
    return w;
}

} // namespace cputest
