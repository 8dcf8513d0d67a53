// MATMUL for prefill with F16 weights on NVIDIA tensor cores (sm_80+): f16 weight rows times
// f16 activation rows (the host converts the f32 activations once per source, round to nearest,
// as rf_mm_mma_* rounds them per tile), f32 accumulation and output.
// Unlike rf_mm_mma_f16 (two register-staged stages, activations converted in every block),
// both operands are already in their final form in memory, so they go straight to shared memory
// with 16-byte cp.async through RF_H16_STAGES stages: the loads of three K steps are in flight
// while the tensor cores work on the fourth, and no thread waits on a global load.
// Block tile: 128 weight rows (N) x BM tokens (M = 128 or 64), K steps of 32; 8 warps, each a
// (128/WARPS_N) x (BM/WARPS_M) sub-tile of mma.sync m16n8k16 with ldmatrix fragments (the
// fragment code of rf_mm_mma_*). blockIdx.x walks the token tiles, so the blocks that share a
// weight tile run at the same time and read it from L2 instead of DRAM.
// KS > 1 (sm_90): a thread-block cluster of KS blocks shares one tile, each taking a consecutive
// range of its K steps (Llama-2-7B's 128 tiles of 4096 x 512 fill only half the H100's block
// slots otherwise); the partial sums meet through distributed shared memory and are added in
// rank order: deterministic, no global scratch, no zeroing (the mmq kernels' scheme).
// Host (ops.cpp): K % 32 == 0, weight and activation rows 16-byte aligned, activations dense f16
// in scratch; dynamic shared memory RF_H16_SMEM(BM).
//
// rf_mm_h16_id_64: MATMUL_ID prefill of F16 experts on the same tiles, columns grouped by
// expert (moe_group.hip, as rf_mmqp_id_*): grid x walks the group's tile list, a block takes its
// tile's expert weights and sorted f16 activation rows and stores each column at its offset.
#include "compat.h"
#include "matmul_h16_layout.h"
#include "moe_group.hip"

#if RF_NVIDIA

extern __shared__ __align__(16) u8 rf_h16_smem[];

template <int BM> struct h16_cfg {
    enum {
        WARPS_N = BM == 128 ? 2 : 4, WARPS_M = 8 / WARPS_N,
        WTN = RF_H16_BN / WARPS_N, WTM = BM / WARPS_M, // warp sub-tile: WTN weight rows x WTM tokens
        MI = WTN / 16, NJ = WTM / 8,                   // mma tiles per warp
        WG = RF_H16_BN * 4 / RF_H16_THREADS,           // 16-byte weight granules per thread and step
        XG = BM * 4 / RF_H16_THREADS                   // activation granules per thread and step
    };
};


// GROUPED (KS = 1): MATMUL_ID form; src[0] = the weights [K, N, E], src[1].data = the group
// scratch, aux[0] = bytes per sorted f16 row, aux[1] = tile entries, aux[2] = byte offset of the
// sorted rows.
template <int BM, int KS, bool GROUPED> RF_DEV void mm_h16_impl(const rf_kargs &a) {
    typedef h16_cfg<BM> C;
    typedef u16 WTile[RF_H16_BN][RF_H16_LD];
    typedef u16 XTile[BM][RF_H16_LD];
    WTile *Ws = (WTile *)rf_h16_smem;
    XTile *Xs = (XTile *)(rf_h16_smem + RF_H16_STAGES * sizeof(WTile));
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 K = w.ne[0], N = w.ne[1];
    i64 M = x.ne[1], m0 = (i64)(blockIdx.x / KS) * BM;
    const i64 n0 = (i64)blockIdx.y * RF_H16_BN;
    const u32 rank = KS > 1 ? cluster_rank() : 0;
    const u8 *wb, *xb;
    u8 *db;
    i64 xnb1 = x.nb[1];
    const MoeTile *tile = GROUPED ? (const MoeTile *)((const u8 *)x.data + 16) + blockIdx.x : nullptr;
    if (GROUPED) {
        static_assert(!GROUPED || KS == 1, "grouped tiles are not split over K");
        const MoeTile tl = *tile;
        if (tl.cols == 0) return; // past the used tiles (the whole block: before any barrier)
        xnb1 = a.aux[0];
        wb = (const u8 *)w.data + tl.expert * w.nb[2];
        xb = (const u8 *)x.data + a.aux[2] + (i64)tl.first * xnb1;
        db = (u8 *)d.data;
        M = tl.cols;
        m0 = 0;
    } else {
        const int z = blockIdx.z;
        const i64 i2 = z % x.ne[2], i3 = z / x.ne[2];
        wb = (const u8 *)w.data + (i2 / (x.ne[2] / w.ne[2])) * w.nb[2] + (i3 / (x.ne[3] / w.ne[3])) * w.nb[3];
        xb = (const u8 *)x.data + i2 * x.nb[2] + i3 * x.nb[3];
        db = (u8 *)d.data + i2 * d.nb[2] + i3 * d.nb[3];
    }

    const int tid = threadIdx.x, lane = tid % RF_WARP, wid = tid / RF_WARP;
    const int wn = (wid % C::WARPS_N) * C::WTN, wm = (wid / C::WARPS_N) * C::WTM;

    // This thread's granules: granule g = tid + 256 i is 16 bytes (8 halves) at part g % 4 of
    // tile row g / 4. Rows past N or M repeat the last one: their results are never stored.
    const u8 *wsrc[C::WG], *xsrc[C::XG];
    u32 wdst[C::WG], xdst[C::XG];
#pragma unroll
    for (int i = 0; i < C::WG; ++i) {
        const int g = tid + RF_H16_THREADS * i, r = g >> 2, p = g & 3;
        wsrc[i] = wb + (n0 + r < N ? n0 + r : N - 1) * w.nb[1] + 16 * p;
        wdst[i] = shared_addr(&Ws[0][r][8 * p]);
    }
#pragma unroll
    for (int i = 0; i < C::XG; ++i) {
        const int g = tid + RF_H16_THREADS * i, r = g >> 2, p = g & 3;
        xsrc[i] = xb + (m0 + r < M ? m0 + r : M - 1) * xnb1 + 16 * p;
        xdst[i] = shared_addr(&Xs[0][r][8 * p]);
    }
    auto load_stage = [&](int s, i64 kt) { // mmq_cp_w: L2 only, each tile is read once per block
        const i64 off = kt * RF_H16_BK * 2;
#pragma unroll
        for (int i = 0; i < C::WG; ++i) mmq_cp_w(wdst[i] + s * (u32)sizeof(WTile), wsrc[i] + off);
#pragma unroll
        for (int i = 0; i < C::XG; ++i) mmq_cp_w(xdst[i] + s * (u32)sizeof(XTile), xsrc[i] + off);
    };

    float acc[C::MI][C::NJ][4];
#pragma unroll
    for (int i = 0; i < C::MI; ++i)
#pragma unroll
        for (int j = 0; j < C::NJ; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

    const i64 KT = K / RF_H16_BK, k0 = KT * rank / KS, KN = KT * (rank + 1) / KS - k0; // this rank's steps
#pragma unroll
    for (int s = 0; s < RF_H16_STAGES - 1; ++s) {
        if (s < KN) load_stage(s, k0 + s);
        asm volatile("cp.async.commit_group;" ::: "memory"); // empty groups keep the count uniform
    }
    for (i64 kt = 0; kt < KN; ++kt) {
        asm volatile("cp.async.wait_group %0;" ::"n"(RF_H16_STAGES - 2) : "memory"); // step kt landed (own copies)
        __syncthreads(); // everyone's copies visible; step kt - 1's stage no longer read
        const i64 nk = kt + RF_H16_STAGES - 1;
        if (nk < KN) load_stage((int)(nk % RF_H16_STAGES), k0 + nk);
        asm volatile("cp.async.commit_group;" ::: "memory");
        const int buf = (int)(kt % RF_H16_STAGES);
#pragma unroll
        for (int kk = 0; kk < RF_H16_BK; kk += 16) {
            u32 af[C::MI][4], bfr[C::NJ][2];
#pragma unroll
            for (int i = 0; i < C::MI; ++i) ldsm_x4(af[i], &Ws[buf][wn + 16 * i + (lane & 15)][kk + (lane >> 4) * 8]);
#pragma unroll
            for (int j = 0; j < C::NJ / 2; ++j) {
                u32 r[4];
                ldsm_x4(r, &Xs[buf][wm + 16 * j + (lane & 7) + ((lane >> 4) << 3)][kk + ((lane >> 3) & 1) * 8]);
                bfr[2 * j][0] = r[0]; bfr[2 * j][1] = r[1];
                bfr[2 * j + 1][0] = r[2]; bfr[2 * j + 1][1] = r[3];
            }
#pragma unroll
            for (int i = 0; i < C::MI; ++i)
#pragma unroll
                for (int j = 0; j < C::NJ; ++j) mma_f16_16816(acc[i][j], af[i], bfr[j][0], bfr[j][1]);
        }
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory"); // no copy outlives the block

    // KS > 1: every thread's accumulators go to its block's shared memory as red[e][tid]; rank r
    // then sums entries e of its share (e * KS / ACC == r) over the cluster's blocks in rank order.
    enum { ACC = C::MI * C::NJ * 4 };
    float *red = (float *)rf_h16_smem;
    u32 red_at = 0;
    if (KS > 1) {
        __syncthreads(); // the last step's fragment reads are done
#pragma unroll
        for (int i = 0; i < C::MI; ++i)
#pragma unroll
            for (int j = 0; j < C::NJ; ++j)
#pragma unroll
                for (int r = 0; r < 4; ++r) red[((i * C::NJ + j) * 4 + r) * RF_H16_THREADS + tid] = acc[i][j][r];
        red_at = shared_addr(red + tid);
        cluster_sync();
    }
    const int g = lane >> 2, t4 = lane & 3;
    // GROUPED: per sorted column of this tile, its output offset (read here, not kept live).
    const i64 *dst_off = nullptr;
    if (GROUPED) dst_off = (const i64 *)((const u8 *)x.data + moe_group_dst_off_at(a.aux[1])) + tile->first;
#pragma unroll
    for (int i = 0; i < C::MI; ++i)
#pragma unroll
        for (int j = 0; j < C::NJ; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const int e = (i * C::NJ + j) * 4 + r;
                if (KS > 1 && (u32)(e * KS / ACC) != rank) continue;
                const i64 n = n0 + wn + 16 * i + g + 8 * (r >> 1), m = m0 + wm + 8 * j + 2 * t4 + (r & 1);
                float v = acc[i][j][r];
                if (KS > 1) {
                    v = 0.f;
#pragma unroll
                    for (int q = 0; q < KS; ++q) v += cluster_ld<float>(red_at + 4u * (u32)(e * RF_H16_THREADS), (u32)q);
                }
                if (n < N && m < M) ((float *)(db + (GROUPED ? dst_off[m] : m * d.nb[1])))[n] = v;
            }
    if (KS > 1) cluster_sync(); // no block leaves while the others read its shared memory
}

// BM = 128: 64 accumulators per thread, two blocks per SM (80 KB of shared memory each);
// BM = 64: three blocks per SM (60 KB each). rf_mm_h16_<BM>_k<KS>: KS blocks per cluster.
#define RF_MM_H16(BM, MINB)                                                                                          \
    RF_KERNEL __launch_bounds__(RF_H16_THREADS, MINB) void rf_mm_h16_##BM##_k1(rf_kargs a) {                         \
        rf_kernel_start();                                                                                         \
        mm_h16_impl<BM, 1, false>(a);                                                                                     \
    }                                                                                                              \
    RF_KERNEL __launch_bounds__(RF_H16_THREADS, MINB) RF_CLUSTER_DIMS(2) void rf_mm_h16_##BM##_k2(rf_kargs a) {      \
        rf_kernel_start();                                                                                         \
        mm_h16_impl<BM, 2, false>(a);                                                                                     \
    }                                                                                                              \
    RF_KERNEL __launch_bounds__(RF_H16_THREADS, MINB) RF_CLUSTER_DIMS(4) void rf_mm_h16_##BM##_k4(rf_kargs a) {      \
        rf_kernel_start();                                                                                         \
        mm_h16_impl<BM, 4, false>(a);                                                                                     \
    }
RF_MM_H16(128, 2)
RF_MM_H16(64, 3)
// Grouped MATMUL_ID tiles: 64 tokens (one expert's tokens rarely fill 128), no K split.
RF_KERNEL __launch_bounds__(RF_H16_THREADS, 3) void rf_mm_h16_id_64(rf_kargs a) {
    rf_kernel_start();
    mm_h16_impl<64, 1, true>(a);
}

#endif // RF_NVIDIA
