// MATMUL_ID prefill grouped by expert (semantics: abi.h; kernels: moe_group.hip, rf_mmqp_id_* in
// matmul_mmq_prefill.hip, rf_mm_h16_id_64 in matmul_h16.hip, rf_mm_q16w_id_* in
// matmul_h16_wgmma.hip). Three launches, no host round trip: the routing ids stay on the GPU.
//  1. rf_moe_group_ids (one block): counting sort of the S*M (token, slot) columns by expert,
//     each expert's columns cut into tiles of `cols`; per sorted column its activation row and
//     output offset.
//  2. rf_moe_gather_rows: the activation rows copied into sorted order (q8_1 rows of
//     ensure_q8_columns for the quantized types, f16 rows of quantized_activations for F16:
//     what the dense prefill matmuls read, so the CPU's rounding; f16 rows rounded through q8
//     blocks for the dequantizing wgmma tiles, as matmul_q16w); columns with an id outside
//     0..E-1 get zero outputs.
//  3. the tile kernel, one block per (128 weight rows, tile of up to `cols` of one expert's
//     tokens): each expert row is read once per tile of its tokens.
// The host does not know how the tokens split, so the tile grid is the bound on the tile count,
// ceil(S*M / cols) + min(E, S*M) (each chosen expert's last tile may be partial); the unused
// entries exit at once.
#include "moe_grouped.h"

#include <algorithm>
#include <cstdlib>

#include "matmul_h16.h"
#include "matmul_h16_layout.h"
#include "matmul_mmq.h"
#include "ops.h"

namespace rf_hip {

namespace {

constexpr int64_t kMaxExperts = 512; // rf_moe_group_ids' shared counters
constexpr unsigned kGroupThreads = 1024;

// Which tile kernels take the experts: integer tensor cores (q8_1 rows), f16 tensor cores (F16
// weights; the others dequantized to f16 on the wgmma tiles).
enum class Tiles { none, mmq, h16, q16w };
Tiles tiles_for(const Backend &b, const rf_tensor *w) {
    if (mmqp_id_usable(b, w)) return Tiles::mmq;
    if (h16_id_usable(b, w)) return Tiles::h16;
    if (q16w_id_usable(b, w)) return Tiles::q16w;
    return Tiles::none;
}

// Columns per tile: the integer tiles choose by shape; the f16 mma tiles take 64, the wgmma ones
// RF_H16W_BM.
int tile_cols(const Backend &b, Tiles kind, const rf_tensor *w, int64_t pairs, int64_t E) {
    if (kind == Tiles::mmq) return mmqp_id_cols(b, w->type, pairs, E);
    return kind == Tiles::q16w ? RF_H16W_BM : 64;
}

int64_t round16(int64_t v) { return (v + 15) / 16 * 16; }

// The group scratch (layout: kernels/moe_group.hip).
struct GroupLayout {
    int64_t tiles, rows_at, bytes;
};
GroupLayout group_layout(int64_t pairs, int64_t experts, int cols, int64_t row_bytes) {
    GroupLayout l;
    l.tiles = (pairs + cols - 1) / cols + std::min(experts, pairs);
    l.rows_at = round16(16 + 16 * l.tiles + 12 * pairs);
    l.bytes = l.rows_at + pairs * row_bytes;
    return l;
}

} // namespace

bool matmul_id_grouped_usable(const Backend &b, const rf_node &n) {
    const rf_tensor *w = n.src[0], *x = n.src[1], *ids = n.src[2];
    const int64_t pairs = ids->ne[0] * ids->ne[1], E = w->ne[2];
    // Option moe_group_min (default 64; 0: never). moe.cpp tries the dp4a path first, which takes up
    // to 64 columns (kMvqIdCols), so grouping starts above that whatever the option says.
    const int64_t group_min = b.options.moe_group_min;
    if (group_min <= 0 || pairs < group_min || E > kMaxExperts || tiles_for(b, w) == Tiles::none) return false;
    if (x->ne[1] * x->ne[2] > 65535) return false; // ensure_q8_columns' limit
    return group_layout(pairs, E, 64, 1).tiles <= 65535; // the tile grid (64 columns: the largest bound)
}

int matmul_id_grouped(Backend &b, const rf_node &n, std::string &err) {
    const rf_tensor *w = n.src[0], *x = n.src[1], *ids = n.src[2];
    const int64_t pairs = ids->ne[0] * ids->ne[1], E = w->ne[2], K = w->ne[0];
    const Tiles kind = tiles_for(b, w);
    const int cols = tile_cols(b, kind, w, pairs, E);
    const int64_t row_bytes = kind == Tiles::mmq ? q8_column_bytes(K) : K * 2;
    const GroupLayout l = group_layout(pairs, E, cols, row_bytes);
    // Before the activations are prepared: growing a scratch drops the cached copies.
    if (!ensure_scratch(b, b.moe_scratch, std::max<uint64_t>((uint64_t)l.bytes, 1 << 20), false, err))
        return RF_ERR_OUT_OF_MEMORY;
    rf_kargs a = make_args(n); // dst, src[0] weights, src[1] x, src[2] ids
    const void *rows = nullptr; // the activation rows, dense, row_bytes apart
    if (kind == Tiles::mmq) {
        if (int r = ensure_q8_columns(b, x, act_block(w->type), err)) return r;
        rows = b.q8.where;
    } else {
        rf_ktensor kx = a.src[1];
        if (int r = quantized_activations(b, x, kind == Tiles::q16w ? act_block(w->type) : 0, true, kx, err)) return r;
        rows = kx.data;
    }

    rf_ktensor group = a.src[0];
    group.data = b.moe_scratch.ptr;

    rf_kargs g = a;
    g.src[0] = group;
    g.moe_group.n_experts = (int)E;
    g.moe_group.tile_cols = cols;
    g.moe_group.tile_entries = (int)l.tiles;
    if (int r = launch(b, "rf_moe_group_ids", 1, 1, 1, kGroupThreads, g, err)) return r;

    rf_kargs c = a;
    c.src[0] = group;
    c.scratch = const_cast<void *>(rows);
    c.aux[0] = row_bytes;
    c.aux[1] = l.tiles;
    c.aux[2] = l.rows_at;
    if (int r = launch(b, "rf_moe_gather_rows", (unsigned)pairs, 1, 1, 128, c, err)) return r;

    rf_kargs m = a;
    m.src[1] = group;
    m.scratch = nullptr;
    m.aux[0] = row_bytes;
    m.aux[1] = l.tiles;
    m.aux[2] = l.rows_at;
    if (kind == Tiles::mmq) return launch_mmqp_id(b, w, cols, l.tiles, m, err);
    return kind == Tiles::q16w ? launch_q16w_id(b, w, l.tiles, m, err) : launch_h16_id(b, w, l.tiles, m, err);
}

std::vector<std::string> moe_group_kernel_names() {
#if defined(RF_HIP_NVIDIA)
    return {"rf_moe_group_ids", "rf_moe_gather_rows"};
#else
    return {};
#endif
}

} // namespace rf_hip
