// Element-wise f32 ops: ADD, MUL (with broadcasting of src1), SCALE, SILU, SWIGLU, GEGLU, GELU,
// SOFTCAP, SIGMOID, SWIGLU_OAI.
#include <cmath>

#include "ops.h"

namespace rfcpu {
namespace {

bool check_f32(const rf_tensor *t, const char *what, std::string *why) {
    if (!t) { *why = std::string(what) + " is missing"; return false; }
    if (t->type != RF_TYPE_F32) { *why = std::string(what) + " must be f32, got " + shape_str(*t); return false; }
    if (!rows_contiguous(*t)) { *why = std::string(what) + " rows are not contiguous"; return false; }
    return true;
}

bool check_unary(const rf_node &n, std::string *why) {
    if (!check_f32(n.dst, "dst", why) || !check_f32(n.src[0], "src0", why)) return false;
    if (!same_shape(*n.dst, *n.src[0])) { *why = "dst and src0 shapes differ"; return false; }
    return true;
}

bool check_binary_broadcast(const rf_node &n, std::string *why) {
    if (!check_unary(n, why) || !check_f32(n.src[1], "src1", why)) return false;
    for (int i = 0; i < RF_MAX_DIMS; ++i)
        if (n.dst->ne[i] % n.src[1]->ne[i] != 0) {
            *why = "src1 " + shape_str(*n.src[1]) + " does not broadcast to " + shape_str(*n.dst);
            return false;
        }
    return true;
}

bool check_same_binary(const rf_node &n, std::string *why) {
    if (!check_unary(n, why) || !check_f32(n.src[1], "src1", why)) return false;
    if (!same_shape(*n.dst, *n.src[1])) { *why = "dst and src1 shapes differ"; return false; }
    return true;
}

template <bool kMul>
void run_binary(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &d = *n.dst, &a = *n.src[0], &b = *n.src[1];
    const int64_t ne0 = d.ne[0], bne0 = b.ne[0];
    int64_t r0, r1;
    split_range(nrows(d), part, n_parts, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        int64_t i1, i2, i3;
        unravel_row(d, r, &i1, &i2, &i3);
        float *y = row_f32(d, i1, i2, i3);
        const float *x = row_f32(a, i1, i2, i3);
        const float *z = row_f32(b, i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]);
        for (int64_t base = 0; base < ne0; base += bne0)
            for (int64_t i = 0; i < bne0; ++i) {
                if constexpr (kMul) y[base + i] = x[base + i] * z[i];
                else y[base + i] = x[base + i] + z[i];
            }
    }
}

void run_scale(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const float s = n.fparams[0];
    for_rows_unary(n, part, n_parts, [&](float *y, const float *x, int64_t, int64_t, int64_t) {
        for (int64_t i = 0; i < n.dst->ne[0]; ++i) y[i] = x[i] * s;
    });
}

inline float silu(float x) { return x / (1.f + std::exp(-x)); }

void run_silu(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    for_rows_unary(n, part, n_parts, [&](float *y, const float *x, int64_t, int64_t, int64_t) {
        for (int64_t i = 0; i < n.dst->ne[0]; ++i) y[i] = silu(x[i]);
    });
}

void run_swiglu(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &g = *n.src[1];
    for_rows_unary(n, part, n_parts, [&](float *y, const float *x, int64_t i1, int64_t i2, int64_t i3) {
        const float *u = row_f32(g, i1, i2, i3);
        for (int64_t i = 0; i < n.dst->ne[0]; ++i) y[i] = silu(x[i]) * u[i];
    });
}

// GELU, tanh approximation (ggml_gelu, PyTorch's gelu(approximate='tanh')).
inline float gelu_tanh(float x) {
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    return 0.5f * x * (1.f + std::tanh(kSqrt2OverPi * x * (1.f + 0.044715f * x * x)));
}

void run_geglu(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &g = *n.src[1];
    for_rows_unary(n, part, n_parts, [&](float *y, const float *x, int64_t i1, int64_t i2, int64_t i3) {
        const float *u = row_f32(g, i1, i2, i3);
        for (int64_t i = 0; i < n.dst->ne[0]; ++i) y[i] = gelu_tanh(x[i]) * u[i];
    });
}

void run_gelu(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    for_rows_unary(n, part, n_parts, [&](float *y, const float *x, int64_t, int64_t, int64_t) {
        for (int64_t i = 0; i < n.dst->ne[0]; ++i) y[i] = gelu_tanh(x[i]);
    });
}

// ggml_sigmoid's scalar form: 1 / (1 + expf(-x)), each step an f32 rounding.
void run_sigmoid(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    for_rows_unary(n, part, n_parts, [&](float *y, const float *x, int64_t, int64_t, int64_t) {
        for (int64_t i = 0; i < n.dst->ne[0]; ++i) y[i] = 1.f / (1.f + std::exp(-x[i]));
    });
}

// ggml's swiglu_oai (gpt-oss): the gate clamped above, the up projection on both sides, then
// x / (1 + exp(-alpha x)) * (y + 1), each step an f32 rounding.
void run_swiglu_oai(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &g = *n.src[1];
    const float alpha = n.fparams[0], limit = n.fparams[1];
    for_rows_unary(n, part, n_parts, [&](float *out, const float *gate, int64_t i1, int64_t i2, int64_t i3) {
        const float *up = row_f32(g, i1, i2, i3);
        for (int64_t i = 0; i < n.dst->ne[0]; ++i) {
            const float x = std::fmin(gate[i], limit);
            const float y = std::fmin(std::fmax(up[i], -limit), limit);
            out[i] = x / (1.f + std::exp(alpha * (-x))) * (y + 1.f);
        }
    });
}

bool check_swiglu_oai(const rf_node &n, std::string *why) {
    if (!check_same_binary(n, why)) return false;
    if (!(n.fparams[1] > 0)) { *why = "the clamp limit must be positive"; return false; }
    return true;
}

void run_softcap(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const float cap = n.fparams[0], inv = 1.f / cap;
    for_rows_unary(n, part, n_parts, [&](float *y, const float *x, int64_t, int64_t, int64_t) {
        for (int64_t i = 0; i < n.dst->ne[0]; ++i) y[i] = cap * std::tanh(x[i] * inv);
    });
}

bool check_softcap(const rf_node &n, std::string *why) {
    if (!check_unary(n, why)) return false;
    if (!(n.fparams[0] > 0)) { *why = "soft cap must be positive"; return false; }
    return true;
}

} // namespace

const OpImpl kOpAdd = {check_binary_broadcast, plan_simple, run_binary<false>};
const OpImpl kOpMul = {check_binary_broadcast, plan_simple, run_binary<true>};
const OpImpl kOpScale = {check_unary, plan_simple, run_scale};
const OpImpl kOpSilu = {check_unary, plan_simple, run_silu};
const OpImpl kOpSwiglu = {check_same_binary, plan_simple, run_swiglu};
const OpImpl kOpGeglu = {check_same_binary, plan_simple, run_geglu};
const OpImpl kOpGelu = {check_unary, plan_simple, run_gelu};
const OpImpl kOpSoftcap = {check_softcap, plan_simple, run_softcap};
const OpImpl kOpSigmoid = {check_unary, plan_simple, run_sigmoid};
const OpImpl kOpSwigluOai = {check_swiglu_oai, plan_simple, run_swiglu_oai};

} // namespace rfcpu
