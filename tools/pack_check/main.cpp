// rocmforge-pack-check: checks a kernel pack's fusions without a GPU. It loads the packs the
// config names for the HIP backend (backend_options.hip: packs, kernel_pack_dirs,
// arch_override) exactly as the backend does (same checks: arch, ABI, checksum, kernel list,
// fusion table), offers each fusion the graphs of cases.cpp, binds every claim as the backend
// binds it, runs the fusion's host_run over that argument block and compares every covered
// node's result with the CPU backend running the nodes unfused.
#include <rapidjson/document.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "cases.h"
#include "pack_match.h"
#include "pack_bind.h"
#include "pack_plugin.h"
#include "rocmforge/error.h"
#include "rocmforge/executable_dir.h"
#include "rocmforge/plugin_loader.h"
#include "rocmforge/types.h"

namespace {

const char *kUsage =
    "usage: rocmforge-pack-check [--config FILE] [--arch ARCH] [--expect-claims N] [--allow-unchecked]\n"
    "  Loads the kernel packs the config names for the HIP backend (backend_options.hip: \"packs\",\n"
    "  \"kernel_pack_dirs\", \"arch_override\"), verifies them as the backend does and checks each\n"
    "  fusion's claims and argument binding against the CPU backend through the fusion's host_run.\n"
    "  --arch ARCH         the device arch to load packs for (default: arch_override)\n"
    "  --expect-claims N   fail unless the fusions claim exactly N times over all cases\n"
    "  --allow-unchecked   a claim of a fusion without host_run is reported, not a failure\n";

struct Options {
    std::string config, arch;
    int expect_claims = -1;
    bool allow_unchecked = false;
};

// The CPU backend through its plugin vtable: host memory, the unfused reference.
struct Cpu {
    const rf_backend_vtable *vt = nullptr;
    void *ctx = nullptr;
    std::vector<void *> buffers;
    ~Cpu() {
        for (void *b : buffers) vt->buffer_free(ctx, b);
        if (ctx) vt->shutdown(ctx);
    }
    void *alloc(uint64_t bytes) {
        rf_buffer_desc d{};
        char err[512] = {0};
        if (vt->buffer_alloc(ctx, bytes, &d, err, sizeof err) != RF_OK) throw rf::Error(std::string("cpu buffer: ") + err);
        buffers.push_back(d.handle);
        return d.base;
    }
    void run(rf_node *const *nodes, int n) {
        const rf_graph g{n, nodes};
        char err[512] = {0};
        if (vt->compute(ctx, &g, err, sizeof err) != RF_OK) throw rf::Error(std::string("cpu compute: ") + err);
        if (auto sync = RF_SLOT(vt, rf_backend_vtable, synchronize)) sync(ctx, err, sizeof err);
    }
};

uint64_t bytes_of(const rf_tensor &t) { return (uint64_t)(t.nb[3] * t.ne[3]); }
std::vector<uint8_t> bytes(const rf_tensor &t) {
    const auto *p = static_cast<const uint8_t *>(t.data);
    return {p, p + bytes_of(t)};
}
std::vector<float> floats(const std::vector<uint8_t> &b) {
    std::vector<float> v(b.size() / 4);
    std::memcpy(v.data(), b.data(), v.size() * 4);
    return v;
}

struct Totals { int claims = 0, failures = 0, unchecked = 0; };

// Bytes of a q8_1 column of K elements (rocmforge/pack_abi.h).
int64_t q8_column_bytes(int64_t K) { return RF_Q8_1_COLUMN_BYTES(K); }

// The q8_1 columns of the rows of x (K elements each) as rocmforge/pack_abi.h lays them out and the
// backend quantizes them for a matmul's activations (rf_fusion_launch.act_in, ABI 2.6): the rule
// in C the in-tree packs' host_runs use (plugins/packs/pack_match.c).
std::vector<uint8_t> quantize_q8_1(const float *x, int64_t K, int64_t rows, int block) {
    const int64_t stride = q8_column_bytes(K);
    std::vector<uint8_t> cols((size_t)(rows * stride));
    for (int64_t r = 0; r < rows; ++r) pm_quantize_q8_1(x + r * K, K, block, cols.data() + r * stride);
    return cols;
}

// The HIP backend's choices for a MATMUL on the checked device (backends/hip/ops.cpp dispatch_node,
// matmul_mmq.cpp), with its default settings: one activation row on the vector kernels; on NVIDIA
// archs 5..64 rows on the integer tensor-core tiles (mmq_usable: option mmq_min_cols = 5,
// kMaxCols = 64) and 2..16 rows the tiles do not take on the dp4a column kernels (uses_mvq_cols,
// mvq_max_cols = 16), both for the five q8_1 weight types with rows the kernels can load.
bool q8_weight(int t) { return t == RF_TYPE_Q4_K || t == RF_TYPE_Q5_K || t == RF_TYPE_Q6_K || t == RF_TYPE_Q4_0 || t == RF_TYPE_Q8_0; }
bool nvidia(const rf_pack_device *dev) { return std::string(dev->arch).rfind("sm_", 0) == 0; }
// The grid i-quants and TQ2_0: q8_1 dot kernels on NVIDIA only (mvq_kernel), 2-byte aligned rows.
bool grid_weight(int t) {
    return t == RF_TYPE_IQ2_XXS || t == RF_TYPE_IQ2_XS || t == RF_TYPE_IQ2_S || t == RF_TYPE_IQ3_XXS || t == RF_TYPE_IQ3_S ||
           t == RF_TYPE_IQ1_S || t == RF_TYPE_IQ1_M || t == RF_TYPE_TQ2_0;
}
bool decode_weight(const rf_pack_device *dev, int t) { return q8_weight(t) || (nvidia(dev) && grid_weight(t)); }
int nvidia_sm(const rf_pack_device *dev) { return nvidia(dev) ? std::atoi(dev->arch + 3) : 0; }
// Weight rows 16-byte aligned for Q4_K / Q5_K (16-byte loads of their blocks), 2-byte otherwise
// (ops.cpp aligned(), mvq_kernel()).
bool rows_aligned(const rf_tensor *w) {
    const int64_t a = w->type == RF_TYPE_Q4_K || w->type == RF_TYPE_Q5_K ? 16 : 2;
    return (uintptr_t)w->data % a == 0 && w->nb[1] % a == 0 && w->nb[2] % a == 0 && w->nb[3] % a == 0;
}
constexpr int64_t kMmqMinCols = 5, kMmqMaxCols = 64, kMvqMaxCols = 16;

// matmul_mmq.cpp mmq_usable (rows_usable: the row and q8_1 column strides under 4 GiB).
bool tiles_usable(const rf_pack_device *dev, const rf_node *n) {
    const rf_tensor *w = n->src[0], *x = n->src[1];
    const int64_t M = x->ne[1];
    constexpr uint64_t k4G = uint64_t(1) << 32;
    return nvidia(dev) && n->dst && q8_weight(w->type) && x->ne[2] * x->ne[3] == 1 && M >= kMmqMinCols && M <= kMmqMaxCols && w->ne[1] >= 1 &&
           rows_aligned(w) && uint64_t(w->nb[1]) < k4G && uint64_t(RF_Q8_1_COLUMN_BYTES(w->ne[0])) < k4G;
}

// rf_pack_device.matmul_form of the checked device, so the matmul fusions' claims see what they
// see on a GPU. A matmul on the tiles is RF_MATMUL_OTHER (packs before ABI 2.7 would take any
// other form for their vector or column kernels); check_matmul_tiles names it.
int32_t check_matmul_form(const rf_pack_device *dev, const rf_node *n) {
    if (!n || n->op != RF_OP_MATMUL || !n->src[0] || !n->src[1] || n->src[1]->type != RF_TYPE_F32) return RF_MATMUL_OTHER;
    const rf_tensor *w = n->src[0], *x = n->src[1];
    const int64_t M = x->ne[1];
    if (M == 1 && (decode_weight(dev, w->type) || w->type == RF_TYPE_F16)) return RF_MATMUL_VECTOR;
    if (tiles_usable(dev, n)) return RF_MATMUL_OTHER;
    return nvidia(dev) && decode_weight(dev, w->type) && M >= 2 && M <= kMvqMaxCols && x->ne[2] * x->ne[3] == 1 && rows_aligned(w)
               ? RF_MATMUL_COLUMNS
               : RF_MATMUL_OTHER;
}

// rf_mmq_<type>_<cols>_k<split>, the names the backend launches (matmul_mmq.cpp mmq_kernel_names),
// kept for the tool's lifetime (rf_matmul_tiles.kernel must stay valid).
const char *mmq_kernel(int type, int cols, int split) {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const char *t : {"q4_k", "q5_k", "q6_k", "q4_0", "q8_0"})
            for (int c : {8, 16, 32})
                for (int k : {1, 2, 4}) v.push_back(std::string("rf_mmq_") + t + "_" + std::to_string(c) + "_k" + std::to_string(k));
        return v;
    }();
    const int t = type == RF_TYPE_Q4_K ? 0 : type == RF_TYPE_Q5_K ? 1 : type == RF_TYPE_Q6_K ? 2 : type == RF_TYPE_Q4_0 ? 3 : 4;
    const int c = cols == 8 ? 0 : cols == 16 ? 1 : 2, k = split == 1 ? 0 : split == 2 ? 1 : 2;
    return names[(size_t)(t * 9 + c * 3 + k)].c_str();
}

// rf_pack_device.matmul_tiles of the checked device: the launch matmul_mmq makes for one
// matrix with the backend's defaults (mmq_cols, ksplit with the device's multiprocessors and
// clusters from sm_90; iparams[1] = 1: no L2 prefetch, [2] = 0: the kernel's prefetch window,
// [3] = 0: cp.async staging, not TMA).
int32_t check_matmul_tiles(const rf_pack_device *dev, const rf_node *n, rf_matmul_tiles *tiles) {
    if (!n || n->op != RF_OP_MATMUL || !n->src[0] || !n->src[1] || n->src[1]->type != RF_TYPE_F32 || !tiles_usable(dev, n)) return 0;
    const rf_tensor *w = n->src[0];
    const int64_t K = w->ne[0], N = w->ne[1], M = n->src[1]->ne[1];
    const int cols = M <= 8 ? 8 : M <= 16 ? 16 : 32;
    const int64_t row_tiles = (N + 63) / 64, chunks = (M + cols - 1) / cols;
    // ksplit(): the fewest blocks of a cluster that give four per multiprocessor, keeping at least
    // two K steps per block (steps of 256 elements, 128 for Q4_0 / Q8_0).
    int split = 1;
    if (nvidia_sm(dev) >= 90) {
        const int64_t steps = K / (w->type == RF_TYPE_Q4_0 || w->type == RF_TYPE_Q8_0 ? 128 : 256);
        while (split < 4 && row_tiles * chunks * split < 4 * std::max(1, dev->multiprocessors) && steps >= 4 * split) split *= 2;
    }
    *tiles = rf_matmul_tiles{};
    tiles->kernel = mmq_kernel(w->type, cols, split);
    tiles->grid[0] = (uint32_t)(row_tiles * split);
    tiles->grid[1] = (uint32_t)chunks;
    tiles->threads = 128;
    tiles->rows_per_tile = 64;
    tiles->split = (uint32_t)split;
    tiles->iparams[1] = 1;
    return 1;
}

// The q8_1 columns a launch wrote (rows columns of K, `stride` bytes apart) against the layout of
// rocmforge/pack_abi.h applied to x, the unfused graph's values: "" or the first difference. The
// launch quantized its own floats, which may differ from the CPU's in the last bits, so a quant
// may be one step off where x * 127 / amax lies near a half; d within 1e-5 relative.
std::string compare_q8(const std::vector<float> &x, int64_t K, int64_t rows, int block, const std::vector<uint8_t> &cols, int64_t stride) {
    for (int64_t r = 0; r < rows; ++r) {
        const float *xr = x.data() + r * K;
        const uint8_t *col = cols.data() + r * stride;
        const float *pairs = reinterpret_cast<const float *>(col + K);
        for (int64_t b = 0; b < K; b += block) {
            double amax = 0;
            for (int64_t j = b; j < b + block; ++j) amax = std::max(amax, std::fabs((double)xr[j]));
            for (int64_t s = b; s < b + block; s += 32) {
                const double d = amax / 127.0, got_d = pairs[2 * (s / 32)];
                if (std::fabs(got_d - d) > 1e-5 * std::max(d, 1e-30)) return "row " + std::to_string(r) + ": d of elements " + std::to_string(s) + "..";
                int sum = 0;
                for (int64_t j = s; j < s + 32; ++j) {
                    const int q = (int)(int8_t)col[j];
                    const double want = amax > 0 ? xr[j] * 127.0 / amax : 0;
                    if (std::fabs(q - want) > 0.5 + 1e-3) return "row " + std::to_string(r) + " element " + std::to_string(j) + ": quant " + std::to_string(q) + " for " + std::to_string(want);
                    sum += q;
                }
                if (std::fabs(pairs[2 * (s / 32) + 1] - got_d * sum) > 1e-6 * std::max(1.0, std::fabs(got_d * sum)))
                    return "row " + std::to_string(r) + ": d * sum of elements " + std::to_string(s) + "..";
            }
        }
    }
    return "";
}

// Runs one case: reference, then the fused walk, then the comparison. Prints what happened.
void check_case(pack_check::Case &c, Cpu &cpu, const std::vector<rf_hip::PackPlugin> &packs, const rf_pack_device &dev,
                Totals &tot) {
    std::vector<bool> is_alias(c.tensors.size());
    for (auto [alias, owner] : c.aliases) is_alias[alias] = true;
    for (size_t i = 0; i < c.tensors.size(); ++i)
        if (!is_alias[i]) c.tensors[i].data = cpu.alloc(bytes_of(c.tensors[i]));
    for (auto [alias, owner] : c.aliases) c.tensors[alias].data = c.tensors[owner].data;
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    std::vector<std::vector<uint8_t>> inputs; // f32: uniform in [-2, 2]; f16: finite halves of that range
    for (rf_tensor *t : c.inputs) {
        std::vector<uint8_t> v(bytes_of(*t));
        if (t->type != RF_TYPE_F32 && t->type != RF_TYPE_F16 && t->type != RF_TYPE_I32) { // weights: quantized random rows
            std::vector<float> row((size_t)t->ne[0]);
            // IQ2_XXS, IQ2_XS, IQ1_S quantize only with an importance matrix: a uniform one
            const std::vector<float> importance(row.size(), 1.0f);
            for (int64_t r = 0; r < t->ne[1] * t->ne[2] * t->ne[3]; ++r) {
                for (float &x : row) x = dist(rng);
                rf::quantize_row_weighted(t->type, row.data(), v.data() + r * t->nb[1], t->ne[0],
                                          rf::importance_required(t->type) ? importance.data() : nullptr);
            }
            inputs.push_back(v);
            continue;
        }
        for (size_t j = 0; j + 4 <= v.size(); j += 4) {
            float x = dist(rng);
            if (t->type == RF_TYPE_F16) { // two halves: sign, exponent 14..15, a random mantissa
                const uint32_t h = 0x38003800u | (std::bit_cast<uint32_t>(x) & 0x83ff83ffu);
                std::memcpy(&x, &h, 4);
            }
            std::memcpy(&v[j], &x, 4);
        }
        inputs.push_back(v);
    }
    auto reset = [&] {
        for (auto &t : c.tensors) std::fill_n(static_cast<float *>(t.data), bytes_of(t) / 4, std::nanf(""));
        for (size_t i = 0; i < c.inputs.size(); ++i) std::memcpy(c.inputs[i]->data, inputs[i].data(), bytes_of(*c.inputs[i]));
        for (auto &[t, vals] : c.int_inputs) std::memcpy(t->data, vals.data(), vals.size() * 4);
    };
    std::vector<rf_node *> nodes;
    for (auto &n : c.nodes) nodes.push_back(&n);
    const rf_graph g{(int32_t)nodes.size(), nodes.data()};

    reset();
    cpu.run(nodes.data(), g.n_nodes);
    std::vector<std::vector<uint8_t>> want; // every node's result, as its bytes
    for (auto *n : nodes) want.push_back(bytes(*n->dst));

    reset();
    std::string log;
    int case_claims = 0;
    for (int i = 0; i < g.n_nodes;) {
        int used = 0;
        for (const auto &p : packs) {
            for (const rf_fusion *f : p.fusions) {
                if (f->first_op != nodes[i]->op) continue;
                // ABI 2.7: several launches where the fusion fills them (claim_launches), else one.
                rf_fusion_launch ls[RF_FUSION_MAX_LAUNCHES];
                int32_t n_launches = 1;
                int count = 0;
                if (const auto claim_launches = RF_SLOT(f, rf_fusion, claim_launches)) {
                    for (rf_fusion_launch &l : ls) rf_fusion_launch_init(&l);
                    n_launches = 0;
                    count = claim_launches(&g, i, &dev, ls, RF_FUSION_MAX_LAUNCHES, &n_launches);
                } else {
                    rf_fusion_launch_init(&ls[0]);
                    count = f->claim(&g, i, &dev, &ls[0]);
                }
                if (count == 0) continue;
                const std::string who = std::string("fusion '") + f->name + "' (" + p.path + ")";
                auto refuse = [&](const std::string &why) {
                    ++tot.failures;
                    std::printf("FAIL %s\n%s    FAIL %s at node %d: %s\n", c.name.c_str(), log.c_str(), who.c_str(), i, why.c_str());
                };
                if (n_launches < 1 || n_launches > RF_FUSION_MAX_LAUNCHES) {
                    refuse("claims " + std::to_string(count) + " node(s) with " + std::to_string(n_launches) + " launches (1.." +
                           std::to_string(RF_FUSION_MAX_LAUNCHES) + ")");
                    return;
                }
                // The scratch lent to all launches of the claim (first launch's lent_bytes), NaN
                // until a launch writes it: a launch reading bytes no earlier one wrote shows.
                struct alignas(16) Granule { float v[4]; };
                const uint64_t lent_bytes = ls[0].lent_bytes;
                std::vector<Granule> lent((size_t)((lent_bytes + 15) / 16), Granule{{std::nanf(""), std::nanf(""), std::nanf(""), std::nanf("")}});
                void *lent_at = lent_bytes ? lent.data() : nullptr;
                // Every launch bound first (a bad binding in any is the claim's failure), then run in order.
                std::vector<rf_kargs> args((size_t)n_launches);
                std::vector<const rf_tensor *> q8xs((size_t)n_launches, nullptr);
                std::vector<std::vector<uint8_t>> q8_cols((size_t)n_launches);
                std::vector<const rf_tensor *> acts((size_t)n_launches, nullptr);
                std::vector<int> act_blocks((size_t)n_launches, 0);
                std::string launches;
                for (int k = 0; k < n_launches; ++k) {
                    const rf_fusion_launch &l = ls[k];
                    rf_kargs &a = args[(size_t)k];
                    const std::string at = n_launches > 1 ? "launch " + std::to_string(k) + ": " : std::string();
                    if (std::string e = rf_hip::bind_claim(g, i, count, l, a); !e.empty()) return refuse(at + e);
                    const rf_tensor *q8x = nullptr;
                    if (std::string e = rf_hip::bind_q8(g, i, count, l, &q8x); !e.empty()) return refuse(at + e);
                    q8xs[(size_t)k] = q8x;
                    // The q8_1 columns it offers, lent in the case's block (as the backend lends them).
                    if (q8x) {
                        const int64_t rows = q8x->ne[1] * q8x->ne[2] * q8x->ne[3], stride = q8_column_bytes(q8x->ne[0]);
                        q8_cols[(size_t)k].resize((size_t)(rows * stride));
                        rf_hip::lend_q8(l, q8_cols[(size_t)k].data(), stride, c.q8_block, a);
                    }
                    // The activations it reads (ABI 2.6): q8_1 columns quantized here as the backend
                    // quantizes them, or the f32 rows; the scratch lent to the claim (ABI 2.7); and the
                    // kernel it names, which its pack must list.
                    std::string bad = rf_hip::bind_act_in(g, i, count, l, &acts[(size_t)k], &act_blocks[(size_t)k]);
                    if (bad.empty()) bad = rf_hip::bind_words(g, i, count, l, a, lent_at, lent_bytes);
                    if (bad.empty() && l.kernel && !rf_hip::pack_lists_kernel(*p.vt, l.kernel))
                        bad = std::string("launches kernel '") + l.kernel + "' that the pack does not list";
                    if (!bad.empty()) return refuse(at + bad);
                    if (n_launches > 1) {
                        char grid[96];
                        std::snprintf(grid, sizeof grid, " (grid %ux%ux%u)", l.grid[0], l.grid[1], l.grid[2]);
                        launches += (k ? ", " : "") + std::string(l.kernel ? l.kernel : f->kernel) + grid;
                    }
                }
                ++tot.claims;
                ++case_claims;
                std::string line = "    " + who + " claims nodes " + std::to_string(i) + ".." + std::to_string(i + count - 1);
                if (n_launches > 1) line += ", " + std::to_string(n_launches) + " launches: " + launches;
                else if (ls[0].kernel) line += std::string(", kernel ") + ls[0].kernel;
                if (lent_bytes) line += ", " + std::to_string(lent_bytes) + " bytes lent";
                for (int k = 0; k < n_launches; ++k)
                    if (q8xs[(size_t)k] && c.q8_block) line += n_launches > 1 ? ", launch " + std::to_string(k) + " q8_1 columns lent" : ", q8_1 columns lent";
                log += line + "\n";
                auto host_run = RF_SLOT(f, rf_fusion, host_run);
                if (!host_run) {
                    log += "    (no host_run: cannot check the claim here; the nodes run on the CPU backend)\n";
                    ++tot.unchecked;
                    cpu.run(nodes.data() + i, count);
                    used = count;
                    break;
                }
                for (int k = 0; k < n_launches; ++k) {
                    const rf_fusion_launch &l = ls[k];
                    rf_kargs &a = args[(size_t)k];
                    const std::string at = n_launches > 1 ? " launch " + std::to_string(k) : std::string();
                    // The activations lent as the launch starts (an earlier launch may have written them).
                    const rf_tensor *act = acts[(size_t)k];
                    const int act_block = act_blocks[(size_t)k];
                    std::vector<uint8_t> cols;
                    if (act_block == RF_ACT_IN_F32) {
                        rf_hip::lend_act_in(l, act->data, act->nb[1], a);
                    } else if (act) {
                        cols = quantize_q8_1(static_cast<const float *>(act->data), act->ne[0], act->ne[1] * act->ne[2] * act->ne[3], act_block);
                        rf_hip::lend_act_in(l, cols.data(), q8_column_bytes(act->ne[0]), a);
                    }
                    if (int r = host_run(&a, &l)) {
                        log += "    FAIL " + who + at + ": host_run returned " + std::to_string(r) + "\n";
                        ++tot.failures;
                        break;
                    }
                    const rf_tensor *q8x = q8xs[(size_t)k];
                    if (q8x && c.q8_block) {
                        // Against the unfused graph's value of that tensor (the last covered node writing it).
                        int producer = -1;
                        for (int n = i; n < i + count; ++n)
                            if (nodes[n]->dst->data == q8x->data) producer = n;
                        const int64_t rows = q8x->ne[1] * q8x->ne[2] * q8x->ne[3];
                        const std::string e = producer < 0 ? "no covered node writes the tensor of its q8_1 columns"
                                                           : compare_q8(floats(want[producer]), q8x->ne[0], rows, c.q8_block, q8_cols[(size_t)k],
                                                                        q8_column_bytes(q8x->ne[0]));
                        if (!e.empty()) {
                            log += "    FAIL " + who + at + ": q8_1 columns: " + e + "\n";
                            ++tot.failures;
                        }
                    }
                }
                used = count;
                break;
            }
            if (used) break;
        }
        if (!used) {
            cpu.run(nodes.data() + i, 1);
            used = 1;
        }
        i += used;
    }
    if (!case_claims) log += "    (not claimed: every node ran on the CPU backend)\n";
    // Every node's result, the intermediate ones too: a fused kernel must leave them as written.
    bool ok = true;
    for (int i = 0; i < g.n_nodes; ++i) {
        if (nodes[i]->dst->type != RF_TYPE_F32) { // f16 pools: the same bits
            const std::vector<uint8_t> got = bytes(*nodes[i]->dst);
            if (got == want[i]) continue;
            // Where a matmul fed them (a tolerance beyond elementwise), the f32 values they round
            // may differ within it, which can move a half to its neighbour (or across zero, for a
            // value near it): within the tolerance plus one half ulp of the larger, no more.
            size_t at = SIZE_MAX;
            if (nodes[i]->dst->type == RF_TYPE_F16 && c.tolerance > 1e-6) {
                for (size_t j = 0; j + 2 <= got.size() && at == SIZE_MAX; j += 2) {
                    uint16_t a, b;
                    std::memcpy(&a, &got[j], 2);
                    std::memcpy(&b, &want[i][j], 2);
                    if (a == b) continue;
                    const double x = rf::fp16_to_fp32(a), y = rf::fp16_to_fp32(b), big = std::max(std::fabs(x), std::fabs(y));
                    if (!(std::fabs(x - y) <= c.tolerance * std::max(1.0, std::fabs(y)) + std::ldexp(big, -10))) at = j / 2;
                }
                if (at == SIZE_MAX) continue;
            }
            log += "    FAIL node " + std::to_string(i) + " (" + rf_op_name(nodes[i]->op) + "): bytes differ from the unfused graph's" +
                   (at == SIZE_MAX ? std::string() : ", half " + std::to_string(at) + " beyond the tolerance plus one ulp") + "\n";
            ok = false;
            continue;
        }
        const std::vector<float> got = floats(bytes(*nodes[i]->dst)), w = floats(want[i]);
        double worst = 0;
        size_t at = 0;
        for (size_t j = 0; j < got.size(); ++j) {
            const double err = std::isnan(got[j]) != std::isnan(w[j]) ? INFINITY : std::fabs((double)got[j] - w[j]);
            const double rel = err / std::max(1.0, std::fabs((double)w[j]));
            if (!(rel <= worst)) worst = rel, at = j;
        }
        if (worst > c.tolerance) {
            char line[256];
            std::snprintf(line, sizeof line, "    FAIL node %d (%s): element %zu is %g, the unfused graph gives %g\n", i,
                          rf_op_name(nodes[i]->op), at, got[at], w[at]);
            log += line;
            ok = false;
        }
    }
    if (!ok) ++tot.failures;
    std::printf("%s %s\n%s", ok ? "ok  " : "FAIL", c.name.c_str(), log.c_str());
}

int run(const Options &opt) {
    const rf::Config config = rf::Config::resolve(opt.config);
    rapidjson::Document hip;
    hip.Parse(config.backend_config_json("hip").c_str());
    auto strings = [&](const char *key) {
        std::vector<std::string> v;
        if (hip.IsObject() && hip.HasMember(key) && hip[key].IsArray())
            for (const auto &s : hip[key].GetArray())
                if (s.IsString()) v.emplace_back(s.GetString());
        return v;
    };
    rf_hip::PackSearch search;
    search.arch = opt.arch;
    if (search.arch.empty() && hip.IsObject() && hip.HasMember("arch_override") && hip["arch_override"].IsString())
        search.arch = hip["arch_override"].GetString();
    if (search.arch.empty()) throw rf::UsageError("which arch? --arch sm_90 or backend_options.hip.arch_override in the config");
    search.files = strings("packs");
    search.dirs = strings("kernel_pack_dirs");
    if (search.dirs.empty()) {
        // The backend's defaults, seen from bin/ (installed) and tools/ (build tree).
        const std::filesystem::path exe = rf::executable_dir();
        search.dirs = {(exe / "../lib/rocmforge/packs").lexically_normal().string(), (exe / "../plugins/packs").lexically_normal().string()};
    }
    rf_hip::PackSet set;
    std::string err;
    // No base-kernel list: that is the GPU backend's to check (it knows which kernels it launches).
    if (!rf_hip::find_packs(search, {}, set, err)) {
        std::fprintf(stderr, "rocmforge-pack-check: %s\n", err.c_str());
        return 1;
    }
    size_t n_fusions = 0;
    for (const auto &p : set.packs) {
        std::printf("pack %s: %s %s, arch %s, %d kernel(s), sha256 verified, fusions:", p.path.c_str(), p.name.c_str(),
                    p.version.c_str(), p.vt->arch, p.vt->n_kernels);
        for (const rf_fusion *f : p.fusions) std::printf(" %s", f->name);
        std::printf("%s\n", p.fusions.empty() ? " none" : "");
        n_fusions += p.fusions.size();
    }
    if (set.packs.empty()) std::printf("no pack for %s (%s)\n", search.arch.c_str(), set.looked_for.c_str());

    std::vector<rf::LoadedPlugin> plugins = rf::discover_plugins(config);
    Cpu cpu;
    for (const auto &p : plugins)
        if (p.info && p.info->kind == RF_PLUGIN_BACKEND && std::string(p.info->name) == "cpu") cpu.vt = static_cast<const rf_backend_vtable *>(p.info->vtable);
    if (!cpu.vt) throw rf::Error("the CPU backend plugin was not found (it is the reference): " + rf::backends_found(plugins));
    char e[512] = {0};
    if (cpu.vt->init(config.backend_config_json("cpu").c_str(), &cpu.ctx, e, sizeof e) != RF_OK) throw rf::Error(std::string("cpu init: ") + e);
    // An H100's 132 multiprocessors (the tile launches' K split depends on them).
    const rf_pack_device dev{sizeof(rf_pack_device), search.arch.c_str(), 132, search.arch.rfind("gfx9", 0) == 0 ? 64 : 32,
                             sizeof(rf_fusion_launch), check_matmul_form, nullptr, check_matmul_tiles};

    Totals tot;
    auto cases = pack_check::make_cases();
    for (auto &c : cases) check_case(c, cpu, set.packs, dev, tot);
    std::printf("%zu fusion(s), %zu case(s): %d claim(s), %d unchecked, %d failure(s)\n", n_fusions, cases.size(), tot.claims,
                tot.unchecked, tot.failures);
    if (opt.expect_claims >= 0 && tot.claims != opt.expect_claims) {
        std::printf("FAIL: expected %d claim(s)\n", opt.expect_claims);
        return 1;
    }
    if (tot.unchecked && !opt.allow_unchecked) {
        std::printf("FAIL: claims without host_run cannot be checked without a GPU (--allow-unchecked to accept)\n");
        return 1;
    }
    return tot.failures ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
    Options opt;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) { std::fprintf(stderr, "rocmforge-pack-check: %s needs a value\n%s", a.c_str(), kUsage); std::exit(2); }
            return argv[++i];
        };
        if (a == "--config") opt.config = value();
        else if (a == "--arch") opt.arch = value();
        else if (a == "--expect-claims") opt.expect_claims = std::atoi(value().c_str());
        else if (a == "--allow-unchecked") opt.allow_unchecked = true;
        else if (a == "-h" || a == "--help") { std::printf("%s", kUsage); return 0; }
        else { std::fprintf(stderr, "rocmforge-pack-check: unknown argument '%s'\n%s", a.c_str(), kUsage); return 2; }
    }
    try {
        return run(opt);
    } catch (const rf::UsageError &e) {
        std::fprintf(stderr, "rocmforge-pack-check: %s\n", e.what());
        return 2;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "rocmforge-pack-check: %s\n", e.what());
        return 1;
    }
}
