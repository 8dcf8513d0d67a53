// GEGLU (abi.h): dst = gelu(src0) * src1 with the tanh approximation of GELU (Gemma's FFN gate).
// It is one more binary op of elementwise.hip's binary_impl (4 elements per step on dense aligned
// rows, else by strides): the unity file includes elementwise.hip first.
#include "compat.h"

RF_DEV float gelu_tanh(float x) {
    const float kSqrt2OverPi = 0.7978845608028654f;
    return 0.5f * x * (1.f + tanhf(kSqrt2OverPi * x * (1.f + 0.044715f * x * x)));
}

constexpr int kBinaryGeglu = 3; // after elementwise.hip's add (0), mul (1), swiglu (2)
template <> RF_DEV float binary_op<kBinaryGeglu>(float u, float v) { return gelu_tanh(u) * v; }

RF_KERNEL void rf_geglu_f32(rf_kargs a) { rf_kernel_start(); binary_impl<kBinaryGeglu>(a); }
