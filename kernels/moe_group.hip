// Grouping of MATMUL_ID columns by expert for the grouped prefill matmuls (rf_mmqp_id_*,
// matmul_mmq_prefill.hip): everything stays on the GPU, so a layer needs no host round trip.
//
// Column col = s + S*m of MATMUL_ID (token m's slot s, ids[col] its expert). The group scratch
// (a.src[0].data, host: backends/hip/moe_grouped.cpp) holds, in this order:
//   MoeGroupHead head;                 // columns with a valid id, tiles used
//   MoeTile tiles[bound];              // (expert, first sorted column, columns) per block row;
//                                      // entries past head.tiles have cols = 0 (blocks exit)
//   i64 dst_off[S*M];                  // per sorted column: byte offset of its output column
//   int src_row[S*M];                  // per sorted column: its q8_1 activation row
//   (16-byte aligned) rows[S*M];       // the activation rows (q8_1 or f16) in sorted order
//                                      // (rf_moe_gather_rows)
// Sorted order: columns of expert 0, then 1, ..., then those with an id outside 0..E-1 (their
// outputs are zeros, as rf_mm_id_*). The order within an expert is that of the atomics; every
// output column is computed alone with a fixed K order, so the results do not depend on it.
#ifndef RF_MOE_GROUP_HIP
#define RF_MOE_GROUP_HIP
#include "compat.h"

struct MoeGroupHead {
    int good, tiles, pad0, pad1;
};
struct MoeTile {
    int expert, first, cols, pad;
};

#define RF_MOE_GROUP_THREADS 1024
#define RF_MOE_MAX_EXPERTS 512

RF_DEV i64 moe_group_dst_off_at(i64 tiles_bound) { return 16 + 16 * tiles_bound; }

// rf_moe_group_ids: one block. src[0] = group scratch, src[1] = the activations x [K, S1, M]
// (only S1 = ne[1] is read), src[2] = ids [S, M], dst = MATMUL_ID's output; moe_group.n_experts = E,
// moe_group.tile_cols = columns per tile, moe_group.tile_entries = tile entries (the grid of the matmul).
RF_KERNEL __launch_bounds__(RF_MOE_GROUP_THREADS) void rf_moe_group_ids(rf_kargs a) {
    rf_kernel_start();
    __shared__ int count[RF_MOE_MAX_EXPERTS + 1], start[RF_MOE_MAX_EXPERTS + 1], fill[RF_MOE_MAX_EXPERTS + 1];
    __shared__ int used_tiles;
    const int E = a.moe_group.n_experts, C = a.moe_group.tile_cols, bound = a.moe_group.tile_entries, tid = threadIdx.x;
    const int S = (int)a.src[2].ne[0], total = S * (int)a.src[2].ne[1], S1 = (int)a.src[1].ne[1];
    const int *ids = (const int *)a.src[2].data;
    u8 *g = (u8 *)a.src[0].data;
    MoeGroupHead *head = (MoeGroupHead *)g;
    MoeTile *tiles = (MoeTile *)(g + 16);
    i64 *dst_off = (i64 *)(g + moe_group_dst_off_at(bound));
    int *src_row = (int *)(dst_off + total);

    for (int e = tid; e <= E; e += RF_MOE_GROUP_THREADS) count[e] = 0, fill[e] = 0;
    __syncthreads();
    for (int i = tid; i < total; i += RF_MOE_GROUP_THREADS) {
        const int id = ids[i];
        atomicAdd(&count[id >= 0 && id < E ? id : E], 1);
    }
    __syncthreads();
    if (tid == 0) { // E <= 512 and a few hundred tiles: serial is a few microseconds
        int at = 0, t = 0;
        for (int e = 0; e <= E; ++e) {
            start[e] = at;
            if (e < E)
                for (int f = 0; f < count[e]; f += C) tiles[t++] = MoeTile{e, at + f, count[e] - f < C ? count[e] - f : C, 0};
            at += count[e];
        }
        *head = MoeGroupHead{start[E], t, 0, 0};
        used_tiles = t;
    }
    __syncthreads();
    for (int t = used_tiles + tid; t < bound; t += RF_MOE_GROUP_THREADS) tiles[t] = MoeTile{0, 0, 0, 0};
    for (int i = tid; i < total; i += RF_MOE_GROUP_THREADS) {
        const int id = ids[i], e = id >= 0 && id < E ? id : E;
        const int p = start[e] + atomicAdd(&fill[e], 1);
        const int s = i % S, m = i / S;
        dst_off[p] = s * a.dst.nb[1] + m * a.dst.nb[2];
        src_row[p] = m * S1 + (S1 == 1 ? 0 : s);
    }
}

// rf_moe_gather_rows: grid (S*M), 128 threads. Sorted column p < head.good: copies its
// activation row (q8_1 or f16: aux[0] bytes, a multiple of 16) from a.scratch into the sorted rows; the
// columns of bad ids instead write zeros to their output column (dst.ne[0] floats).
// src[0] = group scratch, aux[1] = tile entries, aux[2] = byte offset of the sorted rows.
RF_KERNEL __launch_bounds__(128) void rf_moe_gather_rows(rf_kargs a) {
    rf_kernel_start();
    const u8 *g = (const u8 *)a.src[0].data;
    const int p = blockIdx.x, total = (int)gridDim.x;
    const i64 xs = a.aux[0];
    const i64 *dst_off = (const i64 *)(g + moe_group_dst_off_at(a.aux[1]));
    const int *src_row = (const int *)(dst_off + total);
    if (p < ((const MoeGroupHead *)g)->good) {
        const uint4 *from = (const uint4 *)((const u8 *)a.scratch + (i64)src_row[p] * xs);
        uint4 *to = (uint4 *)((u8 *)a.src[0].data + a.aux[2] + (i64)p * xs);
        for (i64 i = threadIdx.x; i < xs / 16; i += 128) to[i] = from[i];
    } else {
        float *out = (float *)((u8 *)a.dst.data + dst_off[p]);
        for (i64 n = threadIdx.x; n < a.dst.ne[0]; n += 128) out[n] = 0.f;
    }
}

#endif // RF_MOE_GROUP_HIP
