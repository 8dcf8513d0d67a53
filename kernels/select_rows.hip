// Candidate selection over long rows (abi.h TOPK, GATHER): the k largest logits of each row of a
// vocabulary-sized tensor and their values, so that a sampler reads back k candidates per
// sequence instead of the whole row; and TOPK over a mixture of experts' few hundred router logits.
#pragma once

// Each value with its index as one 64-bit key, larger = earlier in TOPK's order: the float's bits
// made monotonic in the high word (-0 first turned into +0, which compares equal to it), the
// inverted index in the low word (equal values: the lower index first). Every key of a row is
// distinct, so "the k largest keys" is one set, found without ties.
RF_DEV unsigned long long select_key(float v, int i) {
    const u32 b = (u32)__float_as_int(v + 0.f);
    const u32 mono = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    return ((unsigned long long)mono << 32) | (u32)~(u32)i;
}
RF_DEV int select_index(unsigned long long key) { return (int)~(u32)key; }

// The larger of v over the warp, every lane.
RF_DEV unsigned long long warp_max_key(unsigned long long v) {
#pragma unroll
    for (int o = RF_WARP / 2; o > 0; o >>= 1) {
        const unsigned long long w = ((unsigned long long)(u32)shfl_xor_i((int)(v >> 32), o) << 32) | (u32)shfl_xor_i((int)(u32)v, o);
        v = w > v ? w : v;
    }
    return v;
}

// TOPK: a warp per row (grid M, 32 threads), E <= 512. The row's keys stay in registers (lane l
// holds entries l, l + 32, ...); k rounds of a warp maximum over the keys not yet taken, the
// winner's lane clearing it. Keys order ties to the lower index, as the CPU backend; a round with
// nothing left yields key 0, index -1. A row holding NaN orders it by its bits (the CPU backend's
// passes compare it with nothing): router logits are never NaN in a working model.
#define RF_TOPK_WARP_KEYS 16 // 512 / RF_WARP
// Row `row`'s k indices into dst's row (lane 0 stores them), KEYS = ceil(E / 32) keys a lane:
// each round's selects cost a lane its keys, so a row of 128 experts keeps 4 (topk_warp_row).
template <int KEYS> RF_DEV void topk_warp_row_keys(const rf_ktensor &x, const rf_ktensor &d, i64 row) {
    const int E = (int)x.ne[0], k = (int)d.ne[0], lane = threadIdx.x % RF_WARP;
    const float *v = (const float *)((const u8 *)x.data + row * x.nb[1]);
    int *out = (int *)((u8 *)d.data + row * d.nb[1]);
    unsigned long long key[KEYS];
#pragma unroll
    for (int r = 0; r < KEYS; ++r) {
        const int e = lane + r * RF_WARP;
        key[r] = e < E ? select_key(v[e], e) : 0ull; // every real key is > 0 (its inverted index)
    }
    for (int j = 0; j < k; ++j) {
        unsigned long long m = key[0];
#pragma unroll
        for (int r = 1; r < KEYS; ++r) m = key[r] > m ? key[r] : m;
        const unsigned long long best = warp_max_key(m);
#pragma unroll
        for (int r = 0; r < KEYS; ++r) key[r] = key[r] == best ? 0ull : key[r];
        if (lane == 0) out[j] = best ? select_index(best) : -1;
    }
}
RF_DEV void topk_warp_row(const rf_ktensor &x, const rf_ktensor &d, i64 row) {
    const i64 E = x.ne[0];
    if (E <= RF_WARP) topk_warp_row_keys<1>(x, d, row);
    else if (E <= 2 * RF_WARP) topk_warp_row_keys<2>(x, d, row);
    else if (E <= 4 * RF_WARP) topk_warp_row_keys<4>(x, d, row);
    else if (E <= 8 * RF_WARP) topk_warp_row_keys<8>(x, d, row);
    else topk_warp_row_keys<RF_TOPK_WARP_KEYS>(x, d, row);
}
RF_KERNEL __launch_bounds__(32) void rf_topk_f32(rf_kargs a) {
    rf_kernel_start();
    topk_warp_row(a.src[0], a.dst, blockIdx.x);
}

#define RF_TOPK_THREADS 1024
#define RF_TOPK_WARPS (RF_TOPK_THREADS / RF_WARP)
#define RF_TOPK_CAP 2048   // candidates kept in shared memory; beyond: the k-round path
#define RF_TOPK_MAX_R 8    // group maxima each warp offers for the floor (k <= 8 * warps)

// TOPK over long rows (grid M, RF_TOPK_THREADS threads), in two reads of the row (the second
// from L2 and only of a few groups):
// 1. thread t's group is entries t, t + T, t + 2T, ... (any sorted stretch spreads over all
//    groups); its largest key is m.
// 2. each warp offers its r = ceil(k / 32) largest group maxima; the k-th largest offer, g, is a
//    floor: k offers (maxima of distinct groups) are >= g, so the row's k largest keys are all
//    >= g and lie in groups whose maximum is >= g. (g = 0, every key, when fewer than k groups
//    are offered.) Those threads read their group again and keep its keys >= g, usually a few
//    dozen in all for a logits row.
// 3. each kept key's rank among them is its output position.
// A row whose kept keys overflow RF_TOPK_CAP (a k of hundreds over a long row, or the largest
// values crowded into a few groups) takes k rounds of a block-wide maximum below the last one.
RF_KERNEL __launch_bounds__(RF_TOPK_THREADS) void rf_topk_rows_f32(rf_kargs a) {
    rf_kernel_start();
    constexpr int T = RF_TOPK_THREADS;
    __shared__ unsigned long long offer[RF_TOPK_WARPS * RF_TOPK_MAX_R];
    __shared__ unsigned long long kept[RF_TOPK_CAP];
    __shared__ int n_kept;
    __shared__ unsigned long long floor_key;
    const rf_ktensor &x = a.src[0], &d = a.dst;
    const int E = (int)x.ne[0], k = (int)d.ne[0], t = threadIdx.x, lane = t % RF_WARP, warp = t / RF_WARP;
    const float *v = (const float *)((const u8 *)x.data + blockIdx.x * x.nb[1]);
    int *out = (int *)((u8 *)d.data + blockIdx.x * d.nb[1]);

    unsigned long long m = 0; // below every key (the low word of a key is ~index, nonzero)
#pragma unroll 8
    for (int e = t; e < E; e += T) {
        const unsigned long long key = select_key(v[e], e);
        m = key > m ? key : m;
    }
    if (t == 0) n_kept = 0, floor_key = 0;
    const int r = (k + RF_WARP - 1) / RF_WARP, n_offers = r * RF_TOPK_WARPS;
    if (r <= RF_TOPK_MAX_R) {
        unsigned long long mine = m;
        for (int i = 0; i < r; ++i) { // the warp's i-th largest group maximum (distinct unless 0)
            const unsigned long long w = warp_max_key(mine);
            if (lane == 0) offer[warp * r + i] = w;
            if (mine == w) mine = 0;
        }
    }
    __syncthreads();
    if (r <= RF_TOPK_MAX_R && t < n_offers) {
        const unsigned long long o = offer[t];
        int rank = 0;
        for (int j = 0; j < n_offers; ++j) rank += offer[j] > o;
        if (rank == k - 1 && o != 0) floor_key = o; // the k-th largest, unique when nonzero
    }
    __syncthreads();
    const unsigned long long g = floor_key;
    if (m >= g) // eight loads in flight, then the appends (the atomics would order them one by one)
        for (int base = t; base < E; base += 8 * T) {
            float f[8];
#pragma unroll
            for (int u = 0; u < 8; ++u) f[u] = base + u * T < E ? v[base + u * T] : 0.f;
#pragma unroll
            for (int u = 0; u < 8; ++u) {
                const int e = base + u * T;
                const unsigned long long key = select_key(f[u], e);
                if (e < E && key >= g) {
                    const int i = atomicAdd(&n_kept, 1);
                    if (i < RF_TOPK_CAP) kept[i] = key;
                }
            }
        }
    __syncthreads();
    const int n = n_kept;
    if (n <= RF_TOPK_CAP) {
        for (int i = t; i < n; i += T) {
            const unsigned long long key = kept[i];
            int rank = 0;
            for (int j = 0; j < n; ++j) rank += kept[j] > key;
            if (rank < k) out[rank] = select_index(key);
        }
        return;
    }
    // Overflow: round j finds the largest key below round j-1's (offer[] holds the warps' bests).
    unsigned long long below = ~0ull;
    for (int j = 0; j < k; ++j) {
        unsigned long long best = 0;
        for (int e = t; e < E; e += T) {
            const unsigned long long key = select_key(v[e], e);
            best = key < below && key > best ? key : best;
        }
        best = warp_max_key(best);
        if (lane == 0) offer[warp] = best;
        __syncthreads();
        best = warp_max_key(lane < RF_TOPK_WARPS ? offer[lane] : 0);
        below = best;
        if (t == 0) out[j] = select_index(below);
        __syncthreads(); // offer[] read by all before the next round writes it
    }
}

// GATHER: dst[j, m] = src0[src1[j, m], m] (grid M, 64 threads); an index outside the row reads 0.
RF_KERNEL __launch_bounds__(64) void rf_gather_f32(rf_kargs a) {
    rf_kernel_start();
    const rf_ktensor &x = a.src[0], &ids = a.src[1], &d = a.dst;
    const int E = (int)x.ne[0], k = (int)d.ne[0];
    const float *v = (const float *)((const u8 *)x.data + blockIdx.x * x.nb[1]);
    const int *id = (const int *)((const u8 *)ids.data + blockIdx.x * ids.nb[1]);
    float *o = (float *)((u8 *)d.data + blockIdx.x * d.nb[1]);
    for (int j = threadIdx.x; j < k; j += blockDim.x) o[j] = id[j] >= 0 && id[j] < E ? v[id[j]] : 0.f;
}
