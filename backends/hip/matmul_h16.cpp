#include "matmul_h16.h"

#include <algorithm>

#include "matmul_h16_layout.h"
#include "ops.h"

namespace rf_hip {

#if defined(RF_HIP_NVIDIA)
namespace {
// Blocks per multiprocessor of rf_mm_h16_<bm> (their __launch_bounds__; shared memory allows it).
int blocks_per_sm(int bm) { return bm == 128 ? 2 : 3; }

struct H16Launch { int bm, ks; bool wgmma; };

// K split of `tiles` tiles over `slots` resident blocks: the fewest block-waves per unit of work,
// a split paying ~5% per doubling for its reduction, at least `min_steps` K steps per block.
int k_split(int64_t tiles, int64_t slots, int64_t steps, int64_t min_steps, int max_ks) {
    double best = 0;
    int pick = 1;
    for (int ks = 1; ks <= max_ks; ks *= 2) {
        if (ks > 1 && steps / ks < min_steps) break;
        const double cost = (double)((tiles * ks + slots - 1) / slots) / ks * (ks == 1 ? 1.0 : ks == 2 ? 1.05 : 1.10);
        if (ks == 1 || cost < best) { best = cost; pick = ks; }
    }
    return pick;
}

// The token tile: 128 (a warp's 64 x 32 sub-tile reuses each fragment more than the 32 x 32 of
// the 64-token tile; H100, 4096 x 11008 x 512: 204 vs 268 us), 64 for short prompts.
// The K split: the fewest block-waves per unit of work, a split paying ~5% per doubling for its
// reduction; at least 16 K steps per block. ROCMFORGE_HIP_H16=64|128 forces the tile,
// ROCMFORGE_HIP_H16_KS=1|2|4 the split (A/B).
// The wgmma tiles (sm_90a, rf_mm_h16w_128_k<1|2>, one block per SM) from 65 tokens on, where the
// kernels have them and K is whole 64-half steps; ROCMFORGE_HIP_H16_KS=1|2 forces their split.
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
    return v;
}

#else // AMD packs: no rf_mm_h16_* (rf_mm_tiled_f16 runs)

bool h16_usable(const Backend &, const rf_node &) { return false; }
int matmul_h16(Backend &, const rf_node &, std::string &err) {
    err = "matmul_h16: NVIDIA only";
    return RF_ERR_UNSUPPORTED;
}
bool h16_id_usable(const Backend &, const rf_tensor *) { return false; }
int launch_h16_id(Backend &, const rf_tensor *, int64_t, rf_kargs &, std::string &err) {
    err = "matmul_h16_id: NVIDIA only";
    return RF_ERR_UNSUPPORTED;
}
std::vector<std::string> h16_kernel_names() { return {}; }

#endif

} // namespace rf_hip
