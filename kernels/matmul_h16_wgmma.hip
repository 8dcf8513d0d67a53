// MATMUL for prefill with F16 weights on Hopper's warpgroup tensor-core instructions (wgmma,
// sm_90a): the F16 rows of rf_mm_h16_* (matmul_h16.hip) on the instruction that keeps the
// tensor cores busy from shared memory without ldmatrix round trips through registers.
// rf_mm_h16 (mma.sync m16n8k16) stays well below the tensor cores' peak: every warp loads each
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
// rf_mm_q16w_<type>_t<R>_k<KS> (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, MXFP4, IQ4_NL, IQ4_XS and the grid i-quants
// IQ2_XXS, IQ3_XXS, IQ3_S, IQ2_XS, IQ2_S, IQ1_S, IQ1_M, the ternary TQ1_0, TQ2_0): the same tiles with the weight
// operand dequantized to f16 in shared memory: each K step's raw blocks are staged with cp.async
// (16-byte granules from the aligned address at or below the bytes the step needs: the two
// 32-element blocks of a legacy format, the 256-element block of a K-quant, of which Q4_K / Q5_K
// and IQ4_XS copy only the header and the step's quarter), then every thread decodes one 32-element piece
// (q16w_piece: the CPU backend's dequantization, rounded to f16) and stores it in the swizzled
// layout; the tensor cores read that tile while the next step is decoded. Activations:
// f16 rows, as for F16 weights. R = 2: 256 tokens a block, two accumulators a warpgroup, so each
// decoded weight tile feeds twice the tensor-core work.
// rf_mm_q16w_id_<type> (the formats above without integer tensor-core tiles, MXFP4 first: gpt-oss's
// experts): the MATMUL_ID prefill on these tiles, columns grouped by expert (moe_group.hip).
// Built only for sm_90a (the sm_90 pack and JIT ask for it); elsewhere the kernels are empty and
// the module lacks the marker rf_feature_wgmma, so the host never picks them.
#include "compat.h"
#include "matmul_h16_layout.h"
#include "moe_group.hip"
#include "quant_decode.h"

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

// One K step of 64 halves: d += A (64 x 64 at descriptor da) * B (64 x 128 at dw), issued as four
// k16 instructions (+32 bytes, 2 in the encoded address, per 16 halves), then a wait until the
// step before has finished (its stages may be refilled after the next barrier).
RF_DEV void wgmma_k64(float (&d)[64], unsigned long long da, unsigned long long dw) {
    wgmma_hold(d); // nothing of the accumulators' handling moves into the issue sequence
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) wgmma_m64n128k16(d, da + 2 * kk, dw + 2 * kk);
    wgmma_commit();
    wgmma_wait<1>();
}

extern __shared__ __align__(16) u8 rf_h16w_smem[];

template <int KS>
RF_DEV void h16w_store(float (&acc)[64], u8 *db, i64 ldd, const i64 *dst_off, i64 mg, i64 n0, i64 M, i64 N, u32 rank, u32 base);

template <int KS> RF_DEV void mm_h16w_impl(const rf_kargs &a) {
    enum { BM = RF_H16W_BM, BN = RF_H16W_BN, S = RF_H16W_STAGES, TILE_X = BM * 128, TILE_W = BN * 128, STAGE = TILE_X + TILE_W };
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 K = w.ne[0], N = w.ne[1], M = x.ne[1];
    const i64 m0 = (i64)(blockIdx.x / KS) * BM, n0 = (i64)blockIdx.y * BN;
    const u32 rank = KS > 1 ? cluster_rank() : 0;
    const int z = blockIdx.z;
    const i64 i2 = z % x.ne[2], i3 = z / x.ne[2];
    const u8 *wb = (const u8 *)w.data + (i2 / (x.ne[2] / w.ne[2])) * w.nb[2] + (i3 / (x.ne[3] / w.ne[3])) * w.nb[3];
    const u8 *xb = (const u8 *)x.data + i2 * x.nb[2] + i3 * x.nb[3];
    u8 *db = (u8 *)d.data + i2 * d.nb[2] + i3 * d.nb[3];

    const int tid = threadIdx.x;
    // The stages from the first 1024-byte boundary (the swizzle pattern repeats every 1024 bytes).
    const u32 base = (shared_addr(rf_h16w_smem) + 1023u) & ~1023u;
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
            mmq_cp_w(st + 4096u * i, xsrc[i] + off);
            mmq_cp_w(st + TILE_X + 4096u * i, wsrc[i] + off);
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
        wgmma_k64(acc, da, dw);
    }
    wgmma_wait<0>();
    wgmma_hold(acc);
    asm volatile("cp.async.wait_group 0;" ::: "memory"); // no copy outlives the block
    h16w_store<KS>(acc, db, d.nb[1], nullptr, m0 + 64 * g, n0, M, N, rank, base);
}

// The block's results: accumulator i of thread t (warp w = (t % 128) / 32 of its warpgroup, lane l)
// is token mg + 16w + l / 4 + 8 ((i / 2) % 2) (mg: the warpgroup's first token), weight row
// n0 + 8 (i / 4) + 2 (l % 4) + i % 2, stored as f32 at db + token * ldd (dst_off: at db +
// dst_off[token], the grouped MATMUL_ID columns). KS > 1: the partial sums of the cluster's
// blocks meet in shared memory (from `base`) and rank r stores its share.
template <int KS>
RF_DEV void h16w_store(float (&acc)[64], u8 *db, i64 ldd, const i64 *dst_off, i64 mg, i64 n0, i64 M, i64 N, u32 rank, u32 base) {
    const int tid = threadIdx.x, lane = tid & 31, wr = ((tid >> 5) & 3) * 16 + (lane >> 2), wc = 2 * (lane & 3);
    u32 red_at = 0;
    if (KS > 1) { // every thread's sums to its block's shared memory as red[i][tid]
        __syncthreads();
        float *red = (float *)(rf_h16w_smem + (base - shared_addr(rf_h16w_smem)));
#pragma unroll
        for (int i = 0; i < 64; ++i) red[i * RF_H16W_THREADS + tid] = acc[i];
        red_at = shared_addr(red + tid);
        cluster_sync();
    }
    const bool pairs = !dst_off && (ldd & 7) == 0 && ((unsigned long long)db & 7) == 0;
#pragma unroll
    for (int i = 0; i < 64; i += 2) {
        if (KS > 1 && (u32)(i * KS / 64) != rank) continue; // rank r stores its share of the tile
        const i64 m = mg + wr + 8 * ((i >> 1) & 1), n = n0 + 8 * (i >> 2) + wc;
        float v0 = acc[i], v1 = acc[i + 1];
        if (KS > 1) {
            v0 = v1 = 0.f;
#pragma unroll
            for (int q = 0; q < KS; ++q) {
                v0 += cluster_ld<float>(red_at + 4u * (u32)(i * RF_H16W_THREADS), (u32)q);
                v1 += cluster_ld<float>(red_at + 4u * (u32)((i + 1) * RF_H16W_THREADS), (u32)q);
            }
        }
        if (m >= M || n >= N) continue;
        float *y = (float *)(db + (dst_off ? dst_off[m] : m * ldd)) + n;
        if (pairs && n + 1 < N) *(float2 *)y = make_float2(v0, v1);
        else {
            y[0] = v0;
            if (n + 1 < N) y[1] = v1;
        }
    }
    if (KS > 1) cluster_sync(); // no block leaves while the others read its shared memory
}

// ---- quantized weights, dequantized to f16 in shared memory -------------------------------------
// Per format: the raw bytes a 64-element K step needs, staged per row from the 16-byte aligned
// address at or below `start` (mis = start % 16 bytes before it): G granule slots a row, slot i
// filled from granule src(i, j, mis) of the row's step (-1: not needed); q16w_piece decodes thread
// half h's 32 elements of them.
// Legacy (32-element blocks): the step's two blocks from start = row + 2 st * bytes, chunk h.
// K-quants: the block of the step from start = row + (st / 4) * bytes, quarter j = st % 4, chunk
// 2j + h (sub-block), packed (RF_Q16W_G_*): Q4_K / Q5_K rows are 16-byte aligned (mis = 0): the
// header, (Q5_K: qh,) then the quarter's 32 quant bytes; Q6_K: granules 4n.. of the half n = j / 2's
// low bits, 8 + 2n.. of its high bits, 12 and 13 (scales, d).
template <int T> struct Q16wFmt {
    enum { BYTES = qtraits<T>::bytes, LEGACY = qtraits<T>::bs == 32 };
    // RF_Q16W_GRANULES assumes 2-byte aligned blocks; MXFP4's 17-byte blocks start at any byte.
    enum {
        G = T == T_Q4_K   ? RF_Q16W_G_Q4_K
            : T == T_Q5_K ? RF_Q16W_G_Q5_K
            : T == T_Q6_K ? RF_Q16W_G_Q6_K
                          : RF_Q16W_GRANULES((LEGACY ? 2 * BYTES : BYTES) + (BYTES & 1)),
        WS = 16 * G
    };
    RF_DEV static i64 start_off(i64 st) { return LEGACY ? 2 * st * BYTES : (st >> 2) * BYTES; }
    RF_DEV static int src(int i, int j, int mis) {
        if (T == T_Q4_K) return i == 0 ? 0 : i + 2 * j;
        if (T == T_Q5_K) return i < 3 ? i : i + 2 * j;
        if (T == T_Q6_K) {
            const int n = j >> 1;
            return i < 5 ? 4 * n + i : i < 8 ? 8 + 2 * n + (i - 5) : i < 10 ? 12 + (i - 8) : -1;
        }
        if (T == T_IQ4_XS) { // the 8-byte header and the quarter's 32 quant bytes (rows 8-byte aligned)
            const int q0 = mis + 8 + 32 * j;
            return 16 * i < mis + 8 || (16 * i < q0 + 32 && 16 * i + 16 > q0) ? i : -1;
        }
        return 16 * i < mis + (LEGACY ? 2 * BYTES : BYTES) ? i : -1;
    }
};

// ---- one thread's 32 weights of a K step, decoded from the staged bytes into 16 f16 pairs ---------
// Legacy formats in f16 arithmetic that rounds once, as the f32 route would: the quants become
// exact halves (1024 + biased quant, a bit pattern), the bias is subtracted exactly, and the one
// multiply by the block's f16 scale rounds. K-quants in f32 (their scale * quant - min needs it),
// rounded to f16 at the end; the quant to float through the 2^23 bit pattern (an exact add)
// instead of the quarter-rate integer conversion.
RF_DEV u32 h2_sub(u32 a, u32 b) { u32 r; asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
RF_DEV u32 h2_mul(u32 a, u32 b) { u32 r; asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
// Bytes 0, 1 (lo) or 2, 3 (hi) of x (each < 1024) as the f16 pair (1024 + byte).
RF_DEV u32 h2_lo(u32 x) { return __byte_perm(x, 0x64u, 0x4140); }
RF_DEV u32 h2_hi(u32 x) { return __byte_perm(x, 0x64u, 0x4342); }
// Byte i of x as a float (exact).
RF_DEV float byte_f(u32 x, int i) { return __int_as_float((int)__byte_perm(x, 0x4B000000u, 0x7440 | i)) - 8388608.f; }
// N little-endian words from a 2-byte aligned shared-memory address (one word past them is read).
template <int N> RF_DEV void lds_words(const u8 *p, u32 (&w)[N]) {
    const u32 *a = (const u32 *)((unsigned long long)p & ~3ull);
    const int sh = 8 * (int)((unsigned long long)p & 3);
    u32 prev = a[0];
#pragma unroll
    for (int i = 0; i < N; ++i) {
        const u32 nx = a[i + 1];
        w[i] = __funnelshift_r(prev, nx, sh);
        prev = nx;
    }
}
// blk: the staged block (legacy: the thread's block; K-quants: the step's block), s: the
// K-quant sub-block (0..7). Out: elements 2i, 2i + 1 of the piece in o[i].
template <int T> RF_DEV void q16w_piece(const u8 *blk, int s, u32 (&o)[16]) {
    if constexpr (T == T_Q8_0 || T == T_Q4_0) {
        const u32 d = *(const u16 *)blk, dd = d | (d << 16);
        if constexpr (T == T_Q8_0) {
            u32 w[8];
            lds_words<8>(blk + 2, w);
#pragma unroll
            for (int i = 0; i < 8; ++i) { // quant + 128 as 1024 + (quant ^ 0x80); minus 1152
                const u32 x = w[i] ^ 0x80808080u;
                o[2 * i] = h2_mul(h2_sub(h2_lo(x), 0x64806480u), dd);
                o[2 * i + 1] = h2_mul(h2_sub(h2_hi(x), 0x64806480u), dd);
            }
        } else {
            u32 w[4];
            lds_words<4>(blk + 2, w);
#pragma unroll
            for (int i = 0; i < 4; ++i) { // nibble - 8: 1024 + nibble minus 1032
                const u32 lo = w[i] & 0x0F0F0F0Fu, hi = (w[i] >> 4) & 0x0F0F0F0Fu;
                o[2 * i] = h2_mul(h2_sub(h2_lo(lo), 0x64086408u), dd);
                o[2 * i + 1] = h2_mul(h2_sub(h2_hi(lo), 0x64086408u), dd);
                o[8 + 2 * i] = h2_mul(h2_sub(h2_lo(hi), 0x64086408u), dd);
                o[8 + 2 * i + 1] = h2_mul(h2_sub(h2_hi(hi), 0x64086408u), dd);
            }
        }
    } else if constexpr (T == T_Q4_K || T == T_Q5_K) {
        const uint4 hd = *(const uint4 *)blk; // d, dmin, the 12 scale bytes (ggml get_scale_min_k4)
        const int b = 8 * (s & 3);
        const u32 sc = s < 4 ? (hd.y >> b) & 63 : ((hd.w >> b) & 0xF) | (((hd.y >> b) >> 6 & 3) << 4);
        const u32 mn = s < 4 ? (hd.z >> b) & 63 : ((hd.w >> b) >> 4 & 0xF) | (((hd.z >> b) >> 6 & 3) << 4);
        const float dl = h2f((u16)hd.x) * (float)sc, ml = h2f((u16)(hd.x >> 16)) * (float)mn;
        const u8 *qs = blk + (T == T_Q4_K ? 16 : 48); // the step's quarter (packed)
        const uint4 q0 = *(const uint4 *)qs, q1 = *(const uint4 *)(qs + 16);
        const u32 qw[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};
        u32 hw[8] = {};
        if constexpr (T == T_Q5_K) {
            const uint4 h0 = *(const uint4 *)(blk + 16), h1 = *(const uint4 *)(blk + 32);
            const u32 t[8] = {h0.x, h0.y, h0.z, h0.w, h1.x, h1.y, h1.z, h1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i) hw[i] = ((t[i] >> s) & 0x01010101u) << 4;
        }
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const u32 v = ((qw[i] >> (4 * (s & 1))) & 0x0F0F0F0Fu) | hw[i];
            o[2 * i] = pack2_rn(dl * byte_f(v, 0) - ml, dl * byte_f(v, 1) - ml);
            o[2 * i + 1] = pack2_rn(dl * byte_f(v, 2) - ml, dl * byte_f(v, 3) - ml);
        }
    } else if constexpr (T == T_IQ4_NL) { // as Q8_0: the levels + 128 as 1024 + byte, minus 1152, times d
        const u32 d = *(const u16 *)blk, dd = d | (d << 16);
        u32 w[4];
        lds_words<4>(blk + 2, w);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            u32 lo, hi;
            iq4nl_levels8(w[i], lo, hi);
            lo ^= 0x80808080u;
            hi ^= 0x80808080u;
            o[2 * i] = h2_mul(h2_sub(h2_lo(lo), 0x64806480u), dd);
            o[2 * i + 1] = h2_mul(h2_sub(h2_hi(lo), 0x64806480u), dd);
            o[8 + 2 * i] = h2_mul(h2_sub(h2_lo(hi), 0x64806480u), dd);
            o[8 + 2 * i + 1] = h2_mul(h2_sub(h2_hi(hi), 0x64806480u), dd);
        }
    } else if constexpr (T == T_MXFP4) { // f32 as IQ4_XS: the doubled E2M1 levels times 2^(e-128), rounded once
        u32 w[4];
        lds_words<4>(blk + 1, w);
        const float dl = e8m0_half(blk[0]);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            u32 lo, hi;
            mxfp4_levels8(w[i], lo, hi);
            lo ^= 0x80808080u; // level + 128: byte_f's unsigned bytes
            hi ^= 0x80808080u;
            o[2 * i] = pack2_rn(dl * (byte_f(lo, 0) - 128.f), dl * (byte_f(lo, 1) - 128.f));
            o[2 * i + 1] = pack2_rn(dl * (byte_f(lo, 2) - 128.f), dl * (byte_f(lo, 3) - 128.f));
            o[8 + 2 * i] = pack2_rn(dl * (byte_f(hi, 0) - 128.f), dl * (byte_f(hi, 1) - 128.f));
            o[8 + 2 * i + 1] = pack2_rn(dl * (byte_f(hi, 2) - 128.f), dl * (byte_f(hi, 3) - 128.f));
        }
    } else if constexpr (T == T_IQ4_XS) { // f32 as the K-quants: d (6-bit scale - 32) level, rounded once
        u32 w[4];
        lds_words<4>(blk + 8 + 16 * s, w);
        const u32 ls = ((blk[4 + s / 2] >> (4 * (s & 1))) & 0xF) | (((*(const u16 *)(blk + 2) >> (2 * s)) & 3) << 4);
        const float dl = h2f(*(const u16 *)blk) * (float)((int)ls - 32);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            u32 lo, hi;
            iq4nl_levels8(w[i], lo, hi);
            lo ^= 0x80808080u; // level + 128: byte_f's unsigned bytes
            hi ^= 0x80808080u;
            o[2 * i] = pack2_rn(dl * (byte_f(lo, 0) - 128.f), dl * (byte_f(lo, 1) - 128.f));
            o[2 * i + 1] = pack2_rn(dl * (byte_f(lo, 2) - 128.f), dl * (byte_f(lo, 3) - 128.f));
            o[8 + 2 * i] = pack2_rn(dl * (byte_f(hi, 0) - 128.f), dl * (byte_f(hi, 1) - 128.f));
            o[8 + 2 * i + 1] = pack2_rn(dl * (byte_f(hi, 2) - 128.f), dl * (byte_f(hi, 3) - 128.f));
        }
    } else if constexpr (qtraits<T>::bs == 256 && T != T_Q6_K) {
        // The grid i-quants and ternary formats: iq_decode32 (the CPU backend's dequantization in
        // f32, grids read from the global tables through L1: a K step's 32 elements a thread,
        // amortised over the tile's 128 tokens), rounded to f16 once.
        float y[32];
        iq_decode32<T>(blk, s, y);
#pragma unroll
        for (int i = 0; i < 16; ++i) o[i] = pack2_rn(y[2 * i], y[2 * i + 1]);
    } else { // Q6_K
        const int n = s >> 2, k = s & 3;
        u32 ql[8], qh[8];
        // Packed (Q16wFmt): the half's ql from slot 0, its qh from slot 5 (byte 80), scales and d from slot 8.
        lds_words<8>(blk + 32 * (k & 1), ql);
        lds_words<8>(blk + 80, qh);
        const float d = h2f(*(const u16 *)(blk + 144));
        const u32 scw = *(const u16 *)(blk + 128 + 8 * n + 2 * k); // the scales of elements 0..15, 16..31
        const float d0 = d * (float)(i8)(scw & 0xFF), d1 = d * (float)(i8)(scw >> 8);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const u32 v = ((ql[i] >> (4 * (k >> 1))) & 0x0F0F0F0Fu) | (((qh[i] >> (2 * k)) & 0x03030303u) << 4);
            const float dq = i < 4 ? d0 : d1;
            o[2 * i] = pack2_rn(dq * (byte_f(v, 0) - 32.f), dq * (byte_f(v, 1) - 32.f));
            o[2 * i + 1] = pack2_rn(dq * (byte_f(v, 2) - 32.f), dq * (byte_f(v, 3) - 32.f));
        }
    }
}

// R x 128 tokens a block (R = 2: each warpgroup keeps two 64-token accumulators, so one decoded
// f16 weight tile feeds twice the tensor-core work: the decode, not the tensor cores, bounds R = 1).
// GROUPED (R = 1, KS = 1): the MATMUL_ID form of rf_mm_h16_id_64 (matmul_h16.hip): src[0] = the
// weights [K, N, E], src[1].data = the group scratch (moe_group.hip), grid x its tile list (tiles of
// up to RF_H16W_BM columns), aux[0] = bytes per sorted f16 row, aux[1] = tile entries, aux[2] = byte
// offset of the sorted rows; each column is stored at its dst_off.
template <int T, int R, int KS, bool GROUPED = false> RF_DEV void mm_q16w_impl(const rf_kargs &a) {
    typedef Q16wFmt<T> F;
    enum {
        BM = R * RF_H16W_BM, BN = RF_H16W_BN, S = RF_Q16W_STAGES, SR = RF_Q16W_RAW_STAGES, TILE_X = BM * 128, TILE_W = BN * 128,
        RAW = BN * F::WS
    };
    static_assert(!GROUPED || (KS == 1 && R == 1), "grouped tiles are 128 columns, not split over K");
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 K = w.ne[0], N = w.ne[1];
    i64 M = x.ne[1], m0 = (i64)(blockIdx.x / KS) * BM, xnb1 = x.nb[1];
    const i64 n0 = (i64)blockIdx.y * BN;
    const u8 *xb = (const u8 *)x.data, *wb = (const u8 *)w.data;
    const i64 *dst_off = nullptr;
    if (GROUPED) {
        const MoeTile tl = ((const MoeTile *)((const u8 *)x.data + 16))[blockIdx.x];
        if (tl.cols == 0) return; // past the used tiles (the whole block: before any barrier)
        xnb1 = a.aux[0];
        wb += tl.expert * w.nb[2];
        xb += a.aux[2] + (i64)tl.first * xnb1;
        dst_off = (const i64 *)((const u8 *)x.data + moe_group_dst_off_at(a.aux[1])) + tl.first;
        M = tl.cols;
        m0 = 0;
    }
    const u32 rank = KS > 1 ? cluster_rank() : 0;
    const int tid = threadIdx.x, g = tid >> 7;
    // [S activation stages][2 f16 weight tiles][SR raw weight stages], from a 1024-byte boundary.
    const u32 base = (shared_addr(rf_h16w_smem) + 1023u) & ~1023u;
    const u32 wtile = base + S * TILE_X, raw = wtile + 2 * TILE_W;
    const u8 *raw_p = rf_h16w_smem + (raw - shared_addr(rf_h16w_smem));

    // Activation copies as rf_mm_h16w (4 R rows of 16-byte chunks per thread).
    const int cr = tid >> 3, cc = tid & 7;
    const u32 cdst = (u32)(cr * 128 + ((cc ^ (cr & 7)) << 4));
    const u8 *xsrc[4 * R];
#pragma unroll
    for (int i = 0; i < 4 * R; ++i) {
        const i64 m = m0 + cr + 32 * i;
        xsrc[i] = xb + (m < M ? m : M - 1) * xnb1 + 16 * cc;
    }
    const unsigned long long wrow0 = (unsigned long long)wb + (unsigned long long)n0 * (unsigned long long)w.nb[1];
    const u32 wlast = (u32)(N - 1 - n0), wnb = (u32)w.nb[1]; // rows past N repeat the last one
    auto load_stage = [&](int s, int sr, i64 kt) {
        const u32 xs = base + (u32)s * TILE_X + cdst;
#pragma unroll
        for (int i = 0; i < 4 * R; ++i) mmq_cp_w(xs + 4096u * i, xsrc[i] + kt * 128);
        const i64 off = F::start_off(kt);
        const int j = (int)(kt & 3);
#pragma unroll
        for (int q = 0; q < (BN * F::G + RF_H16W_THREADS - 1) / RF_H16W_THREADS; ++q) {
            const u32 i = (u32)tid + RF_H16W_THREADS * q;
            if (i >= BN * F::G) break;
            const u32 r = i / F::G, slot = i - r * F::G;
            const unsigned long long st = wrow0 + (unsigned long long)(r < wlast ? r : wlast) * wnb + off, al = st & ~15ull;
            const int gr = F::src((int)slot, j, (int)(st - al));
            if (gr >= 0) mmq_cp_w(raw + (u32)sr * RAW + r * F::WS + 16 * slot, (const void *)(al + 16 * gr));
        }
    };
    // This thread's piece: weight row dr of the tile, elements 32 dh .. 32 dh + 31 of each step.
    const int dr = tid >> 1, dh = tid & 1;
    const unsigned long long drow = wrow0 + (unsigned long long)(dr < (int)wlast ? dr : wlast) * wnb;
    auto dequant = [&](int sr, i64 kt, int buf) {
        const unsigned long long st = drow + F::start_off(kt);
        const u8 *blk = raw_p + sr * RAW + dr * F::WS + (int)(st & 15) + (F::LEGACY ? dh * F::BYTES : 0);
        u32 o[16];
        q16w_piece<T>(blk, 2 * (int)(kt & 3) + dh, o);
        const u32 row = wtile + (u32)buf * TILE_W + (u32)dr * 128;
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            const u32 at = row + (u32)(((4 * dh + c) ^ (dr & 7)) << 4);
            asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(at), "r"(o[4 * c]), "r"(o[4 * c + 1]), "r"(o[4 * c + 2]),
                         "r"(o[4 * c + 3])
                         : "memory");
        }
    };

    float acc[R][64];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int i = 0; i < 64; ++i) acc[r][i] = 0.f;
    const i64 KT = K / 64, k0 = KT * rank / KS, KN = KT * (rank + 1) / KS - k0;
#pragma unroll
    for (int s = 0; s < S - 2; ++s) {
        if (s < KN) load_stage(s, s, k0 + s);
        asm volatile("cp.async.commit_group;" ::: "memory");
    }
    int sr = 0, sr_next = (S - 2) % SR; // raw stages of step kt and kt + S - 2
    for (i64 kt = 0; kt < KN; ++kt) {
        asm volatile("cp.async.wait_group %0;" ::"n"(S - 3) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        // Step kt's copies landed everywhere; every warpgroup is done with step kt - 2 (its
        // activation stage and f16 weight tile are free) and every thread with the decode of
        // step kt - 1 (its raw stage is free).
        __syncthreads();
        const i64 nk = kt + S - 2;
        if (nk < KN) load_stage((int)(nk % S), sr_next, k0 + nk);
        asm volatile("cp.async.commit_group;" ::: "memory");
        dequant(sr, k0 + kt, (int)(kt & 1)); // overlaps the tensor cores' step kt - 1
        sr = sr + 1 == SR ? 0 : sr + 1;
        sr_next = sr_next + 1 == SR ? 0 : sr_next + 1;
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads(); // the whole f16 weight tile of step kt is written
        const u32 st = base + (u32)(kt % S) * TILE_X;
        const unsigned long long dw = wgmma_desc(wtile + (u32)(kt & 1) * TILE_W);
#pragma unroll
        for (int r = 0; r < R; ++r) wgmma_hold(acc[r]);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
#pragma unroll
            for (int r = 0; r < R; ++r) wgmma_m64n128k16(acc[r], wgmma_desc(st + (u32)(128 * r + 64 * g) * 128) + 2 * kk, dw + 2 * kk);
        wgmma_commit();
        wgmma_wait<1>();
    }
    wgmma_wait<0>();
#pragma unroll
    for (int r = 0; r < R; ++r) wgmma_hold(acc[r]);
    asm volatile("cp.async.wait_group 0;" ::: "memory");
#pragma unroll
    for (int r = 0; r < R; ++r) h16w_store<KS>(acc[r], (u8 *)d.data, d.nb[1], dst_off, m0 + 128 * r + 64 * g, n0, M, N, rank, base);
}
#define RF_Q16W_BODY(T, R, KS) mm_q16w_impl<T, R, KS>(a)
#define RF_Q16W_ID_BODY(T) mm_q16w_impl<T, 1, 1, true>(a)
#define RF_H16W_BODY(KS) mm_h16w_impl<KS>(a)
#else
#define RF_H16W_BODY(KS) (void)a // not sm_90a: never launched (no rf_feature_wgmma in the module)
#define RF_Q16W_BODY(T, R, KS) (void)a
#define RF_Q16W_ID_BODY(T) (void)a
#endif

RF_KERNEL __launch_bounds__(RF_H16W_THREADS, 1) void rf_mm_h16w_128_k1(rf_kargs a) {
    rf_kernel_start();
    RF_H16W_BODY(1);
}
RF_KERNEL __launch_bounds__(RF_H16W_THREADS, 1) RF_CLUSTER_DIMS(2) void rf_mm_h16w_128_k2(rf_kargs a) {
    rf_kernel_start();
    RF_H16W_BODY(2);
}

// The Q16wFmt stage sizes: RF_Q16W_SMEM(R, G) in matmul_h16_layout.h, for the host. t2: 256 tokens
// a block, for the formats whose stages fit (the host checks RF_Q16W_SMEM_MAX).
#define RF_MM_Q16W_T(t, T, R)                                                                                         \
    RF_KERNEL __launch_bounds__(RF_H16W_THREADS, 1) void rf_mm_q16w_##t##_t##R##_k1(rf_kargs a) {                     \
        rf_kernel_start();                                                                                            \
        RF_Q16W_BODY(T, R, 1);                                                                                        \
    }                                                                                                                 \
    RF_KERNEL __launch_bounds__(RF_H16W_THREADS, 1) RF_CLUSTER_DIMS(2) void rf_mm_q16w_##t##_t##R##_k2(rf_kargs a) {   \
        rf_kernel_start();                                                                                            \
        RF_Q16W_BODY(T, R, 2);                                                                                        \
    }
#define RF_MM_Q16W(t, T) RF_MM_Q16W_T(t, T, 1) RF_MM_Q16W_T(t, T, 2)
// rf_mm_q16w_id_<type>: the grouped MATMUL_ID tiles, for the formats without rf_mmqp_id_* tiles.
#define RF_MM_Q16W_ID(t, T)                                                                                           \
    RF_KERNEL __launch_bounds__(RF_H16W_THREADS, 1) void rf_mm_q16w_id_##t(rf_kargs a) {                              \
        rf_kernel_start();                                                                                            \
        RF_Q16W_ID_BODY(T);                                                                                           \
    }
RF_MM_Q16W(q4_0, T_Q4_0)
RF_MM_Q16W(q8_0, T_Q8_0)
RF_MM_Q16W(q4_k, T_Q4_K)
RF_MM_Q16W(q5_k, T_Q5_K)
RF_MM_Q16W(q6_k, T_Q6_K)
#define RF_MM_Q16W_BOTH(t, T) RF_MM_Q16W(t, T) RF_MM_Q16W_ID(t, T)
RF_MM_Q16W_BOTH(mxfp4, T_MXFP4)
RF_MM_Q16W_BOTH(iq4_nl, T_IQ4_NL)
RF_MM_Q16W_BOTH(iq4_xs, T_IQ4_XS)
RF_MM_Q16W_BOTH(iq2_xxs, T_IQ2_XXS)
RF_MM_Q16W_BOTH(iq3_xxs, T_IQ3_XXS)
RF_MM_Q16W_BOTH(iq3_s, T_IQ3_S)
RF_MM_Q16W_BOTH(iq2_xs, T_IQ2_XS)
RF_MM_Q16W_BOTH(iq2_s, T_IQ2_S)
RF_MM_Q16W_BOTH(iq1_s, T_IQ1_S)
RF_MM_Q16W_BOTH(iq1_m, T_IQ1_M)
RF_MM_Q16W_BOTH(tq1_0, T_TQ1_0)
RF_MM_Q16W_BOTH(tq2_0, T_TQ2_0)

#endif // RF_NVIDIA
