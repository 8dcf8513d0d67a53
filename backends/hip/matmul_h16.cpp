#include "matmul_h16.h"

#include <algorithm>

#include "matmul_h16_layout.h"
#include "ops.h"
#include "weight_types.h"

namespace rf_hip {

#if defined(RF_HIP_NVIDIA)
namespace {
// Blocks per multiprocessor of rf_mm_h16_<bm> (their __launch_bounds__; shared memory allows it).
int blocks_per_sm(int bm) { return bm == 128 ? 2 : 3; }

struct H16Launch { int bm, ks; bool wgmma; };

// Block-waves per unit of work of `tiles` tiles split `ks` ways over `slots` resident blocks, a
// split paying ~5% per doubling for its reduction.
double split_cost(int64_t tiles, int64_t slots, int ks) {
    return (double)((tiles * ks + slots - 1) / slots) / ks * (ks == 1 ? 1.0 : ks == 2 ? 1.05 : 1.10);
}

// K split of `tiles` tiles over `slots` resident blocks: the lowest split_cost, at least
// `min_steps` K steps per block.
int k_split(int64_t tiles, int64_t slots, int64_t steps, int64_t min_steps, int max_ks) {
    double best = 0;
    int pick = 1;
    for (int ks = 1; ks <= max_ks; ks *= 2) {
        if (ks > 1 && steps / ks < min_steps) break;
        const double cost = split_cost(tiles, slots, ks);
        if (ks == 1 || cost < best) { best = cost; pick = ks; }
    }
    return pick;
}

// The token tile: 128 (a warp's 64 x 32 sub-tile reuses each fragment more than the 32 x 32 of
// the 64-token tile), 64 for short prompts.
// The K split: the fewest block-waves per unit of work, a split paying ~5% per doubling for its
// reduction; at least 16 K steps per block. Options h16_tokens=64|128 force the tile,
// h16_splits=1|2|4 the split.
// The wgmma tiles (sm_90a, rf_mm_h16w_128_k<1|2>, one block per SM) from 65 tokens on, where the
// kernels have them and K is whole 64-half steps; h16_splits=1|2 forces their split.
H16Launch choose(const Backend &b, int64_t K, int64_t N, int64_t M, int64_t batch) {
    const int64_t sms = std::max(1, b.multiprocessors);
    if (b.h16_wgmma && b.kernels.wgmma && b.h16_tokens != 64 && M > 64 && K % 64 == 0) {
        H16Launch l{RF_H16W_BM, 1, true};
        const int64_t tiles = (N + RF_H16W_BN - 1) / RF_H16W_BN * ((M + RF_H16W_BM - 1) / RF_H16W_BM) * batch;
        l.ks = k_split(tiles, sms, K / 64, 8, 2);
        if (b.h16_splits == 1 || b.h16_splits == 2) l.ks = b.h16_splits;
        return l;
    }
    H16Launch l{b.h16_tokens == 64 || b.h16_tokens == 128 ? b.h16_tokens : M <= 64 ? 64 : 128, 1, false};
    const int64_t tiles = (N + RF_H16_BN - 1) / RF_H16_BN * ((M + l.bm - 1) / l.bm) * batch;
    l.ks = k_split(tiles, sms * blocks_per_sm(l.bm), K / RF_H16_BK, 16, nvidia_sm(b.arch) >= 90 ? 4 : 1);
    if (b.h16_splits == 1 || ((b.h16_splits == 2 || b.h16_splits == 4) && nvidia_sm(b.arch) >= 90)) l.ks = b.h16_splits;
    return l;
}
} // namespace

bool h16_usable(const Backend &b, const rf_node &n) {
    const rf_tensor *w = n.src[0], *x = n.src[1];
    if (b.h16_tokens == 0 || !w || !x || !n.dst || w->type != RF_TYPE_F16 || x->type != RF_TYPE_F32) return false;
    // mma.sync f16 and cp.async need sm_80; more than 48 KB of shared memory the driver's attribute call.
    if (nvidia_sm(b.arch) < 80 || !rf_cuda::api.cuFuncSetAttribute) return false;
    const int64_t K = w->ne[0], N = w->ne[1], M = x->ne[1];
    return M >= 16 && K % RF_H16_BK == 0 && (N + RF_H16_BN - 1) / RF_H16_BN <= 65535 && aligned(w, 16);
}

int matmul_h16(Backend &b, const rf_node &n, std::string &err) {
    const rf_tensor *w = n.src[0], *x = n.src[1];
    const int64_t N = w->ne[1], M = x->ne[1], batch = x->ne[2] * x->ne[3];
    rf_kargs a = make_args(n);
    // f16 rows, dense and 16-byte aligned (K % 32 == 0): the kernel's cp.async source.
    if (int r = quantized_activations(b, x, 0, true, a.src[1], err)) return r;
    const H16Launch l = choose(b, w->ne[0], N, M, batch);
    if (l.wgmma)
        return launch(b, "rf_mm_h16w_128_k" + std::to_string(l.ks), (unsigned)((M + RF_H16W_BM - 1) / RF_H16W_BM * l.ks),
                      (unsigned)((N + RF_H16W_BN - 1) / RF_H16W_BN), (unsigned)batch, RF_H16W_THREADS, a, err, (unsigned)RF_H16W_SMEM);
    return launch(b, "rf_mm_h16_" + std::to_string(l.bm) + "_k" + std::to_string(l.ks), (unsigned)((M + l.bm - 1) / l.bm * l.ks),
                  (unsigned)((N + RF_H16_BN - 1) / RF_H16_BN), (unsigned)batch, RF_H16_THREADS, a, err,
                  (unsigned)RF_H16_SMEM(l.bm));
}

namespace {
// Raw granules per weight row and K step of 64 staged by rf_mm_q16w_<type> (the step's span:
// two legacy blocks or one K-quant block), its kernel suffix; 0 / null: not on these tiles.
// kquant: a K-quant, whose f32 decoding makes the 128-token tiles slower than rf_mmqp_*: by
// default (Backend::q16w_kquants) only where the 256-token tiles are chosen (docs/notes/wgmma.md).
struct Q16wType { int granules; const char *suffix; bool kquant; };
Q16wType q16w_type(int type) {
    switch (type) {
    case RF_TYPE_Q4_0: return {RF_Q16W_GRANULES(2 * 18), "q4_0", false};
    case RF_TYPE_Q8_0: return {RF_Q16W_GRANULES(2 * 34), "q8_0", false};
    case RF_TYPE_Q4_K: return {RF_Q16W_G_Q4_K, "q4_k", true};
    case RF_TYPE_Q5_K: return {RF_Q16W_G_Q5_K, "q5_k", true};
    case RF_TYPE_Q6_K: return {RF_Q16W_G_Q6_K, "q6_k", true};
    // MXFP4 and the IQ4 formats have no integer tensor-core tiles: these are their prefill at
    // every M. MXFP4's 17-byte blocks start at any byte: one granule more.
    case RF_TYPE_MXFP4: return {RF_Q16W_GRANULES(2 * 17 + 1), "mxfp4", false};
    case RF_TYPE_IQ4_NL: return {RF_Q16W_GRANULES(2 * 18), "iq4_nl", false};
    case RF_TYPE_IQ4_XS: return {RF_Q16W_GRANULES(136), "iq4_xs", false};
    // The grid i-quants and ternary formats: the whole 256-element block staged for each of its
    // four K steps.
    case RF_TYPE_IQ2_XXS: return {RF_Q16W_GRANULES(66), "iq2_xxs", false};
    case RF_TYPE_IQ3_XXS: return {RF_Q16W_GRANULES(98), "iq3_xxs", false};
    case RF_TYPE_IQ3_S: return {RF_Q16W_GRANULES(110), "iq3_s", false};
    case RF_TYPE_IQ2_XS: return {RF_Q16W_GRANULES(74), "iq2_xs", false};
    case RF_TYPE_IQ2_S: return {RF_Q16W_GRANULES(82), "iq2_s", false};
    case RF_TYPE_IQ1_S: return {RF_Q16W_GRANULES(50), "iq1_s", false};
    case RF_TYPE_IQ1_M: return {RF_Q16W_GRANULES(56), "iq1_m", false};
    case RF_TYPE_TQ1_0: return {RF_Q16W_GRANULES(54), "tq1_0", false};
    case RF_TYPE_TQ2_0: return {RF_Q16W_GRANULES(66), "tq2_0", false};
    default: return {0, nullptr, false};
    }
}
} // namespace

namespace {
// The weights' side of both tile forms: Q4_K / Q5_K stage only the step's granules of 16-byte
// aligned rows, MXFP4 reads its blocks at any byte, the others at any even address; 32-bit row
// strides, a grid of 128-row tiles.
bool q16w_weights_usable(const rf_tensor *w) {
    const bool k4 = w->type == RF_TYPE_Q4_K || w->type == RF_TYPE_Q5_K;
    return aligned(w, k4 ? 16 : w->type == RF_TYPE_MXFP4 ? 1 : 2) && w->nb[1] < (int64_t)1 << 32 &&
           (w->ne[1] + RF_H16W_BN - 1) / RF_H16W_BN <= 65535;
}
// The types whose grouped MATMUL_ID prefill takes these tiles: not the K-quants and Q4_0 / Q8_0,
// which have rf_mmqp_id_* (moe_grouped.cpp tries those first).
bool q16w_grouped_type(int type) {
    const Q16wType t = q16w_type(type);
    return t.suffix && !t.kquant && type != RF_TYPE_Q4_0 && type != RF_TYPE_Q8_0;
}

// The token tile (r x 128) and K split of rf_mm_q16w_<type>_t<r>_k<ks>: the fewest block-waves
// (split_cost) with a 256-token block costing kT2Cost of a 128-token one (it does twice the
// tensor-core work for the same weight decode, which bounds the 128-token block); 256 only from
// 256 tokens and where its stages fit. Options q16w_tokens and h16_splits force either.
struct Q16wLaunch { int r, ks; };
constexpr double kT2Cost = 1.5;
Q16wLaunch q16w_choose(const Backend &b, const Q16wType &t, int64_t K, int64_t N, int64_t M) {
    const int64_t sms = std::max(1, b.multiprocessors), nt = (N + RF_H16W_BN - 1) / RF_H16W_BN;
    const bool t2_fits = RF_Q16W_SMEM(2, t.granules) <= RF_Q16W_SMEM_MAX;
    Q16wLaunch best{1, 1};
    double best_cost = 0;
    for (int r : {1, 2}) {
        if (r == 2 && (!t2_fits || (b.q16w_tokens == 0 && M < 2 * RF_H16W_BM))) continue;
        if (b.q16w_tokens != 0 && b.q16w_tokens != r * RF_H16W_BM) continue;
        const int64_t tiles = nt * ((M + r * RF_H16W_BM - 1) / (r * RF_H16W_BM));
        for (int ks : {1, 2}) {
            if (ks > 1 && K / 64 / ks < 8) break;
            if ((b.h16_splits == 1 || b.h16_splits == 2) && ks != b.h16_splits) continue;
            const double cost = split_cost(tiles, sms, ks) * (r == 2 ? kT2Cost : 1.0);
            if (best_cost == 0 || cost < best_cost) { best_cost = cost; best = {r, ks}; }
        }
    }
    return best;
}
} // namespace

bool q16w_usable(const Backend &b, const rf_node &n) {
    const rf_tensor *w = n.src[0], *x = n.src[1];
    if (b.q16w_min <= 0 || !b.kernels.wgmma || !w || !x || !n.dst || x->type != RF_TYPE_F32) return false;
    const Q16wType t = q16w_type(w->type);
    if (!t.suffix || (t.kquant && b.q16w_kquants == 0)) return false;
    const int64_t K = w->ne[0], N = w->ne[1], M = x->ne[1];
    if (M < b.q16w_min || K % 64 != 0 || x->ne[2] * x->ne[3] != 1 || w->ne[2] * w->ne[3] != 1) return false;
    if (t.kquant && b.q16w_kquants < 0 && q16w_choose(b, t, K, N, M).r != 2) return false;
    return q16w_weights_usable(w) && n.dst->nb[0] == 4 && x->nb[0] == 4;
}

int matmul_q16w(Backend &b, const rf_node &n, std::string &err) {
    const rf_tensor *w = n.src[0], *x = n.src[1];
    const int64_t K = w->ne[0], N = w->ne[1], M = x->ne[1];
    rf_kargs a = make_args(n);
    // f16 rows of the activations rounded as the CPU backend quantizes them for this weight type
    // (q8 blocks of 32 / 256), as the other f16 prefill tiles take them: without, the trained
    // Q4_K_M model's perplexity (Q8_0 FFN-down tensors) moved from within 0.05% of the CPU's to 0.107%.
    if (int r = quantized_activations(b, x, act_block(w->type), true, a.src[1], err)) return r;
    const Q16wType t = q16w_type(w->type);
    const Q16wLaunch l = q16w_choose(b, t, K, N, M);
    return launch(b, std::string("rf_mm_q16w_") + t.suffix + "_t" + std::to_string(l.r) + "_k" + std::to_string(l.ks),
                  (unsigned)((M + l.r * RF_H16W_BM - 1) / (l.r * RF_H16W_BM) * l.ks), (unsigned)((N + RF_H16W_BN - 1) / RF_H16W_BN), 1,
                  RF_H16W_THREADS, a, err, (unsigned)RF_Q16W_SMEM(l.r, t.granules));
}

bool q16w_id_usable(const Backend &b, const rf_tensor *w) {
    if (b.q16w_min <= 0 || !b.kernels.wgmma || !w || !q16w_grouped_type(w->type)) return false;
    return w->ne[0] % 64 == 0 && q16w_weights_usable(w);
}

int launch_q16w_id(Backend &b, const rf_tensor *w, int64_t tiles, rf_kargs &a, std::string &err) {
    const Q16wType t = q16w_type(w->type);
    return launch(b, std::string("rf_mm_q16w_id_") + t.suffix, (unsigned)tiles, (unsigned)((w->ne[1] + RF_H16W_BN - 1) / RF_H16W_BN), 1,
                  RF_H16W_THREADS, a, err, (unsigned)RF_Q16W_SMEM(1, t.granules));
}

bool h16_id_usable(const Backend &b, const rf_tensor *w) {
    if (b.h16_tokens == 0 || !w || w->type != RF_TYPE_F16) return false;
    if (nvidia_sm(b.arch) < 80 || !rf_cuda::api.cuFuncSetAttribute) return false;
    return w->ne[0] % RF_H16_BK == 0 && (w->ne[1] + RF_H16_BN - 1) / RF_H16_BN <= 65535 && aligned(w, 16);
}

int launch_h16_id(Backend &b, const rf_tensor *w, int64_t tiles, rf_kargs &a, std::string &err) {
    return launch(b, "rf_mm_h16_id_64", (unsigned)tiles, (unsigned)((w->ne[1] + RF_H16_BN - 1) / RF_H16_BN), 1, RF_H16_THREADS, a,
                  err, (unsigned)RF_H16_SMEM(64));
}

std::vector<std::string> h16_kernel_names() {
    std::vector<std::string> v;
    for (int bm : {64, 128})
        for (int ks : {1, 2, 4}) v.push_back("rf_mm_h16_" + std::to_string(bm) + "_k" + std::to_string(ks));
    v.push_back("rf_mm_h16_id_64");
    v.push_back("rf_mm_h16w_128_k1");
    v.push_back("rf_mm_h16w_128_k2");
    for (const TypeInfo &ti : kWeightTypes) {
        const Q16wType t = q16w_type(ti.type);
        if (!t.suffix) continue;
        for (const char *tk : {"_t1_k1", "_t1_k2", "_t2_k1", "_t2_k2"}) v.push_back(std::string("rf_mm_q16w_") + t.suffix + tk);
        if (q16w_grouped_type(ti.type)) v.push_back(std::string("rf_mm_q16w_id_") + t.suffix);
    }
    return v;
}

#else // AMD packs: no rf_mm_h16_* (rf_mm_tiled_f16 runs)

bool q16w_usable(const Backend &, const rf_node &) { return false; }
int matmul_q16w(Backend &, const rf_node &, std::string &err) {
    err = "matmul_q16w: NVIDIA only";
    return RF_ERR_UNSUPPORTED;
}

bool h16_usable(const Backend &, const rf_node &) { return false; }
int matmul_h16(Backend &, const rf_node &, std::string &err) {
    err = "matmul_h16: NVIDIA only";
    return RF_ERR_UNSUPPORTED;
}
bool h16_id_usable(const Backend &, const rf_tensor *) { return false; }
bool q16w_id_usable(const Backend &, const rf_tensor *) { return false; }
int launch_q16w_id(Backend &, const rf_tensor *, int64_t, rf_kargs &, std::string &err) {
    err = "matmul_q16w_id: NVIDIA only";
    return RF_ERR_UNSUPPORTED;
}
int launch_h16_id(Backend &, const rf_tensor *, int64_t, rf_kargs &, std::string &err) {
    err = "matmul_h16_id: NVIDIA only";
    return RF_ERR_UNSUPPORTED;
}
std::vector<std::string> h16_kernel_names() { return {}; }

#endif

} // namespace rf_hip
