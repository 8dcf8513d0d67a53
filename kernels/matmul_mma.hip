// MATMUL for prefill on NVIDIA tensor cores (the host uses it for M >= 16 on sm_* devices;
// AMD keeps rf_mm_tiled_*). Block tile: 128 weight rows (N) x BM tokens (M, 64 or 128), K in
// steps of 32; 8 warps, each owns a (128/WARPS_N) x (BM/WARPS_M) sub-tile of mma.sync
// m16n8k16 (f16 inputs, f32 accumulate), fragments through ldmatrix.
// Pipeline: two shared-memory stages; the raw quantized bytes of the next weight tile and
// the next f32 activation tile are loaded into registers before the tensor cores work on the
// current stage, then decoded/converted to f16 into the other stage (one barrier per step).
// Weights are never dequantized to memory: each thread decodes 16 values of one row per step.
// Requirements checked by the host (ops.cpp): K % 32 == 0; activation rows 16-byte aligned;
// Q4_K/Q5_K/F16 rows 16-byte aligned, Q4_0/Q8_0/Q6_K 2-byte aligned.
#include "compat.h"
#include "quant_decode.h"

#if RF_NVIDIA

#define RF_MMA_BN 128
#define RF_MMA_BK 32
#define RF_MMA_LD 40 // halves per shared row (32 + 8 pad): rows 80 bytes apart, ldmatrix conflict-free
#define RF_MMA_THREADS 256

struct u32x4 { u32 x, y, z, w; };

RF_DEV u32x4 ld_g16(const u8 *p) { // 16-byte global load (p 16-byte aligned)
    u32x4 r;
    asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
    return r;
}

// 16 bytes at a 2-byte aligned address (blocks of Q4_0/Q8_0/Q6_K rows): two or three aligned
// 8-byte loads and funnel shifts instead of eight 2-byte loads (each warp-wide load touches 16
// rows, so the count of load instructions is what limits these types). The extra bytes read
// lie in the same aligned 8-byte word as needed bytes, never past an allocation.
RF_DEV u32x4 ld16_a2(const u8 *p) {
    const unsigned long long a = (unsigned long long)p;
    const u8 *base = (const u8 *)(a & ~7ull);
    const int off = (int)(a & 7), k = off >> 2, r = 8 * (off & 3);
    u32 w[6];
    asm volatile("ld.global.nc.v2.u32 {%0,%1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(base));
    asm volatile("ld.global.nc.v2.u32 {%0,%1}, [%2];" : "=r"(w[2]), "=r"(w[3]) : "l"(base + 8));
    w[4] = w[5] = 0;
    if (off) asm volatile("ld.global.nc.v2.u32 {%0,%1}, [%2];" : "=r"(w[4]), "=r"(w[5]) : "l"(base + 16));
    u32 o[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const u32 lo = k ? w[i + 1] : w[i], hi = k ? w[i + 2] : w[i + 1];
        o[i] = __funnelshift_r(lo, hi, r);
    }
    return u32x4{o[0], o[1], o[2], o[3]};
}

RF_DEV void ldsm_x4(u32 *r, const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(shared_addr(p)));
}

RF_DEV void mma_f16_16816(float *c, const u32 *a, u32 b0, u32 b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

RF_DEV u32 pack2_rn(float lo, float hi) { // f32 pair -> f16x2 (lo in the low half), one cvt
    u32 r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

// Small unsigned integer (< 2^23) -> float without the quarter-rate I2F unit: exact.
RF_DEV float u2f_exact(u32 v) { return __uint_as_float(0x4B000000u | v) - 8388608.f; }

// Byte i (run-time 0..11) of the three words y,z,w (Q4_K/Q5_K scale bytes), no local memory.
RF_DEV u32 byte_of3(u32 y, u32 z, u32 w, int i) {
    const u32 v = i < 4 ? y : (i < 8 ? z : w);
    return (v >> (8 * (i & 3))) & 0xFFu;
}

// ---- weight tile loaders: raw bytes of 16 weights (row, 32-chunk c, half h) -> registers ----
// wraw<T>::load issues the global loads only; decode() turns them into 8 packed f16 pairs.
template <int T> struct wraw { // any type: decoded at load time (not a benchmark type)
    u32 p[8];
    RF_DEV void load(const u8 *row, i64 c, int h, i64 K) {
        float y[32];
        decode32_any<T>(row, c, K, y);
#pragma unroll
        for (int j = 0; j < 8; ++j) p[j] = h ? pack2_rn(y[16 + 2 * j], y[17 + 2 * j]) : pack2_rn(y[2 * j], y[2 * j + 1]);
    }
    RF_DEV void decode(int, u32 *o) const {
#pragma unroll
        for (int j = 0; j < 8; ++j) o[j] = p[j];
    }
};

template <> struct wraw<T_F16> {
    u32x4 a, b;
    RF_DEV void load(const u8 *row, i64 c, int h, i64) {
        const u8 *p = row + (c * 32 + 16 * h) * 2;
        a = ld_g16(p); b = ld_g16(p + 16);
    }
    RF_DEV void decode(int, u32 *o) const {
        o[0] = a.x; o[1] = a.y; o[2] = a.z; o[3] = a.w; o[4] = b.x; o[5] = b.y; o[6] = b.z; o[7] = b.w;
    }
};

template <> struct wraw<T_Q8_0> { // 34-byte blocks: d, 32 x int8
    u32 d, q[4];
    RF_DEV void load(const u8 *row, i64 c, int h, i64) {
        const u8 *b = row + c * 34;
        d = *(const u16 *)b;
        const u32x4 v = ld16_a2(b + 2 + 16 * h);
        q[0] = v.x; q[1] = v.y; q[2] = v.z; q[3] = v.w;
    }
    RF_DEV void decode(int, u32 *o) const {
        const float s = h2f((u16)d);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const u32 v = q[j] ^ 0x80808080u; // int8 + 128 as unsigned bytes
            float f[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) f[e] = s * (u2f_exact((v >> (8 * e)) & 0xFF) - 128.f);
            o[2 * j] = pack2_rn(f[0], f[1]); o[2 * j + 1] = pack2_rn(f[2], f[3]);
        }
    }
};

template <> struct wraw<T_Q4_0> { // 18-byte blocks: d, 16 bytes (low nibbles = 0..15, high = 16..31)
    u32 d, q[4];
    RF_DEV void load(const u8 *row, i64 c, int, i64) {
        const u8 *b = row + c * 18;
        d = *(const u16 *)b;
        const u32x4 v = ld16_a2(b + 2);
        q[0] = v.x; q[1] = v.y; q[2] = v.z; q[3] = v.w;
    }
    RF_DEV void decode(int h, u32 *o) const {
        const float s = h2f((u16)d);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const u32 v = (q[j] >> (4 * h)) & 0x0F0F0F0Fu;
            float f[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) f[e] = s * (u2f_exact((v >> (8 * e)) & 0xFF) - 8.f);
            o[2 * j] = pack2_rn(f[0], f[1]); o[2 * j + 1] = pack2_rn(f[2], f[3]);
        }
    }
};

// Q4_K / Q5_K (144 / 176-byte super-blocks of 8 sub-blocks of 32): header (d, dmin, 12 scale
// bytes) as one 16-byte load, the 16 quant bytes of this half as another (plus 16 high-bit
// bytes for Q5_K). Sub-block s = c & 7 uses nibble s & 1 of qs[32 * (s >> 1) + l].
template <int T> struct wraw_k4 {
    u32x4 hd, qs, qh;
    u32 s;
    RF_DEV void load(const u8 *row, i64 c, int h, i64) {
        const u8 *b = row + (c >> 3) * qtraits<T>::bytes;
        s = (u32)(c & 7);
        hd = ld_g16(b);
        qs = ld_g16(b + (T == T_Q4_K ? 16 : 48) + 32 * (s >> 1) + 16 * h);
        if (T == T_Q5_K) qh = ld_g16(b + 16 + 16 * h);
    }
    RF_DEV void decode(int, u32 *o) const {
        const float d = h2f((u16)(hd.x & 0xFFFF)), dmin = h2f((u16)(hd.x >> 16));
        const int j = (int)s;
        u32 sc, mn;
        if (j < 4) { sc = byte_of3(hd.y, hd.z, hd.w, j) & 63; mn = byte_of3(hd.y, hd.z, hd.w, j + 4) & 63; }
        else {
            sc = (byte_of3(hd.y, hd.z, hd.w, j + 4) & 0xF) | ((byte_of3(hd.y, hd.z, hd.w, j - 4) >> 6) << 4);
            mn = (byte_of3(hd.y, hd.z, hd.w, j + 4) >> 4) | ((byte_of3(hd.y, hd.z, hd.w, j) >> 6) << 4);
        }
        const float dl = d * (float)sc, ml = dmin * (float)mn;
        const u32 qw[4] = {qs.x, qs.y, qs.z, qs.w};
        const u32 hw[4] = {qh.x, qh.y, qh.z, qh.w};
        const int nib = 4 * (j & 1);
#pragma unroll
        for (int w = 0; w < 4; ++w) {
            u32 v = (qw[w] >> nib) & 0x0F0F0F0Fu;
            if (T == T_Q5_K) v |= ((hw[w] >> j) & 0x01010101u) << 4;
            float f[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) f[e] = dl * u2f_exact((v >> (8 * e)) & 0xFF) - ml;
            o[2 * w] = pack2_rn(f[0], f[1]); o[2 * w + 1] = pack2_rn(f[2], f[3]);
        }
    }
};
template <> struct wraw<T_Q4_K> : wraw_k4<T_Q4_K> {};
template <> struct wraw<T_Q5_K> : wraw_k4<T_Q5_K> {};

template <> struct wraw<T_Q6_K> { // 210-byte super-blocks (2-byte aligned): ql, qh, int8 scales, d
    u32 ql[4], qh[4], sd, s;
    RF_DEV void load(const u8 *row, i64 c, int h, i64) {
        const u8 *b = row + (c >> 3) * 210;
        s = (u32)(c & 7);
        const u32 n = s >> 2, k = s & 3;
        const u32x4 l4 = ld16_a2(b + 64 * n + (k & 1) * 32 + 16 * h), h4 = ld16_a2(b + 128 + 32 * n + 16 * h);
        ql[0] = l4.x; ql[1] = l4.y; ql[2] = l4.z; ql[3] = l4.w;
        qh[0] = h4.x; qh[1] = h4.y; qh[2] = h4.z; qh[3] = h4.w;
        // scale byte 8n + 2k + h and d (bytes 208..209) in one word each
        sd = (u32)b[192 + 8 * n + 2 * k + h] | ((u32)*(const u16 *)(b + 208) << 16);
    }
    RF_DEV void decode(int, u32 *o) const {
        const float dl = h2f((u16)(sd >> 16)) * (float)(i8)(sd & 0xFF);
        const int k = (int)(s & 3), nib = 4 * (k >> 1), hs = 2 * k;
#pragma unroll
        for (int w = 0; w < 4; ++w) {
            const u32 v = ((ql[w] >> nib) & 0x0F0F0F0Fu) | (((qh[w] >> hs) & 0x03030303u) << 4);
            float f[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) f[e] = dl * (u2f_exact((v >> (8 * e)) & 0xFF) - 32.f);
            o[2 * w] = pack2_rn(f[0], f[1]); o[2 * w + 1] = pack2_rn(f[2], f[3]);
        }
    }
};

template <int BM> struct mma_cfg {
    enum {
        WARPS_N = BM == 128 ? 2 : 4, WARPS_M = 8 / WARPS_N,
        WTN = RF_MMA_BN / WARPS_N, WTM = BM / WARPS_M, // warp sub-tile: WTN weight rows x WTM tokens
        MI = WTN / 16, NJ = WTM / 8,                   // mma tiles per warp
        XF = BM * RF_MMA_BK / RF_MMA_THREADS           // activation floats loaded per thread per step
    };
};

template <int T, int BM> RF_DEV void mm_mma_impl(const rf_kargs &a) {
    typedef mma_cfg<BM> C;
    __shared__ __align__(16) u16 Ws[2][RF_MMA_BN][RF_MMA_LD];
    __shared__ __align__(16) u16 Xs[2][BM][RF_MMA_LD];
    const rf_ktensor &w = a.src[0], &x = a.src[1], &d = a.dst;
    const i64 K = w.ne[0], N = w.ne[1], M = x.ne[1];
    const i64 n0 = (i64)blockIdx.x * RF_MMA_BN, m0 = (i64)blockIdx.y * BM;
    const int z = blockIdx.z;
    const i64 i2 = z % x.ne[2], i3 = z / x.ne[2];
    const i64 ow = (i2 / (x.ne[2] / w.ne[2])) * w.nb[2] + (i3 / (x.ne[3] / w.ne[3])) * w.nb[3];
    const u8 *wb = (const u8 *)w.data + ow;
    const u8 *xb = (const u8 *)x.data + i2 * x.nb[2] + i3 * x.nb[3];
    u8 *db = (u8 *)d.data + i2 * d.nb[2] + i3 * d.nb[3];

    const int tid = threadIdx.x, lane = tid % RF_WARP, wid = tid / RF_WARP;
    const int wn = (wid % C::WARPS_N) * C::WTN, wm = (wid / C::WARPS_N) * C::WTM;

    // This thread's loads: weight row wr, half wh (16 values); activation row xr, XF floats at xk.
    const int wr = tid >> 1, wh = tid & 1;
    const bool w_in = n0 + wr < N;
    const u8 *wrow = wb + (n0 + wr) * w.nb[1];
    // Activations: f32 rows, or f16 rows (x.type F16: the host's CPU-like quantized activations,
    // already rounded as store_tile would round them) read 16 bytes at a time.
    const int xr = tid / (RF_MMA_BK / C::XF), xk = (tid % (RF_MMA_BK / C::XF)) * C::XF;
    const bool x_in = m0 + xr < M, xh = x.type == T_F16;
    const float *xrow = (const float *)(xb + (m0 + xr) * x.nb[1]) + xk;
    const u16 *xrow_h = (const u16 *)(xb + (m0 + xr) * x.nb[1]) + xk;

    float acc[C::MI][C::NJ][4];
#pragma unroll
    for (int i = 0; i < C::MI; ++i)
#pragma unroll
        for (int j = 0; j < C::NJ; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

    wraw<T> wreg;
    float4 xreg[C::XF / 4];
    uint4 hreg[C::XF / 8];
    auto load_tile = [&](i64 kt) {
        if (w_in) wreg.load(wrow, kt, wh, K);
        if (xh) {
#pragma unroll
            for (int q = 0; q < C::XF / 8; ++q)
                hreg[q] = x_in ? *(const uint4 *)(xrow_h + kt * RF_MMA_BK + 8 * q) : uint4{0u, 0u, 0u, 0u};
            return;
        }
#pragma unroll
        for (int q = 0; q < C::XF / 4; ++q)
            xreg[q] = x_in ? *(const float4 *)(xrow + kt * RF_MMA_BK + 4 * q) : float4{0.f, 0.f, 0.f, 0.f};
    };
    auto store_tile = [&](int buf) {
        u32 o[8];
        if (w_in) wreg.decode(wh, o);
        else
#pragma unroll
            for (int j = 0; j < 8; ++j) o[j] = 0;
        uint4 *ws = (uint4 *)&Ws[buf][wr][16 * wh];
        ws[0] = uint4{o[0], o[1], o[2], o[3]};
        ws[1] = uint4{o[4], o[5], o[6], o[7]};
        if (xh) {
#pragma unroll
            for (int q = 0; q < C::XF / 8; ++q) ((uint4 *)&Xs[buf][xr][xk])[q] = hreg[q];
            return;
        }
        uint2 *xs = (uint2 *)&Xs[buf][xr][xk];
#pragma unroll
        for (int q = 0; q < C::XF / 4; ++q)
            xs[q] = uint2{pack2_rn(xreg[q].x, xreg[q].y), pack2_rn(xreg[q].z, xreg[q].w)};
    };

    const i64 KT = K / RF_MMA_BK;
    load_tile(0);
    store_tile(0);
    __syncthreads();
    for (i64 kt = 0; kt < KT; ++kt) {
        const int buf = (int)(kt & 1);
        if (kt + 1 < KT) load_tile(kt + 1); // in flight while the tensor cores run
#pragma unroll
        for (int kk = 0; kk < RF_MMA_BK; kk += 16) {
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
        if (kt + 1 < KT) store_tile(buf ^ 1); // the other stage: nobody reads it this step
        __syncthreads();
    }

    const int g = lane >> 2, t4 = lane & 3;
#pragma unroll
    for (int i = 0; i < C::MI; ++i)
#pragma unroll
        for (int j = 0; j < C::NJ; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const i64 n = n0 + wn + 16 * i + g + 8 * (r >> 1), m = m0 + wm + 8 * j + 2 * t4 + (r & 1);
                if (n < N && m < M) ((float *)(db + m * d.nb[1]))[n] = acc[i][j][r];
            }
}

// BM = 128: 64 accumulators per thread, one block per SM; BM = 64: two blocks per SM.
#define RF_MM_MMA(NAME, T)                                                                                        \
    RF_KERNEL __launch_bounds__(RF_MMA_THREADS, 1) void rf_mm_mma128_##NAME(rf_kargs a) { rf_kernel_start(); mm_mma_impl<T, 128>(a); } \
    RF_KERNEL __launch_bounds__(RF_MMA_THREADS, 2) void rf_mm_mma64_##NAME(rf_kargs a) { rf_kernel_start(); mm_mma_impl<T, 64>(a); }
// Every weight type but f32 (f32 weights use the generic kernel at every M).
RF_MM_MMA(f16, T_F16) RF_MM_MMA(bf16, T_BF16) RF_MM_MMA(q4_0, T_Q4_0) RF_MM_MMA(q4_1, T_Q4_1)
RF_MM_MMA(q5_0, T_Q5_0) RF_MM_MMA(q5_1, T_Q5_1) RF_MM_MMA(q8_0, T_Q8_0) RF_MM_MMA(q2_k, T_Q2_K)
RF_MM_MMA(q3_k, T_Q3_K) RF_MM_MMA(q4_k, T_Q4_K) RF_MM_MMA(q5_k, T_Q5_K) RF_MM_MMA(q6_k, T_Q6_K)
RF_MM_MMA(mxfp4, T_MXFP4) RF_MM_MMA(mxfp6_e2m3, T_MXFP6_E2M3) RF_MM_MMA(mxfp6_e3m2, T_MXFP6_E3M2)
RF_MM_MMA(iq2_xxs, T_IQ2_XXS) RF_MM_MMA(iq2_xs, T_IQ2_XS) RF_MM_MMA(iq2_s, T_IQ2_S) RF_MM_MMA(iq3_xxs, T_IQ3_XXS)
RF_MM_MMA(iq3_s, T_IQ3_S) RF_MM_MMA(iq1_s, T_IQ1_S) RF_MM_MMA(iq1_m, T_IQ1_M) RF_MM_MMA(iq4_nl, T_IQ4_NL)
RF_MM_MMA(iq4_xs, T_IQ4_XS) RF_MM_MMA(tq1_0, T_TQ1_0) RF_MM_MMA(tq2_0, T_TQ2_0)

#endif // RF_NVIDIA
