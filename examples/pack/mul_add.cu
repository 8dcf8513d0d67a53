// The example pack's one kernel: MUL then ADD of its product in one launch (mul_add.h).
#include "rocmforge/pack_kernel.h"

#include "mul_add.h"

extern "C" __global__ void example_mul_add_f32(rf_kargs a) {
    rf_pack_kernel_start(); // the pack sets RF_PACK_KERNELS_WAIT
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < a.aux[0]) ex_mul_add_element(&a, i);
}
