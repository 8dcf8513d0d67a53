// ATTENTION over a paged KV pool (abi.h): causal, GQA, pools f32/f16/q8_0.
// Grid (Hq, T); 4 warps per block split the visible positions; each warp keeps an online
// softmax (running max, sum, V accumulator with D/32 values per lane); the block merges them.
// The one attention kernel that honours a sliding window (attention.window), a score soft cap
// (attention.soft_cap) and bidirectional attention (attention.bidirectional: a token sees every
// position of its sequence in the node, the encoders') and, as the other attention kernels, the
// sinks of gpt-oss (attention_sinks.h): ops.cpp sends here what the faster kernels do not take.
#include "compat.h"
#include "quant_decode.h"
#include "attention_sinks.h"

#define RF_ATT_WARPS 4
#define RF_ATT_MAXD 256
#define RF_ATT_PER_LANE (RF_ATT_MAXD / RF_WARP)

RF_DEV float kv_value(const rf_ktensor &pool, int slot, i64 e) { // element e of row `slot`
    const u8 *row = (const u8 *)pool.data + (i64)slot * pool.nb[1];
    if (pool.type == T_F16) return h2f(((const u16 *)row)[e]);
    if (pool.type == T_Q8_0) {
        const u8 *b = row + (e >> 5) * 34;
        return h2f(ld_u16(b)) * (float)(i8)b[2 + (e & 31)];
    }
    return ((const float *)row)[e];
}

RF_KERNEL __launch_bounds__(128) void rf_attention(rf_kargs a) {
    rf_kernel_start();
    __shared__ float sh_m[RF_ATT_WARPS], sh_l[RF_ATT_WARPS];
    __shared__ float sh_acc[RF_ATT_WARPS][RF_ATT_MAXD];
    const rf_ktensor &q = a.src[0], &kp = a.src[1], &vp = a.src[2], &tab = a.src[3], &info = a.src[4];
    const int D = (int)q.ne[0], Hq = (int)q.ne[1];
    const int Hkv = (int)(kp.ne[0] / D);
    const int h = blockIdx.x, t = blockIdx.y;
    const int kvh = h / (Hq / Hkv);
    const int lane = threadIdx.x % RF_WARP, w = threadIdx.x / RF_WARP;
    const int *ti = (const int *)((const u8 *)info.data + (i64)t * info.nb[1]);
    const int seq = ti[0];
    int pos = ti[1];
    if (a.attention.bidirectional) { // the largest position of this sequence's tokens in the node
        __shared__ int sh_last;
        if (threadIdx.x == 0) sh_last = pos;
        __syncthreads();
        int last = pos;
        for (i64 u = threadIdx.x; u < info.ne[1]; u += blockDim.x) {
            const int *tu = (const int *)((const u8 *)info.data + u * info.nb[1]);
            if (tu[0] == seq) last = max(last, tu[1]);
        }
        atomicMax(&sh_last, last);
        __syncthreads();
        pos = sh_last;
    }
    const int *slots = (const int *)((const u8 *)tab.data + (i64)seq * tab.nb[1]);
    const float scale = a.attention.scale, cap = a.attention.soft_cap;
    const int first = a.attention.window > 0 && !a.attention.bidirectional ? max(0, pos - a.attention.window + 1) : 0;
    const float *qr = (const float *)((const u8 *)q.data + (i64)h * q.nb[1] + (i64)t * q.nb[2]);

    float qv[RF_ATT_PER_LANE], acc[RF_ATT_PER_LANE];
#pragma unroll
    for (int j = 0; j < RF_ATT_PER_LANE; ++j) {
        const int dd = lane + RF_WARP * j;
        qv[j] = dd < D ? qr[dd] * scale : 0.f;
        acc[j] = 0.f;
    }
    float m = -__int_as_float(0x7f800000), l = 0.f;
    const i64 koff = (i64)kvh * D;
    for (int p = first + w; p <= pos; p += RF_ATT_WARPS) {
        const int slot = slots[p];
        float s = 0.f;
#pragma unroll
        for (int j = 0; j < RF_ATT_PER_LANE; ++j) {
            const int dd = lane + RF_WARP * j;
            if (dd < D) s += qv[j] * kv_value(kp, slot, koff + dd);
        }
        s = warp_sum(s);
        if (cap > 0.f) s = cap * tanhf(s / cap);
        const float mn = fmaxf(m, s);
        const float corr = __expf(m - mn), e = __expf(s - mn);
        l = l * corr + e;
#pragma unroll
        for (int j = 0; j < RF_ATT_PER_LANE; ++j) {
            const int dd = lane + RF_WARP * j;
            acc[j] = acc[j] * corr + (dd < D ? e * kv_value(vp, slot, koff + dd) : 0.f);
        }
        m = mn;
    }
    if (lane == 0) { sh_m[w] = m; sh_l[w] = l; }
#pragma unroll
    for (int j = 0; j < RF_ATT_PER_LANE; ++j) {
        const int dd = lane + RF_WARP * j;
        if (dd < D) sh_acc[w][dd] = acc[j];
    }
    __syncthreads();
    float M = sh_m[0];
    for (int i = 1; i < RF_ATT_WARPS; ++i) M = fmaxf(M, sh_m[i]);
    const float *sinks = attention_sinks(a);
    const float sink = sinks ? sinks[h] : -__int_as_float(0x7f800000);
    M = fmaxf(M, sink); // a sink above every score sets the scale, as ggml's flash attention does
    float L = sinks ? __expf(sink - M) : 0.f;
    for (int i = 0; i < RF_ATT_WARPS; ++i) L += sh_m[i] == -__int_as_float(0x7f800000) ? 0.f : sh_l[i] * __expf(sh_m[i] - M);
    float *out = (float *)((u8 *)a.dst.data + (i64)t * a.dst.nb[1]) + (i64)h * D;
    for (int dd = threadIdx.x; dd < D; dd += blockDim.x) {
        float o = 0.f;
        for (int i = 0; i < RF_ATT_WARPS; ++i)
            if (sh_m[i] != -__int_as_float(0x7f800000)) o += sh_acc[i][dd] * __expf(sh_m[i] - M);
        out[dd] = o / L;
    }
}
