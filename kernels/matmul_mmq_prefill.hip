// MATMUL of quantized weights with many activation columns (prompt prefill, batches of more than
// 64 columns) on the integer tensor cores: the per-format math of mmq_step.h (MmqStep) and the
// stage fill of matmul_mmq.hip (MmqCopies) on tiles large enough to be bound by the tensor cores
// rather than by the weight stream. NVIDIA packs only; all_kernels.hip includes matmul_mmq.hip
// before this.
//
// rf_mmqp_<type>_<C>: type q4_k, q5_k, q6_k, q4_0, q8_0; C = 64 or 128 activation columns.
//  - Block: 256 threads, 128 weight rows (RF_MMQP_ROWS) x C columns; warp w takes rows
//    32 (w % 4) .. + 32 (two 16-row mma tiles) x columns (C / 2) (w / 4) .. + C / 2, so each B
//    fragment feeds two mmas and each A fragment C / 16.
//  - Activations: the q8_1 columns of rf_quantize_q8_1 (the CPU backend's int8 activations).
//  - K steps through RF_MMQP_STAGES stages of dynamic shared memory (the host passes
//    RF_MMQP_STAGES x RF_MMQ_STAGE_BYTES; ~130..205 KB, one block per multiprocessor), filled
//    with cp.async; one barrier per step.
//
// rf_mmqp_<type>_64_k2: the 64-column tiles with K split over a cluster of two blocks (sm_90),
// for grids that fill less than a wave (a server step's ~100 columns, short prompts: a 4096-row
// matrix is 32 row tiles): each block takes half the K steps, and rank r adds both blocks'
// partial sums (rank order: deterministic) for half of the tile and stores them, as the decode
// kernels' split does (matmul_mmq.hip).
//
// rf_mmqp_id_<type>_<C>: the same tiles for MATMUL_ID prefill, columns grouped by expert
// (moe_group.hip): grid y walks the group's tile list (expert, first sorted column, columns);
// a block takes its expert's weights, reads its sorted q8_1 rows and writes each output
// column at the offset the group recorded. Entries past the used tiles exit at once, so the
// host launches an upper bound of tiles without reading the routing back.
#include "compat.h"
#include "mmq_layout.h"
#include "moe_group.hip"

#if RF_NVIDIA

extern __shared__ __align__(16) u8 rf_mmqp_smem[];

// GROUPED: MATMUL_ID form; src[0] = the weights [K, N, E], src[1].data = the group scratch,
// aux[1] = its tile entries, aux[2] = byte offset of its sorted q8_1 rows.
// MAGIC: the legacy formats' two-FMA epilogue (MmqStep::legacy), where the registers allow it.
// KS: blocks of a cluster splitting the K steps (1: none).
template <int T, int NT, bool GROUPED, bool MAGIC, int KS = 1> RF_DEV void mmqp_run(const rf_kargs &a) {
    typedef MmqFmt<T> F;
    enum {
        WR = 2, WROW = 4, ROWS = RF_MMQP_ROWS, C = 16 * NT, NSUB = F::STEP / 32, XS = F::STEP + 32, WB = ROWS * F::WS,
        XQ = C * XS, STAGE = RF_MMQ_STAGE_BYTES(F::STEP, F::WS, F::XDG, ROWS, C), P = RF_MMQP_STAGES
    };
    static_assert(WROW * 2 * 32 == RF_MMQP_THREADS && 16 * WR * WROW == ROWS, "warp layout");
    // The host sized the shared memory from the same layout; a mismatch must not run.
    u32 dyn;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
    if (dyn < (u32)(P * STAGE)) __trap();

    const rf_ktensor &w = a.src[0], &dst = a.dst;
    const i64 K = w.ne[0], N = w.ne[1];
    const int tid = threadIdx.x, lane = tid % RF_WARP, wid = tid / RF_WARP, g = lane >> 2, t = lane & 3;
    const i64 n0 = (i64)(blockIdx.x / KS) * ROWS;
    const u32 rank = KS > 1 ? cluster_rank() : 0;
    const int col = (wid / WROW) * 8 * NT; // the warp's first column in the stage
    // Every column tile is computed (columns past M hold the clamped last column and are not
    // stored): no run-time bound in the unrolled mma loops.
    const int ntv = NT;
    const u8 *wbase = (const u8 *)w.data;
    const i64 wnb = w.nb[1];
    const i8 *xq = (const i8 *)a.scratch;
    const i64 xs = a.aux[0];
    i64 M = a.src[1].ne[1], c0 = (i64)blockIdx.y * C;
    const MoeTile *tile = GROUPED ? (const MoeTile *)((const u8 *)a.src[1].data + 16) + blockIdx.y : nullptr;
    if (GROUPED) {
        const MoeTile tl = *tile;
        if (tl.cols == 0) return; // past the used tiles (the whole block: before any barrier)
        wbase += tl.expert * w.nb[2];
        xq = (const i8 *)a.src[1].data + a.aux[2] + (i64)tl.first * xs;
        M = tl.cols;
        c0 = 0;
    }
    const i64 nst = (K + F::STEP - 1) / F::STEP, s0 = nst * rank / KS, s1 = nst * (rank + 1) / KS;
    const u32 sbase = shared_addr(rf_mmqp_smem);

    int rr[2 * WR];     // stage rows: row tile i holds rr[2i] (its row g) and rr[2i + 1] (g + 8)
    // Their global rows (clamped), for the misalignment of 2-byte formats. GROUPED keeps only
    // the rows' low 4 address bits (the same misalignment, fewer registers: its per-expert
    // pointers are live through the K loop and the 64-column Q4_0 kernel spilled).
    const u8 *row[2 * WR];
#pragma unroll
    for (int r = 0; r < 2 * WR; ++r) {
        rr[r] = 32 * (wid % WROW) + 8 * r + g;
        const i64 n = n0 + rr[r] < N ? n0 + rr[r] : N - 1;
        row[r] = wbase + n * wnb;
    }
    float acc[WR][NT][4];
#pragma unroll
    for (int i = 0; i < WR; ++i)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][nt][e] = 0.f;

    const MmqCopies<T, ROWS, C, RF_MMQP_THREADS> copies(wbase, wnb, N, n0, xq, xs, M, c0, K);
#pragma unroll
    for (int i = 0; i < P - 1; ++i) {
        if (s0 + i < s1) copies.issue(sbase + i * STAGE, s0 + i, tid);
        mmq_commit();
    }
    for (i64 st = s0; st < s1; ++st) {
        const int p = (int)((st - s0) % P);
        mmq_wait<P - 2>(); // this thread's copies of step st have landed
        __syncthreads();   // everyone's have, and everyone is done with the stage refilled next
        if (st + P - 1 < s1)
            copies.issue(sbase + ((p + P - 1) % P) * STAGE, st + P - 1, tid);
        mmq_commit();
        const u8 *sw = rf_mmqp_smem + p * STAGE, *sx = sw + WB;
        const float *sd = (const float *)(sx + XQ);
        if (T == T_Q4_K || T == T_Q5_K) {
            MmqStep<T, WR, NT>::k4(sw, sx, sd, rr, col, g, t, ntv, acc);
        } else {
            int mis[2 * WR];
#pragma unroll
            for (int r = 0; r < 2 * WR; ++r)
                mis[r] = GROUPED ? (int)(((unsigned)(unsigned long long)row[r] + (unsigned)st * F::SB) & 15)
                                 : (int)((unsigned long long)(row[r] + st * F::SB) & 15);
            if (T == T_Q6_K) {
                MmqStep<T, WR, NT>::q6k(sw, sx, sd, rr, mis, col, g, t, ntv, acc);
            } else {
                const i64 e0 = st * F::STEP;
                const int nsub = (int)((K - e0) / 32 < NSUB ? (K - e0) / 32 : NSUB);
                // Full steps with a compile-time sub-block count (no run-time bound in the
                // unrolled loop); only a partial last step takes the other copy.
                typedef MmqStep<T, WR, NT> St;
                if (nsub == NSUB) St::template legacy<MAGIC>(sw, sx, sd, rr, mis, col, g, t, ntv, NSUB, acc);
                else St::template legacy<MAGIC>(sw, sx, sd, rr, mis, col, g, t, ntv, nsub, acc);
            }
        }
    }

    if (KS > 1) {
        // Partial sums in each block's stages: red[k][tid] (k = the accumulator's index); rank r
        // adds entries [r NE / KS, (r + 1) NE / KS) of every thread over the cluster, in rank order.
        enum { NE = WR * NT * 4 };
        mmq_wait<0>();
        __syncthreads(); // the last step's reads of the stages are done
        float *red = (float *)rf_mmqp_smem;
#pragma unroll
        for (int i = 0; i < WR; ++i)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e) red[((i * NT + nt) * 4 + e) * RF_MMQP_THREADS + tid] = acc[i][nt][e];
        cluster_sync();
        const int k0 = (int)rank * NE / KS, k1 = ((int)rank + 1) * NE / KS;
#pragma unroll
        for (int i = 0; i < WR; ++i)
#pragma unroll
            for (int nt = 0; nt < NT; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int k = (i * NT + nt) * 4 + e;
                    if (k < k0 || k >= k1) continue;
                    const u32 at = sbase + 4u * (u32)(k * RF_MMQP_THREADS + tid);
                    float v = 0.f;
#pragma unroll
                    for (int q = 0; q < KS; ++q) v += cluster_ld<float>(at, (u32)q);
                    const i64 n = n0 + rr[2 * i + (e >> 1)], m = c0 + col + 8 * nt + 2 * t + (e & 1);
                    if (n < N && m < M) ((float *)((u8 *)dst.data + m * dst.nb[1]))[n] = v;
                }
        cluster_sync(); // no block leaves while the others read its shared memory
        return;
    }
    // GROUPED: per sorted column of this tile, its output offset (the tile is read again here
    // rather than kept in registers through the K loop).
    const i64 *dst_off = nullptr;
    if (GROUPED) dst_off = (const i64 *)((const u8 *)a.src[1].data + moe_group_dst_off_at(a.aux[1])) + tile->first;
#pragma unroll
    for (int i = 0; i < WR; ++i)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
            if (nt >= ntv) break;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const i64 n = n0 + rr[2 * i + (e >> 1)], m = c0 + col + 8 * nt + 2 * t + (e & 1);
                if (n < N && m < M)
                    ((float *)((u8 *)dst.data + (GROUPED ? dst_off[m] : m * dst.nb[1])))[n] = acc[i][nt][e];
            }
        }
}

// Blocks per multiprocessor the registers must allow: 2 for the 64-column Q4_0 / Q8_0 kernels
// (their float epilogue per 32-element block makes them latency-bound at 8 warps per SM; two
// blocks of ~74-98 KB of stages fit the shared memory), else 1. Within the 128 registers of two
// blocks the two-FMA epilogue spills: those kernels keep the four-instruction one (the two-FMA
// one at one block per SM was slower for them as well).
#define RF_MMQP_MINB(T, C) ((C) == 64 && ((T) == T_Q4_0 || (T) == T_Q5_0 || (T) == T_Q8_0) ? 2 : 1)
#define RF_MMQP_MAGIC(T, C) (RF_MMQP_MINB(T, C) == 1)
#define RF_MMQP(t, T, C)                                                                                       \
    RF_KERNEL __launch_bounds__(RF_MMQP_THREADS, RF_MMQP_MINB(T, C)) void rf_mmqp_##t##_##C(rf_kargs a) {     \
        rf_kernel_start();                                                                                  \
        mmqp_run<T, C / 16, false, RF_MMQP_MAGIC(T, C)>(a);                                                                      \
    }
#define RF_MMQP_ID(t, T, C)                                                                                    \
    RF_KERNEL __launch_bounds__(RF_MMQP_THREADS, RF_MMQP_MINB(T, C)) void rf_mmqp_id_##t##_##C(rf_kargs a) {  \
        rf_kernel_start();                                                                                  \
        mmqp_run<T, C / 16, true, RF_MMQP_MAGIC(T, C)>(a);                                                                       \
    }
#define RF_MMQP_K2(t, T)                                                                                       \
    RF_KERNEL __launch_bounds__(RF_MMQP_THREADS, RF_MMQP_MINB(T, 64)) RF_CLUSTER_DIMS(2) void rf_mmqp_##t##_64_k2(rf_kargs a) { \
        rf_kernel_start();                                                                                  \
        mmqp_run<T, 4, false, RF_MMQP_MAGIC(T, 64), 2>(a);                                                  \
    }
#define RF_MMQP_TYPE(t, T) RF_MMQP(t, T, 64) RF_MMQP(t, T, 128) RF_MMQP_ID(t, T, 64) RF_MMQP_K2(t, T)
RF_MMQP_TYPE(q4_k, T_Q4_K)
RF_MMQP_TYPE(q5_k, T_Q5_K)
RF_MMQP_TYPE(q6_k, T_Q6_K)
RF_MMQP_TYPE(q4_0, T_Q4_0)
RF_MMQP_TYPE(q8_0, T_Q8_0)
// Q5_0 (the rows of Q4_K_M files that are not a multiple of 256): the plain prefill tiles only.
RF_MMQP(q5_0, T_Q5_0, 64) RF_MMQP(q5_0, T_Q5_0, 128) RF_MMQP_K2(q5_0, T_Q5_0)
// The grouped 128-column tiles only where they do not spill on sm_90 (Q5_K spilled 4 bytes,
// Q6_K 40; matmul_mmq.cpp's mmqp_id_cols keeps those at 64).
RF_MMQP_ID(q4_k, T_Q4_K, 128)
RF_MMQP_ID(q4_0, T_Q4_0, 128)
RF_MMQP_ID(q8_0, T_Q8_0, 128)

#endif // RF_NVIDIA
