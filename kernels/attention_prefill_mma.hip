// ATTENTION for many new tokens on the NVIDIA tensor cores, flash-attention 2 style (the host
// takes it for head sizes 64, 96, 128 and 256 over f16 pools; attention_prefill.hip stays for the
// rest and for AMD). Semantics as rf_attention (abi.h): paged slot table, causal by token
// position, GQA, tokens of several sequences in one tile (one pass per sequence present), the
// sliding window (attention.window) and the score soft cap (attention.soft_cap) of Gemma, the
// sinks of gpt-oss (attention_sinks.h: joined in the final normalisation).
//  - Block: 4 warps, 64 queries of one head (16 per warp); KV positions stream through shared
//    memory 64 at a time, two stages filled with cp.async (K and V rows of the f16 pool gathered
//    through the slot table; positions past the pass's last visible one are zeroed). With a
//    window, the tiles before the first position any query of the pass sees are skipped.
//  - S = Q K^T with mma.sync m16n8k16 (f16 in, f32 out): Q (times scale * log2 e, rounded to
//    f16; times scale alone under a soft cap, which needs the natural-log score) is held as A
//    fragments: in registers up to D = 128; for D = 256 in shared memory, read back with
//    ldmatrix per step (the same values: 64 fragment registers more would not fit beside the
//    128 of the output accumulators). K fragments through ldmatrix. Online softmax in base 2 on
//    the f32 scores; P goes back to f16 as the A operand of P V straight from the score
//    registers (the accumulator layout of two n8 tiles is the A layout of one k16 step); V
//    fragments through ldmatrix.trans. Row sums are kept per thread and reduced at the end.
// All in #if RF_NVIDIA: needs matmul_mma.hip's ldsm_x4 / mma_f16_16816 / pack2_rn (included
// before this file by all_kernels.hip).
#include "compat.h"
#include "attention_mma_layout.h"
#include "attention_sinks.h"

#if RF_NVIDIA

extern __shared__ __align__(16) u8 rf_atm_smem[];

RF_DEV void ldsm_x4_trans(u32 *r, const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(shared_addr(p)));
}
RF_DEV float atm_exp2(float x) { // 2^x; exact 0 for -inf
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
RF_DEV void atm_cp16(u32 dst, const void *src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}

template <int D> RF_DEV void attention_mma_impl(const rf_kargs &a) {
    enum { LD = RF_ATM_LD(D), KT = D / 16, ND = D / 8, TILE = RF_ATM_BKV * LD, CH = D / 8 };
    constexpr bool Q_SHARED = RF_ATM_Q_SHARED(D);
    __shared__ int tok_seq[RF_ATM_BQ], tok_pos[RF_ATM_BQ];
    __shared__ int pass_seq, pass_maxpos, pass_minpos;
    u16 *sm = (u16 *)rf_atm_smem; // [stage][K tile, V tile][RF_ATM_BKV][LD]
    // The host sized the shared memory from the same layout; a mismatch must not run.
    u32 dyn;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
    if (dyn < (u32)RF_ATM_SMEM_BYTES(D)) __trap();

    const rf_ktensor &q = a.src[0], &kp = a.src[1], &vp = a.src[2], &tab = a.src[3], &info = a.src[4];
    const int Hq = (int)q.ne[1], T = (int)q.ne[2], Hkv = (int)(kp.ne[0] / D);
    const int h = blockIdx.x, t0 = blockIdx.y * RF_ATM_BQ;
    const i64 koff = (i64)(h / (Hq / Hkv)) * D;
    const int tid = threadIdx.x, lane = tid % RF_WARP, warp = tid / RF_WARP, g = lane >> 2, t = lane & 3;
    const float NEG_INF = -__int_as_float(0x7f800000);
    const float LOG2E = 1.4426950408889634f;
    const float cap = a.attention.soft_cap;
    const int window = a.attention.window;
    const float qscale = cap > 0.f ? a.attention.scale : a.attention.scale * LOG2E; // scores in base 2 unless capped first

    for (int i = tid; i < RF_ATM_BQ; i += RF_ATM_THREADS) {
        const int tk = t0 + i;
        const int *ti = (const int *)((const u8 *)info.data + (i64)tk * info.nb[1]);
        tok_seq[i] = tk < T ? ti[0] : -1;
        tok_pos[i] = tk < T ? ti[1] : -1;
    }
    // Q rows r0 (this thread's row g of the warp's 16) and r1 = r0 + 8 as A fragments.
    const int r0 = 16 * warp + g, r1 = r0 + 8;
    u32 qf[Q_SHARED ? 1 : KT][4];
    u16 *const sq = sm + 4 * TILE; // Q_SHARED: [RF_ATM_BQ][LD] after the two K / V stages
    {
        const int ta = t0 + r0, tb = t0 + r1;
        const float *qa = (const float *)((const u8 *)q.data + (i64)h * q.nb[1] + (i64)(ta < T ? ta : 0) * q.nb[2]);
        const float *qb = (const float *)((const u8 *)q.data + (i64)h * q.nb[1] + (i64)(tb < T ? tb : 0) * q.nb[2]);
#pragma unroll
        for (int kk = 0; kk < KT; ++kk) {
            float2 v[4] = {{0.f, 0.f}, {0.f, 0.f}, {0.f, 0.f}, {0.f, 0.f}};
            if (ta < T) { v[0] = *(const float2 *)(qa + 16 * kk + 2 * t); v[2] = *(const float2 *)(qa + 16 * kk + 8 + 2 * t); }
            if (tb < T) { v[1] = *(const float2 *)(qb + 16 * kk + 2 * t); v[3] = *(const float2 *)(qb + 16 * kk + 8 + 2 * t); }
            u32 f[4];
#pragma unroll
            for (int r = 0; r < 4; ++r) f[r] = pack2_rn(v[r].x * qscale, v[r].y * qscale);
            if constexpr (Q_SHARED) { // the fragment's elements at their (row, column) of the tile
                *(u32 *)(sq + r0 * LD + 16 * kk + 2 * t) = f[0];
                *(u32 *)(sq + r1 * LD + 16 * kk + 2 * t) = f[1];
                *(u32 *)(sq + r0 * LD + 16 * kk + 8 + 2 * t) = f[2];
                *(u32 *)(sq + r1 * LD + 16 * kk + 8 + 2 * t) = f[3];
            } else {
#pragma unroll
                for (int r = 0; r < 4; ++r) qf[kk][r] = f[r];
            }
        }
    }

    float o[ND][4], m[2] = {NEG_INF, NEG_INF}, l[2] = {0.f, 0.f};
#pragma unroll
    for (int n = 0; n < ND; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[n][e] = 0.f;

    const u32 sbase = shared_addr(sm);
    int prev_seq = -1;
    for (;;) {
        __syncthreads(); // token info / the previous pass done before pass_seq is rewritten
        if (tid == 0) {  // next sequence present in the tile, and the last position its tokens see
            int s = 0x7fffffff, mp = -1, lo = 0x7fffffff;
            for (int i = 0; i < RF_ATM_BQ; ++i)
                if (tok_seq[i] > prev_seq && tok_seq[i] < s) s = tok_seq[i];
            for (int i = 0; i < RF_ATM_BQ; ++i)
                if (tok_seq[i] == s) { mp = max(mp, tok_pos[i]); lo = min(lo, tok_pos[i]); }
            pass_seq = s;
            pass_maxpos = mp;
            pass_minpos = lo;
        }
        __syncthreads();
        const int s = pass_seq, maxpos = pass_maxpos;
        if (s == 0x7fffffff) break;
        prev_seq = s;
        const int *slots = (const int *)((const u8 *)tab.data + (i64)s * tab.nb[1]);
        const int qp0 = tok_seq[r0] == s ? tok_pos[r0] : -1, qp1 = tok_seq[r1] == s ? tok_pos[r1] : -1;
        // The first position each row sees (its window's start; the rows of other sequences: none).
        const int lo0 = window > 0 ? qp0 - window + 1 : 0, lo1 = window > 0 ? qp1 - window + 1 : 0;
        const int first_tile = window > 0 ? max(0, pass_minpos - window + 1) / RF_ATM_BKV : 0;
        const int ntiles = maxpos / RF_ATM_BKV + 1;

        // K and V rows of positions [it * BKV, +BKV) into stage st (zeros past maxpos).
        auto issue = [&](int it, int st) {
            for (int idx = tid; idx < 2 * RF_ATM_BKV * CH; idx += RF_ATM_THREADS) {
                const int which = idx / (RF_ATM_BKV * CH), rem = idx % (RF_ATM_BKV * CH), j = rem / CH, c = rem % CH;
                const int p = it * RF_ATM_BKV + j;
                const int off = (st * 2 + which) * TILE + j * LD + 8 * c;
                if (p <= maxpos) {
                    const rf_ktensor &pool = which ? vp : kp;
                    atm_cp16(sbase + 2 * off, (const u8 *)pool.data + (i64)slots[p] * pool.nb[1] + (koff + 8 * c) * 2);
                } else {
                    *(uint4 *)(sm + off) = uint4{0u, 0u, 0u, 0u};
                }
            }
            asm volatile("cp.async.commit_group;" ::: "memory");
        };
        issue(first_tile, first_tile & 1);
        for (int it = first_tile; it < ntiles; ++it) {
            if (it + 1 < ntiles) {
                issue(it + 1, (it + 1) & 1);
                asm volatile("cp.async.wait_group 1;" ::: "memory");
            } else {
                asm volatile("cp.async.wait_group 0;" ::: "memory");
            }
            __syncthreads();
            const u16 *Ks = sm + (it & 1) * 2 * TILE, *Vs = Ks + TILE;

            float sc[8][4];
#pragma unroll
            for (int j = 0; j < 8; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) sc[j][e] = 0.f;
#pragma unroll
            for (int kk = 0; kk < KT; kk += 2)
#pragma unroll
            {
                u32 qa[2][4];
                const u32 *q0 = qa[0], *q1 = qa[1];
                if constexpr (Q_SHARED) {
                    ldsm_x4(qa[0], sq + (16 * warp + (lane & 15)) * LD + 16 * kk + 8 * (lane >> 4));
                    ldsm_x4(qa[1], sq + (16 * warp + (lane & 15)) * LD + 16 * (kk + 1) + 8 * (lane >> 4));
                } else {
                    q0 = qf[kk];
                    q1 = qf[kk + 1];
                }
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    u32 b[4];
                    ldsm_x4(b, Ks + (8 * j + (lane & 7)) * LD + 16 * kk + 8 * (lane >> 3));
                    mma_f16_16816(sc[j], q0, b[0], b[1]);
                    mma_f16_16816(sc[j], q1, b[2], b[3]);
                }
            }

            // Soft cap on the natural-log score, then base 2; causal and window mask; online
            // softmax (rows r0: elements 0, 1; r1: elements 2, 3).
            if (cap > 0.f) {
                const float inv_cap = 1.f / cap;
#pragma unroll
                for (int j = 0; j < 8; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) sc[j][e] = cap * tanhf(sc[j][e] * inv_cap) * LOG2E;
            }
            const int kv0 = it * RF_ATM_BKV;
            float mx[2] = {NEG_INF, NEG_INF};
#pragma unroll
            for (int j = 0; j < 8; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int pos = kv0 + 8 * j + 2 * t + (e & 1);
                    if (pos > (e < 2 ? qp0 : qp1) || pos < (e < 2 ? lo0 : lo1)) sc[j][e] = NEG_INF;
                    mx[e >> 1] = fmaxf(mx[e >> 1], sc[j][e]);
                }
            float base[2], corr[2];
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                mx[r] = fmaxf(mx[r], shfl_xor_f(mx[r], 1));
                mx[r] = fmaxf(mx[r], shfl_xor_f(mx[r], 2));
                const float mn = fmaxf(m[r], mx[r]);
                base[r] = mn == NEG_INF ? 0.f : mn; // nothing visible yet: every exponent is 2^-inf = 0
                corr[r] = atm_exp2(m[r] - base[r]);
                m[r] = mn;
                l[r] *= corr[r];
            }
#pragma unroll
            for (int n = 0; n < ND; ++n) {
                o[n][0] *= corr[0]; o[n][1] *= corr[0];
                o[n][2] *= corr[1]; o[n][3] *= corr[1];
            }
#pragma unroll
            for (int j = 0; j < 8; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    sc[j][e] = atm_exp2(sc[j][e] - base[e >> 1]);
                    l[e >> 1] += sc[j][e];
                }

            // O += P V over the tile's 4 steps of 16 positions.
#pragma unroll
            for (int s16 = 0; s16 < 4; ++s16) {
                u32 pa[4];
                pa[0] = pack2_rn(sc[2 * s16][0], sc[2 * s16][1]);
                pa[1] = pack2_rn(sc[2 * s16][2], sc[2 * s16][3]);
                pa[2] = pack2_rn(sc[2 * s16 + 1][0], sc[2 * s16 + 1][1]);
                pa[3] = pack2_rn(sc[2 * s16 + 1][2], sc[2 * s16 + 1][3]);
#pragma unroll
                for (int dn = 0; dn < ND; dn += 2) {
                    u32 b[4];
                    ldsm_x4_trans(b, Vs + (16 * s16 + (lane & 7) + 8 * ((lane >> 3) & 1)) * LD + 8 * dn + 8 * (lane >> 4));
                    mma_f16_16816(o[dn], pa, b[0], b[1]);
                    mma_f16_16816(o[dn + 1], pa, b[2], b[3]);
                }
            }
            __syncthreads(); // every warp is done with this stage before it is refilled
        }
    }

#pragma unroll
    for (int r = 0; r < 2; ++r) {
        l[r] += shfl_xor_f(l[r], 1);
        l[r] += shfl_xor_f(l[r], 2);
    }
    // The sink (natural log) in the base 2 of m; M = max(m, sink), l_total = l 2^(m - M) + 2^(sink - M).
    const float *sinks = attention_sinks(a);
    const float sink2 = sinks ? sinks[h] * LOG2E : NEG_INF;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int tk = t0 + (r ? r1 : r0);
        if (tk >= T) continue;
        float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;
        if (sinks) {
            const float M = fmaxf(m[r], sink2), e = atm_exp2(m[r] - M);
            inv = M == NEG_INF ? 0.f : e / (l[r] * e + atm_exp2(sink2 - M));
        }
        float *out = (float *)((u8 *)a.dst.data + (i64)tk * a.dst.nb[1]) + (i64)h * D;
#pragma unroll
        for (int n = 0; n < ND; ++n) *(float2 *)&out[8 * n + 2 * t] = float2{o[n][2 * r] * inv, o[n][2 * r + 1] * inv};
    }
}

#define RF_ATM_KERNEL(D) \
    RF_KERNEL __launch_bounds__(RF_ATM_THREADS) void rf_attention_mma_d##D(rf_kargs a) { \
        rf_kernel_start(); \
        attention_mma_impl<D>(a); \
    }
RF_ATM_KERNEL(64)
RF_ATM_KERNEL(96)
RF_ATM_KERNEL(128)
RF_ATM_KERNEL(256)

#endif // RF_NVIDIA
