/* The arithmetic of the example fusion, compiled twice: by nvcc into the kernel (mul_add.cu) and
 * by the C compiler into the pack's host_run (mul_add_pack.c), so the host check runs the
 * kernel's own index and rounding code. Element i of
 *     t = MUL(a, b)    d = ADD(t, c)       (f32; b and c broadcast over a's shape)
 * with the argument block bound by the claim: src[0] = a, src[1] = b, src[2] = c,
 * src[3] = t (the MUL's result, still written: later nodes may read it), dst = d,
 * aux[0] = element count. */
#ifndef EXAMPLE_MUL_ADD_H
#define EXAMPLE_MUL_ADD_H

#include "rocmforge/kernel_args.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define EX_FN static __device__ __forceinline__
#else
#define EX_FN static inline
#endif

/* Byte offset in `t` of element i of `shape` (row-major in ne order); a dimension of t of size 1
 * broadcasts, a smaller one repeats (ROCmForge's ADD/MUL broadcast rule). */
EX_FN long long ex_offset(const rf_ktensor *t, const rf_ktensor *shape, long long i) {
    long long off = 0;
    int d;
    for (d = 0; d < 4; ++d) {
        const long long idx = i % shape->ne[d];
        i /= shape->ne[d];
        off += (idx % t->ne[d]) * t->nb[d];
    }
    return off;
}

EX_FN float ex_load(const rf_ktensor *t, long long off) { return *(const float *)((const char *)t->data + off); }
EX_FN void ex_store(const rf_ktensor *t, long long off, float v) { *(float *)((char *)t->data + off) = v; }

EX_FN void ex_mul_add_element(const rf_kargs *a, long long i) {
    const rf_ktensor *shape = &a->dst;
    const float x = ex_load(&a->src[0], ex_offset(&a->src[0], shape, i));
    const float y = ex_load(&a->src[1], ex_offset(&a->src[1], shape, i));
    const float z = ex_load(&a->src[2], ex_offset(&a->src[2], shape, i));
    /* Rounded after each step, as the unfused MUL and ADD round (no fused multiply-add). */
#if defined(__CUDACC__) || defined(__HIPCC__)
    const float p = __fmul_rn(x, y);
    const float r = __fadd_rn(p, z);
#else
    volatile float p = x * y;
    const float r = p + z;
#endif
    ex_store(&a->src[3], ex_offset(&a->src[3], shape, i), p);
    ex_store(&a->dst, ex_offset(&a->dst, shape, i), r);
}

#endif
