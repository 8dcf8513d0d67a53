// Mixture-of-experts ops: checks and launches of kernels/matmul_id.hip (semantics: abi.h).
//
// MATMUL_ID runs on a grid (ceil(N / 4), E): a warp per (row, expert) finds the columns routed
// to its expert itself, so no host-side or device-side sort is needed and experts no token chose
// cost a block that reads S*M ids and exits. Few columns (decode: S*M <= kMvqIdCols) of Q4_K,
// Q5_K, Q6_K (NVIDIA), Q4_0, Q8_0, MXFP4 weights take the dp4a kernels on q8_1 activations (the decode
// matmuls' row functions); every other case the decode-to-f32 kernels, on activations quantized and
// dequantized like the CPU backend's for quantized weights (as ops.cpp's other matmuls) and
// rounded to f16 in the kernel for F16 weights (ggml's vec_dot_type, as the CPU), so the GPU
// agrees with the CPU to float rounding. Prefill-sized column counts (S*M >= 64) of
// Q4_K/Q5_K/Q6_K/Q4_0/Q8_0/F16 experts on NVIDIA sm_80+ go to moe_grouped.cpp instead: columns
// sorted by expert on the GPU, one grouped launch of the tensor-core prefill tiles. AMD and the
// other types keep rf_mm_id_* (it too reads each expert row once per tile of its tokens).
#include "moe.h"

#include <algorithm>

#include "moe_grouped.h"
#include "ops.h"
#include "weight_types.h"

namespace rf_hip {

namespace {

constexpr int64_t kMvqIdCols = 64;    // dp4a path up to this many (slot, token) columns
constexpr unsigned kRowsPerBlock = 4; // matmul_id.hip's RF_MMI_WARPS
// Rows of at most kShortRowK elements take kShortRowWarpRows rows a warp on the routed-column
// kernels (rf_mvq_idc_<type>_r<R>, NVIDIA; matmul_id.hip instantiates R = 4 only): Qwen3-MoE's
// down projections (K = 768).
constexpr int64_t kShortRowK = 1024;
constexpr int kShortRowWarpRows = 4;

bool f32(const rf_tensor *t) { return t && t->type == RF_TYPE_F32; }
bool i32(const rf_tensor *t) { return t && t->type == RF_TYPE_I32; }
bool dense(const rf_tensor *t, int64_t es) {
    return t->nb[0] == es && t->nb[1] == es * t->ne[0] && t->nb[2] == t->nb[1] * t->ne[1] && t->nb[3] == t->nb[2] * t->ne[2];
}
bool two_d(const rf_tensor *t) { return t->ne[2] == 1 && t->ne[3] == 1; }

// The weight types with dp4a row kernels (rf_mvq_id_<suffix>, rf_mvq_idc_<suffix>), as ops.cpp's
// M = 1 matmuls choose them (alignment of the row pieces they load); null for the others.
const char *mvq_id_suffix(const rf_tensor *w) {
    switch (w->type) {
    case RF_TYPE_Q4_K: case RF_TYPE_Q5_K: return aligned(w, 16) ? weight_type(w->type)->suffix : nullptr;
#if defined(RF_HIP_NVIDIA)
    case RF_TYPE_Q6_K: // not in the AMD packs (spills on gfx1100)
#endif
    case RF_TYPE_Q4_0: case RF_TYPE_Q8_0: return aligned(w, 2) ? weight_type(w->type)->suffix : nullptr;
    case RF_TYPE_MXFP4: return weight_type(w->type)->suffix; // gpt-oss: 17-byte blocks, read at any byte
    default: return nullptr;
    }
}

std::string matmul_id_reason(const rf_node &n) {
    const rf_tensor *w = n.src[0], *x = n.src[1], *ids = n.src[2], *d = n.dst;
    if (!w || !x || !ids) return "matmul_id needs a weight, activations and ids";
    const TypeInfo *ti = weight_type(w->type);
    if (!ti) return "matmul_id weight type " + std::to_string(w->type) + " not supported";
    if (!f32(x) || !f32(d) || !i32(ids)) return "matmul_id needs f32 activations and output, i32 ids";
    if (w->ne[0] % ti->block) return "matmul_id K not a multiple of the weight block size";
    const int64_t S = ids->ne[0], M = ids->ne[1];
    if (!dense(ids, 4) || !two_d(ids)) return "matmul_id ids must be a dense i32 [S, M]";
    if (w->ne[3] != 1 || x->ne[3] != 1 || d->ne[3] != 1 || x->ne[0] != w->ne[0] || (x->ne[1] != S && x->ne[1] != 1) ||
        x->ne[2] != M || d->ne[0] != w->ne[1] || d->ne[1] != S || d->ne[2] != M)
        return "matmul_id shape mismatch";
    if (w->ne[2] > 65535 || S * M >= (int64_t)1 << 30 || x->ne[1] * M > 65535) return "matmul_id too many experts or columns";
    if (ti->block > 1 && ((x->nb[1] | x->nb[2]) % 16 || (size_t)x->data % 16)) return "matmul_id activations must be 16-byte aligned";
    if (byte_extent(x) >= (uint64_t)1 << 32 || (uint64_t)x->ne[0] * 4 * x->ne[1] * x->ne[2] >= (uint64_t)1 << 32)
        return "matmul_id activations over 4 GiB"; // 32-bit row offsets in the kernels
    return "";
}

// Quantized weights read their activations quantized like the CPU backend's: q8_1 columns for
// the dp4a kernels (ensure_q8_columns), or quantized-then-dequantized f32 rows in fq_scratch
// (reused while the source is unchanged, as ops.cpp's quantized_activations).
int f32_quantized_rows(Backend &b, const rf_tensor *x, int block, rf_ktensor &kx, std::string &err) {
    const int64_t K = x->ne[0], rows = x->ne[1] * x->ne[2] * x->ne[3];
    const bool cached = b.fq.src == x->data && b.fq.k == K && b.fq.rows == rows && b.fq.block == block && b.fq.elem == 4;
    if (!cached) {
        if (!ensure_scratch(b, b.fq_scratch, std::max<uint64_t>((uint64_t)(K * rows * 4), 1 << 20), false, err))
            return RF_ERR_OUT_OF_MEMORY;
        rf_kargs qa{};
        qa.src[0] = ktensor(x);
        qa.scratch = b.fq_scratch.ptr;
        qa.aux[1] = block;
        if (int r = launch(b, "rf_quantize_f32_q8", (unsigned)((K + 255) / 256), (unsigned)std::min<int64_t>(rows, 65535), 1, 256, qa, err))
            return r;
        b.fq = {x->data, byte_extent(x), K, rows, block, b.fq_scratch.ptr, 4};
    }
    kx.data = b.fq_scratch.ptr;
    kx.nb[0] = 4;
    kx.nb[1] = K * 4;
    kx.nb[2] = kx.nb[1] * x->ne[1];
    kx.nb[3] = kx.nb[2] * x->ne[2];
    return RF_OK;
}

int matmul_id(Backend &b, const rf_node &n, std::string &err) {
    const rf_tensor *w = n.src[0], *x = n.src[1], *ids = n.src[2];
    rf_kargs a = make_args(n);
    const unsigned gx = (unsigned)((w->ne[1] + kRowsPerBlock - 1) / kRowsPerBlock), gy = (unsigned)w->ne[2];
    const int block = act_block(w->type);
    if (const char *sfx = mvq_id_suffix(w); sfx && ids->ne[0] * ids->ne[1] <= kMvqIdCols) {
        if (int r = ensure_q8_columns(b, x, block, err)) return r;
        a.scratch = b.q8.where;
        a.aux[0] = q8_column_bytes(w->ne[0]);
        // No more columns than experts: a grid row per column (rf_mvq_idc_*), so the experts no
        // token chose cost nothing; else a grid row per expert that finds its columns.
        if (ids->ne[0] * ids->ne[1] <= w->ne[2]) {
            b.rule = "no more routed columns than experts, q8_1 dot weights: a grid row per column";
            // Each routed column is one expert's column: the rule of the dense decode matmuls over
            // the rows the columns read (Qwen3-MoE's eight experts, 7 MB: prefetched; Mixtral's
            // two, 66 MB: not, as a 7B model's matrices are not).
            const uint64_t routed_bytes = (uint64_t)(ids->ne[0] * ids->ne[1]) * (uint64_t)(w->ne[1] * w->nb[1]);
            a.mv.no_weight_prefetch = no_weight_prefetch_bytes(b, routed_bytes, 1);
#if defined(RF_HIP_NVIDIA)
            // Short rows (the experts' down projections): kShortRowWarpRows rows a warp (_r<R>).
            if (w->ne[0] <= kShortRowK) {
                const unsigned rows = kRowsPerBlock * kShortRowWarpRows;
                return launch(b, std::string("rf_mvq_idc_") + sfx + "_r" + std::to_string(kShortRowWarpRows),
                              (unsigned)((w->ne[1] + rows - 1) / rows), (unsigned)(ids->ne[0] * ids->ne[1]), 1, 32 * kRowsPerBlock, a, err);
            }
#endif
            return launch(b, std::string("rf_mvq_idc_") + sfx, gx, (unsigned)(ids->ne[0] * ids->ne[1]), 1, 32 * kRowsPerBlock, a, err);
        }
        b.rule = "few routed columns, q8_1 dot weights: a grid row per expert";
        return launch(b, std::string("rf_mvq_id_") + sfx, gx, gy, 1, 32 * kRowsPerBlock, a, err);
    }
    if (matmul_id_grouped_usable(b, n)) {
        b.rule = "many routed columns: grouped by expert onto the tensor-core tiles (moe_grouped.cpp)";
        return matmul_id_grouped(b, n, err);
    }
    b.rule = "any other: a grid row per expert, f32 activations";
    if (block)
        if (int r = f32_quantized_rows(b, x, block, a.src[1], err)) return r;
    return launch(b, std::string("rf_mm_id_") + weight_type(w->type)->suffix, gx, gy, 1, 32 * kRowsPerBlock, a, err);
}

} // namespace

bool matmul_id_reads_q8_columns(const rf_node &n) {
    const char *sfx = n.src[0] && n.src[2] ? mvq_id_suffix(n.src[0]) : nullptr;
    return sfx && n.src[2]->ne[0] * n.src[2]->ne[1] <= kMvqIdCols && matmul_id_reason(n).empty();
}

bool is_moe_op(int op) {
    return op == RF_OP_MOE_WEIGHTS || op == RF_OP_MATMUL_ID || op == RF_OP_MOE_SUM || op == RF_OP_ADD_ID;
}

std::string moe_unsupported_reason(const rf_node &n) {
    const rf_tensor *s0 = n.src[0], *s1 = n.src[1], *d = n.dst;
    switch (n.op) {
    case RF_OP_MOE_WEIGHTS:
        if (!f32(s0) || !i32(s1) || !f32(d) || !dense(s0, 4) || !dense(s1, 4) || !dense(d, 4) || !two_d(s0) || !two_d(d)) return "moe_weights operand types";
        if (s1->ne[0] != d->ne[0] || s1->ne[1] != d->ne[1] || s0->ne[1] != d->ne[1] || d->ne[0] > s0->ne[0]) return "moe_weights shape mismatch";
        return n.iparams[0] >= 0 && n.iparams[0] <= 2 ? "" : "moe_weights mode must be 0, 1 or 2";
    case RF_OP_MATMUL_ID:
        return matmul_id_reason(n);
    case RF_OP_MOE_SUM:
        if (!f32(s0) || !f32(s1) || !f32(d) || !dense(s1, 4) || !two_d(d) || s0->ne[3] != 1) return "moe_sum operand types";
        if (s0->ne[0] != d->ne[0] || s0->ne[2] != d->ne[1] || s1->ne[0] != s0->ne[1] || s1->ne[1] != d->ne[1]) return "moe_sum shape mismatch";
        return d->ne[1] <= 65535 ? "" : "moe_sum: too many tokens in one node";
    case RF_OP_ADD_ID: { // gpt-oss's expert biases: [N, S, M] plus bias rows [N, E] by ids [S, M]
        const rf_tensor *ids = n.src[2];
        if (!f32(s0) || !f32(s1) || !i32(ids) || !f32(d) || !dense(s1, 4) || !dense(ids, 4) || s0->ne[3] != 1) return "add_id operand types";
        for (int i = 0; i < 3; ++i)
            if (s0->ne[i] != d->ne[i]) return "add_id shape mismatch";
        if (s1->ne[0] != d->ne[0] || s1->ne[2] != 1 || ids->ne[0] != d->ne[1] || ids->ne[1] != d->ne[2]) return "add_id shape mismatch";
        return d->ne[1] <= 65535 && d->ne[2] <= 65535 ? "" : "add_id: too many slots or tokens in one node";
    }
    default:
        return "not a mixture-of-experts op";
    }
}

int run_moe_node(Backend &b, const rf_node &n, std::string &err) {
    rf_kargs a = make_args(n);
    switch (n.op) {
    case RF_OP_MOE_WEIGHTS: return launch(b, "rf_moe_weights_f32", (unsigned)n.dst->ne[1], 1, 1, 32, a, err);
    case RF_OP_MATMUL_ID: return matmul_id(b, n, err);
    case RF_OP_MOE_SUM: return launch(b, "rf_moe_sum_f32", (unsigned)((n.dst->ne[0] + 255) / 256), (unsigned)n.dst->ne[1], 1, 256, a, err);
    case RF_OP_ADD_ID:
        return launch(b, "rf_add_id_f32", (unsigned)((n.dst->ne[0] + 255) / 256), (unsigned)n.dst->ne[1], (unsigned)n.dst->ne[2], 256, a,
                      err);
    default:
        err = "op " + std::to_string(n.op) + " is not a mixture-of-experts op";
        return RF_ERR_UNSUPPORTED;
    }
}

std::vector<std::string> moe_kernel_names() {
    std::vector<std::string> v = {"rf_moe_weights_f32", "rf_moe_sum_f32", "rf_add_id_f32"};
    for (const auto &t : kWeightTypes) v.push_back(std::string("rf_mm_id_") + t.suffix);
    for (const char *t : {"q4_k", "q5_k", "q4_0", "q8_0", "mxfp4"})
        for (const char *form : {"rf_mvq_id_", "rf_mvq_idc_"}) v.push_back(std::string(form) + t);
#if defined(RF_HIP_NVIDIA)
    v.push_back("rf_mvq_id_q6_k");
    v.push_back("rf_mvq_idc_q6_k");
    for (const char *t : {"q4_k", "q5_k", "q6_k", "q4_0", "q8_0", "mxfp4"})
        v.push_back(std::string("rf_mvq_idc_") + t + "_r" + std::to_string(kShortRowWarpRows));
#endif
    for (const std::string &k : moe_group_kernel_names()) v.push_back(k);
    return v;
}

} // namespace rf_hip
