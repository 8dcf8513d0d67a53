// GEGLU (abi.h): dst = gelu(src0) * src1 with the tanh approximation of GELU (Gemma's FFN gate).
// It is one more binary op of elementwise.hip's binary_impl (4 elements per step on dense aligned
// rows, else by strides): the unity file includes elementwise.hip first.
#include "compat.h"

// Every step rounded explicitly: the fused feed-forward kernels (matmul_vec.hip's GeGLU forms)
// give the same bits as rf_geglu_f32 only if the compiler contracts no step differently.
RF_DEV float gelu_tanh(float x) {
    const float kSqrt2OverPi = 0.7978845608028654f;
    const float inner = __fmul_rn(__fmul_rn(kSqrt2OverPi, x), __fadd_rn(1.f, __fmul_rn(0.044715f, __fmul_rn(x, x))));
    return __fmul_rn(__fmul_rn(0.5f, x), __fadd_rn(1.f, tanhf(inner)));
}

constexpr int kBinaryGeglu = 3; // after elementwise.hip's add (0), mul (1), swiglu (2)
template <> RF_DEV float binary_op<kBinaryGeglu>(float u, float v) { return gelu_tanh(u) * v; }

RF_KERNEL void rf_geglu_f32(rf_kargs a) { rf_kernel_start(); binary_impl<kBinaryGeglu>(a); }

// GELU (abi.h; BERT's FFN): dst = gelu(src0), the same tanh approximation, by strides.
RF_KERNEL void rf_gelu_f32(rf_kargs a) {
    rf_kernel_start();
    const rf_ktensor &d = a.dst, &x = a.src[0];
    const i64 n = d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3];
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
        i64 i0, i1, i2, i3;
        unravel(d, i, i0, i1, i2, i3);
        *(float *)elem_ptr(d, i0, i1, i2, i3) = gelu_tanh(*(const float *)elem_ptr(x, i0, i1, i2, i3));
    }
}
