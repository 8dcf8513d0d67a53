#include "ops.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "attention_decode.h"
#include "attention_mma_layout.h"
#include "kernel_args.h"
#include "rocmforge/pack_abi.h"
#include "rocmforge/rope_yarn.h"
#include "matmul_h16.h"
#include "matmul_mmq.h"
#include "moe.h"
#include "select_ops.h"
#include "weight_types.h"

namespace rf_hip {

namespace {
// Dynamic shared memory beyond the default 48 KB needs the function's limit raised once.
int allow_smem(Backend &b, hipFunction_t f, unsigned smem, const std::string &name, std::string &err) {
    if (smem <= 48 * 1024) return RF_OK;
    for (const auto &[g, n] : b.smem_limits)
        if (g == f && n >= smem) return RF_OK;
#if defined(RF_HIP_NVIDIA)
    if (hipError_t e = rf_set_max_dynamic_smem(f, smem)) {
        err = gpu_error(("shared memory limit of " + name + " to " + std::to_string(smem) + " bytes").c_str(), e);
        return RF_ERR_DEVICE;
    }
#else
    err = "kernel '" + name + "' needs " + std::to_string(smem) + " bytes of shared memory (NVIDIA only)";
    return RF_ERR_DEVICE;
#endif
    b.smem_limits.emplace_back(f, smem);
    return RF_OK;
}
} // namespace

int launch(Backend &b, const std::string &name, unsigned gx, unsigned gy, unsigned gz, unsigned threads, rf_kargs &args,
           std::string &err, unsigned smem) {
    auto it = b.kernels.functions.find(name);
    if (it == b.kernels.functions.end()) { err = "kernel '" + name + "' not loaded"; return RF_ERR_DEVICE; }
    if (gx == 0 || gy == 0 || gz == 0) return RF_OK; // empty tensor
    if (int r = allow_smem(b, it->second, smem, name, err)) return r;
    // Collected by the backend's launch queue; compute() submits the list (or replays it as a graph).
    LaunchRec r;
    r.f = it->second;
    r.kernel = it->first.c_str();
    r.grid[0] = gx; r.grid[1] = gy; r.grid[2] = gz;
    r.threads = threads;
    r.smem = smem;
    r.args = args;
    b.queue.add(r);
    return RF_OK;
}

rf_kargs make_args(const rf_node &n) {
    rf_kargs a{};
    a.dst = ktensor(n.dst);
    for (int i = 0; i < RF_KMAX_SRC; ++i) a.src[i] = ktensor(n.src[i]);
    std::memcpy(a.iparams, n.iparams, sizeof a.iparams);
    std::memcpy(a.fparams, n.fparams, sizeof a.fparams);
    return a;
}

bool aligned(const rf_tensor *t, int64_t a) {
    return (size_t)t->data % a == 0 && t->nb[1] % a == 0 && t->nb[2] % a == 0 && t->nb[3] % a == 0;
}


int nvidia_sm(const std::string &arch) { return arch.rfind("sm_", 0) == 0 ? std::atoi(arch.c_str() + 3) : 0; }

const char *weight_suffix(int type) {
    const TypeInfo *ti = weight_type(type);
    return ti ? ti->suffix : nullptr;
}

uint64_t byte_extent(const rf_tensor *t) {
    const int64_t es = t->type == RF_TYPE_F32 || t->type == RF_TYPE_I32 ? 4 : t->type == RF_TYPE_F16 || t->type == RF_TYPE_BF16 ? 2 : 0;
    uint64_t m = es ? (uint64_t)(es * t->ne[0]) : (uint64_t)t->nb[1];
    for (int d = 1; d < 4; ++d) m += (uint64_t)((t->ne[d] - 1) * t->nb[d]);
    return m;
}

int no_weight_prefetch_bytes(const Backend &b, uint64_t bytes, int64_t columns) {
    if (b.prefetch_weights >= 0) return b.prefetch_weights ? 0 : 1;
    return columns == 1 && bytes <= b.prefetch_max_bytes ? 0 : 1;
}

namespace {

// Batched matmul switches from the warp-per-row kernel to the tensor-core tile kernel here.
constexpr int64_t kTiledMinM = 16;

const char *kFixedKernels[] = {"rf_add_f32",      "rf_mul_f32", "rf_swiglu_f32", "rf_scale_f32",  "rf_silu_f32",
                               "rf_copy_float",   "rf_rms_norm_f32", "rf_rms_norm_rows_f32", "rf_softmax_f32", "rf_argmax_f32", "rf_rope_f32",
                               "rf_set_rows",     "rf_attention", "rf_attention_decode", "rf_mv_f16", "rf_mv_f32", "rf_mm_f32_tiles", "rf_quantize_q8_1", "rf_swiglu_q8_1", "rf_quantize_f32_q8",
                               "rf_mvq_q4_k",     "rf_mvq_q5_k",  "rf_mvq_q6_k",  "rf_mvq_q4_0",   "rf_mvq_q8_0", "rf_mvq_q4_1", "rf_mvq_q5_0", "rf_mvq_q5_1", "rf_mvq_iq4_xs", "rf_mvq_iq4_nl", "rf_mvq_mxfp4",
                               "rf_mvq_iq2_xxs", "rf_mvq_iq3_xxs", "rf_mvq_iq3_s", "rf_mvq_iq2_xs", "rf_mvq_iq2_s",
                               "rf_mvq_iq1_s", "rf_mvq_iq1_m", "rf_mvq_tq2_0",
                               "rf_add_rms_norm_mul", "rf_add_rms_norm_mul_1", "rf_add_rms_norm_mul_4", "rf_mvq_multi", "rf_mvq_proj", "rf_set_rows2", "rf_attention_dec64", "rf_attention_dec128",
                               "rf_geglu_f32", "rf_softcap_f32", "rf_layer_norm_f32", "rf_gelu_f32", "rf_sigmoid_f32",
                               "rf_swiglu_oai_f32", "rf_rope_yarn_f32"};


// Decode (M = 1) kernel reading f32 activations: F16 weights (16-byte loads).
const char *mv_kernel(const rf_tensor *w, const rf_tensor *x) {
    if (w->type == RF_TYPE_F16 && aligned(x, 16) && w->ne[0] % 8 == 0 && aligned(w, 16)) return "rf_mv_f16";
    return nullptr;
}

// F32 weights with one activation row (MoE routers): a block per row (matmul_vec.hip).
bool mv_f32_usable(const rf_tensor *w, const rf_tensor *x) {
    return w->type == RF_TYPE_F32 && x->type == RF_TYPE_F32 && aligned(x, 16) && aligned(w, 16) && w->ne[0] % 4 == 0 &&
           w->ne[1] <= 65535;
}

// The grid i-quants' and TQ2_0's decode kernels (kernels/mvq_iq.h; 2-byte aligned rows): their
// whole family on NVIDIA (mvq_kernel), the one-column kernel on AMD (mvq_plain_kernel).
const char *grid_mvq_kernel(const rf_tensor *w) {
    if (!aligned(w, 2)) return nullptr;
    switch (w->type) {
    case RF_TYPE_IQ2_XXS: return "rf_mvq_iq2_xxs";
    case RF_TYPE_IQ2_XS: return "rf_mvq_iq2_xs";
    case RF_TYPE_IQ2_S: return "rf_mvq_iq2_s";
    case RF_TYPE_IQ3_XXS: return "rf_mvq_iq3_xxs";
    case RF_TYPE_IQ3_S: return "rf_mvq_iq3_s";
    case RF_TYPE_IQ1_S: return "rf_mvq_iq1_s";
    case RF_TYPE_IQ1_M: return "rf_mvq_iq1_m";
    case RF_TYPE_TQ2_0: return "rf_mvq_tq2_0";
    default: return nullptr;
    }
}

// Decode (M = 1) kernels with int8 dot products against q8_1 activations (matmul_vec.hip);
// Q4_K/Q5_K read 16-byte pieces, the others 2-byte aligned ones.
const char *mvq_kernel(const rf_tensor *w) {
    switch (w->type) {
    case RF_TYPE_Q4_K: return aligned(w, 16) ? "rf_mvq_q4_k" : nullptr;
    case RF_TYPE_Q5_K: return aligned(w, 16) ? "rf_mvq_q5_k" : nullptr;
    case RF_TYPE_Q6_K: return aligned(w, 2) ? "rf_mvq_q6_k" : nullptr;
    case RF_TYPE_Q4_0: return aligned(w, 2) ? "rf_mvq_q4_0" : nullptr;
    case RF_TYPE_Q8_0: return aligned(w, 2) ? "rf_mvq_q8_0" : nullptr;
#if defined(RF_HIP_NVIDIA)
    // Q4_K_M files hold Q5_0 where a row is not a multiple of 256 (Gemma 3's 1152: its Q / K / V
    // and gate / up), so it has the column, fused and in-block-quantizing forms too (NVIDIA packs:
    // in the AMD packs' rf_mvq_multi it cost scratch memory, so there it is a plain format).
    case RF_TYPE_Q5_0: return aligned(w, 2) ? "rf_mvq_q5_0" : nullptr;
    // IQ4_XS, the i-quant most files hold, likewise (8-byte loads).
    case RF_TYPE_IQ4_XS: return aligned(w, 8) ? "rf_mvq_iq4_xs" : nullptr;
    default: return grid_mvq_kernel(w);
#else
    default: return nullptr;
#endif
    }
}

// The other block formats' decode (M = 1) kernels on q8_1 activations (Q4_1, and Q5_1, which
// Q5_K_M files hold where a row is not a multiple of 256; Q5_0, IQ4_XS and the grid i-quants on
// AMD; IQ4_NL, MXFP4). Only
// the plain kernel: no column,
// fused or in-block-quantizing forms (the packs claim no such matmul: matmul_reads_q8 names the
// formats above).
const char *mvq_plain_kernel(const rf_tensor *w) {
    switch (w->type) {
    case RF_TYPE_Q4_1: return aligned(w, 2) ? "rf_mvq_q4_1" : nullptr;
#if !defined(RF_HIP_NVIDIA)
    case RF_TYPE_Q5_0: return aligned(w, 2) ? "rf_mvq_q5_0" : nullptr;
#endif
    case RF_TYPE_Q5_1: return aligned(w, 2) ? "rf_mvq_q5_1" : nullptr;
#if !defined(RF_HIP_NVIDIA)
    case RF_TYPE_IQ4_XS: return aligned(w, 8) ? "rf_mvq_iq4_xs" : nullptr;
#endif
    case RF_TYPE_IQ4_NL: return aligned(w, 2) ? "rf_mvq_iq4_nl" : nullptr;
    case RF_TYPE_MXFP4: return "rf_mvq_mxfp4"; // 17-byte blocks: any alignment (byte-offset window)
#if !defined(RF_HIP_NVIDIA)
    default: return grid_mvq_kernel(w);
#else
    default: return nullptr;
#endif
    }
}


int64_t nelem(const rf_tensor *t) { return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]; }
bool is_f32(const rf_tensor *t) { return t && t->type == RF_TYPE_F32; }
bool is_i32(const rf_tensor *t) { return t && t->type == RF_TYPE_I32; }
bool is_float_type(int t) { return t == RF_TYPE_F32 || t == RF_TYPE_F16 || t == RF_TYPE_BF16; }
int scalar_size(int t) { return t == RF_TYPE_F32 || t == RF_TYPE_I32 ? 4 : t == RF_TYPE_F16 || t == RF_TYPE_BF16 ? 2 : 0; }

// Rows must be contiguous: element stride equal to the element size for scalar types.
bool rows_contiguous(const rf_tensor *t) {
    const int s = scalar_size(t->type);
    return s == 0 || t->nb[0] == s;
}

unsigned grid_1d(int64_t n, int threads) { return (unsigned)std::min<int64_t>((n + threads - 1) / threads, 1 << 16); }

bool overlaps(const rf_tensor *t, const void *p, uint64_t bytes) {
    const auto a = (uintptr_t)t->data, b = (uintptr_t)p;
    return a < b + bytes && b < a + byte_extent(t);
}

// Whether the q8_1 columns in scratch are x's, quantized in blocks of `block` (ensure_q8_columns'
// cache).
bool q8_columns_ready(const Backend &b, const rf_tensor *x, int block) {
    return b.q8.src == x->data && b.q8.k == x->ne[0] && b.q8.rows == x->ne[1] * x->ne[2] * x->ne[3] && b.q8.block == block;
}

// Whether an M = 1 matmul quantizes its vector in its own blocks (rf_mvq_<type>_qx,
// kernels/matmul_vec_qx.hip): NVIDIA, one vector, and no q8_1 copy of it made already (the
// attention's output before the output projection, SwiGLU's before FFN down); the copy would
// have cost a launch. The shared-memory column (K + K / 4 bytes) within the default 48 KB.
bool quantizes_in_block(const Backend &b, const rf_node &n, unsigned batch) {
#if defined(RF_HIP_NVIDIA)
    const rf_tensor *w = n.src[0], *x = n.src[1];
    const int64_t K = w->ne[0];
    if (batch != 1 || x->ne[1] * x->ne[2] * x->ne[3] != 1 || x->type != RF_TYPE_F32 || x->nb[0] != 4 || K % 32 ||
        q8_column_bytes(K) > 48 * 1024)
        return false;
    // Only the formats quantized in blocks of 32 (Q4_0, Q5_0, Q8_0): for the K-quants the launch saved
    // did not pay for the blocks' quantization (7B Q4_K_M decode was slower with it).
    const int block = act_block(w->type);
    if (block != 32) return false;
    return !q8_columns_ready(b, x, block);
#else
    (void)b, (void)n, (void)batch;
    return false;
#endif
}

int no_weight_prefetch(const Backend &b, const rf_tensor *w, int64_t columns) {
    return no_weight_prefetch_bytes(b, byte_extent(w), columns);
}

int matmul_vec_qx(Backend &b, const rf_node &n, const char *kernel, std::string &err) {
    const rf_tensor *w = n.src[0];
    rf_kargs a = make_args(n);
    a.aux[1] = act_block(w->type);
    a.mv.no_weight_prefetch = no_weight_prefetch(b, w, 1);
    return launch(b, std::string(kernel) + "_qx", (unsigned)((w->ne[1] + 31) / 32), 1, 1, 1024, a, err,
                  (unsigned)q8_column_bytes(w->ne[0]));
}

// M = 1 matmul through q8_1 activations: quantize x into scratch (skipped when the previous
// node quantized the same vector, e.g. the Q/K/V or gate/up projections), then the dp4a kernel.
int matmul_vec_q8(Backend &b, const rf_node &n, const char *kernel, unsigned batch, std::string &err, bool in_block_form = true) {
    const rf_tensor *w = n.src[0], *x = n.src[1];
    const int64_t N = w->ne[1];
    if (in_block_form && quantizes_in_block(b, n, batch)) return matmul_vec_qx(b, n, kernel, err);
    if (int r = ensure_q8_columns(b, x, act_block(w->type), err)) return r;
    rf_kargs a = make_args(n);
    a.scratch = b.q8.where;
    a.aux[0] = q8_column_bytes(w->ne[0]);
    a.mv.no_weight_prefetch = no_weight_prefetch(b, w, 1);
    return launch(b, kernel, (unsigned)((N + 3) / 4), 1, batch, 128, a, err);
}

// Several activation columns (sequences decoding together, short batches) through q8_1: all
// columns quantized once, then rf_mvqn_<type>_<NC>x<R> reads each weight block once for up to
// kMvqCols columns. Wider batches run as chunks of kMvqCols columns (one launch; a narrower
// launch for the remainder).
int matmul_cols_q8(Backend &b, const rf_node &n, std::string &err) {
    const rf_tensor *w = n.src[0], *x = n.src[1];
    const int64_t N = w->ne[1], M = x->ne[1];
    if (int r = ensure_q8_columns(b, x, act_block(w->type), err)) return r;
    const std::string stem = std::string("rf_mvqn_") + weight_type(w->type)->suffix + "_";
    constexpr int R = 2; // weight rows per warp
    const unsigned blocks = (unsigned)((N + 4 * R - 1) / (4 * R));
    for (int64_t m0 = 0; m0 < M;) {
        const int64_t nc = std::min(kMvqCols, M - m0), chunks = nc == kMvqCols ? (M - m0) / kMvqCols : 1;
        rf_kargs a = make_args(n);
        a.scratch = b.q8.where;
        a.aux[0] = q8_column_bytes(w->ne[0]);
        a.aux[1] = m0;
        a.mv.no_weight_prefetch = no_weight_prefetch(b, w, M);
        if (int r = launch(b, stem + std::to_string(nc) + "x" + std::to_string(R), blocks, (unsigned)chunks, 1, 128, a, err))
            return r;
        m0 += nc * chunks;
    }
    return RF_OK;
}

// True where matmul_cols_q8 takes a matmul with M > 1 columns.
bool uses_mvq_cols(const Backend &b, const rf_node &n) {
#if defined(RF_HIP_NVIDIA)
    const rf_tensor *w = n.src[0], *x = n.src[1];
    const int64_t M = x->ne[1];
    return M > 1 && M <= b.mvq_max_cols && x->ne[2] * x->ne[3] == 1 && mvq_kernel(w) != nullptr && M <= 65535;
#else
    (void)b, (void)n;
    return false; // the AMD packs have no rf_mvqn_* (matmul_vec.hip)
#endif
}

} // namespace

int quantized_activations(Backend &b, const rf_tensor *x, int block, bool half, rf_ktensor &kx, std::string &err) {
    const int64_t K = x->ne[0], rows = x->ne[1] * x->ne[2] * x->ne[3], elem = half ? 2 : 4;
    const bool cached = b.fq.src == x->data && b.fq.k == K && b.fq.rows == rows && b.fq.block == block && b.fq.elem == elem;
    if (!cached) {
        if (!ensure_scratch(b, b.fq_scratch, std::max<uint64_t>((uint64_t)(K * rows * elem), 1 << 20), false, err))
            return RF_ERR_OUT_OF_MEMORY;
        rf_kargs qa{};
        qa.src[0] = ktensor(x);
        qa.scratch = b.fq_scratch.ptr;
        qa.aux[1] = block;
        qa.aux[2] = half ? 1 : 0;
        if (int r = launch(b, "rf_quantize_f32_q8", (unsigned)((K + 255) / 256), (unsigned)std::min<int64_t>(rows, 65535), 1, 256,
                           qa, err))
            return r;
        b.fq = {x->data, byte_extent(x), K, rows, block, b.fq_scratch.ptr, (int)elem};
    }
    kx.data = b.fq_scratch.ptr;
    kx.type = half ? RF_TYPE_F16 : RF_TYPE_F32;
    kx.nb[0] = elem;
    kx.nb[1] = K * elem;
    kx.nb[2] = kx.nb[1] * x->ne[1];
    kx.nb[3] = kx.nb[2] * x->ne[2];
    return RF_OK;
}

namespace {

std::string matmul_reason(const rf_node &n) {
    const rf_tensor *w = n.src[0], *x = n.src[1], *d = n.dst;
    const TypeInfo *ti = weight_type(w->type);
    if (!ti) return "matmul weight type " + std::to_string(w->type) + " not supported";
    if (!is_f32(x) || !is_f32(d)) return "matmul needs f32 activations and output";
    if (w->ne[0] % ti->block) return "matmul K not a multiple of the weight block size";
    if (x->ne[0] != w->ne[0] || d->ne[0] != w->ne[1] || d->ne[1] != x->ne[1]) return "matmul shape mismatch";
    if (x->ne[2] % w->ne[2] || x->ne[3] % w->ne[3]) return "matmul batch dims do not broadcast";
    if (x->ne[2] * x->ne[3] > 65535) return "matmul batch too large";
    if (!rows_contiguous(w) || !rows_contiguous(x) || !rows_contiguous(d)) return "matmul needs contiguous rows";
    if (ti->block > 1 && ((x->nb[1] | x->nb[2] | x->nb[3]) % 16 || (size_t)x->data % 16))
        return "matmul activations must be 16-byte aligned";
    return "";
}

// ---- prefill (owned by the prefill work: matmul_mma.hip, attention_prefill.hip) ----------

#if defined(RF_HIP_NVIDIA)
// Weight types of the tensor-core kernels rf_mm_mma{64,128}_<t> (NVIDIA packs only): all but f32.
bool has_mma_kernel(int type) { return type != RF_TYPE_F32 && weight_type(type); }

// The mma kernels need K % 32 == 0, 16-byte aligned activation rows and weight rows aligned for
// their wide loads (16 bytes: F16/BF16/Q4_K/Q5_K, 2 bytes: the other types).
bool mma_usable(const rf_tensor *w, const rf_tensor *x) {
    if (!has_mma_kernel(w->type) || w->ne[0] % 32 || !aligned(x, 16)) return false;
    const bool wide = w->type == RF_TYPE_F16 || w->type == RF_TYPE_BF16 || w->type == RF_TYPE_Q4_K || w->type == RF_TYPE_Q5_K;
    return aligned(w, wide ? 16 : 2);
}
#endif

// Batched matmul (M >= kTiledMinM): tensor-core kernel on NVIDIA, 128 weight rows x 64 or 128
// tokens per block (128 when that still fills every multiprocessor); else the portable tile.
int launch_prefill_matmul(Backend &b, const rf_node &n, rf_kargs &a, std::string &err) {
    const rf_tensor *w = n.src[0], *x = n.src[1];
    const char *sfx = weight_type(w->type)->suffix;
    const int64_t N = w->ne[1], M = x->ne[1];
    const unsigned batch = (unsigned)(x->ne[2] * x->ne[3]);
#if defined(RF_HIP_NVIDIA)
    if (mma_usable(w, x)) {
        const int64_t nb = (N + 127) / 128, blocks128 = nb * ((M + 127) / 128) * batch;
        const int bm = blocks128 >= std::max(1, b.multiprocessors) ? 128 : 64;
        if ((M + bm - 1) / bm > 65535) { err = "matmul M too large"; return RF_ERR_INVALID; }
        return launch(b, std::string(bm == 128 ? "rf_mm_mma128_" : "rf_mm_mma64_") + sfx, (unsigned)nb,
                      (unsigned)((M + bm - 1) / bm), batch, 256, a, err);
    }
#endif
    if ((M + 63) / 64 > 65535) { err = "matmul M too large"; return RF_ERR_INVALID; }
    return launch(b, std::string("rf_mm_tiled_") + sfx, (unsigned)((N + 63) / 64), (unsigned)((M + 63) / 64), batch, 128, a, err);
}

// Attention of many new tokens: on NVIDIA with f16 pools and head sizes 64 / 96 / 128 / 256 the
// tensor-core kernels (attention_prefill_mma.hip, RF_ATM_BQ queries per block, `smem` bytes of
// dynamic shared memory; they also take Gemma's window and soft cap); else flash-style tiles on
// the shader cores (attention_prefill.hip) for head sizes 64 and 128 without those limits; the
// rest (and decode) use rf_attention. All of them take the sinks. Returns false when the node is
// not for them.
constexpr int64_t kPrefillAttnMinT = 16;
bool prefill_attention_kernel(const Backend &b, const rf_node &n, const char *&name, unsigned &tile, unsigned &smem) {
    const int64_t D = n.src[0]->ne[0], T = n.src[0]->ne[2];
    smem = 0;
    if (T < kPrefillAttnMinT) return false;
    if ((size_t)n.dst->data % 16 || n.dst->nb[1] % 16) return false; // 16-byte output stores
#if defined(RF_HIP_NVIDIA)
    const rf_tensor *q = n.src[0], *k = n.src[1], *v = n.src[2];
    const bool f16_pools = k->type == RF_TYPE_F16 && v->type == RF_TYPE_F16 && aligned(k, 16) && aligned(v, 16);
    // Head size 256 stages its queries too: 165 KB of shared memory, which sm_80 / sm_86 / sm_89
    // blocks cannot have (sm_90: 227 KB); the others fit every sm_80+ part.
    const bool mma_d = D == 64 || D == 96 || D == 128 || (D == 256 && nvidia_sm(b.arch) >= 90);
    if (b.attention_mma && f16_pools && mma_d && nvidia_sm(b.arch) >= 80 && aligned(q, 8)) {
        name = D == 64 ? "rf_attention_mma_d64" : D == 96 ? "rf_attention_mma_d96" : D == 128 ? "rf_attention_mma_d128" : "rf_attention_mma_d256";
        tile = RF_ATM_BQ;
        smem = (unsigned)RF_ATM_SMEM_BYTES(D); // kernels/attention_mma_layout.h
        return true;
    }
    // Queries per block as attention_prefill.hip builds them (fewer on AMD: register cap).
    const unsigned q64 = 64, q128 = 32;
#else
    (void)b;
    const unsigned q64 = 32, q128 = 16;
#endif
    if (attention_limited(n)) return false; // the shader-core tiles have no window or cap
    if (D == 64) { name = "rf_attention_prefill_d64"; tile = q64; return true; }
    if (D == 128) { name = "rf_attention_prefill_d128"; tile = q128; return true; }
    return false;
}

// ---- MATMUL's kernel table ----------------------------------------------------------------

unsigned matmul_batch(const rf_node &n) { return (unsigned)(n.src[1]->ne[2] * n.src[1]->ne[3]); }
bool one_column(const rf_node &n) { return n.src[1]->ne[1] == 1; }

int run_mvq(Backend &b, const rf_node &n, rf_kargs &, std::string &err) {
    return matmul_vec_q8(b, n, mvq_kernel(n.src[0]), matmul_batch(n), err);
}
int run_mvq_plain(Backend &b, const rf_node &n, rf_kargs &, std::string &err) {
    return matmul_vec_q8(b, n, mvq_plain_kernel(n.src[0]), matmul_batch(n), err, false);
}
int run_mv_f16(Backend &b, const rf_node &n, rf_kargs &a, std::string &err) {
    return launch(b, mv_kernel(n.src[0], n.src[1]), (unsigned)((n.src[0]->ne[1] + 3) / 4), 1, matmul_batch(n), 128, a, err);
}
int run_mv_f32(Backend &b, const rf_node &n, rf_kargs &a, std::string &err) {
    a.mv.no_weight_prefetch = no_weight_prefetch(b, n.src[0], 1);
    return launch(b, "rf_mv_f32", (unsigned)n.src[0]->ne[1], 1, matmul_batch(n), 128, a, err);
}
int run_mm_f32_tiles(Backend &b, const rf_node &n, rf_kargs &a, std::string &err) {
    const int64_t N = n.src[0]->ne[1], M = n.src[1]->ne[1];
    if ((M + 7) / 8 > 65535) { err = "matmul M too large"; return RF_ERR_INVALID; }
    return launch(b, "rf_mm_f32_tiles", (unsigned)((N + 15) / 16), (unsigned)((M + 7) / 8), matmul_batch(n), 128, a, err);
}
int run_mmq(Backend &b, const rf_node &n, rf_kargs &, std::string &err) { return matmul_mmq(b, n, err); }
int run_q16w(Backend &b, const rf_node &n, rf_kargs &, std::string &err) { return matmul_q16w(b, n, err); }
int run_mmqp(Backend &b, const rf_node &n, rf_kargs &, std::string &err) { return matmul_mmqp(b, n, err); }
int run_h16(Backend &b, const rf_node &n, rf_kargs &, std::string &err) { return matmul_h16(b, n, err); }
int run_mvq_cols(Backend &b, const rf_node &n, rf_kargs &, std::string &err) { return matmul_cols_q8(b, n, err); }

bool tiled_m(const rf_node &n) { return n.src[1]->ne[1] >= kTiledMinM && n.src[0]->type != RF_TYPE_F32; }

// The prefill tiles and the generic kernel read activations rounded as the CPU backend quantizes
// them for the weight type (f16 rows for the tensor-core tiles where the option asks for them).
int run_prefill_tiles(Backend &b, const rf_node &n, rf_kargs &a, std::string &err) {
    if (const int block = act_block(n.src[0]->type)) {
        bool half = false;
#if defined(RF_HIP_NVIDIA)
        half = b.f16_prefill_acts && mma_usable(n.src[0], n.src[1]);
#endif
        if (int r = quantized_activations(b, n.src[1], block, half, a.src[1], err)) return r;
    }
    return launch_prefill_matmul(b, n, a, err);
}
int run_generic(Backend &b, const rf_node &n, rf_kargs &a, std::string &err) {
    if (const int block = act_block(n.src[0]->type))
        if (int r = quantized_activations(b, n.src[1], block, false, a.src[1], err)) return r;
    const int64_t N = n.src[0]->ne[1], M = n.src[1]->ne[1];
    if ((M + 7) / 8 > 65535) { err = "matmul M too large"; return RF_ERR_INVALID; }
    return launch(b, std::string("rf_mm_generic_") + weight_type(n.src[0]->type)->suffix, (unsigned)((N + 3) / 4),
                  (unsigned)((M + 7) / 8), matmul_batch(n), 128, a, err);
}

// In order: the first row whose condition holds runs the node (and its rule is what the profiler
// shows for it). Conditions read shapes, types, alignment and the backend's options only, so a
// graph gets the same kernels every step.
struct MatmulRoute {
    const char *rule;
    bool (*when)(const Backend &, const rf_node &);
    int (*run)(Backend &, const rf_node &, rf_kargs &, std::string &);
};
const MatmulRoute kMatmulRoutes[] = {
    {"one column, Q4_K/Q5_K/Q6_K/Q4_0/Q5_0/Q8_0/IQ4_XS/grid i-quant weights: q8_1 dot (rf_mvq)",
     [](const Backend &, const rf_node &n) { return one_column(n) && mvq_kernel(n.src[0]); }, run_mvq},
    {"one column, Q4_1/Q5_1/IQ4_NL/MXFP4 weights (Q5_0, IQ4_XS, grid i-quants on AMD): plain q8_1 dot",
     [](const Backend &, const rf_node &n) { return one_column(n) && mvq_plain_kernel(n.src[0]); }, run_mvq_plain},
    {"one column, F16 weights, 16-byte rows: rf_mv_f16",
     [](const Backend &, const rf_node &n) { return one_column(n) && mv_kernel(n.src[0], n.src[1]); }, run_mv_f16},
    {"one column, F32 weights (routers): a block per row",
     [](const Backend &, const rf_node &n) { return one_column(n) && mv_f32_usable(n.src[0], n.src[1]); }, run_mv_f32},
    {"int8 tensor-core tiles (mmq_usable: sm_80+, K-quant/legacy weights, enough columns)", mmq_usable, run_mmq},
    {"f16 wgmma tiles, weights widened in shared memory (q16w_usable: sm_90, M >= q16w_min_tokens)", q16w_usable, run_q16w},
    {"int8 tiles with the weights prefetched per step (mmqp_usable)", mmqp_usable, run_mmqp},
    {"F16 weights on the f16 tensor-core tiles (h16_usable: M >= 16)", h16_usable, run_h16},
    {"2..mvq_max_cols columns, q8_1 dot weights: column kernels (rf_mvqn)", uses_mvq_cols, run_mvq_cols},
    {"M >= 16, F32 weights (routers in prefill): f32 tiles (rf_mm_f32_tiles)",
     [](const Backend &, const rf_node &n) { return n.src[1]->ne[1] >= kTiledMinM && mv_f32_usable(n.src[0], n.src[1]); },
     run_mm_f32_tiles},
    {"M >= 16, non-F32 weights: prefill tiles (mma on sm_80+, else shader-core tiles)",
     [](const Backend &, const rf_node &n) { return tiled_m(n); }, run_prefill_tiles},
    {"anything else: a warp per row (rf_mm_generic)", [](const Backend &, const rf_node &) { return true; }, run_generic},
};

const MatmulRoute &matmul_route(const Backend &b, const rf_node &n) {
    for (const MatmulRoute &r : kMatmulRoutes)
        if (r.when(b, n)) return r;
    return kMatmulRoutes[std::size(kMatmulRoutes) - 1];
}

bool is_route(const Backend &b, const rf_node &n, int (*run)(Backend &, const rf_node &, rf_kargs &, std::string &)) {
    return matmul_route(b, n).run == run;
}

} // namespace

bool matmul_reads_q8(const rf_node &n) {
    return n.op == RF_OP_MATMUL && n.src[0] && n.src[1] && n.src[1]->ne[1] == 1 && n.src[1]->type == RF_TYPE_F32 &&
           mvq_kernel(n.src[0]) != nullptr && unsupported_reason(n).empty();
}

bool matmul_on_mv_f16(const rf_node &n) {
    return n.op == RF_OP_MATMUL && n.src[0] && n.src[1] && n.src[1]->ne[1] == 1 && n.src[1]->type == RF_TYPE_F32 &&
           mv_kernel(n.src[0], n.src[1]) != nullptr && unsupported_reason(n).empty();
}

bool matmul_on_mvq_cols(const Backend &b, const rf_node &n) {
    if (n.op != RF_OP_MATMUL || !n.src[0] || !n.src[1] || n.src[1]->ne[1] < 2 || !unsupported_reason(n).empty()) return false;
    return is_route(b, n, run_mvq_cols);
}

bool matmul_reads_q8_columns(const Backend &b, const rf_node &n) {
    if (n.op != RF_OP_MATMUL || !n.src[0] || !n.src[1] || n.src[1]->ne[1] < 2 || !unsupported_reason(n).empty()) return false;
    const MatmulRoute &r = matmul_route(b, n);
    return r.run == run_mmq || r.run == run_mmqp || r.run == run_mvq_cols;
}

std::vector<std::string> required_kernel_names() {
    std::vector<std::string> v(std::begin(kFixedKernels), std::end(kFixedKernels));
    for (const auto &t : kWeightTypes) {
        v.push_back(std::string("rf_get_rows_") + t.suffix);
        v.push_back(std::string("rf_mm_generic_") + t.suffix);
        v.push_back(std::string("rf_mm_tiled_") + t.suffix);
#if defined(RF_HIP_NVIDIA)
        if (has_mma_kernel(t.type)) {
            v.push_back(std::string("rf_mm_mma64_") + t.suffix);
            v.push_back(std::string("rf_mm_mma128_") + t.suffix);
        }
#endif
    }
#if defined(RF_HIP_NVIDIA)
    for (int d : {64, 96, 128, 256})
        for (int g : {1, 2, 4, 8})
            for (const char *form : {"", "_h", "_w", "_h_w", "_w4", "_h_w4", "_w8", "_h_w8"}) {
                if (g == 8 && std::strstr(form, "_w8")) continue; // groups of 8 heads: _w is 8 warps already
                // Head size 256: no 16-warp form, no one-chunk form for groups of 8 (attention_stream.hip).
                if (d == 256 && ((std::strstr(form, "_w") && !std::strstr(form, "_w4") && !std::strstr(form, "_w8")) ||
                                 (g == 8 && std::strstr(form, "_w"))))
                    continue;
                v.push_back("rf_attention_stream_d" + std::to_string(d) + "_g" + std::to_string(g) + form);
            }
    for (int d : {64, 96, 128, 256}) v.push_back("rf_attention_mma_d" + std::to_string(d));
    for (const char *t : {"q4_0", "q5_0", "q8_0"}) v.push_back(std::string("rf_mvq_") + t + "_qx");
    for (const char *t : {"q4_k", "q5_k", "q6_k", "q4_0", "q5_0", "q8_0", "iq4_xs", "iq2_xxs", "iq3_xxs", "iq3_s", "iq2_xs", "iq2_s", "iq1_s", "iq1_m",
                          "tq2_0"})
        for (int nc = 1; nc <= kMvqCols; ++nc)
            for (const char *form : {"x1", "x2", "f"}) v.push_back(std::string("rf_mvqn_") + t + "_" + std::to_string(nc) + form);
#endif
    for (const std::string &k : mmq_kernel_names()) v.push_back(k);
    for (const std::string &k : h16_kernel_names()) v.push_back(k);
    for (const std::string &k : moe_kernel_names()) v.push_back(k);
    for (const std::string &k : select_kernel_names()) v.push_back(k);
    v.push_back("rf_attention_prefill_d64");
    v.push_back("rf_attention_prefill_d128");
    return v;
}

std::string unsupported_reason(const rf_node &n) {
    if (!n.dst) return "node without dst";
    for (int i = 0; i < RF_MAX_SRC; ++i)
        if (n.src[i] && !rows_contiguous(n.src[i])) return "non-contiguous rows";
    if (!rows_contiguous(n.dst)) return "non-contiguous dst rows";
    const rf_tensor *s0 = n.src[0], *s1 = n.src[1], *d = n.dst;
    if (is_moe_op(n.op)) return moe_unsupported_reason(n); // moe.cpp
    if (is_select_op(n.op)) return select_unsupported_reason(n); // select_ops.cpp
    switch (n.op) {
    case RF_OP_GET_ROWS:
        if (!s0 || !weight_type(s0->type)) return "get_rows source type not supported";
        if (!is_i32(s1) || !is_f32(d)) return "get_rows needs i32 ids and f32 dst";
        if (s0->ne[0] % weight_type(s0->type)->block) return "get_rows row length not a multiple of the block size";
        return "";
    case RF_OP_MATMUL:
        return s0 && s1 ? matmul_reason(n) : "matmul needs two sources";
    case RF_OP_GEGLU: case RF_OP_SWIGLU_OAI:
        if (!is_f32(s0) || !is_f32(s1) || !is_f32(d)) return "needs f32 tensors";
        for (int i = 0; i < 4; ++i)
            if (s0->ne[i] != d->ne[i] || s1->ne[i] != d->ne[i]) return "gated operands differ in shape";
        return n.op != RF_OP_SWIGLU_OAI || n.fparams[1] > 0 ? "" : "swiglu_oai: the clamp limit must be positive";
    case RF_OP_SOFTCAP:
        if (!is_f32(s0) || !is_f32(d)) return "needs f32 tensors";
        return n.fparams[0] > 0 ? "" : "soft cap must be positive";
    case RF_OP_ADD: case RF_OP_MUL: case RF_OP_SWIGLU:
        if (!is_f32(s0) || !is_f32(s1) || !is_f32(d)) return "needs f32 tensors";
        for (int i = 0; i < 4; ++i)
            if (s1->ne[i] == 0 || d->ne[i] % s1->ne[i]) return "src1 does not broadcast";
        return "";
    case RF_OP_SCALE: case RF_OP_SILU: case RF_OP_RMS_NORM: case RF_OP_SOFTMAX:
        return is_f32(s0) && is_f32(d) ? "" : "needs f32 tensors";
    case RF_OP_LAYER_NORM: case RF_OP_GELU: case RF_OP_SIGMOID:
        if (!is_f32(s0) || !is_f32(d)) return "needs f32 tensors";
        for (int i = 0; i < 4; ++i)
            if (s0->ne[i] != d->ne[i]) return "source and result differ in shape";
        return n.op != RF_OP_LAYER_NORM || nelem(s0) / s0->ne[0] <= 0x7fffffff ? "" : "layer_norm: too many rows";
    case RF_OP_ARGMAX:
        return is_f32(s0) && is_i32(d) && s0->ne[0] < (1ll << 31) ? "" : "argmax needs f32 src and i32 dst";
    case RF_OP_ROPE:
        if (!is_f32(s0) || !is_f32(d) || !is_i32(s1)) return "rope needs f32 x, i32 positions";
        if (n.src[2] && !is_f32(n.src[2])) return "rope factors must be f32";
        if (n.iparams[0] != RF_ROPE_NORMAL && n.iparams[0] != RF_ROPE_NEOX) return "rope mode not supported";
        if (s0->ne[0] % 2 || n.iparams[1] % 2 || n.iparams[1] > s0->ne[0] || n.iparams[1] <= 0) return "rope n_rot/D must be even";
        if (n.iparams[2] != 0 && (n.iparams[2] != 1 || n.iparams[3] <= 0 || !(n.fparams[0] > 0) || !(n.fparams[1] > 0)))
            return "rope: YaRN needs iparams[2] = 1, n_ctx_orig > 0 and positive base and scale";
        return "";
    case RF_OP_SET_ROWS:
        if (!is_f32(s0) || !is_i32(s1)) return "set_rows needs f32 rows and i32 slots";
        if (d->type != RF_TYPE_F32 && d->type != RF_TYPE_F16 && d->type != RF_TYPE_Q8_0) return "set_rows pool type not supported";
        if (d->type == RF_TYPE_Q8_0 && s0->ne[0] % 32) return "q8_0 pool rows need a multiple of 32";
        return "";
    case RF_OP_ATTENTION: {
        const rf_tensor *k = n.src[2 - 1], *v = n.src[2];
        if (!is_f32(s0) || !k || !v || !is_i32(n.src[3]) || !is_i32(n.src[4]) || !is_f32(d)) return "attention operand types";
        if (k->type != v->type || (k->type != RF_TYPE_F16 && k->type != RF_TYPE_Q8_0 && k->type != RF_TYPE_F32))
            return "attention pools must both be f16, q8_0 or f32";
        const int64_t D = s0->ne[0];
        if (D > 256) return "attention head size > 256";
        // ABI 2.15's V head size (latent attention reads V from the K pool): every kernel here
        // takes V heads of D.
        if (d->ne[0] != D * s0->ne[1]) return "attention V head size differs from K's";
        if (k->type == RF_TYPE_Q8_0 && D % 32) return "q8_0 pool needs head size multiple of 32";
        if (k->ne[0] % D || s0->ne[1] % (k->ne[0] / D)) return "attention head counts do not divide";
        if (n.iparams[0] < 0 || !(n.fparams[1] >= 0)) return "attention window and soft cap must not be negative";
        if (n.iparams[2] != 0 && n.iparams[2] != 1) return "attention iparams[2] must be 0 (causal) or 1 (bidirectional)";
        if (const rf_tensor *sk = n.src[5]; sk && (!is_f32(sk) || nelem(sk) != s0->ne[1] || sk->nb[0] != 4))
            return "attention sinks must be f32 [Hq]";
        return "";
    }
    case RF_OP_COPY:
        if (!is_float_type(s0->type) || !is_float_type(d->type)) return "copy between f32/f16/bf16 only";
        return nelem(s0) == nelem(d) ? "" : "copy element counts differ";
    default:
        return "op not implemented";
    }
}

int act_block(int type) {
    switch (type) {
    case RF_TYPE_Q2_K: case RF_TYPE_Q3_K: case RF_TYPE_Q4_K: case RF_TYPE_Q5_K: case RF_TYPE_Q6_K: return 256;
    // the i-quants and ternary formats dot q8_K activations on the CPU, IQ4_NL q8_32
    case RF_TYPE_IQ2_XXS: case RF_TYPE_IQ2_XS: case RF_TYPE_IQ2_S: case RF_TYPE_IQ3_XXS: case RF_TYPE_IQ3_S:
    case RF_TYPE_IQ1_S: case RF_TYPE_IQ1_M: case RF_TYPE_IQ4_XS: case RF_TYPE_TQ1_0: case RF_TYPE_TQ2_0: return 256;
    case RF_TYPE_Q4_0: case RF_TYPE_Q4_1: case RF_TYPE_Q5_0: case RF_TYPE_Q5_1: case RF_TYPE_Q8_0: case RF_TYPE_MXFP4:
    case RF_TYPE_IQ4_NL: return 32;
    default: return 0;
    }
}

int64_t q8_column_bytes(int64_t K) { return (K + K / 32 * 8 + 15) / 16 * 16; } // int8 quants + (d, d*sum) per 32

bool ensure_q8_scratch(Backend &b, int64_t K, int64_t rows, std::string &err) {
    return ensure_scratch(b, b.act_scratch, std::max<uint64_t>((uint64_t)(q8_column_bytes(K) * rows), 1 << 20), false, err);
}

int ensure_q8_columns(Backend &b, const rf_tensor *x, int block, std::string &err) {
    const int64_t K = x->ne[0], rows = x->ne[1] * x->ne[2] * x->ne[3], col = q8_column_bytes(K);
    if (q8_columns_ready(b, x, block)) return RF_OK;
    if (rows > 65535) { err = "matmul: too many activation columns"; return RF_ERR_INVALID; }
    if (!ensure_q8_scratch(b, K, rows, err)) return RF_ERR_OUT_OF_MEMORY;
    rf_kargs qa{};
    qa.src[0] = ktensor(x);
    qa.scratch = b.act_scratch.ptr;
    qa.aux[0] = col;
    qa.aux[1] = block;
    if (int r = launch(b, "rf_quantize_q8_1", (unsigned)((K + 2047) / 2048), 1, (unsigned)rows, 256, qa, err)) return r;
    b.q8 = {x->data, byte_extent(x), K, rows, block, b.act_scratch.ptr};
    return RF_OK;
}

namespace {
// Whether node n reads x (the same rows) as q8_1 columns: a matmul on the dp4a kernels, or a
// MATMUL_ID on the routed-column ones (its [K, 1, M] view of x).
bool reads_q8_columns_of(const Backend &b, const rf_node &n, const rf_tensor *x) {
    const rf_tensor *in = n.src[1];
    const int64_t rows = x->ne[1] * x->ne[2] * x->ne[3];
    if (!in || in->data != x->data || in->ne[0] != x->ne[0] || x->ne[0] % 32 != 0 || in->ne[1] * in->ne[2] * in->ne[3] != rows ||
        in->nb[1] != x->nb[1])
        return false;
    if (n.op == RF_OP_MATMUL) return rows == 1 ? matmul_reads_q8(n) : matmul_reads_q8_columns(b, n);
    return n.op == RF_OP_MATMUL_ID && matmul_id_reads_q8_columns(n);
}
} // namespace

int q8_columns_read_next(const Backend &b, const rf_graph &g, int next, const rf_tensor *x) {
    // A MoE block's router (an f32 matmul of x) and its routing (TOPK, MOE_WEIGHTS) stand between
    // the norm that writes x and the experts' matmuls that read it: look past them, as they
    // neither write x nor use the q8_1 scratch.
    constexpr int kLookahead = 4;
    for (int j = next; j < g.n_nodes && j < next + kLookahead; ++j) {
        const rf_node &n = *g.nodes[j];
        if (reads_q8_columns_of(b, n, x)) {
            const int block = act_block(n.src[0]->type);
            return block == 32 || block == 256 ? block : 0;
        }
        const bool passes = (n.op == RF_OP_MATMUL && n.src[0] && n.src[0]->type == RF_TYPE_F32) || n.op == RF_OP_TOPK ||
                            n.op == RF_OP_MOE_WEIGHTS;
        if (!passes || !n.dst || overlaps(n.dst, x->data, byte_extent(x))) return 0;
    }
    return 0;
}

void forget_overwritten(Backend &b, const rf_tensor *written) {
    if (!written || !written->data) return;
    if (b.q8.src && overlaps(written, b.q8.src, b.q8.src_bytes)) b.q8 = {};
    if (b.fq.src && overlaps(written, b.fq.src, b.fq.src_bytes)) b.fq = {};
}

namespace {
int dispatch_node(Backend &b, const rf_node &n, std::string &err);

// ROPE's YaRN form without the graph's rows (kernels/rope_yarn.hip): the f32 correction dims and
// mscale computed here as the CPU backend computes them (rope_yarn.h), so both rotate alike.
int launch_rope_yarn(Backend &b, const rf_node &n, rf_kargs &a, std::string &err) {
    const rf::RopeYarn y{n.iparams[3], n.fparams[2], n.fparams[3], n.fparams[4], n.fparams[5]};
    float dims[2];
    rf::rope_yarn_corr_dims(y, n.iparams[1], n.fparams[0], dims);
    a.fparams[6] = dims[0];
    a.fparams[7] = dims[1];
    const double mscale = rf::rope_yarn_mscale(y, n.fparams[1]);
    std::memcpy(&a.aux[0], &mscale, sizeof mscale);
    b.rule = "YaRN without angle rows (rf_rope_yarn_f32)";
    const rf_tensor *x = n.src[0];
    return launch(b, "rf_rope_yarn_f32", (unsigned)std::min<int64_t>(x->ne[2], 65535), (unsigned)((x->ne[1] + 7) / 8), 1, 256, a, err);
}

// ATTENTION with its split hint (abi.h iparams[1] = d): tokens 0..d-1 are decode rows of as many
// sequences, the rest a prompt chunk. As one node the prefill tiles would hold both, and each
// tile makes a pass over the cache of every sequence present (slow for a server's mixed step of
// many decode rows and a prompt chunk); as two, the decode rows take
// the decode kernels and the chunk the prefill tiles. Each part is a view of the node's rows
// (Q's tokens, the token info, the result); both kernels compute any row exactly as alone.
int attention_in_two_parts(Backend &b, const rf_node &n, std::string &err) {
    const int64_t d = n.iparams[1], T = n.src[0]->ne[2];
    for (const auto &[first, count] : {std::pair<int64_t, int64_t>{0, d}, {d, T - d}}) {
        rf_tensor q = *n.src[0], info = *n.src[4], dst = *n.dst;
        q.data = static_cast<uint8_t *>(q.data) + first * q.nb[2];
        info.data = static_cast<uint8_t *>(info.data) + first * info.nb[1];
        dst.data = static_cast<uint8_t *>(dst.data) + first * dst.nb[1];
        q.ne[2] = info.ne[1] = dst.ne[1] = count;
        rf_node part = n;
        part.src[0] = &q;
        part.src[4] = &info;
        part.dst = &dst;
        part.iparams[1] = 0;
        if (int r = dispatch_node(b, part, err)) return r;
    }
    return RF_OK;
}
}

int run_node(Backend &b, const rf_node &n, std::string &err) {
    const int r = dispatch_node(b, n, err);
    forget_overwritten(b, n.dst); // the quantized copies stay valid until their source changes
    return r;
}

namespace {
int dispatch_node(Backend &b, const rf_node &n, std::string &err) {
    b.rule = "the op's kernel"; // ops with one kernel; the tables below name theirs
    if (is_moe_op(n.op)) return run_moe_node(b, n, err); // moe.cpp
    if (is_select_op(n.op)) return run_select_node(b, n, err); // select_ops.cpp
    rf_kargs a = make_args(n);
    const rf_tensor *d = n.dst, *s0 = n.src[0], *s1 = n.src[1];
    switch (n.op) {
    case RF_OP_GET_ROWS:
        return launch(b, std::string("rf_get_rows_") + weight_type(s0->type)->suffix, (unsigned)s1->ne[0], 1, 1, 128, a, err);
    case RF_OP_MATMUL: {
        const MatmulRoute &route = matmul_route(b, n);
        b.rule = route.rule;
        return route.run(b, n, a, err);
    }
    case RF_OP_ADD: return launch(b, "rf_add_f32", grid_1d((nelem(d) + 3) / 4, 256), 1, 1, 256, a, err); // 4 per thread where dense
    case RF_OP_MUL: return launch(b, "rf_mul_f32", grid_1d((nelem(d) + 3) / 4, 256), 1, 1, 256, a, err); // 4 per thread where dense
    case RF_OP_SWIGLU: return launch(b, "rf_swiglu_f32", grid_1d((nelem(d) + 3) / 4, 256), 1, 1, 256, a, err); // 4 per thread where dense
    case RF_OP_GEGLU: return launch(b, "rf_geglu_f32", grid_1d((nelem(d) + 3) / 4, 256), 1, 1, 256, a, err); // 4 per thread where dense
    case RF_OP_SOFTCAP: return launch(b, "rf_softcap_f32", grid_1d(nelem(d), 256), 1, 1, 256, a, err);
    case RF_OP_SCALE: return launch(b, "rf_scale_f32", grid_1d(nelem(d), 256), 1, 1, 256, a, err);
    case RF_OP_SILU: return launch(b, "rf_silu_f32", grid_1d(nelem(d), 256), 1, 1, 256, a, err);
    case RF_OP_COPY: return launch(b, "rf_copy_float", grid_1d(nelem(d), 256), 1, 1, 256, a, err);
    case RF_OP_RMS_NORM: { // short rows a warp each (kernels/rownorm.hip: RF_RMS_ROWS_MAX_K, 8 rows a block)
        constexpr int64_t kWarpRowMaxK = 1024, kRowsPerBlock = 8;
        const int64_t rows = nelem(s0) / s0->ne[0];
        if (s0->ne[0] <= kWarpRowMaxK && rows > 1)
            return launch(b, "rf_rms_norm_rows_f32", (unsigned)((rows + kRowsPerBlock - 1) / kRowsPerBlock), 1, 1, 32 * kRowsPerBlock, a, err);
        return launch(b, "rf_rms_norm_f32", (unsigned)rows, 1, 1, 256, a, err);
    }
    case RF_OP_LAYER_NORM: return launch(b, "rf_layer_norm_f32", (unsigned)(nelem(s0) / s0->ne[0]), 1, 1, 256, a, err);
    case RF_OP_GELU: return launch(b, "rf_gelu_f32", grid_1d(nelem(d), 256), 1, 1, 256, a, err);
    case RF_OP_SIGMOID: return launch(b, "rf_sigmoid_f32", grid_1d(nelem(d), 256), 1, 1, 256, a, err);
    case RF_OP_SWIGLU_OAI: return launch(b, "rf_swiglu_oai_f32", grid_1d(nelem(d), 256), 1, 1, 256, a, err);
    case RF_OP_SOFTMAX: return launch(b, "rf_softmax_f32", (unsigned)(nelem(s0) / s0->ne[0]), 1, 1, 256, a, err);
    case RF_OP_ARGMAX: return launch(b, "rf_argmax_f32", (unsigned)(nelem(s0) / s0->ne[0]), 1, 1, 256, a, err);
    case RF_OP_ROPE: // a block per token and group of 8 heads: the token's angles once per block
        // The graph's (cos, sin) rows, when given in the layout the kernels read, take the
        // positions' slot (kernels/rope.hip rope_cs_token tells them apart by type).
        if (rf_rope_angles_readable(&n)) a.src[1] = a.src[3], a.src[3] = rf_ktensor{};
        else if (n.iparams[2] == 1) return launch_rope_yarn(b, n, a, err); // YaRN without rows: evaluated here
        return launch(b, "rf_rope_f32", (unsigned)std::min<int64_t>(s0->ne[2], 65535), (unsigned)((s0->ne[1] + 7) / 8), 1, 256, a, err);
    case RF_OP_SET_ROWS: // one block per appended row: decode appends 1 row, so give it enough threads
        return launch(b, "rf_set_rows", (unsigned)s0->ne[1], 1, 1, s0->ne[1] <= 4 ? 512 : 128, a, err);
    case RF_OP_ATTENTION:
        if (s0->ne[2] > 65535) { err = "attention: too many tokens in one node"; return RF_ERR_INVALID; }
        // Attention's kernel table, in order. Every attention kernel takes gpt-oss's sinks (src5)
        // in aux[3] (kernels/attention_sinks.h; attention_decode sets its own arguments).
        if (n.src[5]) a.aux[3] = (long long)(uintptr_t)n.src[5]->data;
        if (n.iparams[2] == 1) { // the encoders': only rf_attention sees whole sequences
            b.rule = "bidirectional (encoders): a block per head and token (rf_attention)";
            return launch(b, "rf_attention", (unsigned)s0->ne[1], (unsigned)s0->ne[2], 1, 128, a, err);
        }
        if (n.iparams[1] > 0 && n.iparams[1] < s0->ne[2]) {
            const int r = attention_in_two_parts(b, n, err);
            b.rule = "decode rows and a prompt chunk in one node: split, each part by this table";
            return r;
        }
        if (int r = attention_decode(b, n, err); r != -1) {
            b.rule = "decode rows (attention_decode.cpp: stream kernels by head size and group)";
            return r;
        }
        {
            const char *pname = nullptr;
            unsigned tile = 0, smem = 0;
            if (prefill_attention_kernel(b, n, pname, tile, smem)) {
                b.rule = smem ? "prefill, f16 pools, head size 64/96/128/256, sm_80+: tensor-core tiles"
                              : "prefill, head size 64/128, no window or cap: shader-core tiles";
                return launch(b, pname, (unsigned)s0->ne[1], (unsigned)((s0->ne[2] + tile - 1) / tile), 1, 128, a, err, smem);
            }
        }
        b.rule = "any other attention: a block per head and token (rf_attention)";
        return launch(b, "rf_attention", (unsigned)s0->ne[1], (unsigned)s0->ne[2], 1, 128, a, err);
    default:
        err = "op " + std::to_string(n.op) + " not implemented";
        return RF_ERR_UNSUPPORTED;
    }
}

} // namespace

} // namespace rf_hip
