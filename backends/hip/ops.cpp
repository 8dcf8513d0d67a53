#include "ops.h"

#include <algorithm>
#include <cstring>

#include "kernel_args.h"

namespace rf_hip {
namespace {

struct TypeInfo { int type; const char *suffix; int block; int bytes; };
// Weight types the matmul/get_rows kernels decode (suffix = kernel name suffix).
constexpr TypeInfo kWeightTypes[] = {
    {RF_TYPE_F32, "f32", 1, 4},      {RF_TYPE_F16, "f16", 1, 2},       {RF_TYPE_BF16, "bf16", 1, 2},
    {RF_TYPE_Q4_0, "q4_0", 32, 18},  {RF_TYPE_Q4_1, "q4_1", 32, 20},   {RF_TYPE_Q5_0, "q5_0", 32, 22},
    {RF_TYPE_Q5_1, "q5_1", 32, 24},  {RF_TYPE_Q8_0, "q8_0", 32, 34},   {RF_TYPE_Q2_K, "q2_k", 256, 84},
    {RF_TYPE_Q3_K, "q3_k", 256, 110}, {RF_TYPE_Q4_K, "q4_k", 256, 144}, {RF_TYPE_Q5_K, "q5_k", 256, 176},
    {RF_TYPE_Q6_K, "q6_k", 256, 210}, {RF_TYPE_MXFP4, "mxfp4", 32, 17}, {RF_TYPE_MXFP6_E2M3, "mxfp6_e2m3", 32, 25},
    {RF_TYPE_MXFP6_E3M2, "mxfp6_e3m2", 32, 25},
};

const TypeInfo *weight_type(int t) {
    for (const auto &i : kWeightTypes)
        if (i.type == t) return &i;
    return nullptr;
}

// Batched matmul switches from the warp-per-row kernel to the tensor-core tile kernel here.
constexpr int64_t kTiledMinM = 16;

const char *kFixedKernels[] = {"rf_add_f32",      "rf_mul_f32", "rf_swiglu_f32", "rf_scale_f32",  "rf_silu_f32",
                               "rf_copy_float",   "rf_rms_norm_f32", "rf_softmax_f32", "rf_argmax_f32", "rf_rope_f32",
                               "rf_set_rows",     "rf_attention", "rf_mv_q4_k",   "rf_mv_q6_k",    "rf_mv_q8_0",
                               "rf_mv_f16"};

// Decode (M = 1) kernels for the types the benchmark models use; they load 16-byte (Q4_K,
// F16) or 2-byte (Q6_K, Q8_0) pieces, so rows must be aligned accordingly.
const char *mv_kernel(const rf_tensor *w, const rf_tensor *x) {
    const auto al = [](const rf_tensor *t, int64_t a) {
        return (size_t)t->data % a == 0 && t->nb[1] % a == 0 && t->nb[2] % a == 0 && t->nb[3] % a == 0;
    };
    if (!al(x, 16)) return nullptr;
    switch (w->type) {
    case RF_TYPE_Q4_K: return al(w, 16) ? "rf_mv_q4_k" : nullptr;
    case RF_TYPE_Q6_K: return al(w, 2) ? "rf_mv_q6_k" : nullptr;
    case RF_TYPE_Q8_0: return al(w, 2) ? "rf_mv_q8_0" : nullptr;
    case RF_TYPE_F16: return w->ne[0] % 8 == 0 && al(w, 16) ? "rf_mv_f16" : nullptr;
    default: return nullptr;
    }
}

rf_ktensor ktensor(const rf_tensor *t) {
    rf_ktensor k{};
    if (!t) return k;
    k.data = t->data;
    for (int i = 0; i < 4; ++i) { k.ne[i] = t->ne[i]; k.nb[i] = t->nb[i]; }
    k.type = t->type;
    return k;
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

int launch(Backend &b, const std::string &name, unsigned gx, unsigned gy, unsigned gz, unsigned threads, rf_kargs &args,
           std::string &err) {
    auto it = b.kernels.functions.find(name);
    if (it == b.kernels.functions.end()) { err = "kernel '" + name + "' not loaded"; return RF_ERR_DEVICE; }
    if (gx == 0 || gy == 0 || gz == 0) return RF_OK; // empty tensor
    void *params[] = {&args};
    if (hipError_t e = hipModuleLaunchKernel(it->second, gx, gy, gz, threads, 1, 1, 0, b.stream, params, nullptr)) {
        err = gpu_error(("launch " + name).c_str(), e) + " grid " + std::to_string(gx) + "x" + std::to_string(gy) + "x" +
              std::to_string(gz);
        return RF_ERR_DEVICE;
    }
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

} // namespace

std::vector<std::string> required_kernel_names() {
    std::vector<std::string> v(std::begin(kFixedKernels), std::end(kFixedKernels));
    for (const auto &t : kWeightTypes) {
        v.push_back(std::string("rf_get_rows_") + t.suffix);
        v.push_back(std::string("rf_mm_generic_") + t.suffix);
        v.push_back(std::string("rf_mm_tiled_") + t.suffix);
    }
    return v;
}

std::string unsupported_reason(const rf_node &n) {
    if (!n.dst) return "node without dst";
    for (int i = 0; i < RF_MAX_SRC; ++i)
        if (n.src[i] && !rows_contiguous(n.src[i])) return "non-contiguous rows";
    if (!rows_contiguous(n.dst)) return "non-contiguous dst rows";
    const rf_tensor *s0 = n.src[0], *s1 = n.src[1], *d = n.dst;
    switch (n.op) {
    case RF_OP_GET_ROWS:
        if (!s0 || !weight_type(s0->type)) return "get_rows source type not supported";
        if (!is_i32(s1) || !is_f32(d)) return "get_rows needs i32 ids and f32 dst";
        if (s0->ne[0] % weight_type(s0->type)->block) return "get_rows row length not a multiple of the block size";
        return "";
    case RF_OP_MATMUL:
        return s0 && s1 ? matmul_reason(n) : "matmul needs two sources";
    case RF_OP_ADD: case RF_OP_MUL: case RF_OP_SWIGLU:
        if (!is_f32(s0) || !is_f32(s1) || !is_f32(d)) return "needs f32 tensors";
        for (int i = 0; i < 4; ++i)
            if (s1->ne[i] == 0 || d->ne[i] % s1->ne[i]) return "src1 does not broadcast";
        return "";
    case RF_OP_SCALE: case RF_OP_SILU: case RF_OP_RMS_NORM: case RF_OP_SOFTMAX:
        return is_f32(s0) && is_f32(d) ? "" : "needs f32 tensors";
    case RF_OP_ARGMAX:
        return is_f32(s0) && is_i32(d) && s0->ne[0] < (1ll << 31) ? "" : "argmax needs f32 src and i32 dst";
    case RF_OP_ROPE:
        if (!is_f32(s0) || !is_f32(d) || !is_i32(s1)) return "rope needs f32 x, i32 positions";
        if (n.src[2] && !is_f32(n.src[2])) return "rope factors must be f32";
        if (n.iparams[0] != RF_ROPE_NORMAL && n.iparams[0] != RF_ROPE_NEOX) return "rope mode not supported";
        if (s0->ne[0] % 2 || n.iparams[1] % 2 || n.iparams[1] > s0->ne[0] || n.iparams[1] <= 0) return "rope n_rot/D must be even";
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
        if (k->type == RF_TYPE_Q8_0 && D % 32) return "q8_0 pool needs head size multiple of 32";
        if (k->ne[0] % D || s0->ne[1] % (k->ne[0] / D)) return "attention head counts do not divide";
        return "";
    }
    case RF_OP_COPY:
        if (!is_float_type(s0->type) || !is_float_type(d->type)) return "copy between f32/f16/bf16 only";
        return nelem(s0) == nelem(d) ? "" : "copy element counts differ";
    default:
        return "op not implemented";
    }
}

int run_node(Backend &b, const rf_node &n, std::string &err) {
    rf_kargs a = make_args(n);
    const rf_tensor *d = n.dst, *s0 = n.src[0], *s1 = n.src[1];
    switch (n.op) {
    case RF_OP_GET_ROWS:
        return launch(b, std::string("rf_get_rows_") + weight_type(s0->type)->suffix, (unsigned)s1->ne[0], 1, 1, 128, a, err);
    case RF_OP_MATMUL: {
        const char *sfx = weight_type(s0->type)->suffix;
        const int64_t N = s0->ne[1], M = s1->ne[1];
        const unsigned batch = (unsigned)(s1->ne[2] * s1->ne[3]);
        if (M >= kTiledMinM && s0->type != RF_TYPE_F32) {
            if ((M + 63) / 64 > 65535) { err = "matmul M too large"; return RF_ERR_INVALID; }
            return launch(b, std::string("rf_mm_tiled_") + sfx, (unsigned)((N + 63) / 64), (unsigned)((M + 63) / 64), batch, 128, a, err);
        }
        if (M == 1)
            if (const char *mv = mv_kernel(s0, s1)) return launch(b, mv, (unsigned)((N + 3) / 4), 1, batch, 128, a, err);
        if ((M + 7) / 8 > 65535) { err = "matmul M too large"; return RF_ERR_INVALID; }
        return launch(b, std::string("rf_mm_generic_") + sfx, (unsigned)((N + 3) / 4), (unsigned)((M + 7) / 8), batch, 128, a, err);
    }
    case RF_OP_ADD: return launch(b, "rf_add_f32", grid_1d(nelem(d), 256), 1, 1, 256, a, err);
    case RF_OP_MUL: return launch(b, "rf_mul_f32", grid_1d(nelem(d), 256), 1, 1, 256, a, err);
    case RF_OP_SWIGLU: return launch(b, "rf_swiglu_f32", grid_1d(nelem(d), 256), 1, 1, 256, a, err);
    case RF_OP_SCALE: return launch(b, "rf_scale_f32", grid_1d(nelem(d), 256), 1, 1, 256, a, err);
    case RF_OP_SILU: return launch(b, "rf_silu_f32", grid_1d(nelem(d), 256), 1, 1, 256, a, err);
    case RF_OP_COPY: return launch(b, "rf_copy_float", grid_1d(nelem(d), 256), 1, 1, 256, a, err);
    case RF_OP_RMS_NORM: return launch(b, "rf_rms_norm_f32", (unsigned)(nelem(s0) / s0->ne[0]), 1, 1, 256, a, err);
    case RF_OP_SOFTMAX: return launch(b, "rf_softmax_f32", (unsigned)(nelem(s0) / s0->ne[0]), 1, 1, 256, a, err);
    case RF_OP_ARGMAX: return launch(b, "rf_argmax_f32", (unsigned)(nelem(s0) / s0->ne[0]), 1, 1, 256, a, err);
    case RF_OP_ROPE: return launch(b, "rf_rope_f32", grid_1d(nelem(s0) / 2, 256), 1, 1, 256, a, err);
    case RF_OP_SET_ROWS: return launch(b, "rf_set_rows", (unsigned)s0->ne[1], 1, 1, 128, a, err);
    case RF_OP_ATTENTION:
        if (s0->ne[2] > 65535) { err = "attention: too many tokens in one node"; return RF_ERR_INVALID; }
        return launch(b, "rf_attention", (unsigned)s0->ne[1], (unsigned)s0->ne[2], 1, 128, a, err);
    default:
        err = "op " + std::to_string(n.op) + " not implemented";
        return RF_ERR_UNSUPPORTED;
    }
}

} // namespace rf_hip
