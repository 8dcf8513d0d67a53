// Building blocks of the integer tensor-core matmuls (matmul_mmq.hip, matmul_mmq_prefill.hip):
// the per-format staging geometry, cp.async / cluster / bulk-copy primitives, the tensor-core ops
// and the shared-memory loads of 2-byte-aligned blocks. NVIDIA only.
#pragma once
#include "compat.h"
#include "mmq_layout.h"
#include "cluster.h"

#if RF_NVIDIA

// Per format (kernels/mmq_layout.h): elements per K step, weight bytes of a full step per row,
// granules staged per row, staged row stride (Q5_K 192 to fit two stages of 32 columns in the
// decode kernels' 48 KB), (d, sum) granules per column (K-quants: all 8 sub-blocks' for the min
// term; Q6_K: d only).
template <int T> struct MmqFmt;
#define RF_MMQ_FMT(T, P) \
    template <> struct MmqFmt<T> { enum { STEP = P##_STEP, SB = P##_SB, G = P##_G, WS = P##_WS, XDG = P##_XDG }; };
RF_MMQ_FMT(T_Q4_K, RF_MMQ_Q4_K)
RF_MMQ_FMT(T_Q5_K, RF_MMQ_Q5_K)
RF_MMQ_FMT(T_Q6_K, RF_MMQ_Q6_K)
RF_MMQ_FMT(T_Q4_0, RF_MMQ_Q4_0)
RF_MMQ_FMT(T_Q5_0, RF_MMQ_Q5_0)
RF_MMQ_FMT(T_Q8_0, RF_MMQ_Q8_0)
#undef RF_MMQ_FMT

// ---- async copies (clusters: cluster.h) ------------------------------------------------------
RF_DEV void mmq_cp_w(u32 dst, const void *src) { // weights: L2 only
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
RF_DEV void mmq_cp_x(u32 dst, const void *src) { // activations: also L1 (the SM's other blocks read them)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
RF_DEV void mmq_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> RF_DEV void mmq_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

// Bulk (TMA) copies, sm_90: `n` bytes (multiple of 16, both ends 16-byte aligned) from global to
// this block's shared memory, completion counted on an mbarrier in bytes.
RF_DEV void mmq_bulk(u32 dst, const void *src, u32 n, u32 bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst), "l"(src), "r"(n),
                 "r"(bar)
                 : "memory");
#endif
}
RF_DEV void mmq_bar_init(u32 bar, u32 count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
// This thread's arrival on the stage's barrier, announcing `n` bytes of copies it issues next.
RF_DEV void mmq_bar_expect(u32 bar, u32 n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }" ::"r"(bar), "r"(n) : "memory");
#endif
}
// Waits for the barrier's phase `parity` to complete (traps after ~seconds: a lost copy must not
// hang the GPU).
RF_DEV void mmq_bar_wait(u32 bar, u32 parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    for (u32 i = 0;; ++i) {
        u32 done;
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
        if (done) return;
        if (i > (1u << 26)) __trap();
    }
#endif
}

// Bytes [p, p + n) (16-byte aligned, n a multiple of 16) into L2: one request per row range.
RF_DEV void mmq_prefetch_l2(const u8 *p, u32 n) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(n) : "memory");
#endif
}

// ---- tensor-core ops ----------------------------------------------------------------------------
// c = A (16x32 s8, a[0..3]) * B (32x8 s8, b0/b1), fresh accumulator.
RF_DEV void mmq_mma_s8(int (&c)[4], const u32 (&a)[4], u32 b0, u32 b1) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
        : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(0), "r"(0), "r"(0), "r"(0));
}
// c = A (16x16 s8, a[0..1]) * B (16x8 s8, b), fresh accumulator.
RF_DEV void mmq_mma_s8_k16(int (&c)[4], const u32 (&a)[2], u32 b) {
    asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
        : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(b), "r"(0), "r"(0), "r"(0), "r"(0));
}
// c += A (16x8 tf32) * B (8x8 tf32).
RF_DEV void mmq_mma_tf32(float (&c)[4], const u32 (&a)[4], u32 b0, u32 b1) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
RF_DEV u32 mmq_tf32(float v) {
    u32 r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return r;
}
// The legacy formats' int->float without an I2F or an add per output: the mma starts its s32
// accumulators at the bits of 1.5 * 2^23 (MMQ_MAGIC), so an output's bits read as a float are
// exactly MMQ_MAGIC_F + dot (|dot| < 2^22: Q8_0's largest is 32 * 127 * 127). Scaled by the
// weight's d in one FMA with the addend -MMQ_MAGIC_F * d (exact: d has an f16's 11-bit
// significand), that is round(dot * d), the same value as converting first.
#define MMQ_MAGIC 0x4B400000
#define MMQ_MAGIC_F 12582912.f
// c = A (16x32 s8, a[0..3]) * B (32x8 s8, b0/b1) + MMQ_MAGIC.
RF_DEV void mmq_mma_s8_magic(int (&c)[4], const u32 (&a)[4], u32 b0, u32 b1) {
    const int m = MMQ_MAGIC;
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
        : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(m));
}
// acc + dot * d * x for an output of mmq_mma_s8_magic, dm = -MMQ_MAGIC_F * d: two FMAs.
RF_DEV float mmq_scaled_add(float acc, int c, float d, float dm, float x) {
    return fmaf(fmaf(__int_as_float(c), d, dm), x, acc);
}
// |v| < 2^22 as float without the quarter-rate I2F: integer add + float subtract (the epilogue
// of kernels with no register to spare for the per-row dm above).
RF_DEV float mmq_i2f(int v) { return __int_as_float(MMQ_MAGIC + v) - MMQ_MAGIC_F; }

// 4 bytes at a 2-byte aligned offset `o` of shared bytes s (16-byte aligned base).
RF_DEV u32 mmq_lds4_a2(const u8 *s, int o) {
    const u32 *w = (const u32 *)(s + (o & ~3));
    return (o & 2) ? __funnelshift_r(w[0], w[1], 16) : w[0];
}
// 8 bytes at a 2-byte aligned offset `o` of shared bytes s (16-byte aligned base).
RF_DEV uint2 mmq_lds8_a2(const u8 *s, int o) {
    const u32 *w = (const u32 *)(s + (o & ~3));
    const int sh = 8 * (o & 2);
    const u32 a = w[0], b = w[1], c = w[sh ? 2 : 1]; // no word past the needed bytes
    uint2 r;
    r.x = __funnelshift_r(a, b, sh);
    r.y = __funnelshift_r(b, c, sh);
    return r;
}

#endif // RF_NVIDIA
