// MATMUL_ID prefill grouped by expert (semantics: abi.h; kernels: moe_group.hip, rf_mmqp_id_* in
// matmul_mmq_prefill.hip). Three launches, no host round trip: the routing ids stay on the GPU.
//  1. rf_moe_group_ids (one block): counting sort of the S*M (token, slot) columns by expert,
//     each expert's columns cut into tiles of `cols`; per sorted column its activation row and
//     output offset.
//  2. rf_moe_gather_q8: the q8_1 activation rows (ensure_q8_columns, as the dense prefill
//     matmuls) copied into sorted order; columns with an id outside 0..E-1 get zero outputs.
//  3. rf_mmqp_id_<type>_<cols>: grid (weight row tiles, tile bound); a block per (row tile,
//     expert tile) reads its expert's weights once per tile of up to `cols` of its tokens.
// The host does not know how the tokens split, so grid y is the bound on the tile count,
// ceil(S*M / cols) + min(E, S*M) (each chosen expert's last tile may be partial); the unused
// entries exit at once.
#include "moe_grouped.h"

#include <algorithm>
#include <cstdlib>

#include "matmul_mmq.h"
#include "ops.h"

namespace rf_hip {

namespace {

constexpr int64_t kMaxExperts = 512; // rf_moe_group_ids' shared counters
constexpr unsigned kGroupThreads = 1024;

// ROCMFORGE_HIP_MOE_GROUP_MIN=N: fewest (token, slot) columns that take the grouped path
// (default 64, just above the dp4a path's 32; 0 turns the grouped path off, A/B). The 33..63
// columns between stay on rf_mm_id_* (not measured: where the crossover lies is the lead's
// H100 A/B).
int64_t group_min_cols() {
    static const int64_t v = [] {
        const char *s = std::getenv("ROCMFORGE_HIP_MOE_GROUP_MIN");
        return s && *s ? (int64_t)std::atoll(s) : (int64_t)64;
    }();
    return v;
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
    if (group_min_cols() <= 0 || pairs < group_min_cols() || E > kMaxExperts || !mmqp_id_usable(b, w)) return false;
    if (x->ne[1] * x->ne[2] > 65535) return false; // ensure_q8_columns' limit
    return group_layout(pairs, E, 64, 1).tiles <= 65535; // grid y (64: the larger bound)
}

int matmul_id_grouped(Backend &b, const rf_node &n, std::string &err) {
    const rf_tensor *w = n.src[0], *x = n.src[1], *ids = n.src[2];
    const int64_t pairs = ids->ne[0] * ids->ne[1], E = w->ne[2], xs = q8_column_bytes(w->ne[0]);
    const int cols = mmqp_id_cols(w->type, pairs, E);
    const GroupLayout l = group_layout(pairs, E, cols, xs);
    // Before the activations are quantized: growing a scratch drops the cached q8_1 copy.
    if (!ensure_scratch(b, b.moe_scratch, std::max<uint64_t>((uint64_t)l.bytes, 1 << 20), false, err))
        return RF_ERR_OUT_OF_MEMORY;
    if (int r = ensure_q8_columns(b, x, act_block(w->type), err)) return r;

    rf_kargs a = make_args(n); // dst, src[0] weights, src[1] x, src[2] ids
    rf_ktensor group = a.src[0];
    group.data = b.moe_scratch.ptr;

    rf_kargs g = a;
    g.src[0] = group;
    g.iparams[0] = (int)E;
    g.iparams[1] = cols;
    g.iparams[2] = (int)l.tiles;
    if (int r = launch(b, "rf_moe_group_ids", 1, 1, 1, kGroupThreads, g, err)) return r;

    rf_kargs c = a;
    c.src[0] = group;
    c.scratch = b.q8.where;
    c.aux[0] = xs;
    c.aux[1] = l.tiles;
    c.aux[2] = l.rows_at;
    if (int r = launch(b, "rf_moe_gather_q8", (unsigned)pairs, 1, 1, 128, c, err)) return r;

    rf_kargs m = a;
    m.src[1] = group;
    m.scratch = nullptr;
    m.aux[0] = xs;
    m.aux[1] = l.tiles;
    m.aux[2] = l.rows_at;
    return launch_mmqp_id(b, w, cols, l.tiles, m, err);
}

std::vector<std::string> moe_group_kernel_names() {
#if defined(RF_HIP_NVIDIA)
    return {"rf_moe_group_ids", "rf_moe_gather_q8"};
#else
    return {};
#endif
}

} // namespace rf_hip
