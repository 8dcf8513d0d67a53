// ADD + RMS_NORM + MUL (norm weight) in one launch per row, optionally also the q8_1 form of the
// result for the matmuls that read it as q8_1 columns (decode of one or several sequences,
// prefill on the integer tensor cores: each of these ops alone is one more launch).
// Every intermediate is still written (the sum, the normalised row, the product) with the same
// arithmetic and reduction order as rf_add_f32 / rf_rms_norm_f32 / rf_mul_f32 /
// rf_quantize_q8_1 (the norm scale as compat.h's rms_scale: same floats as the CPU backend). The
// row is held in registers as float4 pieces (at most 16384 elements, checked by the host).
// src0 = x (the add's first operand), src1 = the add's second operand (data null: no add),
// src2 = norm weight [K], src3 = add result, src4 = rms_norm result, dst = product;
// parameters a.norm (rf_kp_norm): eps; weight_is_model = 1: src2 is a model weight (read before
// the previous kernel ends); cluster_blocks = blocks a row (the cluster form below; grid x = rows
// x blocks); prefetch_add = 1: the add's operands pulled into L2 before the wait
// (prefetch_norm_row). aux[0] = q8_1 column stride into scratch (0: no quantization; row r is
// column r), aux[1] = its block size (32 or 256, see quantize_act.hip).
#include "compat.h"
#include "cluster.h"

// Up to 1024 threads per row, each holding C float4 pieces of it in registers between the
// passes (host: K % 4 == 0, K <= blockDim.x * 4 * C, 16-byte aligned rows, blockDim.x a multiple
// of 64). Piece c = tid + blockDim.x j covers elements [4c, 4c + 4): a q8_1 block of 32 is 8
// lanes of one warp. A row is one block on one SM, whose four schedulers issue every instruction
// of every thread: the kernel is bound by the instructions per row, not by memory (Nsight
// Compute's issue counts of 16 rows of 4096 with 1024 threads account for a row's time).
// So what is the same for the whole row is done once, not by every thread: the row's coordinates
// (one set for all six tensors, which have the same shape), the norm scale (warp 0 finishes the
// sum in double and shares the float), the quantization factor 127 / amax (once per piece, not per
// element). The host picks C (rf_add_rms_norm_mul_1 / _2 / _4) and the block size that covers
// the row; a piece slot past the row's end still costs its (predicated) instructions.
//
// The cluster form (rf_add_rms_norm_mul_c<N>, sm_90): N blocks of a thread-block cluster share a
// row, one piece per thread each, block `rank` pieces [rank T, rank T + T). Each block sums its
// squares as above, the blocks add the N block sums from distributed shared memory in rank order
// (every block the same order, so the same scale), and each normalises and quantizes its own
// part: a row's instructions spread over N SMs. The cluster barrier also orders every block's
// reads of x and the addend before any block writes the sum (which may lie on x). The squares'
// sum is a double, so the order (blocks, then ranks) does not show in the float scale but where
// the double lands within an ulp of a float rounding boundary.
#define RF_NORM_THREADS 1024

RF_DEV float4 f4(float x, float y, float z, float w) { float4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }
RF_DEV float4 ld4(const float *p) { return *(const float4 *)p; }
RF_DEV void st4(float *p, float4 v) { *(float4 *)p = v; }
RF_DEV float max8_lanes(float v) { // max over the 8-lane group of this lane
    v = fmaxf(v, shfl_xor_f(v, 1));
    v = fmaxf(v, shfl_xor_f(v, 2));
    return fmaxf(v, shfl_xor_f(v, 4));
}
RF_DEV float sum8_lanes(float v) {
    v += shfl_xor_f(v, 1);
    v += shfl_xor_f(v, 2);
    return v + shfl_xor_f(v, 4);
}


// The norm weight's pieces of this thread. norm.weight_is_model = 1 (the host saw a model weight, never
// written): loaded before rf_kernel_start(), overlapping the previous kernel (compat.h); otherwise
// (a weight computed in the graph) after it.
template <int C> struct NormWeight { float4 v[C]; };
typedef NormWeight<1> NormWeight1;
typedef NormWeight<2> NormWeight2;
typedef NormWeight<4> NormWeight4;
// The first piece of this block's part of the row: 0, or in the cluster form (N > 1) rank x C x T.
template <int C, int N> RF_DEV int first_piece() { return N > 1 ? (int)cluster_rank() * C * (int)blockDim.x : 0; }
template <int C, int N = 1> RF_DEV NormWeight<C> prefetch_norm_weight(const rf_kargs &a, bool started = false) {
    NormWeight<C> w;
    const bool load = started || a.norm.weight_is_model == 1;
    const int n4 = (int)(a.src[0].ne[0] / 4), T = (int)blockDim.x;
    const int base = first_piece<C, N>();
    const float *p = (const float *)a.src[2].data;
#pragma unroll
    for (int j = 0; j < C; ++j) {
        const int c = base + (int)threadIdx.x + j * T;
        w.v[j] = load && c < n4 ? ld4(p + 4 * c) : f4(0.f, 0.f, 0.f, 0.f);
    }
    return w;
}

// Where row blockIdx.x's tensors and q8_1 column lie, found before rf_kernel_start(): the kernel
// arguments and the row's coordinates do not depend on the previous kernel, and after the wait
// their constant loads and 64-bit address products were a third of the warps' stall samples
// (Nsight Compute source counters, one 4096-element row, H100).
struct NormRow {
    const float *x, *xb;
    float *sum_out, *norm_out, *y;
    u8 *q8;   // null: no quantization
    int K, block;
    float eps;
};
template <int N = 1> RF_DEV NormRow prefetch_norm_row(const rf_kargs &a) {
    const rf_ktensor &s0 = a.src[0];
    const unsigned ri = N > 1 ? blockIdx.x / N : blockIdx.x; // N blocks a row in the cluster form
    // Row ri's coordinates, once for all tensors (the host checked equal shapes).
    const RowAt at = row_at(s0, ri);
    const bool add = a.src[1].data != 0;
    NormRow r;
    r.x = row_of(s0, at);
    r.xb = add ? row_of(a.src[1], at) : (const float *)0;
    r.sum_out = add ? row_of(a.src[3], at) : (float *)0;
    r.norm_out = row_of(a.src[4], at);
    r.y = row_of(a.dst, at);
    r.q8 = a.aux[0] == 0 ? (u8 *)0 : (u8 *)a.scratch + (i64)ri * a.aux[0];
    r.K = (int)s0.ne[0];
    r.block = (int)a.aux[1];
    r.eps = a.norm.eps;
#if RF_NVIDIA
    // The add's operands into L2 while the kernel before still runs, a 128-byte line a thread
    // over this block's part of the row: one of them (the residual stream) was written several
    // kernels ago and has usually left L2 under the weights streamed since, which put an HBM
    // round trip on the chain after the wait (prefetch_line_l2: safe whatever the kernel before
    // writes).
    if (add && a.norm.prefetch_add) {
        const int part = r.K / N, first = N > 1 ? (int)cluster_rank() * part : 0;
        for (int e = first + 32 * (int)threadIdx.x; e < first + part; e += 32 * (int)blockDim.x) {
            prefetch_line_l2(r.x + e);
            prefetch_line_l2(r.xb + e);
        }
    }
#endif
    return r;
}

template <int C, int N = 1>
RF_DEV void add_rms_norm_mul_row(const rf_kargs &a, const NormWeight<C> &early, const NormRow &row) {
    const NormWeight<C> wv = a.norm.weight_is_model == 1 ? early : prefetch_norm_weight<C, N>(a, true);
    __shared__ double sh[RF_WARP];
    __shared__ double sh_part; // N > 1: this block's sum of squares, read by the cluster's blocks
    __shared__ float sh_inv;
    __shared__ float sh_amax[C * RF_NORM_THREADS / RF_WARP];
    const int K = row.K, n4 = K / 4, T = (int)blockDim.x, th = threadIdx.x;
    const int lane = th % RF_WARP, wi = th / RF_WARP;
    const int tid = first_piece<C, N>() + th; // piece = tid + j T
    const bool add = row.xb != 0;
    const float *x = row.x, *xb = add ? row.xb : row.x;
    float *sum_out = row.sum_out, *norm_out = row.norm_out, *y = row.y;
    // Every load first (x, the addend), then the arithmetic.
    float4 v[C];
#pragma unroll
    for (int j = 0; j < C; ++j) {
        const int c = tid + j * T;
        v[j] = f4(0.f, 0.f, 0.f, 0.f);
        if (c < n4) {
            v[j] = ld4(x + 4 * c);
            if (add) {
                const float4 b = ld4(xb + 4 * c);
                v[j].x += b.x; v[j].y += b.y; v[j].z += b.z; v[j].w += b.w;
            }
        }
    }
    double s = 0.0;
#pragma unroll
    for (int j = 0; j < C; ++j) {
        const int c = tid + j * T;
        if (N == 1 && add && c < n4) st4(sum_out + 4 * c, v[j]); // same thread read x there: in-place safe
        s += (double)v[j].x * v[j].x + (double)v[j].y * v[j].y + (double)v[j].z * v[j].z + (double)v[j].w * v[j].w;
    }
    // block_sum_d's order (each warp's butterfly, then warp 0's over the warp sums), and the
    // scale computed once.
    s = warp_sum(s);
    if (lane == 0) sh[wi] = s;
    __syncthreads();
    if (wi == 0) {
        const double t = warp_sum(lane < T / RF_WARP ? sh[lane] : 0.0);
        if (N > 1 && lane == 0) sh_part = t;
        if (N == 1 && lane == 0) sh_inv = rms_scale(t, K, row.eps);
    }
    if (N > 1) {
        // Every block's sum is in its shared memory and every read of x and the addend is done.
        cluster_sync();
        if (wi == 0 && lane == 0) {
            const u32 part = shared_addr(&sh_part);
            double t = 0.0;
            for (int q = 0; q < N; ++q) t += cluster_ld<double>(part, (u32)q);
            sh_inv = rms_scale(t, K, row.eps);
        }
        cluster_arrive(); // this block reads no other's shared memory after this
    }
    __syncthreads();
    const float inv = sh_inv;
#pragma unroll
    for (int j = 0; j < C; ++j) {
        const int c = tid + j * T;
        if (N > 1 && add && c < n4) st4(sum_out + 4 * c, v[j]);
        const float4 n = f4(v[j].x * inv, v[j].y * inv, v[j].z * inv, v[j].w * inv);
        v[j] = f4(n.x * wv.v[j].x, n.y * wv.v[j].y, n.z * wv.v[j].z, n.w * wv.v[j].w);
        if (c < n4) { st4(norm_out + 4 * c, n); st4(y + 4 * c, v[j]); }
    }
    // q8_1 form of the row (column r of the scratch), quantized like rf_quantize_q8_1 (aux[1] =
    // block 32 or 256): block 32 = 8 lanes; block 256 = two warps (the warp maxima meet in
    // shared memory).
    if (!row.q8) return;
    u8 *q8 = row.q8;
    float amax[C];
#pragma unroll
    for (int j = 0; j < C; ++j)
        amax[j] = max8_lanes(fmaxf(fmaxf(fabsf(v[j].x), fabsf(v[j].y)), fmaxf(fabsf(v[j].z), fabsf(v[j].w))));
    if (row.block == 256) {
#pragma unroll
        for (int j = 0; j < C; ++j) {
            float m = fmaxf(amax[j], shfl_xor_f(amax[j], 8)); // butterfly over the warp's four 8-lane groups
            m = fmaxf(m, shfl_xor_f(m, 16));
            if (lane == 0) sh_amax[j * (RF_NORM_THREADS / RF_WARP) + wi] = m;
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < C; ++j) {
            const float *g = sh_amax + j * (RF_NORM_THREADS / RF_WARP) + (wi & ~1);
            amax[j] = fmaxf(g[0], g[1]);
        }
    }
#pragma unroll
    for (int j = 0; j < C; ++j) {
        const int c = tid + j * T;
        const bool in = 4 * c < K; // whole 8-lane groups are in or out (K % 32 == 0); all lanes shuffle
        const float f = act_factor(amax[j]);
        const int q0 = act_quant_f(v[j].x, amax[j], f), q1 = act_quant_f(v[j].y, amax[j], f),
                  q2 = act_quant_f(v[j].z, amax[j], f), q3 = act_quant_f(v[j].w, amax[j], f);
        const float qsum = sum8_lanes((float)(q0 + q1 + q2 + q3));
        if (!in) continue;
        *(u32 *)(q8 + 4 * c) = (u32)(u8)q0 | ((u32)(u8)q1 << 8) | ((u32)(u8)q2 << 16) | ((u32)(u8)q3 << 24);
        if (lane % 8 == 0) {
            float *ds = (float *)(q8 + K) + 2 * (c / 8);
            ds[0] = act_scale(amax[j]);
            ds[1] = ds[0] * qsum;
        }
    }
}

RF_KERNEL __launch_bounds__(RF_NORM_THREADS) void rf_add_rms_norm_mul(rf_kargs a) {
    const NormWeight2 w = prefetch_norm_weight<2>(a);
    const NormRow row = prefetch_norm_row(a);
    rf_kernel_start();
    add_rms_norm_mul_row<2>(a, w, row);
}
RF_KERNEL __launch_bounds__(RF_NORM_THREADS) void rf_add_rms_norm_mul_1(rf_kargs a) {
    const NormWeight1 w = prefetch_norm_weight<1>(a);
    const NormRow row = prefetch_norm_row(a);
    rf_kernel_start();
    add_rms_norm_mul_row<1>(a, w, row);
}
RF_KERNEL __launch_bounds__(RF_NORM_THREADS) void rf_add_rms_norm_mul_4(rf_kargs a) {
    const NormWeight4 w = prefetch_norm_weight<4>(a);
    const NormRow row = prefetch_norm_row(a);
    rf_kernel_start();
    add_rms_norm_mul_row<4>(a, w, row);
}
// The cluster form: N blocks a row (grid x = rows x N), one piece per thread. Each block waits for
// the cluster before leaving: no block's shared memory goes while another may still read it.
#define RF_NORM_CLUSTER(N)                                                                                     \
    RF_KERNEL __launch_bounds__(RF_NORM_THREADS) RF_CLUSTER_DIMS(N) void rf_add_rms_norm_mul_c##N(rf_kargs a) { \
        const NormWeight1 w = prefetch_norm_weight<1, N>(a);                                                   \
        const NormRow row = prefetch_norm_row<N>(a);                                                           \
        rf_kernel_start();                                                                                     \
        add_rms_norm_mul_row<1, N>(a, w, row);                                                                 \
        cluster_wait();                                                                                        \
    }
RF_NORM_CLUSTER(2)
RF_NORM_CLUSTER(4)
RF_NORM_CLUSTER(8)

// RMS_NORM + MUL of a few short rows in one block, a warp a row (rows <= 32, K <= 128: one float4
// piece a lane; the host checks). Every row is read before the block's barrier and written after
// it, so a product lying partly over another row's input (the executor reuses the input's bytes
// once the norm has read them) is safe, which the one-block-a-row kernels cannot be. A row's sum
// of squares is its warp's butterfly over the same pieces as rf_add_rms_norm_mul_1 with 64
// threads (the second warp adds zeros there): the same bits. No q8_1 form, no add.
// This lane's row (warp r's) and piece, and the norm weight's piece where it is a model weight
// (never written: read before the wait).
struct NormRowsLane {
    const float *x;
    float *norm_out, *y;
    float4 w;
    int K;
    bool mine; // a piece of a row: lane < K / 4 of a warp below the row count
};
RF_DEV NormRowsLane prefetch_norm_rows_lane(const rf_kargs &a) {
    const int lane = threadIdx.x % RF_WARP, r = threadIdx.x / RF_WARP;
    const rf_ktensor &s0 = a.src[0];
    NormRowsLane p;
    p.K = (int)s0.ne[0];
    p.mine = r < (int)(s0.ne[1] * s0.ne[2] * s0.ne[3]) && lane < p.K / 4;
    const RowAt at = row_at(s0, p.mine ? r : 0);
    p.x = row_of(s0, at);
    p.norm_out = row_of(a.src[4], at);
    p.y = row_of(a.dst, at);
    p.w = p.mine && a.norm.weight_is_model == 1 ? ld4((const float *)a.src[2].data + 4 * lane) : f4(0.f, 0.f, 0.f, 0.f);
    return p;
}
RF_KERNEL __launch_bounds__(RF_NORM_THREADS) void rf_rms_norm_mul_rows(rf_kargs a) {
    const NormRowsLane p = prefetch_norm_rows_lane(a);
    rf_kernel_start();
    const int lane = threadIdx.x % RF_WARP;
    const float4 w = p.mine && a.norm.weight_is_model != 1 ? ld4((const float *)a.src[2].data + 4 * lane) : p.w;
    const float4 v = p.mine ? ld4(p.x + 4 * lane) : f4(0.f, 0.f, 0.f, 0.f);
    double s = (double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z + (double)v.w * v.w;
    s = warp_sum(s);
    __syncthreads(); // every row read before any is written
    if (!p.mine) return;
    const float inv = rms_scale(s, p.K, a.norm.eps);
    const float4 n = f4(v.x * inv, v.y * inv, v.z * inv, v.w * inv);
    st4(p.norm_out + 4 * lane, n);
    st4(p.y + 4 * lane, f4(n.x * w.x, n.y * w.y, n.z * w.z, n.w * w.w));
}
