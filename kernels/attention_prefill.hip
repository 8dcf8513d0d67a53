// ATTENTION for many new tokens (prefill), flash-attention style on the CUDA/shader cores:
// a block takes BQ queries of one head and streams the visible K/V positions through shared
// memory BKV rows at a time, so each K/V row is read once per BQ queries instead of once per
// query (rf_attention in attention.hip stays the decode kernel).
// Semantics as abi.h: paged slot table, causal by token position, GQA, f32/f16/q8_0 pools, the
// sinks of gpt-oss (attention_sinks.h: joined in the final normalisation).
// Tokens of one tile may belong to different sequences: the tile is processed once per
// sequence present (in increasing order), the other rows fully masked for that pass.
// Thread layout (128 threads): group qg = tid / 8 owns queries qg + 16 i; lane pg = tid % 8
// scores positions pg + 8 j and accumulates output dims 4 pg + 32 c + e (16-byte V reads).
// Softmax is online
// (running max and sum per query, replicated in the 8 lanes of a group).
#include "compat.h"
#include "quant_decode.h"
#include "attention_sinks.h"

#define RF_ATP_THREADS 128
// Outer-loop unrolling of the score and P.V loops: on AMD (LLVM 15) unrolling hoists loads
// until the 128-VGPR cap of gfx1100 spills, so keep those loops rolled there.
#if RF_NVIDIA
#define RF_ATP_UNROLL_S _Pragma("unroll 4")
#define RF_ATP_UNROLL_PV _Pragma("unroll 2")
#else
#define RF_ATP_UNROLL_S _Pragma("unroll 1")
#define RF_ATP_UNROLL_PV _Pragma("unroll 1")
#endif

RF_DEV float pool_elem(const rf_ktensor &pool, int slot, i64 e) { // element e of pool row `slot`, as f32
    const u8 *row = (const u8 *)pool.data + (i64)slot * pool.nb[1];
    if (pool.type == T_F16) return h2f(((const u16 *)row)[e]);
    if (pool.type == T_Q8_0) {
        const u8 *b = row + (e >> 5) * 34;
        return h2f(ld_u16(b)) * (float)(i8)b[2 + (e & 31)];
    }
    return ((const float *)row)[e];
}

template <int D, int BQ, int BKV> RF_DEV void attention_prefill_impl(const rf_kargs &a) {
    enum { QPT = BQ / 16, PPT = BKV / 8, DPT = D / 8, KLD = D + 4 }; // KLD: conflict-free 16-byte K reads
    __shared__ __align__(16) float Qs[BQ][D];
    __shared__ __align__(16) float Ks[BKV][KLD];
    __shared__ __align__(16) float Vs[BKV][D];
    __shared__ __align__(16) float Ps[BQ][BKV + 4];
    __shared__ int tok_seq[BQ], tok_pos[BQ];
    __shared__ int pass_seq, pass_maxpos;

    const rf_ktensor &q = a.src[0], &kp = a.src[1], &vp = a.src[2], &tab = a.src[3], &info = a.src[4];
    const int Hq = (int)q.ne[1], T = (int)q.ne[2];
    const int Hkv = (int)(kp.ne[0] / D);
    const int h = blockIdx.x, t0 = blockIdx.y * BQ;
    const i64 koff = (i64)(h / (Hq / Hkv)) * D;
    const int tid = threadIdx.x, qg = tid / 8, pg = tid % 8;
    const float scale = a.attention.scale;
    const float NEG_INF = -__int_as_float(0x7f800000);

    for (int i = tid; i < BQ; i += RF_ATP_THREADS) {
        const int t = t0 + i;
        const int *ti = (const int *)((const u8 *)info.data + (i64)t * info.nb[1]);
        tok_seq[i] = t < T ? ti[0] : -1;
        tok_pos[i] = t < T ? ti[1] : -1;
    }
    for (int idx = tid; idx < BQ * D; idx += RF_ATP_THREADS) {
        const int i = idx / D, dd = idx % D, t = t0 + i;
        Qs[i][dd] = t < T ? ((const float *)((const u8 *)q.data + (i64)h * q.nb[1] + (i64)t * q.nb[2]))[dd] * scale : 0.f;
    }

    float acc[QPT][DPT], m[QPT], l[QPT];
#pragma unroll
    for (int i = 0; i < QPT; ++i) {
        m[i] = NEG_INF; l[i] = 0.f;
#pragma unroll
        for (int jd = 0; jd < DPT; ++jd) acc[i][jd] = 0.f;
    }

    int prev_seq = -1;
    for (;;) {
        __syncthreads(); // token info / previous pass done before pass_seq is rewritten
        if (tid == 0) { // next sequence present in the tile, and the last position its tokens see
            int s = 0x7fffffff, mp = -1;
            for (int i = 0; i < BQ; ++i)
                if (tok_seq[i] > prev_seq && tok_seq[i] < s) s = tok_seq[i];
            for (int i = 0; i < BQ; ++i)
                if (tok_seq[i] == s && tok_pos[i] > mp) mp = tok_pos[i];
            pass_seq = s; pass_maxpos = mp;
        }
        __syncthreads();
        const int s = pass_seq, maxpos = pass_maxpos;
        if (s == 0x7fffffff) break;
        prev_seq = s;
        const int *slots = (const int *)((const u8 *)tab.data + (i64)s * tab.nb[1]);
        int qpos[QPT];
#pragma unroll
        for (int i = 0; i < QPT; ++i) qpos[i] = tok_seq[qg + 16 * i] == s ? tok_pos[qg + 16 * i] : -1;

        for (int kv0 = 0; kv0 <= maxpos; kv0 += BKV) {
            for (int idx = tid; idx < BKV * D; idx += RF_ATP_THREADS) {
                const int j = idx / D, dd = idx % D, p = kv0 + j;
                float kx = 0.f, vx = 0.f;
                if (p <= maxpos) {
                    const int slot = slots[p];
                    kx = pool_elem(kp, slot, koff + dd);
                    vx = pool_elem(vp, slot, koff + dd);
                }
                Ks[j][dd] = kx;
                Vs[j][dd] = vx;
            }
            __syncthreads();

            float sc[QPT][PPT];
#pragma unroll
            for (int i = 0; i < QPT; ++i)
#pragma unroll
                for (int j = 0; j < PPT; ++j) sc[i][j] = 0.f;
            RF_ATP_UNROLL_S
            for (int dd = 0; dd < D; dd += 4) {
                float4 qv[QPT], kv[PPT];
#pragma unroll
                for (int i = 0; i < QPT; ++i) qv[i] = *(const float4 *)&Qs[qg + 16 * i][dd];
#pragma unroll
                for (int j = 0; j < PPT; ++j) kv[j] = *(const float4 *)&Ks[pg + 8 * j][dd];
#pragma unroll
                for (int i = 0; i < QPT; ++i)
#pragma unroll
                    for (int j = 0; j < PPT; ++j)
                        sc[i][j] += qv[i].x * kv[j].x + qv[i].y * kv[j].y + qv[i].z * kv[j].z + qv[i].w * kv[j].w;
            }

#pragma unroll
            for (int i = 0; i < QPT; ++i) {
                float mx = NEG_INF;
#pragma unroll
                for (int j = 0; j < PPT; ++j) {
                    if (kv0 + pg + 8 * j > qpos[i]) sc[i][j] = NEG_INF;
                    mx = fmaxf(mx, sc[i][j]);
                }
#pragma unroll
                for (int o = 1; o < 8; o <<= 1) mx = fmaxf(mx, shfl_xor_f(mx, o));
                const float mn = fmaxf(m[i], mx);
                const bool none = mn == NEG_INF; // nothing visible yet for this row
                const float corr = none ? 1.f : __expf(m[i] - mn);
                float rs = 0.f;
#pragma unroll
                for (int j = 0; j < PPT; ++j) {
                    const float e = none ? 0.f : __expf(sc[i][j] - mn);
                    Ps[qg + 16 * i][pg + 8 * j] = e;
                    rs += e;
                }
#pragma unroll
                for (int o = 1; o < 8; o <<= 1) rs += shfl_xor_f(rs, o);
                l[i] = l[i] * corr + rs;
                m[i] = mn;
#pragma unroll
                for (int jd = 0; jd < DPT; ++jd) acc[i][jd] *= corr;
            }
            __syncthreads(); // P rows complete

            RF_ATP_UNROLL_PV
            for (int jp = 0; jp < BKV; jp += 4) {
                float4 p4[QPT];
#pragma unroll
                for (int i = 0; i < QPT; ++i) p4[i] = *(const float4 *)&Ps[qg + 16 * i][jp];
#pragma unroll
                for (int e = 0; e < 4; ++e) {
#pragma unroll
                    for (int c = 0; c < DPT / 4; ++c) {
                        const float4 v = *(const float4 *)&Vs[jp + e][4 * pg + 32 * c];
#pragma unroll
                        for (int i = 0; i < QPT; ++i) {
                            const float pw = e == 0 ? p4[i].x : e == 1 ? p4[i].y : e == 2 ? p4[i].z : p4[i].w;
                            acc[i][4 * c] += pw * v.x;
                            acc[i][4 * c + 1] += pw * v.y;
                            acc[i][4 * c + 2] += pw * v.z;
                            acc[i][4 * c + 3] += pw * v.w;
                        }
                    }
                }
            }
            __syncthreads(); // K/V/P reads done before the next tile overwrites them
        }
    }

    const float *sinks = attention_sinks(a);
#pragma unroll
    for (int i = 0; i < QPT; ++i) {
        const int t = t0 + qg + 16 * i;
        if (t >= T) continue;
        float *out = (float *)((u8 *)a.dst.data + (i64)t * a.dst.nb[1]) + (i64)h * D;
        const float inv = sinks ? attention_sink_factor(m[i], l[i], sinks[h]) : l[i] > 0.f ? 1.f / l[i] : 0.f;
#pragma unroll
        for (int c = 0; c < DPT / 4; ++c)
            *(float4 *)&out[4 * pg + 32 * c] =
                float4{acc[i][4 * c] * inv, acc[i][4 * c + 1] * inv, acc[i][4 * c + 2] * inv, acc[i][4 * c + 3] * inv};
    }
}

// Queries per block (BQ) must match the host's grid (ops.cpp, prefill_attention_kernel).
// NVIDIA: shared memory D=64 42.5 KB, D=128 35.6 KB (under the 48 KB static limit).
// AMD: half the queries per block, since LLVM 15 caps gfx1100 kernels at 128 VGPRs and the
// NVIDIA tile's accumulators would spill (tools/amd_resource_report.py).
#if RF_NVIDIA
#define RF_ATP_BQ64 64
#define RF_ATP_BQ128 32
#else
#define RF_ATP_BQ64 32
#define RF_ATP_BQ128 16
#endif
RF_KERNEL __launch_bounds__(RF_ATP_THREADS) void rf_attention_prefill_d64(rf_kargs a) {
    rf_kernel_start();
    attention_prefill_impl<64, RF_ATP_BQ64, 32>(a);
}
RF_KERNEL __launch_bounds__(RF_ATP_THREADS) void rf_attention_prefill_d128(rf_kargs a) {
    rf_kernel_start();
    attention_prefill_impl<128, RF_ATP_BQ128, 16>(a);
}
