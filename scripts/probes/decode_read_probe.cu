// What a one-column decode matmul could reach: each decode-shaped weight matrix (Llama-2-7B's, in
// Q4_K and Q6_K) read by a plain streaming kernel with the matmul's thread mapping (a warp per row,
// four rows a block, 16-byte loads), against the production dot products (kernels/mvq_blocks.h)
// on the same bytes. Launches run back to back with programmatic dependent launch, as in a decode
// graph, each on another region of a 4 GiB pool (the L2 never holds the matrix). Prints
// microseconds per launch and GB/s. Standalone, NVIDIA only (sm_90); build on the development
// machine and run on the GPU machine:
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -I kernels \
//        -o probe/decode_read_probe scripts/probes/decode_read_probe.cu
// The read also with each lane's first loads issued before rf_kernel_start: into registers, into
// shared memory (cp.async), or as L2 prefetches only. The Q6_K matrices also in a split layout
// (each row's quants, then its scales, then its d: every load aligned; MvqQ6KSplit below).
// Results: docs/notes/decode_latency.md ("Eighteenth session", "Nineteenth session",
// "Twenty-sixth session").
#include "compat.h"
#include "mvq_blocks.h"
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

RF_DEV uint4 ldnc(const uint4 *p) {
    uint4 v;
    asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
RF_DEV uint4 ldg(const uint4 *p) { // the same without .nc (the engine's F16 and Q4_K loads)
    uint4 v;
    asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
// Lane's 16-byte pieces i, i + 32, ... < n16 of row p, U loads in flight, folded into a checksum
// (NC: through the read-only path).
template <int U, bool NC = true> RF_DEV unsigned read_from(const uint4 *p, long i, long n16) {
    unsigned acc = 0;
    for (; i + 32 * (U - 1) < n16; i += 32 * U) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = NC ? ldnc(p + i + 32 * u) : ldg(p + i + 32 * u);
#pragma unroll
        for (int u = 0; u < U; ++u) acc += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n16; i += 32) { const uint4 v = NC ? ldnc(p + i) : ldg(p + i); acc += v.x ^ v.y ^ v.z ^ v.w; }
    return acc;
}
// A warp per row of rb bytes (rb % 16 == 0), U 16-byte loads per lane in flight.
template <int U, bool NC = true> __global__ void __launch_bounds__(128) k_read(const u8 *base, long rb, long nrows, float *y) {
    rf_kernel_start();
    const long row = (long)blockIdx.x * 4 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= nrows) return;
    const uint4 *p = (const uint4 *)(base + row * rb);
    const long n16 = rb / 16;
    const unsigned acc = read_from<U, NC>(p, lane, n16);
    if (acc == 0x12345678u) y[row] = 1.f; // never true for the pool's bytes; keeps the loads
}
// The same, with each lane's first U loads issued before rf_kernel_start (weights never depend on
// the kernel before): the loads of the blocks resident early overlap the previous launch.
template <int U> __global__ void __launch_bounds__(128) k_read_pre(const u8 *base, long rb, long nrows, float *y) {
    const long row = (long)blockIdx.x * 4 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    const uint4 *p = (const uint4 *)(base + row * rb);
    const long n16 = rb / 16;
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = row < nrows && lane + 32 * u < n16 ? ldnc(p + lane + 32 * u) : make_uint4(0, 0, 0, 0);
    rf_kernel_start();
    if (row >= nrows) return;
    unsigned acc = 0;
#pragma unroll
    for (int u = 0; u < U; ++u) acc += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    acc += read_from<U>(p, lane + 32 * U, n16);
    if (acc == 0x12345678u) y[row] = 1.f;
}
// The first U loads' lines only pulled into L2 before rf_kernel_start, then read as k_read does.
template <int U> __global__ void __launch_bounds__(128) k_read_pf(const u8 *base, long rb, long nrows, float *y) {
    const long row0 = (long)blockIdx.x * 4 + threadIdx.x / 32;
    if (row0 < nrows) {
        const u8 *r = base + row0 * rb;
        const long n = rb < 512L * U ? rb : 512L * U;
        for (long o = (long)(threadIdx.x % 32) * 128; o < n; o += 32 * 128) asm volatile("prefetch.global.L2 [%0];" ::"l"(r + o));
    }
    rf_kernel_start();
    const long row = row0;
    const int lane = threadIdx.x % 32;
    if (row >= nrows) return;
    const uint4 *p = (const uint4 *)(base + row * rb);
    const long n16 = rb / 16;
    const unsigned acc = read_from<U>(p, lane, n16);
    if (acc == 0x12345678u) y[row] = 1.f;
}
// The first U 16-byte pieces of each lane copied into shared memory (cp.async) before
// rf_kernel_start, read from there after it: nothing held in registers across the wait.
template <int U> __global__ void __launch_bounds__(128) k_read_smem(const u8 *base, long rb, long nrows, float *y) {
    __shared__ uint4 st[4][U][32];
    const int wi = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long row = (long)blockIdx.x * 4 + wi;
    const uint4 *p = (const uint4 *)(base + row * rb);
    const long n16 = rb / 16;
    if (row < nrows)
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (lane + 32 * u < n16) {
                const unsigned d = shared_addr(&st[wi][u][lane]);
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(p + lane + 32 * u) : "memory");
            }
    asm volatile("cp.async.commit_group;" ::: "memory");
    rf_kernel_start();
    if (row >= nrows) return;
    unsigned acc = read_from<U>(p, lane + 32 * U, n16);
    asm volatile("cp.async.wait_group 0;" ::: "memory");
#pragma unroll
    for (int u = 0; u < U; ++u)
        if (lane + 32 * u < n16) { const uint4 v = st[wi][u][lane]; acc += v.x ^ v.y ^ v.z ^ v.w; }
    if (acc == 0x12345678u) y[row] = 1.f;
}
// The production row dot: R rows a warp, one q8_1 column.
template <class B, int R> __global__ void __launch_bounds__(128) k_mvq(const u8 *w, long rb, long N, const i8 *xq, long K, float *y) {
    rf_kernel_start();
    const long n0 = ((long)blockIdx.x * 4 + threadIdx.x / 32) * R;
    if (n0 >= N) return;
    float acc[R][1];
    mvq_dot_cols<B, 1, R>(w + n0 * rb, rb, (int)(N - n0 < R ? N - n0 : R), xq, 0, K, acc);
    if (threadIdx.x % 32 == 0)
        for (int r = 0; r < R; ++r)
            if (n0 + r < N) y[n0 + r] = acc[r][0];
}

// Q6_K with each row split into its quants (NB x 192 bytes: ql then qh of each block), then the
// blocks' scales (NB x 16), then their d (NB x 2): every piece a lane loads is 8-byte aligned, one
// load each, where the 210-byte blocks (2-byte aligned) need two loads and two funnel shifts per
// piece. The same bytes and the same arithmetic (MvqQ6KT's dot); only the loads differ.
template <int NB> struct MvqQ6KSplit : MvqQ6KT<true> {
    RF_DEV void load(const u8 *row, i64 b, int lane) {
        const int j = lane & 7, n = j >> 2, l0 = 8 * (j & 3);
        const u8 *q = row + b * 192;
        u32 p[4][2];
        ld_g8(q + 64 * n + l0, p[0][0], p[0][1]);
        ld_g8(q + 64 * n + 32 + l0, p[1][0], p[1][1]);
        ld_g8(q + 128 + 32 * n + l0, p[2][0], p[2][1]);
        ld_g8(row + NB * 192 + b * 16 + 8 * n, p[3][0], p[3][1]);
        d = h2f(*(const u16 *)(row + NB * 208 + 2 * b));
        unpack(p, lane);
    }
};

// F16 rows dotted with an f32 vector, R rows a warp sharing the vector's loads, U 16-byte weight
// loads of each row in flight per lane (the engine's mv_f16_dot: R = 1, U = 4). A warning from the
// twenty-sixth session: here two rows a warp beat one (7B FFN down 27.8 against 30.9 us), but in the
// engine the one-row kernel ran that matrix in 23.4 us and two rows a warp in 28.4 (the profiler,
// 7B F16 decode): these back-to-back launches do not stand for the engine's F16 kernels.
template <int R, int U> __global__ void __launch_bounds__(128) k_f16(const u8 *w, long rb, long N, const float *x, long K, float *y) {
    rf_kernel_start();
    const long n0 = ((long)blockIdx.x * 4 + threadIdx.x / 32) * R;
    if (n0 >= N) return;
    const int lane = threadIdx.x % 32;
    const long n8 = K / 8;
    float acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = 0.f;
#pragma unroll U
    for (long i = lane; i < n8; i += 32) {
        const float4 x0 = *(const float4 *)(x + 8 * i), x1 = *(const float4 *)(x + 8 * i + 4);
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const uint4 q = ldnc((const uint4 *)(w + (n0 + r) * rb) + i);
            acc[r] += h2f((u16)q.x) * x0.x + h2f((u16)(q.x >> 16)) * x0.y + h2f((u16)q.y) * x0.z + h2f((u16)(q.y >> 16)) * x0.w +
                      h2f((u16)q.z) * x1.x + h2f((u16)(q.z >> 16)) * x1.y + h2f((u16)q.w) * x1.z + h2f((u16)(q.w >> 16)) * x1.w;
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const float v = warp_sum(acc[r]);
        if (lane == 0 && n0 + r < N) y[n0 + r] = v;
    }
}
static void f16_shapes(float *xf, float *y);

static u8 *pool;
static const long kPool = 4L << 30;
template <class... A> void launch_pdl(void (*k)(A...), unsigned grid, unsigned threads, A... args) {
    cudaLaunchConfig_t c{};
    c.gridDim = grid;
    c.blockDim = threads;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    c.attrs = at;
    c.numAttrs = 1;
    CK(cudaLaunchKernelEx(&c, k, args...));
}
template <class F> float us_per_launch(long bytes, F launch) {
    const long slot = (bytes + 65535) / 65536 * 65536, slots = kPool / slot;
    const int reps = 300;
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int r = 0; r < 30; ++r) launch(pool + (r % slots) * slot);
    cudaEventRecord(a);
    for (int r = 0; r < reps; ++r) launch(pool + ((r + 7) % slots) * slot);
    cudaEventRecord(b);
    CK(cudaEventSynchronize(b));
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    return ms * 1000.f / reps;
}
int main() {
    CK(cudaMalloc(&pool, kPool));
    CK(cudaMemset(pool, 0x11, kPool));
    i8 *xq;
    float *y;
    CK(cudaMalloc(&xq, 1 << 20));
    CK(cudaMemset(xq, 0x3, 1 << 20));
    CK(cudaMalloc(&y, 1 << 20));
    struct Shape { const char *name; int type; long n, k; } shapes[] = {
        {"O      Q4_K 4096x4096 ", T_Q4_K, 4096, 4096},   {"QKV    Q4_K 12288x4096", T_Q4_K, 12288, 4096},
        {"gateup Q4_K 22016x4096", T_Q4_K, 22016, 4096},  {"down   Q4_K 4096x11008", T_Q4_K, 4096, 11008},
        {"down   Q6_K 4096x11008", T_Q6_K, 4096, 11008},  {"V      Q6_K 4096x4096 ", T_Q6_K, 4096, 4096},
        {"out    Q6_K 32000x4096", T_Q6_K, 32000, 4096}};
    for (const Shape &s : shapes) {
        const long rb = s.k / 256 * (s.type == T_Q4_K ? 144 : 210), bytes = s.n * rb, rb16 = (rb + 15) / 16 * 16;
        printf("%s %6.1f MB:", s.name, bytes / 1e6);
        auto rep = [&](const char *v, float us) { printf("  %s %6.2f us %5.0f GB/s |", v, us, bytes / us / 1e3); };
        rep("read", us_per_launch(s.n * rb16, [&](const u8 *p) { launch_pdl(k_read<4>, (unsigned)((s.n + 3) / 4), 128u, p, rb16, s.n, y); }));
        rep("read without .nc", us_per_launch(s.n * rb16, [&](const u8 *p) { launch_pdl(k_read<4, false>, (unsigned)((s.n + 3) / 4), 128u, p, rb16, s.n, y); }));
        rep("read, 4 loads before the wait", us_per_launch(s.n * rb16, [&](const u8 *p) { launch_pdl(k_read_pre<4>, (unsigned)((s.n + 3) / 4), 128u, p, rb16, s.n, y); }));
        rep("8 before", us_per_launch(s.n * rb16, [&](const u8 *p) { launch_pdl(k_read_pre<8>, (unsigned)((s.n + 3) / 4), 128u, p, rb16, s.n, y); }));
        rep("L2 pf 4", us_per_launch(s.n * rb16, [&](const u8 *p) { launch_pdl(k_read_pf<4>, (unsigned)((s.n + 3) / 4), 128u, p, rb16, s.n, y); }));
        rep("L2 pf 8", us_per_launch(s.n * rb16, [&](const u8 *p) { launch_pdl(k_read_pf<8>, (unsigned)((s.n + 3) / 4), 128u, p, rb16, s.n, y); }));
        rep("smem 4", us_per_launch(s.n * rb16, [&](const u8 *p) { launch_pdl(k_read_smem<4>, (unsigned)((s.n + 3) / 4), 128u, p, rb16, s.n, y); }));
        rep("smem 8", us_per_launch(s.n * rb16, [&](const u8 *p) { launch_pdl(k_read_smem<8>, (unsigned)((s.n + 3) / 4), 128u, p, rb16, s.n, y); }));
        printf("\n                                 ");
#define MVQ(B, R, tag)                                                                                                            \
    rep(tag, us_per_launch(bytes, [&](const u8 *p) {                                                                              \
        launch_pdl(k_mvq<B, R>, (unsigned)((s.n + 4 * R - 1) / (4 * R)), 128u, p, rb, s.n, (const i8 *)xq, s.k, y); }))
        if (s.type == T_Q4_K) { MVQ(MvqK4<T_Q4_K>, 1, "dot, 1 row a warp"); MVQ(MvqK4<T_Q4_K>, 2, "2 rows"); }
        else {
            MVQ(MvqQ6K, 1, "dot, 1 row a warp"); MVQ(MvqQ6K, 2, "2 rows");
            // The split rows (row stride rounded up to 16 bytes).
            const long rbs = rb16;
#define MVQS(NB, R, tag)                                                                                                          \
    rep(tag, us_per_launch(s.n * rbs, [&](const u8 *p) {                                                                          \
        launch_pdl(k_mvq<MvqQ6KSplit<NB>, R>, (unsigned)((s.n + 4 * R - 1) / (4 * R)), 128u, p, rbs, s.n, (const i8 *)xq, s.k, y); }))
            if (s.k == 4096) { MVQS(16, 1, "split rows, 1 row a warp"); MVQS(16, 2, "split, 2 rows"); }
            else { MVQS(43, 1, "split rows, 1 row a warp"); MVQS(43, 2, "split, 2 rows"); }
        }
        printf("\n");
    }
    float *xf;
    CK(cudaMalloc(&xf, 64 << 10));
    CK(cudaMemset(xf, 0, 64 << 10));
    f16_shapes(xf, y);
    CK(cudaGetLastError());
    return 0;
}
static void f16_shapes(float *xf, float *y) {
    struct Shape { const char *name; long n, k; } shapes[] = {
        {"O      F16  4096x4096 ", 4096, 4096}, {"gate   F16  11008x4096", 11008, 4096},
        {"down   F16  4096x11008", 4096, 11008}, {"out    F16  32000x4096", 32000, 4096}};
    for (const Shape &s : shapes) {
        const long rb = 2 * s.k, bytes = s.n * rb;
        printf("%s %6.1f MB:", s.name, bytes / 1e6);
        auto rep = [&](const char *v, float us) { printf("  %s %6.2f us %5.0f GB/s |", v, us, bytes / us / 1e3); };
        rep("read", us_per_launch(bytes, [&](const u8 *p) { launch_pdl(k_read<4>, (unsigned)((s.n + 3) / 4), 128u, p, rb, s.n, y); }));
        rep("read without .nc", us_per_launch(bytes, [&](const u8 *p) { launch_pdl(k_read<4, false>, (unsigned)((s.n + 3) / 4), 128u, p, rb, s.n, y); }));
#define F16K(R, U, tag) \
    rep(tag, us_per_launch(bytes, [&](const u8 *p) { launch_pdl(k_f16<R, U>, (unsigned)((s.n + 4 * R - 1) / (4 * R)), 128u, p, rb, s.n, (const float *)xf, s.k, y); }))
        F16K(1, 4, "dot 1 row, 4 loads (engine)"); F16K(1, 8, "1 row, 8"); F16K(2, 4, "2 rows, 4"); F16K(2, 2, "2 rows, 2");
        printf("\n");
    }
}
