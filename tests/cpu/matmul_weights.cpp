#include "matmul_weights.h"

#include <cstring>

#include "rocmforge/types.h"

namespace cputest {

const std::vector<int> kMatmulWeightTypes = {
    RF_TYPE_F32,  RF_TYPE_F16,  RF_TYPE_BF16, RF_TYPE_Q4_0,  RF_TYPE_Q4_1,       RF_TYPE_Q5_0,
    RF_TYPE_Q5_1, RF_TYPE_Q8_0, RF_TYPE_Q2_K, RF_TYPE_Q3_K,  RF_TYPE_Q4_K,       RF_TYPE_Q5_K,
    RF_TYPE_Q6_K, RF_TYPE_MXFP4, RF_TYPE_MXFP6_E2M3, RF_TYPE_MXFP6_E3M2};

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
    deq->assign(size_t(K * N * ne2), 0.f);
    for (int64_t r = 0; r < N * ne2; ++r) {
        fill_normal(row.data(), K, 0.5f);
        uint8_t *dst = static_cast<uint8_t *>(w.t.data) + r * w.t.nb[1];
        if (type == RF_TYPE_F32) std::memcpy(dst, row.data(), size_t(K) * 4);
        else rf::quantize_row(type, row.data(), dst, K);
        rf::dequantize_row(type, dst, deq->data() + r * K, K);
    }
    return w;
}

} // namespace cputest
