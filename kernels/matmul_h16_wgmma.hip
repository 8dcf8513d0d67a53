// MATMUL for prefill with F16 weights on Hopper's warpgroup tensor-core instructions (wgmma,
// sm_90a): the F16 rows of rf_mm_h16_* (matmul_h16.hip) on the instruction that keeps the
// tensor cores busy from shared memory without ldmatrix round trips through registers.
// rf_mm_h16 (mma.sync m16n8k16) peaked at ~170 TFLOP/s on the H100: every warp loads each
// fragment into registers before its mma, so the issue slots, not the tensor cores, bound it.
//
// rf_mm_h16w_128_k<KS>: a block of two warpgroups (256 threads) computes 128 tokens x 128 weight
// rows; warpgroup g the tokens 64g..64g+63 with wgmma.m64n128k16 (A = the f16 activation rows,
// B = the weight rows, both K-major straight from shared memory, f32 accumulators: 64 per thread).
// K advances 64 halves per step through RF_H16W_STAGES shared-memory stages filled by 16-byte
// cp.async from every thread, in the 128-byte swizzled layout wgmma reads (16-byte chunk c of
// tile row r at chunk c ^ (r % 8): conflict-free for both the copies and the tensor cores).
// One barrier per step; the wgmma of step k runs while step k + 1 is issued and the copies of
// steps k + 2 .. k + STAGES - 2 are in flight.
// KS > 1: a cluster of KS blocks splits the K steps of one tile and adds the partial sums over
// distributed shared memory in rank order (deterministic; the scheme of rf_mm_h16 and rf_mmq).
// Same contract as rf_mm_h16_* (backends/hip/matmul_h16.cpp): dense f16 activation rows in
// scratch, 16-byte aligned rows, f32 output; here also K % 64 == 0. Dynamic shared memory
// RF_H16W_SMEM. Rows past N or M repeat the last one for the copies and are not stored.
// Built only for sm_90a (the sm_90 pack and JIT ask for it); elsewhere the kernels are empty and
// the module lacks the marker rf_feature_wgmma, so the host never picks them.
#include "compat.h"
#include "matmul_h16_layout.h"

#if RF_NVIDIA

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Looked up by the host (backends/hip/matmul_h16.cpp) before it chooses rf_mm_h16w_*.
extern "C" __device__ int rf_feature_wgmma = 1;

// Shared-memory matrix descriptor of a K-major tile with 128-byte swizzle: rows of 64 halves,
// 8-row groups 1024 bytes apart (stride byte offset), tile 1024-byte aligned (base offset 0).
// The leading byte offset is unused for this layout (1 by convention).
RF_DEV unsigned long long wgmma_desc(u32 saddr) {
    return (unsigned long long)((saddr & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
}
RF_DEV void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
RF_DEV void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> RF_DEV void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }
// d (64 x 128, f32, the warpgroup's accumulator fragment) += A (64 x 16) * B (16 x 128).
RF_DEV void wgmma_m64n128k16(float (&d)[64], unsigned long long da, unsigned long long db) {
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1, 0, 0;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(da), "l"(db));
}
// Keeps the compiler from moving reads or writes of the accumulators across a wgmma wait.
RF_DEV void wgmma_hold(float (&d)[64]) {
#pragma unroll
    for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
RF_DEV void h16w_cp(u32 dst, const void *src) { // 16 bytes, L2 only
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}

extern __shared__ __align__(16) u8 rf_h16w_smem[];

template <int KS> RF_DEV void mm_h16w_impl(const rf_kargs &a) {
    enum { BM = RF_H16W_BM, BN = RF_H16W_BN, S = RF_H16W_STAGES, TILE_X = BM * 128, TILE_W = BN * 128, STAGE = TILE_X + TILE_W };
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 K = w.ne[0], N = w.ne[1], M = x.ne[1];
    const i64 m0 = (i64)(blockIdx.x / KS) * BM, n0 = (i64)blockIdx.y * BN;
    const u32 rank = KS > 1 ? mmq_cluster_rank() : 0;
    const int z = blockIdx.z;
    const i64 i2 = z % x.ne[2], i3 = z / x.ne[2];
    const u8 *wb = (const u8 *)w.data + (i2 / (x.ne[2] / w.ne[2])) * w.nb[2] + (i3 / (x.ne[3] / w.ne[3])) * w.nb[3];
    const u8 *xb = (const u8 *)x.data + i2 * x.nb[2] + i3 * x.nb[3];
    u8 *db = (u8 *)d.data + i2 * d.nb[2] + i3 * d.nb[3];

    const int tid = threadIdx.x;
    // The stages from the first 1024-byte boundary (the swizzle pattern repeats every 1024 bytes).
    const u32 base = (smem_addr(rf_h16w_smem) + 1023u) & ~1023u;
    // Copies: thread t moves 16-byte chunk c = t % 8 of tile rows t / 8 + 32 i (i < 4) of both
    // tiles; every such row has the same row % 8, so one swizzled offset serves all eight copies.
    const int cr = tid >> 3, cc = tid & 7;
    const u32 cdst = (u32)(cr * 128 + ((cc ^ (cr & 7)) << 4));
    const u8 *xsrc[4], *wsrc[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const i64 m = m0 + cr + 32 * i, n = n0 + cr + 32 * i;
        xsrc[i] = xb + (m < M ? m : M - 1) * x.nb[1] + 16 * cc;
        wsrc[i] = wb + (n < N ? n : N - 1) * w.nb[1] + 16 * cc;
    }
    auto load_stage = [&](int s, i64 kt) {
        const u32 st = base + (u32)s * STAGE + cdst;
        const i64 off = kt * 128; // 64 halves per step
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            h16w_cp(st + 4096u * i, xsrc[i] + off);
            h16w_cp(st + TILE_X + 4096u * i, wsrc[i] + off);
        }
    };

    float acc[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = 0.f;
    const int g = tid >> 7; // warpgroup: tokens 64g .. 64g + 63 of the tile

    const i64 KT = K / 64, k0 = KT * rank / KS, KN = KT * (rank + 1) / KS - k0;
#pragma unroll
    for (int s = 0; s < S - 2; ++s) {
        if (s < KN) load_stage(s, k0 + s);
        asm volatile("cp.async.commit_group;" ::: "memory"); // empty groups keep the count uniform
    }
    for (i64 kt = 0; kt < KN; ++kt) {
        asm volatile("cp.async.wait_group %0;" ::"n"(S - 3) : "memory"); // this thread's copies of step kt
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");      // visible to the tensor cores
        // Everyone's copies of step kt landed, and (wait_group 1 below) every warpgroup is done
        // with step kt - 2, whose stage the next copies reuse.
        __syncthreads();
        const i64 nk = kt + S - 2;
        if (nk < KN) load_stage((int)(nk % S), k0 + nk);
        asm volatile("cp.async.commit_group;" ::: "memory");
        const u32 st = base + (u32)(kt % S) * STAGE;
        const unsigned long long da = wgmma_desc(st + (u32)g * 64 * 128), dw = wgmma_desc(st + TILE_X);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) wgmma_m64n128k16(acc, da + 2 * kk, dw + 2 * kk); // +32 bytes: the next 16 halves
        wgmma_commit();
        wgmma_wait<1>();
    }
    wgmma_wait<0>();
    wgmma_hold(acc);
    asm volatile("cp.async.wait_group 0;" ::: "memory"); // no copy outlives the block

    // Accumulator i of thread t (warp w = (t % 128) / 32 of its warpgroup, lane l): token row
    // 16w + l / 4 + 8 ((i / 2) % 2), weight column 8 (i / 4) + 2 (l % 4) + i % 2.
    const int lane = tid & 31, wr = ((tid >> 5) & 3) * 16 + (lane >> 2), wc = 2 * (lane & 3);
    float *red = nullptr;
    u32 red_at = 0;
    if (KS > 1) { // every thread's sums to its block's shared memory as red[i][tid]
        __syncthreads();
        red = (float *)(rf_h16w_smem + (base - smem_addr(rf_h16w_smem)));
#pragma unroll
        for (int i = 0; i < 64; ++i) red[i * RF_H16W_THREADS + tid] = acc[i];
        red_at = smem_addr(red + tid);
        mmq_cluster_sync();
    }
    const bool pairs = (d.nb[1] & 7) == 0 && ((unsigned long long)db & 7) == 0;
#pragma unroll
    for (int i = 0; i < 64; i += 2) {
        if (KS > 1 && (u32)(i * KS / 64) != rank) continue; // rank r stores its share of the tile
        const i64 m = m0 + 64 * g + wr + 8 * ((i >> 1) & 1), n = n0 + 8 * (i >> 2) + wc;
        float v0 = acc[i], v1 = acc[i + 1];
        if (KS > 1) {
            v0 = v1 = 0.f;
#pragma unroll
            for (int q = 0; q < KS; ++q) {
                v0 += mmq_ld_cluster(red_at + 4u * (u32)(i * RF_H16W_THREADS), (u32)q);
                v1 += mmq_ld_cluster(red_at + 4u * (u32)((i + 1) * RF_H16W_THREADS), (u32)q);
            }
        }
        if (m >= M || n >= N) continue;
        float *y = (float *)(db + m * d.nb[1]) + n;
        if (pairs && n + 1 < N) *(float2 *)y = make_float2(v0, v1);
        else {
            y[0] = v0;
            if (n + 1 < N) y[1] = v1;
        }
    }
    if (KS > 1) mmq_cluster_sync(); // no block leaves while the others read its shared memory
}
#define RF_H16W_BODY(KS) mm_h16w_impl<KS>(a)
#else
#define RF_H16W_BODY(KS) (void)a // not sm_90a: never launched (no rf_feature_wgmma in the module)
#endif

RF_KERNEL __launch_bounds__(RF_H16W_THREADS, 1) void rf_mm_h16w_128_k1(rf_kargs a) {
    rf_kernel_start();
    RF_H16W_BODY(1);
}
RF_KERNEL __launch_bounds__(RF_H16W_THREADS, 1) RF_MMQ_CLUSTER(2) void rf_mm_h16w_128_k2(rf_kargs a) {
    rf_kernel_start();
    RF_H16W_BODY(2);
}

#endif // RF_NVIDIA
