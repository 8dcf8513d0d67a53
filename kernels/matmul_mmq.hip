// MATMUL of quantized weights with a few dozen activation columns (batched decode of 4..64
// sequences, short prompts) on the integer tensor cores: mma.sync m16n8k32 s8 x s8 -> s32.
// Here: the decode kernels, their stage fill (MmqCopies, shared with the prefill kernels) and
// launch; mmq_ops.h has the copy and tensor-core primitives, mmq_step.h one K step per format.
// NVIDIA packs only (everything below is inside #if RF_NVIDIA): the AMD packs do not get these
// kernels, and the host (backends/hip/matmul_mmq.cpp) never picks them there.
//
// rf_mmq_<type>_<C>_k<S>: type q4_k, q5_k, q6_k, q4_0, q8_0; C = 8, 16 or 32 activation
// columns per block; S = 1, 2 or 4 blocks (a thread-block cluster, sm_90) splitting K.
//  - Activations: the q8_1 columns of rf_quantize_q8_1 (quantize_act.hip), column c at
//    scratch + c * aux[0]: K int8 quants, then (d, d * sum) per 32 elements (d shared by the 8
//    sub-blocks of a 256 block for the K-quants).
//  - Block: 4 warps, 64 weight rows (16 per warp) x C columns. K advances in steps (one 256
//    block; 4 blocks of 32 for Q4_0/Q8_0) through a ring of 2..4 shared-memory stages filled
//    with cp.async: each row's raw bytes of the step (16-byte granules from the aligned address
//    at or below its start, coalesced) and the step's activations (per column its quants, 32
//    bytes of padding, then its (d, sum) pairs). One barrier per step. Each weight byte is read
//    from memory once for all C columns.
//  - Parameters: a.mmq (rf_kp_mmq). Variants the backend no longer launches (both slower in their
//    A/Bs, docs/notes/mmq.md; it passes no_row_prefetch = 1, prefetch_window = bulk_copy = 0):
//    bulk_copy = 1 stages with bulk (TMA) copies completing on mbarriers; no_row_prefetch = 0 adds
//    bulk L2 prefetches of each row several steps ahead (prefetch_window steps per window).
//  - A warp's A operand (16 rows x 32 k) is unpacked in registers from the staged bytes; B
//    (32 k x 8 columns) is one 8-byte shared load per lane. The k order inside a 32-element
//    sub-block is permuted, the same for A and B: lane t of a quad holds elements 8t..8t+7 (k
//    slots 4t..4t+3 and 16+4t..16+4t+3), so e.g. 8 Q4_K quant bytes give the lane's A of two
//    sub-blocks (low and high nibbles).
//  - Per format (the math of mvq_blocks.h): Q4_K/Q5_K: sum over sub-blocks of scale * intdot
//    in integers per 256 block, times d_w * d_x, minus dmin * sum_s m_s * (d_x * sum_s x), that
//    min term as a 16x8x8 tf32 mma (m exact, the q8_1 sums split in two tf32 halves). Q6_K:
//    16-element scale groups, one m16n8k16 mma per group (natural k order).
//    Q4_0 (quants - 8 unpacked as signed bytes) and Q8_0: a float scale product per sub-block.
//  - S > 1: the S blocks of a cluster take consecutive ranges of the K steps of the same tile;
//    each leaves its sums in shared memory and rank r adds those of warps r, r + S, .. over the
//    cluster (distributed shared memory) in rank order: deterministic, no global scratch.
//  - Grid (row blocks * S, column chunks of C); batch 1; rows >= N and columns >= M are clamped
//    for the loads and not stored. Q4_K/Q5_K rows 16-byte aligned, the others 2-byte.
#include "compat.h"
#include "mmq_step.h"

#if RF_NVIDIA

#define RF_MMQ_ROWS 64
#define RF_MMQ_THREADS 128
#define RF_MMQ_SMEM 49152 // static shared memory limit of a block

// K steps [s0, s1) of cluster rank `rank` (S blocks split a tile's steps in consecutive ranges).
template <int T> RF_DEV i64 mmq_steps(i64 K) { return (K + MmqFmt<T>::STEP - 1) / MmqFmt<T>::STEP; }

// Weight rows n0.. n0+63 of the tile, steps [sa, sb), into L2 as one contiguous range per row
// (threads 0..63; rounded inwards to 16 bytes). The cp.async stream reads each row 144-210
// bytes at a time, scattered over the rows, which the DRAM serves poorly; these reads are
// several steps long. mmq.no_row_prefetch = 1: off (what the backend passes).
template <int T> RF_DEV void mmq_prefetch_rows(const rf_kargs &a, i64 n0, i64 sa, i64 sb) {
    typedef MmqFmt<T> F;
    const rf_ktensor &w = a.src[0];
    const int r = threadIdx.x;
    if (a.mmq.no_row_prefetch || r >= RF_MMQ_ROWS || sa >= sb || n0 + r >= w.ne[1]) return;
    const i64 K = w.ne[0], NSUB = F::STEP / 32;
    const i64 row_bytes = K / F::STEP * F::SB + (K % F::STEP) / 32 * (F::SB / NSUB);
    const i64 eb = sb * F::SB < row_bytes ? sb * F::SB : row_bytes;
    const unsigned long long row = (unsigned long long)w.data + (unsigned long long)((n0 + r) * w.nb[1]);
    const unsigned long long b = (row + sa * F::SB) & ~15ull, e = (row + eb) & ~15ull;
    if (e > b) mmq_prefetch_l2((const u8 *)b, (u32)(e - b));
}
// Steps per prefetch window: mmq.prefetch_window, else 4 of 256 elements, 8 of the 128-element Q4_0 steps.
template <int T> RF_DEV int mmq_window(const rf_kargs &a) {
    return a.mmq.prefetch_window > 0 ? a.mmq.prefetch_window : (MmqFmt<T>::SB >= 128 ? 4 : 8);
}
// The first window of the block's steps, issued before rf_kernel_start (weights are never written).
template <int T> RF_DEV void mmq_prefetch_first(const rf_kargs &a, int KS) {
    const u32 rank = KS > 1 ? cluster_rank() : 0;
    const i64 nst = mmq_steps<T>(a.src[0].ne[0]), s0 = nst * rank / KS, s1 = nst * (rank + 1) / KS;
    const i64 e = s0 + mmq_window<T>(a) < s1 ? s0 + mmq_window<T>(a) : s1;
    mmq_prefetch_rows<T>(a, (i64)(blockIdx.x / KS) * RF_MMQ_ROWS, s0, e);
}
// (A plain name for kernels/pack_tool.py, which lets only prefetch_* calls precede rf_kernel_start.)
RF_DEV void prefetch_mmq(const rf_kargs &a, int T, int KS) {
    switch (T) {
    case T_Q4_K: mmq_prefetch_first<T_Q4_K>(a, KS); break;
    case T_Q5_K: mmq_prefetch_first<T_Q5_K>(a, KS); break;
    case T_Q6_K: mmq_prefetch_first<T_Q6_K>(a, KS); break;
    case T_Q4_0: mmq_prefetch_first<T_Q4_0>(a, KS); break;
    default: mmq_prefetch_first<T_Q8_0>(a, KS); break;
    }
}

// Stage fill with 16-byte cp.async: a tile of ROWS weight rows from n0 and C q8_1 activation
// columns from c0, set up once per block; issue(sp, st) fills the stage at shared address sp
// with K step st:
//  - each row's raw bytes of the step (granules from the 16-byte aligned address at or below its
//    start) at sp + r * WS; rows >= N are clamped (loaded, never stored); a partial last step
//    copies only its valid sub-blocks;
//  - per column its quants of the step (padded to STEP + 32 bytes), then after all columns their
//    (d, sum) pairs; columns >= M are clamped.
// A thread's granules are i = tid + THREADS * j (coalesced: a warp's copies are consecutive
// granules). Per step a copy's address is the step's base plus a 32 x 32 -> 64-bit product of
// its clamped row (column) offset and the stride (the host keeps strides under 4 GiB): the
// 64-bit row arithmetic per granule and step (clamp, 64 x 64 multiply, division) was about a
// fifth of the 16-column decode kernel's instructions.
template <int T, int ROWS, int C, int THREADS> struct MmqCopies {
    typedef MmqFmt<T> F;
    enum {
        NSUB = F::STEP / 32, XS = F::STEP + 32, WB = ROWS * F::WS, XQ = C * XS, GW = ROWS * F::G, GX = C * NSUB * 2,
        GD = C * F::XDG, ALIGNED = T == T_Q4_K || T == T_Q5_K // rows 16-byte aligned, K a multiple of the step
    };
    const u8 *w; // the tile's first weight row
    const i8 *x; // its first q8_1 column
    i64 K;
    u32 wnb, xs, wlast, xlast; // row and column strides; last valid row / column from the first

    RF_DEV MmqCopies(const u8 *wbase, i64 wnb_, i64 N, i64 n0, const i8 *xq, i64 xs_, i64 M, i64 c0, i64 K_)
        : w(wbase + n0 * wnb_), x(xq + c0 * xs_), K(K_), wnb((u32)wnb_), xs((u32)xs_), wlast((u32)(N - 1 - n0)),
          xlast((u32)(M - 1 - c0)) {}

    RF_DEV void issue(u32 sp, i64 st, int tid) const {
        const i64 e0 = st * F::STEP;
        const int nsub = ALIGNED ? NSUB : (int)((K - e0) / 32 < NSUB ? (K - e0) / 32 : NSUB);
        const int bytes = nsub == NSUB ? F::SB : F::SB / NSUB * nsub; // weight bytes of the valid sub-blocks
        const unsigned long long ws = (unsigned long long)(w + st * F::SB);
#pragma unroll
        for (int j = 0; j < (GW + THREADS - 1) / THREADS; ++j) {
            const u32 i = (u32)tid + THREADS * j;
            if (GW % THREADS && i >= GW) break;
            const u32 r = i / F::G, gr = i - r * F::G;
            const unsigned long long row = ws + (unsigned long long)(r < wlast ? r : wlast) * wnb;
            const u32 d = sp + r * F::WS + 16 * gr;
            if (ALIGNED) {
                mmq_cp_w(d, (const void *)(row + 16 * gr));
            } else {
                const unsigned long long al = row & ~15ull;
                if (16 * gr < (u32)(row - al) + (u32)bytes) mmq_cp_w(d, (const void *)(al + 16 * gr));
            }
        }
        const unsigned long long xq = (unsigned long long)(x + e0), xd = (unsigned long long)(x + K + 8 * (e0 / 32));
#pragma unroll
        for (int j = 0; j < (GX + THREADS - 1) / THREADS; ++j) {
            const u32 i = (u32)tid + THREADS * j;
            if (GX % THREADS && i >= GX) break;
            const u32 c = i / (NSUB * 2), g = i % (NSUB * 2);
            if (!ALIGNED && (int)(g >> 1) >= nsub) continue;
            mmq_cp_x(sp + WB + c * XS + 16 * g, (const void *)(xq + (unsigned long long)(c < xlast ? c : xlast) * xs + 16 * g));
        }
#pragma unroll
        for (int j = 0; j < (GD + THREADS - 1) / THREADS; ++j) {
            const u32 i = (u32)tid + THREADS * j;
            if (GD % THREADS && i >= GD) break;
            const u32 c = i / F::XDG, g = i % F::XDG;
            if (!ALIGNED && (int)(2 * g) >= nsub) continue;
            mmq_cp_x(sp + WB + XQ + c * F::XDG * 16 + 16 * g, (const void *)(xd + (unsigned long long)(c < xlast ? c : xlast) * xs + 16 * g));
        }
    }
};

// The weight matrix and output of the launch's segment blockIdx.z (grid z = the segments): one
// launch may cover up to three matrices of the same type and K read with the same activation
// columns (a layer's K / V / Q or gate / up projections): segment 0 is src[0] -> dst, 1 is src[2]
// -> aux[1], 2 is src[3] -> aux[2], the outputs' column strides (bytes) in dst.nb[1],
// mmq.out_col_bytes[0], mmq.out_col_bytes[1]. The grid covers the tallest; blocks past a segment's rows leave.
struct MmqSegment {
    const u8 *w;
    i64 N, wnb;
    u8 *out;
    i64 onb;
};
// Segment z's (1, 2) output column stride, mmq.out_col_bytes[z - 1], read as the raw slot
// iparams[4 + z] (the same member, kernel_params.h): indexing the named array by the unsigned
// z - 1 compiles to other address arithmetic in every rf_mmq_* kernel.
RF_DEV i64 mmq_out_col_bytes(const rf_kargs &a, unsigned z) { return a.iparams[4 + z]; }
RF_DEV MmqSegment mmq_segment(const rf_kargs &a) {
    const unsigned z = blockIdx.z;
    if (z == 0) return {(const u8 *)a.src[0].data, a.src[0].ne[1], a.src[0].nb[1], (u8 *)a.dst.data, a.dst.nb[1]};
    const rf_ktensor &w = z == 1 ? a.src[2] : a.src[3];
    return {(const u8 *)w.data, w.ne[1], w.nb[1], (u8 *)a.aux[z], mmq_out_col_bytes(a, z)};
}

// Output (n, m) of the segment; mmq.append_segment = s + 1: segment s's outputs also go to an
// f16/f32 cache pool as SET_ROWS would append them (the V append): column m into pool row slots[m]
// (aux[3] = the pool, src[4].data = the i32 slots, mmq.pool_row_bytes its row stride in bytes,
// mmq.pool_type its type).
RF_DEV void mmq_store(const rf_kargs &a, const MmqSegment &seg, i64 n, i64 m, float v) {
    ((float *)(seg.out + m * seg.onb))[n] = v;
    if (a.mmq.append_segment == (int)blockIdx.z + 1)
        store_pool_elem((u8 *)a.aux[3] + (i64)((const int *)a.src[4].data)[m] * a.mmq.pool_row_bytes, a.mmq.pool_type, n, v);
}

template <int T, int NT, int KS> RF_DEV void mmq_run(const rf_kargs &a) {
    typedef MmqFmt<T> F;
    enum {
        C = 8 * NT, NSUB = F::STEP / 32, XF = F::XDG * 4, XS = F::STEP + 32,
        WB = RF_MMQ_ROWS * F::WS, XQ = C * XS, STAGE = RF_MMQ_STAGE_BYTES(F::STEP, F::WS, F::XDG, RF_MMQ_ROWS, C),
        P = (RF_MMQ_SMEM - 64) / STAGE >= 4 ? 4 : ((RF_MMQ_SMEM - 64) / STAGE >= 3 ? 3 : 2)
    };
    __shared__ __align__(16) u8 sm[P * STAGE];
    __shared__ __align__(8) unsigned long long mbar[P]; // bulk-copy path: one per stage
    const MmqSegment seg = mmq_segment(a);
    const i64 K = a.src[0].ne[0], N = seg.N, M = a.src[1].ne[1];
    const int tid = threadIdx.x, lane = tid % RF_WARP, wid = tid / RF_WARP, g = lane >> 2, t = lane & 3;
    const i64 n0 = (i64)(blockIdx.x / KS) * RF_MMQ_ROWS, c0 = (i64)blockIdx.y * C;
    if (n0 >= N) return; // a shorter segment's tile (the whole cluster leaves: same n0)
    const u32 rank = KS > 1 ? cluster_rank() : 0;
    const int ntv = (int)((M - c0 + 7) / 8 < NT ? (M - c0 + 7) / 8 : NT);
    const u8 *wbase = seg.w;
    const i64 wnb = seg.wnb;
    const i8 *xq = (const i8 *)a.scratch;
    const i64 xs = a.aux[0];
    // This block's K steps: [s0, s1).
    const i64 nst = mmq_steps<T>(K);
    const i64 s0 = nst * rank / KS, s1 = nst * (rank + 1) / KS;
    const u32 sbase = shared_addr(sm);
    const int win = mmq_window<T>(a);

    const MmqCopies<T, RF_MMQ_ROWS, C, RF_MMQ_THREADS> copies(wbase, wnb, N, n0, xq, xs, M, c0, K);
    auto issue = [&](i64 st, int p) { copies.issue(sbase + p * STAGE, st, tid); };

    // Bulk-copy path (mmq.bulk_copy = 1, sm_90): per step, thread r < 64 copies row r's bytes, the
    // next C threads one column's quants each, the next C its (d, sum) pairs; every thread
    // arrives on the stage's mbarrier with the byte count of its copy.
    const bool tma = a.mmq.bulk_copy != 0;
    const u32 bbase = shared_addr(mbar);
    if (tma && tid == 0)
        for (int p = 0; p < P; ++p) mmq_bar_init(bbase + 8 * p, RF_MMQ_THREADS);
    __syncthreads();
    auto issue_tma = [&](i64 st, int p) {
        const u32 sp = sbase + p * STAGE, bar = bbase + 8 * p;
        const i64 e0 = st * F::STEP;
        const int nsub = (int)((K - e0) / 32 < NSUB ? (K - e0) / 32 : NSUB);
        u32 n = 0, dst = 0;
        const u8 *src = nullptr;
        if (tid < RF_MMQ_ROWS) {
            const i64 r = n0 + tid < N ? n0 + tid : N - 1;
            const u8 *row = wbase + r * wnb + st * F::SB;
            src = (const u8 *)((unsigned long long)row & ~15ull);
            const int bytes = nsub == NSUB ? F::SB : F::SB / NSUB * nsub;
            n = (u32)(((int)(row - src) + bytes + 15) & ~15);
            dst = sp + tid * F::WS;
        } else if (tid < RF_MMQ_ROWS + 2 * C) {
            const int c = (tid - RF_MMQ_ROWS) % C;
            const i64 col = c0 + c < M ? c0 + c : M - 1;
            if (tid < RF_MMQ_ROWS + C) { // quants
                src = (const u8 *)(xq + col * xs + e0);
                n = (u32)(32 * nsub);
                dst = sp + WB + c * XS;
            } else { // (d, sum) pairs, rounded up to 16 bytes (within the column's padded tail)
                src = (const u8 *)(xq + col * xs + K + 8 * (e0 / 32));
                n = (u32)((8 * nsub + 15) & ~15);
                if (n > F::XDG * 16) n = F::XDG * 16;
                dst = sp + WB + XQ + c * F::XDG * 16;
            }
        }
        mmq_bar_expect(bar, n);
        if (n) mmq_bulk(dst, src, n, bar);
    };

    float acc[1][NT][4];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[0][nt][i] = 0.f;

    const int r0 = 16 * wid + g, r1 = r0 + 8, rr[2] = {r0, r1};
    const i64 na = n0 + r0 < N ? n0 + r0 : N - 1, nb = n0 + r1 < N ? n0 + r1 : N - 1;
    const u8 *rowa = wbase + na * wnb, *rowb = wbase + nb * wnb;
#pragma unroll
    for (int i = 0; i < P - 1; ++i) {
        if (s0 + i < s1) {
            if (tma) issue_tma(s0 + i, i);
            else issue(s0 + i, i);
        }
        mmq_commit();
    }
    for (i64 st = s0; st < s1; ++st) {
        const int p = (int)((st - s0) % P);
        if (tma) mmq_bar_wait(bbase + 8 * p, (u32)(((st - s0) / P) & 1)); // the stage's bytes have landed
        else mmq_wait<P - 2>(); // this step's copies (this thread's) have landed
        __syncthreads();   // everyone's have, and everyone is done with the stage refilled next
        if (!a.mmq.no_row_prefetch && (st - s0) % win == 0) { // the next window into L2 (off: no division per step)
            const i64 pa = st + win, pb = pa + win;
            mmq_prefetch_rows<T>(a, n0, pa, pb < s1 ? pb : s1);
        }
        if (st + P - 1 < s1) {
            if (tma) issue_tma(st + P - 1, (p + P - 1) % P);
            else issue(st + P - 1, (p + P - 1) % P);
        }
        mmq_commit();
        const u8 *sw = sm + p * STAGE, *sx = sw + WB;
        const float *sd = (const float *)(sx + XQ);
        if (T == T_Q4_K || T == T_Q5_K) {
            MmqStep<T, 1, NT>::k4(sw, sx, sd, rr, 0, g, t, ntv, acc);
        } else {
            const int mis[2] = {(int)((unsigned long long)(rowa + st * F::SB) & 15), (int)((unsigned long long)(rowb + st * F::SB) & 15)};
            if (T == T_Q6_K) {
                MmqStep<T, 1, NT>::q6k(sw, sx, sd, rr, mis, 0, g, t, ntv, acc);
            } else {
                const i64 e0 = st * F::STEP;
                const int nsub = (int)((K - e0) / 32 < NSUB ? (K - e0) / 32 : NSUB);
                MmqStep<T, 1, NT>::legacy(sw, sx, sd, rr, mis, 0, g, t, ntv, nsub, acc);
            }
        }
    }

    if (KS > 1) {
        // Partial sums of the cluster's blocks: red[warp][nt * 4 + i][lane] in each block's stages.
        __syncthreads(); // the last step's reads of the stages are done
        float *red = (float *)sm;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
            for (int i = 0; i < 4; ++i) red[(wid * NT * 4 + nt * 4 + i) * RF_WARP + lane] = acc[0][nt][i];
        cluster_sync();
        // Rank r adds up warps r, r + KS, .. of all ranks (in rank order) and stores them.
        for (int e = tid; e < (4 / KS) * NT * 4 * RF_WARP; e += RF_MMQ_THREADS) {
            const int slice = e / (NT * 4 * RF_WARP), i = (e / RF_WARP) % (NT * 4), ln = e % RF_WARP;
            const int wv = (int)rank + KS * slice, nt = i >> 2;
            const u32 at = sbase + 4u * (u32)((wv * NT * 4 + i) * RF_WARP + ln);
            float v = 0.f;
#pragma unroll
            for (int q = 0; q < KS; ++q) v += cluster_ld<float>(at, (u32)q);
            const i64 n = n0 + 16 * wv + (ln >> 2) + 8 * ((i & 3) >> 1), m = c0 + 8 * nt + 2 * (ln & 3) + (i & 1);
            if (nt < ntv && n < N && m < M) mmq_store(a, seg, n, m, v);
        }
        cluster_sync(); // no block leaves while the others read its shared memory
    } else {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
            if (nt >= ntv) break;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const i64 n = n0 + r0 + 8 * (i >> 1), m = c0 + 8 * nt + 2 * t + (i & 1);
                if (n < N && m < M) mmq_store(a, seg, n, m, acc[0][nt][i]);
            }
        }
    }
}

// Blocks per multiprocessor the register allocation must allow (shared memory allows 4-5): 3 for
// 16 columns (with 4, i.e. 128 registers, Q5_K spills and the others ran 16-sequence decode
// slower).
#define RF_MMQ_MINB(C) ((C) == 16 ? 3 : 4)
#define RF_MMQ1(t, T, C)                                                                              \
    RF_KERNEL __launch_bounds__(RF_MMQ_THREADS, RF_MMQ_MINB(C)) void rf_mmq_##t##_##C##_k1(rf_kargs a) {                \
        prefetch_mmq(a, T, 1);                                                                         \
        rf_kernel_start();                                                                             \
        mmq_run<T, C / 8, 1>(a);                                                                       \
    }
#define RF_MMQS(t, T, C, S)                                                                           \
    RF_KERNEL __launch_bounds__(RF_MMQ_THREADS, RF_MMQ_MINB(C)) RF_CLUSTER_DIMS(S) void rf_mmq_##t##_##C##_k##S(rf_kargs a) { \
        prefetch_mmq(a, T, S);                                                                         \
        rf_kernel_start();                                                                             \
        mmq_run<T, C / 8, S>(a);                                                                       \
    }
#define RF_MMQ_C(t, T, C) RF_MMQ1(t, T, C) RF_MMQS(t, T, C, 2) RF_MMQS(t, T, C, 4)
#define RF_MMQ_TYPE(t, T) RF_MMQ_C(t, T, 8) RF_MMQ_C(t, T, 16) RF_MMQ_C(t, T, 32)
RF_MMQ_TYPE(q4_k, T_Q4_K)
RF_MMQ_TYPE(q5_k, T_Q5_K)
RF_MMQ_TYPE(q6_k, T_Q6_K)
RF_MMQ_TYPE(q4_0, T_Q4_0)
RF_MMQ_TYPE(q8_0, T_Q8_0)

#endif // RF_NVIDIA
