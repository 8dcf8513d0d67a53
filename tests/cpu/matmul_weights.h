// Weights for the MATMUL and MATMUL_ID tests: every weight type the CPU matmul takes, the NMSE
// each is held to, and random weights with their dequantized copy for the float64 reference.
#pragma once
#include <cstdint>
#include <vector>

#include "cpu_test_util.h"

namespace cputest {

extern const std::vector<int> kMatmulWeightTypes;

// NMSE bound vs float64: activations are quantized to 8 bits per block for quantized weights
// (~3e-5 NMSE expected); float weights take f32 activations (MATMUL_ID: as id_activation).
double matmul_threshold(int type);

// An activation as MATMUL_ID of a `type` weight dots it (ggml's vec_dot_type of the float types
// for MUL_MAT_ID): rounded to f16 for F16 experts, unchanged for F32 and BF16. The float64
// references of MATMUL_ID use it; the quantized types' rounding is in their thresholds.
float id_activation(int type, float x);

// Weight [K, N, ne2] of `type` from normal floats; also returns the dequantized copy.
Tensor make_weight(int type, int64_t K, int64_t N, int64_t ne2, std::vector<float> *deq);

} // namespace cputest
