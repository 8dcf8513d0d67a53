// EXPERIMENT (measured slower, reverted in the next commit; docs/notes/decode_latency.md,
// "Twenty-fourth session"). A decode projection and the residual add + RMS norm after it in one launch: MATMUL ADD
// RMS_NORM MUL (a layer's O or FFN-down projection of 1..4 activation columns, the add of the
// residual stream, the next norm and its weight), claimed by plugins/packs/matmul_norm.c. Apart,
// the fused norm (rf_add_rms_norm_mul*) was a launch of its own that began only once the whole
// matmul had ended: one more kernel boundary, twice a layer. Here each warp dots a weight row as
// the backend's rf_mvq_<type> / rf_mvqn_<type>_<NC>x1 do (mvq_dot_cols: the same floats), adds
// the residual (the sum, stored) and each block leaves the sum of its rows' squares (double) in
// scratch before counting itself in (last_arrival). The last block to arrive adds those partial
// sums (in block order), and normalises, multiplies and quantizes every column as the fused norm
// does (norm_scale_row: one 16-byte piece a thread), reading the sums back from L2. It reads final
// values, so the result does not depend on which block is last; the partial sums' order differs
// from the fused norm's, which in double shows only where the sum lands within an ulp of a float
// rounding boundary (as the norm's cluster form).
//
// Arguments: src[0] = weights [K, N] (a q8_1 type; rows nb[1] apart), scratch = the activations'
// q8_1 columns (aux[0] apart); src[1] = the residual (the add's other operand), src[2] = the norm
// weight [N], src[3] = the sum, src[4] = the normalised rows: f32 [N, NC], columns N floats apart;
// dst unbound, its members addresses: dst.ne[0] = the matmul's product, dst.ne[1] = MUL's result
// (the same layout), dst.ne[2] = the arrival counter (an int, 0), dst.ne[3] = the first q8_1
// column of MUL's result (0: none; RF_Q8_1_COLUMN_BYTES(N) apart, block aux[1]); aux[2] = room for
// the blocks' partial sums (gridDim.x x NC doubles); fparams[0] = eps; iparams[7] = 1: no L2
// prefetch of the weight rows. 1024 threads, a row a warp, grid N / 32; N <= 4096 (a piece of the
// row a thread) and N % 32 == 0.
// The q8_1 columns may lie on the activations' (scratch): only the last block writes them, after
// every block has read its activations. NVIDIA packs (the column kernels are theirs).
#include "compat.h"
#include "mvq_blocks.h"

#if RF_NVIDIA
#define RF_MVN_WARPS 32

// Before rf_kernel_start: the warp's weight row into L2 (iparams[7] = 0), and in block 0 the norm
// weight, which the last block reads, whichever block that is. (A prefetch only moves lines into
// L2, which every SM sees alike.)
RF_DEV void prefetch_mvq_norm(const rf_kargs &a) {
    const rf_ktensor &w = a.src[0];
    const i64 n = (i64)blockIdx.x * RF_MVN_WARPS + threadIdx.x / RF_WARP;
    if (blockIdx.x == 0 && threadIdx.x < RF_WARP) prefetch_l2((const u8 *)a.src[2].data, w.ne[1] * 4);
    if (a.iparams[7] || n >= w.ne[1]) return;
    prefetch_l2((const u8 *)w.data + n * w.nb[1], w.nb[1]);
}

template <class B, int NC> RF_DEV void mvq_norm(const rf_kargs &a) {
    const rf_ktensor &w = a.src[0];
    const i64 N = w.ne[1], K = w.ne[0];
    const int lane = threadIdx.x % RF_WARP, wi = threadIdx.x / RF_WARP;
    const i64 n = (i64)blockIdx.x * RF_MVN_WARPS + wi;
    const bool writer = n < N && split_writer<NC>(lane); // the lane holding column m's value of row n
    const int m = split_col<NC>(lane);
    float *prod = (float *)a.dst.ne[0], *sum = (float *)a.src[3].data;
    __shared__ double sh_sq[NC][RF_MVN_WARPS];
    // The residual first: its load completes while the row is dotted.
    const float r = writer ? ((const float *)a.src[1].data)[m * N + n] : 0.f;
    double sq = 0.0;
    if (n < N) {
        float acc[1][NC];
        mvq_dot_cols<B, NC, 1>((const u8 *)w.data + n * w.nb[1], w.nb[1], 1, (const i8 *)a.scratch, a.aux[0], K, acc);
        if (writer) {
            const float v = acc[0][0] + r; // ADD's float sum (the same whichever operand is first)
            prod[m * N + n] = acc[0][0];
            sum[m * N + n] = v; // after the product: they may be the same bytes
            sq = (double)v * v;
        }
    }
    if (writer) sh_sq[m][wi] = sq;
    __syncthreads();
    if (wi < NC) { // warp c adds column c's squares of the block's rows, in row order
        const double t = warp_sum(n - wi + lane < N ? sh_sq[wi][lane] : 0.0);
        if (lane == 0) ((double *)a.aux[2])[(i64)blockIdx.x * NC + wi] = t;
    }
    __shared__ int sh_last;
    if (!last_arrival((int *)a.dst.ne[2], (int)gridDim.x, &sh_last)) return;
    // The last block: each column's scale from the partial sums, then its normalised row, the
    // product with the weight and its q8_1 column (a piece of 4 elements a thread).
    __shared__ double sh[RF_WARP];
    const int blocks = (int)gridDim.x, c = (int)threadIdx.x;
    const NormWeight<1> wv = load_norm_weight<1>((const float *)a.src[2].data, (int)N);
    u8 *q8 = a.aux[1] ? (u8 *)a.dst.ne[3] : (u8 *)0;
    for (int col = 0; col < NC; ++col) {
        const double part = c < blocks ? __ldcg((const double *)a.aux[2] + (i64)c * NC + col) : 0.0;
        float4 v[1] = {c < N / 4 ? ld_l2(sum + col * N + 4 * c) : f4(0.f, 0.f, 0.f, 0.f)};
        const float inv = rms_scale(block_sum_d(part, sh), N, a.fparams[0]);
        NormRow row;
        row.norm_out = (float *)a.src[4].data + col * N;
        row.y = (float *)a.dst.ne[1] + col * N;
        row.q8 = q8 ? q8 + col * ((N + N / 32 * 8 + 15) / 16 * 16) : (u8 *)0; // RF_Q8_1_COLUMN_BYTES(N) apart
        row.K = (int)N;
        row.block = (int)a.aux[1];
        norm_scale_row<1>(v, inv, wv, row, c);
    }
}

#define RF_MVQ_NORM(t, B, NC) \
    RF_KERNEL __launch_bounds__(RF_MVN_WARPS * RF_WARP) void rf_mvq_norm_##t##_##NC(rf_kargs a) { \
        prefetch_mvq_norm(a); rf_kernel_start(); mvq_norm<B, NC>(a); }
// One column: rf_mvq_<type>'s row form; several: rf_mvqn_<type>_<NC>x1's (Q6_K: MvqQ6KCols).
#define RF_MVQ_NORM_TYPE(t, B, BC) RF_MVQ_NORM(t, B, 1) RF_MVQ_NORM(t, BC, 2) RF_MVQ_NORM(t, BC, 3) RF_MVQ_NORM(t, BC, 4)
RF_MVQ_NORM_TYPE(q4_k, MvqK4<T_Q4_K>, MvqK4<T_Q4_K>)
RF_MVQ_NORM_TYPE(q5_k, MvqK4<T_Q5_K>, MvqK4<T_Q5_K>)
RF_MVQ_NORM_TYPE(q6_k, MvqQ6K, MvqQ6KCols)
RF_MVQ_NORM_TYPE(q4_0, MvqQ4_0, MvqQ4_0)
RF_MVQ_NORM_TYPE(q8_0, MvqQ8_0, MvqQ8_0)
#endif // RF_NVIDIA
