// Integer tensor-core matmuls of a few dozen activation columns (kernels/matmul_mmq.hip):
// rf_mmq_<type>_<C>_k<S>, C = 8, 16 or 32 columns per block, S blocks splitting K, NVIDIA packs only.
#include "matmul_mmq.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "mmq_layout.h"
#include "ops.h"

namespace rf_hip {

#if defined(RF_HIP_NVIDIA)
namespace {

// Column counts the kernels take: from the option mmq_min_cols (default 5) up to kMaxCols (at
// 64 columns still faster than the f16 prefill tensor-core kernels; wider not measured). Where
// the dp4a column kernels win below that: docs/notes/mmq.md.
constexpr int64_t kMaxCols = 64;

bool has_clusters(const Backend &b) { return nvidia_sm(b.arch) >= 90; }

// The weight types the kernels decode; their kernel name suffix (ops.cpp's), else null.
const char *suffix(int type) {
    switch (type) {
    case RF_TYPE_Q4_K: case RF_TYPE_Q5_K: case RF_TYPE_Q6_K: case RF_TYPE_Q4_0: case RF_TYPE_Q8_0: return weight_suffix(type);
    default: return nullptr;
    }
}

// The plain prefill tiles (rf_mmqp_<type>_*) also decode Q5_0; the batched-decode tiles and the
// MoE groups do not.
const char *prefill_suffix(int type) { return type == RF_TYPE_Q5_0 ? weight_suffix(type) : suffix(type); }

// The forced tile width of the prefill kernels (option mmqp_cols: 64 or 128; 0: chosen).
int forced_prefill_cols(const Backend &b) { return b.options.mmqp_cols; }

// Dynamic shared memory of rf_mmqp_<type>_<cols> (kernels/mmq_layout.h; the kernel checks it).
unsigned prefill_smem(int type, int cols) {
#define RF_STAGE(P) RF_MMQ_STAGE_BYTES(P##_STEP, P##_WS, P##_XDG, RF_MMQP_ROWS, cols)
    int stage = 0;
    switch (type) {
    case RF_TYPE_Q4_K: stage = RF_STAGE(RF_MMQ_Q4_K); break;
    case RF_TYPE_Q5_K: stage = RF_STAGE(RF_MMQ_Q5_K); break;
    case RF_TYPE_Q6_K: stage = RF_STAGE(RF_MMQ_Q6_K); break;
    case RF_TYPE_Q4_0: stage = RF_STAGE(RF_MMQ_Q4_0); break;
    case RF_TYPE_Q5_0: stage = RF_STAGE(RF_MMQ_Q5_0); break;
    case RF_TYPE_Q8_0: stage = RF_STAGE(RF_MMQ_Q8_0); break;
    default: break;
    }
#undef RF_STAGE
    return (unsigned)(RF_MMQP_STAGES * stage);
}

// Weight rows 16-byte aligned for Q4_K/Q5_K (16-byte loads of their blocks), 2-byte otherwise;
// the row stride and the q8_1 column stride under 4 GiB (the kernels' stage copies take them as
// 32-bit factors, MmqCopies).
bool rows_usable(const rf_tensor *w) {
    const bool wide = w->type == RF_TYPE_Q4_K || w->type == RF_TYPE_Q5_K;
    constexpr uint64_t k4G = uint64_t(1) << 32;
    return aligned(w, wide ? 16 : 2) && uint64_t(w->nb[1]) < k4G && uint64_t(q8_column_bytes(w->ne[0])) < k4G;
}

// rf_mmqp_id_<type>_128 exists for these (the Q5_K / Q6_K forms spilled registers).
bool has_id_128(int type) { return type == RF_TYPE_Q4_K || type == RF_TYPE_Q4_0 || type == RF_TYPE_Q8_0; }

int mmq_cols(int64_t M) { return M <= 8 ? 8 : M <= 16 ? 16 : 32; }

// Blocks of a cluster splitting K for matmul n on its own: the fewest that give four blocks per
// multiprocessor (the loads in flight), keeping at least two K steps per block. A joined launch
// keeps each matrix's split (mmq_tiles), so joining changes no result bit.
int ksplit(const Backend &b, const rf_node &n) {
    if (!has_clusters(b)) return 1;
    if (b.options.mmq_ksplit) return b.options.mmq_ksplit; // option mmq_ksplit: 1, 2 or 4
    const rf_tensor *w = n.src[0];
    const int64_t M = n.src[1]->ne[1], tiles = (w->ne[1] + 63) / 64 * ((M + mmq_cols(M) - 1) / mmq_cols(M));
    const int64_t steps = w->ne[0] / (w->type == RF_TYPE_Q4_0 || w->type == RF_TYPE_Q8_0 ? 128 : 256);
    int ks = 1;
    while (ks < 4 && tiles * ks < 4 * std::max(1, b.multiprocessors) && steps >= 4 * ks) ks *= 2;
    return ks;
}

} // namespace

bool mmq_usable(const Backend &b, const rf_node &n) {
    const rf_tensor *w = n.src[0], *x = n.src[1];
    if (!w || !x || !n.dst || x->type != RF_TYPE_F32 || !suffix(w->type)) return false;
    const int64_t M = x->ne[1], N = w->ne[1];
    if (x->ne[2] * x->ne[3] != 1 || M < b.options.mmq_min_cols || M > kMaxCols || N < 1) return false;
    return rows_usable(w);
}

bool mmqp_usable(const Backend &b, const rf_node &n) {
    const rf_tensor *w = n.src[0], *x = n.src[1];
    if (!b.options.mmq_prefill || !w || !x || !n.dst || x->type != RF_TYPE_F32 || !prefill_suffix(w->type)) return false;
    const int64_t M = x->ne[1], N = w->ne[1];
    // mma.sync s8 needs sm_80; more than 48 KB of shared memory needs the driver's attribute call.
    if (nvidia_sm(b.arch) < 80 || !rf_cuda::api.cuFuncSetAttribute) return false;
    return x->ne[2] * x->ne[3] == 1 && M > kMaxCols && M <= 65535 && N >= 1 && rows_usable(w);
}

int matmul_mmqp(Backend &b, const rf_node &n, std::string &err) {
    const rf_tensor *w = n.src[0], *x = n.src[1];
    const int64_t K = w->ne[0], N = w->ne[1], M = x->ne[1];
    if (int r = ensure_q8_columns(b, x, act_block(w->type), err)) return r;
    // The tile width with the fewer block-waves, a 128-column block costing 1.74 of a 64-column
    // one (one block per multiprocessor either way). Q4_0 / Q8_0 take 128: their 64-column kernels
    // run two blocks per multiprocessor, so a wave of those costs two. H100 pp512, forced 128 /
    // forced 64 against the earlier "128 where it fills every SM, legacy types 64" rule: 7B Q4_K_M
    // 13,800 / 12,650 vs 13,280 (128 wins at N = 4096 although its 128 blocks leave 4 SMs idle),
    // 7B Q4_0 9,800 / 9,120 vs 9,150, TinyLlama Q4_K_M 40k / 54.5k vs 52.5k (64 wins at N = 5632:
    // 176 blocks of 128 columns make 1.3 waves). Up to 128 columns (a server step with a prompt
    // chunk, short prompts) Q4_0 / Q8_0 take 64 as well: 4096 x 4096 Q4_0 at M = 80 / 101 / 128
    // 62.6 / 62.7 / 62.5 us against 84.6 / 84.6 / 85.2 with 128 (at 192 and 256: 114.7 / 113.4
    // against 84.5 / 84.8). The option mmqp_cols=128|64 forces one.
    const int64_t row_tiles = (N + RF_MMQP_ROWS - 1) / RF_MMQP_ROWS, sms = std::max(1, b.multiprocessors);
    const auto waves_of = [&](int64_t blocks) { return (blocks + sms - 1) / sms; };
    const auto waves = [&](int64_t c) { return waves_of(row_tiles * ((M + c - 1) / c)); };
    const bool legacy = w->type == RF_TYPE_Q4_0 || w->type == RF_TYPE_Q5_0 || w->type == RF_TYPE_Q8_0;
    int cols = legacy ? (M <= 128 ? 64 : 128) : 1.74 * (double)waves(128) < (double)waves(64) ? 128 : 64;
    if (forced_prefill_cols(b)) cols = forced_prefill_cols(b);
    // 64-column tiles whose grid leaves SMs idle or ends in a part-filled wave (a server step's
    // ~100 columns: a 4096-row matrix makes 64 blocks) split K over a cluster of two blocks
    // (sm_90) where that takes fewer block-time units: waves(2 x tiles) / 2 against
    // waves(tiles), with a margin for the partial sums' exchange; at least 8 K steps per block.
    int ks = 1;
    if (cols == 64 && has_clusters(b)) {
        const int64_t tiles = row_tiles * ((M + cols - 1) / cols), steps = (K + 255) / 256;
        ks = b.options.mmqp_ksplit ? b.options.mmqp_ksplit // option mmqp_ksplit: 1 or 2
             : steps >= 16 && 0.5 * (double)waves_of(2 * tiles) < 0.85 * (double)waves_of(tiles) ? 2 : 1;
    }
    rf_kargs a = make_args(n);
    a.scratch = b.q8.where;
    a.aux[0] = q8_column_bytes(K);
    return launch(b, std::string("rf_mmqp_") + prefill_suffix(w->type) + "_" + std::to_string(cols) + (ks == 2 ? "_k2" : ""),
                  (unsigned)(row_tiles * ks), (unsigned)((M + cols - 1) / cols), 1, RF_MMQP_THREADS, a, err,
                  prefill_smem(w->type, cols));
}

bool mmqp_id_usable(const Backend &b, const rf_tensor *w) {
    if (!b.options.mmq_prefill || !w || !suffix(w->type)) return false;
    if (nvidia_sm(b.arch) < 80 || !rf_cuda::api.cuFuncSetAttribute) return false;
    return rows_usable(w);
}

int mmqp_id_cols(const Backend &b, int type, int64_t pairs, int64_t experts) {
    if (!has_id_128(type)) return 64;
    if (forced_prefill_cols(b)) return forced_prefill_cols(b);
    // Each expert's last tile is partly empty: 128-column tiles (1.74x the cost of 64) only when
    // the experts average two of them (Mixtral pp512: 128 pairs per expert -> 64). Not measured.
    return pairs / std::max<int64_t>(1, std::min(experts, pairs)) >= 256 ? 128 : 64;
}

int launch_mmqp_id(Backend &b, const rf_tensor *w, int cols, int64_t tiles, rf_kargs &a, std::string &err) {
    return launch(b, std::string("rf_mmqp_id_") + suffix(w->type) + "_" + std::to_string(cols),
                  (unsigned)((w->ne[1] + RF_MMQP_ROWS - 1) / RF_MMQP_ROWS), (unsigned)tiles, 1, RF_MMQP_THREADS, a, err,
                  prefill_smem(w->type, cols));
}

namespace {

// The weight types, column tiles and K splits of rf_mmq_<type>_<cols>_k<split>, in the order of
// mmq_names().
constexpr int kMmqTypes[] = {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q8_0};
constexpr int kMmqCols[] = {8, 16, 32}, kMmqSplits[] = {1, 2, 4};

// Every kernel matmul_mmq may launch, built once: the names rf_matmul_tiles hands to packs must
// outlive the call.
const std::vector<std::string> &mmq_names() {
    static const std::vector<std::string> v = [] {
        std::vector<std::string> r;
        for (int t : kMmqTypes)
            for (int c : kMmqCols)
                for (int k : kMmqSplits) r.push_back(std::string("rf_mmq_") + suffix(t) + "_" + std::to_string(c) + "_k" + std::to_string(k));
        return r;
    }();
    return v;
}

// Its name for a matmul (claims ask on every walked graph: an index, no string built).
const char *mmq_name(int type, int cols, int ks) {
    constexpr size_t nt = std::size(kMmqTypes), nc = std::size(kMmqCols), nk = std::size(kMmqSplits);
    const size_t t = size_t(std::find(kMmqTypes, kMmqTypes + nt, type) - kMmqTypes),
                 c = size_t(std::find(kMmqCols, kMmqCols + nc, cols) - kMmqCols),
                 k = size_t(std::find(kMmqSplits, kMmqSplits + nk, ks) - kMmqSplits);
    return t < nt && c < nc && k < nk ? mmq_names()[(t * nc + c) * nk + k].c_str() : nullptr;
}

} // namespace

void mmq_tiles(const Backend &b, const rf_node &n, rf_matmul_tiles &t) {
    const rf_tensor *w = n.src[0];
    const int64_t M = n.src[1]->ne[1];
    const int cols = mmq_cols(M), ks = ksplit(b, n);
    t = rf_matmul_tiles{};
    t.kernel = mmq_name(w->type, cols, ks);
    t.rows_per_tile = 64;
    t.split = (uint32_t)ks;
    t.grid[0] = (uint32_t)((w->ne[1] + 63) / 64 * ks);
    t.grid[1] = (uint32_t)((M + cols - 1) / cols);
    t.threads = 128;
    // The kernels' bulk L2 prefetch and TMA staging stay off: both were slower (docs/notes/mmq.md).
    t.tuning.no_row_prefetch = 1;
    t.tuning.prefetch_window = 0;
    t.tuning.bulk_copy = 0;
}

int matmul_mmq(Backend &b, const rf_node &n, std::string &err) {
    const rf_tensor *w = n.src[0], *x = n.src[1];
    if (int r = ensure_q8_columns(b, x, act_block(w->type), err)) return r;
    rf_matmul_tiles t;
    mmq_tiles(b, n, t);
    rf_kargs a = make_args(n);
    a.scratch = b.q8.where;
    a.aux[0] = q8_column_bytes(w->ne[0]);
    a.mmq.no_row_prefetch = t.tuning.no_row_prefetch;
    a.mmq.prefetch_window = t.tuning.prefetch_window;
    a.mmq.bulk_copy = t.tuning.bulk_copy;
    a.mmq.pool_row_bytes = a.mmq.pool_type = a.mmq.append_segment = 0; // no pool append (kernels/matmul_mmq.hip mmq_store())
    return launch(b, t.kernel, t.grid[0], t.grid[1], 1, t.threads, a, err);
}

std::vector<std::string> mmq_kernel_names() {
    std::vector<std::string> v = mmq_names();
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q5_0, RF_TYPE_Q8_0})
        for (int c : {64, 128}) {
            v.push_back(std::string("rf_mmqp_") + prefill_suffix(t) + "_" + std::to_string(c));
            if (c == 64) v.push_back(std::string("rf_mmqp_") + prefill_suffix(t) + "_64_k2");
            if (suffix(t) && (c == 64 || has_id_128(t))) v.push_back(std::string("rf_mmqp_id_") + suffix(t) + "_" + std::to_string(c));
        }
    return v;
}

#else // AMD: no rf_mmq_* in the packs

bool mmq_usable(const Backend &, const rf_node &) { return false; }
bool mmqp_usable(const Backend &, const rf_node &) { return false; }
bool mmqp_id_usable(const Backend &, const rf_tensor *) { return false; }
int mmqp_id_cols(const Backend &, int, int64_t, int64_t) { return 64; }
int launch_mmqp_id(Backend &, const rf_tensor *, int, int64_t, rf_kargs &, std::string &err) {
    err = "matmul_mmqp_id: NVIDIA only";
    return RF_ERR_UNSUPPORTED;
}

int matmul_mmq(Backend &, const rf_node &, std::string &err) {
    err = "matmul_mmq: NVIDIA only";
    return RF_ERR_UNSUPPORTED;
}
void mmq_tiles(const Backend &, const rf_node &, rf_matmul_tiles &t) { t = rf_matmul_tiles{}; }
int matmul_mmqp(Backend &, const rf_node &, std::string &err) {
    err = "matmul_mmqp: NVIDIA only";
    return RF_ERR_UNSUPPORTED;
}

std::vector<std::string> mmq_kernel_names() { return {}; }

#endif

} // namespace rf_hip
