// ATTENTION for decode over long contexts (NVIDIA packs; the AMD packs keep
// rf_attention_dec{64,128} of attention_decode.hip): rf_attention_stream_d<D>_g<GP>.
// A block takes one KV head, the G = Hq/Hkv query heads that share it (GP = G rounded up to a
// power of two, the heads past G masked), one token, and chunk c of the context, positions
// [c*C, min(c*C + C, pos+1)); C is large (up to RF_AST_MAXC) so that a long context needs few
// chunks. Each warp streams its quarter of the chunk with an online softmax: no block-wide
// barrier between the K and V reads, and a warp keeps the loads of U positions in flight at
// once (each of its R row groups of L = D/8 lanes reads one position's K and V rows, 8
// elements a lane, 16-byte loads on f16 pools). The warps' (max, sum, unnormalised output)
// are combined in shared memory and handed to decode_finish (attention_decode.hip): written
// normalised for one chunk, else stored as a partial that the last block of the (KV head,
// token) merges. The wide forms (_w: 16 warps, 8 for groups of 8 heads) take a short context in
// one chunk: every warp's positions in one or two steps of loads and no partials to merge, where
// four warps over chunks of 64 left a latency chain of two load steps, the partials' stores, the
// arrival atomic and the merge's loads. Same arguments as rf_attention_dec*: aux[0] = C,
// aux[1] = chunks, aux[2] bit 0: 16-byte f16 loads allowed, aux[3] = the sinks.
// The limits as rf_attention has them: with a sliding window (attention.window = W > 0; Gemma,
// gpt-oss) the chunks start at the token's first visible position, pos - W + 1 (chunks past its
// last one are empty); a soft cap (attention.soft_cap > 0, Gemma) maps each score s to
// cap * tanh(s / cap). Only the head sizes of the models with a cap carry its code (AstCap: 96
// and 256); the host sends capped nodes of 64 and 128 to rf_attention. The sinks (gpt-oss,
// aux[3]: attention_sinks.h) join in the one-chunk write or in decode_finish's merge.
#include "attention_decode.hip"

#if RF_NVIDIA

#define RF_AST_WARPS 4
#define RF_AST_MAXC 1024 // positions per chunk at most (slots staged in shared memory)
#define RF_AST_WCAP 64   // chunk weights cached per head by the merge

// Eight K or V elements of one row as a lane holds them between load and use. PACKED (f16 rows,
// 16-byte loads): the raw halves, 4 registers, each converted where it is used; else 8 floats
// (kv_load8). With U positions of K and V in flight, the packed form halves the registers the
// loads occupy: more blocks per multiprocessor, more loads in flight (8k-context decode).
template <bool PACKED> struct Kv8 {
    float v[8];
    RF_DEV void load(const rf_ktensor &pool, int slot, i64 e0, bool wide) { kv_load8(pool, slot, e0, wide, v); }
    RF_DEV float operator[](int e) const { return v[e]; }
};
template <> struct Kv8<true> {
    uint4 q;
    RF_DEV void load(const rf_ktensor &pool, int slot, i64 e0, bool) {
        q = *(const uint4 *)((const u16 *)((const u8 *)pool.data + (i64)slot * pool.nb[1]) + e0);
    }
    RF_DEV float operator[](int e) const { // e constant after unrolling
        const u32 w = e < 2 ? q.x : e < 4 ? q.y : e < 6 ? q.z : q.w;
        return h2f((u16)(e & 1 ? w >> 16 : w));
    }
};

// The block's chunk of cache slots in shared memory (one array for the block, whichever function
// names it).
RF_DEV int *ast_slots() {
    __shared__ int slots[RF_AST_MAXC];
    return slots;
}
// Staged before rf_kernel_start (compat.h) by the wide forms: the slot table and the token info
// are graph inputs, never written by a kernel (as rope's positions), so this load overlaps the
// kernel before and the K/V loads need not wait for it. The split kernels load them after the
// wait: staged early, they made long-context decode slower (cause not found; docs/notes/attention.md).
// The first position token `pos` sees: its window's start, or 0.
RF_DEV int ast_first_position(const rf_kargs &a, int pos) {
    return a.attention.window > 0 ? max(0, pos - a.attention.window + 1) : 0;
}
// Head sizes whose kernels take the soft cap.
template <int D> struct AstCap { enum { ON = D == 96 || D == 256 }; };

template <int D> RF_DEV void prefetch_ast_slots(const rf_kargs &a) {
    const rf_ktensor &tab = a.src[3], &info = a.src[4];
    const int *ti = (const int *)((const u8 *)info.data + (i64)blockIdx.z * info.nb[1]);
    const int seq = ti[0], pos = ti[1], C = (int)a.aux[0], p0 = ast_first_position(a, pos); // one chunk
    const int *slots = (const int *)((const u8 *)tab.data + (i64)seq * tab.nb[1]);
    const int n = min(p0 + C, pos + 1) - p0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) ast_slots()[i] = slots[p0 + i];
}

// WARPS warps per block; the one-chunk forms (the wide ones, WARPS = 8 or 16, and _w4) take a
// short context in one chunk (the host: up to att_wide_max positions).
template <int D, int GP, bool PACKED, int WARPS = RF_AST_WARPS, bool ONE_CHUNK = false>
RF_DEV void attn_stream(const rf_kargs &a) {
    // Lanes per row: D / 8 rounded up to a power of two for the shuffle sums (head size 96: 16
    // lanes, the last 4 idle); lanes le >= LV hold zeros.
    constexpr int LV = D / 8, L = LV <= 8 ? (LV <= 4 ? 4 : 8) : LV <= 16 ? 16 : 32;
    constexpr int R = RF_WARP / L;     // row groups per warp (positions per warp step)
    // Warp steps whose loads are issued together; wide form: 16 positions a warp, as far as 128
    // registers allow (each step holds 8 K and 8 V elements a lane: 8 registers packed, 16 not).
    constexpr int UW = (WARPS > 8 ? 8 : 32) / (GP * (PACKED ? 1 : 2)); // 8 warps: up to 255 registers
    // At most 8 steps: a 256-element row takes the whole warp (R = 1), where 16 steps of 16
    // unpacked values a lane would spill.
    constexpr int UR = 16 / R < 8 ? 16 / R : 8;
    constexpr int U = ONE_CHUNK ? (UW < UR ? UW : UR) : GP >= 8 ? 1 : GP >= 4 ? 2 : 4;
    constexpr float NEG = -1e30f;      // "no position yet": finite, so exp(NEG - m) is 0, never NaN
    int *const sh_slot = ast_slots(); // ONE_CHUNK: staged by prefetch_ast_slots
    __shared__ float sh_wm[WARPS][GP], sh_wl[WARPS][GP];
    __shared__ float sh_wo[WARPS][GP * D];
    __shared__ float sh_o[GP * D];
    __shared__ float sh_w[GP * RF_AST_WCAP];
    __shared__ float sh_m[RF_ATD_MAXG], sh_l[RF_ATD_MAXG];
    __shared__ float sh_sink[GP];
    __shared__ int sh_flag;
    const rf_ktensor &q = a.src[0], &kp = a.src[1], &vp = a.src[2], &tab = a.src[3], &info = a.src[4];
    const int Hq = (int)q.ne[1], Hkv = (int)(kp.ne[0] / D), G = Hq / Hkv;
    // Grid y: the chunk of the split forms; in the one-chunk forms the group of GP heads (of the G
    // sharing the KV head) this block takes: a short context's block computes its heads one after
    // another, so with few KV heads the host splits them over blocks.
    const int kvh = blockIdx.x, c = ONE_CHUNK ? 0 : blockIdx.y, hs = ONE_CHUNK ? blockIdx.y : 0, t = blockIdx.z, tid = threadIdx.x;
    const int h0 = kvh * G + hs * GP, HB = min(GP, G - hs * GP); // the block's first query head, its heads
    const int lane = tid % RF_WARP, w = tid / RF_WARP, r = lane / L, le = lane % L;
    const int C = (int)a.aux[0];
    const bool wide = (a.aux[2] & 1) != 0;
    const int *ti = (const int *)((const u8 *)info.data + (i64)t * info.nb[1]);
    const int seq = ti[0], pos = ti[1];
    constexpr bool CAP = AstCap<D>::ON;
    const int p0 = ast_first_position(a, pos) + c * C, n = max(0, min(p0 + C, pos + 1) - p0);
    const float cap = CAP ? a.attention.soft_cap : 0.f;
    const bool lane_valid = L == LV || le < LV;
    const i64 e0 = (i64)kvh * D + 8 * (lane_valid ? le : 0);
    if (!ONE_CHUNK) { // the split kernels load their slots here
        const int *slots = (const int *)((const u8 *)tab.data + (i64)seq * tab.nb[1]);
        for (int i = tid; i < n; i += blockDim.x) sh_slot[i] = slots[p0 + i];
    }

    // This lane's 8 elements of each head's query, scaled.
    float qv[GP][8];
#pragma unroll
    for (int g = 0; g < GP; ++g) {
        const int hq = h0 + (g < HB ? g : 0);
        const float *qr = (const float *)((const u8 *)q.data + (i64)hq * q.nb[1] + (i64)t * q.nb[2]) + 8 * le;
#pragma unroll
        for (int e = 0; e < 8; ++e) qv[g][e] = lane_valid ? qr[e] * a.attention.scale : 0.f;
    }
    // The one-chunk forms' sinks, read here into shared memory: read at the end they cost the
    // 8-head kernels spills (the split forms leave them to decode_finish).
    if (ONE_CHUNK && attention_sinks(a) && tid < HB) sh_sink[tid] = attention_sinks(a)[h0 + tid];
    __syncthreads();

    // The warp's positions: [lo, hi) of the chunk, R at a time (row group r takes lo + r, ...).
    const int per_warp = (n + WARPS - 1) / WARPS;
    const int lo = min(n, w * per_warp), hi = min(n, lo + per_warp);
    float m[GP], l[GP], o[GP][8];
#pragma unroll
    for (int g = 0; g < GP; ++g) {
        m[g] = NEG;
        l[g] = 0.f;
#pragma unroll
        for (int e = 0; e < 8; ++e) o[g][e] = 0.f;
    }
    for (int base = lo; base < hi; base += U * R) {
        Kv8<PACKED> kf[U], vf[U];
        bool ok[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int i = base + u * R + r;
            ok[u] = i < hi;
            const int slot = sh_slot[ok[u] ? i : lo];
            kf[u].load(kp, slot, e0, wide);
            vf[u].load(vp, slot, e0, wide);
        }
#pragma unroll
        for (int g = 0; g < GP; ++g) {
            float s[U], mx = m[g];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                float d = 0.f;
#pragma unroll
                for (int e = 0; e < 8; ++e) d += qv[g][e] * kf[u][e];
#pragma unroll
                for (int x = 1; x < L; x <<= 1) d += shfl_xor_f(d, x);
                if constexpr (CAP) {
                    if (cap > 0.f) d = cap * tanhf(d / cap);
                }
                s[u] = d;
                if (ok[u]) mx = fmaxf(mx, d);
            }
            const float alpha = __expf(m[g] - mx);
            m[g] = mx;
            l[g] *= alpha;
#pragma unroll
            for (int e = 0; e < 8; ++e) o[g][e] *= alpha;
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const float p = ok[u] ? __expf(s[u] - mx) : 0.f;
                l[g] += p;
#pragma unroll
                for (int e = 0; e < 8; ++e) o[g][e] += p * vf[u][e];
            }
        }
    }
    // Combine the warp's row groups (lanes L, 2L, ... apart), then the warps in shared memory.
#pragma unroll
    for (int x = L; x < RF_WARP; x <<= 1) {
#pragma unroll
        for (int g = 0; g < GP; ++g) {
            const float m2 = shfl_xor_f(m[g], x), l2 = shfl_xor_f(l[g], x), mx = fmaxf(m[g], m2);
            const float a1 = __expf(m[g] - mx), a2 = __expf(m2 - mx);
            l[g] = l[g] * a1 + l2 * a2;
#pragma unroll
            for (int e = 0; e < 8; ++e) o[g][e] = o[g][e] * a1 + shfl_xor_f(o[g][e], x) * a2;
            m[g] = mx;
        }
    }
    if (r == 0) {
#pragma unroll
        for (int g = 0; g < GP; ++g) {
#pragma unroll
            for (int e = 0; e < 8; ++e)
                if (lane_valid) sh_wo[w][g * D + 8 * le + e] = o[g][e];
            if (le == 0) { sh_wm[w][g] = m[g]; sh_wl[w][g] = l[g]; }
        }
    }
    __syncthreads();
    if (tid < HB) {
        float mx = NEG;
#pragma unroll
        for (int ww = 0; ww < WARPS; ++ww) mx = fmaxf(mx, sh_wm[ww][tid]);
        float s = 0.f;
#pragma unroll
        for (int ww = 0; ww < WARPS; ++ww) s += sh_wl[ww][tid] * __expf(sh_wm[ww][tid] - mx);
        // decode_merge reads -inf as "empty chunk".
        sh_m[tid] = s > 0.f ? mx : -__int_as_float(0x7f800000);
        sh_l[tid] = s;
        // One chunk: the sink joins the denominator, in units of exp(mx): with M = max(mx, sink),
        // l_total / exp(mx - M) = s + exp(sink - mx) (inf for a sink far above the scores: output 0).
        if (ONE_CHUNK && attention_sinks(a)) sh_l[tid] = s + __expf(sh_sink[tid] - mx);
    }
    for (int i = tid; i < HB * D; i += blockDim.x) {
        const int g = i / D;
        float mx = NEG;
#pragma unroll
        for (int ww = 0; ww < WARPS; ++ww) mx = fmaxf(mx, sh_wm[ww][g]);
        float v = 0.f;
#pragma unroll
        for (int ww = 0; ww < WARPS; ++ww) v += sh_wo[ww][i] * __expf(sh_wm[ww][g] - mx);
        sh_o[i] = v;
    }
    __syncthreads();
    if constexpr (ONE_CHUNK) { // normalised, as decode_finish writes one chunk
        float *out = (float *)((u8 *)a.dst.data + (i64)t * a.dst.nb[1]) + (i64)h0 * D;
        for (int i = tid; i < HB * D; i += blockDim.x) out[i] = sh_o[i] / sh_l[i / D];
    } else {
        decode_finish(a, kvh, c, t, G, sh_o, sh_w, RF_AST_WCAP, sh_m, sh_l, &sh_flag);
    }
}

// rf_attention_stream_d<D>_g<GP>: any pool; ..._h: f16 pools with 16-byte loads (aux[2] bit 0).
#define RF_AST_KERNEL(D, GP) \
    RF_KERNEL __launch_bounds__(128) void rf_attention_stream_d##D##_g##GP(rf_kargs a) { rf_kernel_start(); attn_stream<D, GP, false>(a); } \
    RF_KERNEL __launch_bounds__(128) void rf_attention_stream_d##D##_g##GP##_h(rf_kargs a) { rf_kernel_start(); attn_stream<D, GP, true>(a); }
RF_AST_KERNEL(64, 1) RF_AST_KERNEL(64, 2) RF_AST_KERNEL(64, 4) RF_AST_KERNEL(64, 8)
RF_AST_KERNEL(128, 1) RF_AST_KERNEL(128, 2) RF_AST_KERNEL(128, 4) RF_AST_KERNEL(128, 8)
RF_AST_KERNEL(96, 1) RF_AST_KERNEL(96, 2) RF_AST_KERNEL(96, 4) RF_AST_KERNEL(96, 8)
RF_AST_KERNEL(256, 1) RF_AST_KERNEL(256, 2) RF_AST_KERNEL(256, 4) RF_AST_KERNEL(256, 8)
// ..._w: 16 warps for groups of up to 4 heads, 8 for 8 heads (their queries and sums alone take
// 128 registers: 255 at 256 threads).
#define RF_AST_WIDE_AS(D, GP, W, SUFFIX) \
    RF_KERNEL __launch_bounds__(W * RF_WARP) void rf_attention_stream_d##D##_g##GP##SUFFIX(rf_kargs a) { \
        prefetch_ast_slots<D>(a); rf_kernel_start(); attn_stream<D, GP, false, W, true>(a); } \
    RF_KERNEL __launch_bounds__(W * RF_WARP) void rf_attention_stream_d##D##_g##GP##_h##SUFFIX(rf_kargs a) { \
        prefetch_ast_slots<D>(a); rf_kernel_start(); attn_stream<D, GP, true, W, true>(a); }
#define RF_AST_WIDE(D, GP, W) RF_AST_WIDE_AS(D, GP, W, _w)
RF_AST_WIDE(64, 1, 16) RF_AST_WIDE(64, 2, 16) RF_AST_WIDE(64, 4, 16) RF_AST_WIDE(64, 8, 8)
RF_AST_WIDE(96, 1, 16) RF_AST_WIDE(96, 2, 16) RF_AST_WIDE(96, 4, 16) RF_AST_WIDE(96, 8, 8)
RF_AST_WIDE(128, 1, 16) RF_AST_WIDE(128, 2, 16) RF_AST_WIDE(128, 4, 16) RF_AST_WIDE(128, 8, 8)
// Head size 256: the 16 warps' partial outputs would not fit the static shared memory, so the
// wide forms are the 8-warp and 4-warp ones below (and none for groups of 8).
// ..._w8: the groups of up to 4 heads on 8 warps, for launches of up to two blocks a multiprocessor
// (two 256-thread blocks fit one where a 512-thread one fills it).
RF_AST_WIDE_AS(64, 1, 8, _w8) RF_AST_WIDE_AS(64, 2, 8, _w8) RF_AST_WIDE_AS(64, 4, 8, _w8)
RF_AST_WIDE_AS(96, 1, 8, _w8) RF_AST_WIDE_AS(96, 2, 8, _w8) RF_AST_WIDE_AS(96, 4, 8, _w8)
RF_AST_WIDE_AS(128, 1, 8, _w8) RF_AST_WIDE_AS(128, 2, 8, _w8) RF_AST_WIDE_AS(128, 4, 8, _w8)
RF_AST_WIDE_AS(256, 1, 8, _w8) RF_AST_WIDE_AS(256, 2, 8, _w8) RF_AST_WIDE_AS(256, 4, 8, _w8)
// ..._w4: the one-chunk form over 4 warps, for launches of more than two blocks (KV heads x tokens)
// a multiprocessor: a 16-warp block of ~124 registers a thread is alone on its multiprocessor, so 16
// sequences of 7B (512 blocks) ran in four waves of short blocks; four of these fit one (Nsight
// Compute showed the wide form at low occupancy, much of its time stalled at the barriers).
#define RF_AST_ONE4(D, GP) RF_AST_WIDE_AS(D, GP, RF_AST_WARPS, _w4)
RF_AST_ONE4(64, 1) RF_AST_ONE4(64, 2) RF_AST_ONE4(64, 4) RF_AST_ONE4(64, 8)
RF_AST_ONE4(96, 1) RF_AST_ONE4(96, 2) RF_AST_ONE4(96, 4) RF_AST_ONE4(96, 8)
RF_AST_ONE4(128, 1) RF_AST_ONE4(128, 2) RF_AST_ONE4(128, 4) RF_AST_ONE4(128, 8)
RF_AST_ONE4(256, 1) RF_AST_ONE4(256, 2) RF_AST_ONE4(256, 4)

#endif // RF_NVIDIA
