// The recurrent ops of Qwen3.5's Gated DeltaNet layers (abi.h): SSM_CONV (the short causal
// convolution with its carried inputs), GATED_DELTA_NET (the gated delta rule with its per-head
// state) and SOFTPLUS. Both recurrences run token by token in batch order (a prompt is
// sequential over time here); the parts split the channels / value heads, which are independent.
#include <cmath>
#include <cstring>

#include "ops.h"

namespace rfcpu {
namespace {

bool check_f32_dense(const rf_tensor *t, const char *what, std::string *why) {
    if (!t) { *why = std::string(what) + " is missing"; return false; }
    if (t->type != RF_TYPE_F32 || !is_contiguous(*t) || t->ne[2] != 1 || t->ne[3] != 1) {
        *why = std::string(what) + " must be a contiguous 2-D f32 tensor, got " + shape_str(*t);
        return false;
    }
    return true;
}

// token info [2, T] and pool rows [n_seq] (i32), the pool [row, rows] of `row` elements.
bool check_state_args(const rf_tensor *pool, const rf_tensor *info, const rf_tensor *rows, int64_t row, int64_t T,
                      std::string *why) {
    if (!check_f32_dense(pool, "state pool", why) || !check_2d(info, RF_TYPE_I32, "token info", why) ||
        !check_2d(rows, RF_TYPE_I32, "state rows", why))
        return false;
    if (pool->ne[0] != row) { *why = "state pool rows of " + std::to_string(pool->ne[0]) + " elements, expected " + std::to_string(row); return false; }
    if (info->ne[0] != 2 || info->ne[1] != T) { *why = "token info must be [2, " + std::to_string(T) + "], got " + shape_str(*info); return false; }
    if (rows->ne[1] != 1) { *why = "state rows must be 1-D"; return false; }
    return true;
}

// The state row of token t's sequence, or nullptr (reported) when its index is out of range.
float *state_row(const OpContext &ctx, const rf_node &n, const rf_tensor &pool, const rf_tensor &info,
                 const rf_tensor &rows, int64_t t) {
    const int32_t *ti = static_cast<const int32_t *>(info.data);
    const int32_t b = ti[2 * t];
    if (b < 0 || b >= rows.ne[0]) {
        ctx.errors.fail(std::string(n.label ? n.label : op_name(n.op)) + ": token " + std::to_string(t) +
                        " has batch sequence " + std::to_string(b) + " outside 0.." + std::to_string(rows.ne[0] - 1));
        return nullptr;
    }
    const int32_t r = static_cast<const int32_t *>(rows.data)[b];
    if (r < 0 || r >= pool.ne[1]) {
        ctx.errors.fail(std::string(n.label ? n.label : op_name(n.op)) + ": state row " + std::to_string(r) +
                        " outside 0.." + std::to_string(pool.ne[1] - 1));
        return nullptr;
    }
    return row_f32(pool, r);
}

// ---- SSM_CONV: src0 x [C, T], src1 kernel [K, C], src2 state [(K-1) C, rows], src3 info, src4 rows.

bool check_ssm_conv(const rf_node &n, std::string *why) {
    if (!check_f32_dense(n.dst, "dst", why) || !check_f32_dense(n.src[0], "src0", why) || !check_f32_dense(n.src[1], "kernel", why))
        return false;
    const int64_t C = n.src[0]->ne[0], T = n.src[0]->ne[1], K = n.src[1]->ne[0];
    if (!same_shape(*n.dst, *n.src[0])) { *why = "dst and src0 shapes differ"; return false; }
    if (n.src[1]->ne[1] != C || K < 2) { *why = "kernel " + shape_str(*n.src[1]) + " must be [K >= 2, " + std::to_string(C) + "]"; return false; }
    return check_state_args(n.src[2], n.src[3], n.src[4], (K - 1) * C, T, why);
}

NodeWork plan_ssm_conv(const KernelSet &, const rf_node &n, int nth) {
    NodeWork w;
    w.parts[0] = parts_for(n.src[0]->ne[0], n.src[0]->ne[1] * n.src[1]->ne[0], nth);
    return w;
}

void run_ssm_conv(const OpContext &ctx, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &x = *n.src[0], &w = *n.src[1], &pool = *n.src[2], &info = *n.src[3], &rows = *n.src[4];
    const int64_t C = x.ne[0], T = x.ne[1], K = w.ne[0], W = K - 1;
    int64_t c0, c1;
    split_range(C, part, n_parts, &c0, &c1);
    const float *wk = static_cast<const float *>(w.data);
    const int32_t *ti = static_cast<const int32_t *>(info.data);
    for (int64_t t = 0; t < T; ++t) {
        float *s = state_row(ctx, n, pool, info, rows, t);
        if (!s) return;
        if (ti[2 * t + 1] == 0) std::memset(s + c0 * W, 0, sizeof(float) * size_t((c1 - c0) * W)); // a new sequence
        const float *xt = row_f32(x, t);
        float *yt = row_f32(*n.dst, t);
        for (int64_t c = c0; c < c1; ++c) {
            float *sc = s + c * W;
            const float *wc = wk + c * K;
            float sum = 0.0f;
            for (int64_t i = 0; i < W; ++i) sum += sc[i] * wc[i];
            sum += xt[c] * wc[W];
            yt[c] = sum;
            for (int64_t i = 0; i + 1 < W; ++i) sc[i] = sc[i + 1]; // the window moves one input on
            sc[W - 1] = xt[c];
        }
    }
}

// ---- GATED_DELTA_NET: src0 qkv, src1 g [Hv, T], src2 beta [Hv, T], src3 state, src4 info, src5 rows.

bool check_gated_delta_net(const rf_node &n, std::string *why) {
    const int64_t Hk = n.iparams[0], Sk = n.iparams[1], Hv = n.iparams[2], Sv = n.iparams[3];
    if (Hk < 1 || Sk < 1 || Hv < 1 || Sv < 1 || Hv % Hk != 0) {
        *why = "heads Hk " + std::to_string(Hk) + " of " + std::to_string(Sk) + ", Hv " + std::to_string(Hv) + " of " +
               std::to_string(Sv) + ": all positive, Hv a multiple of Hk";
        return false;
    }
    if (!check_f32_dense(n.dst, "dst", why) || !check_f32_dense(n.src[0], "qkv", why) || !check_f32_dense(n.src[1], "g", why) ||
        !check_f32_dense(n.src[2], "beta", why))
        return false;
    const int64_t T = n.src[0]->ne[1];
    if (n.src[0]->ne[0] != 2 * Hk * Sk + Hv * Sv) { *why = "qkv rows must hold 2 Hk Sk + Hv Sv elements, got " + shape_str(*n.src[0]); return false; }
    if (n.dst->ne[0] != Hv * Sv || n.dst->ne[1] != T) { *why = "dst must be [Hv Sv, T], got " + shape_str(*n.dst); return false; }
    for (const rf_tensor *t : {n.src[1], n.src[2]})
        if (t->ne[0] != Hv || t->ne[1] != T) { *why = "g and beta must be [Hv, T], got " + shape_str(*t); return false; }
    if (!(n.fparams[0] > 0)) { *why = "the L2 norm's eps must be positive"; return false; }
    if (n.iparams[4] != 0 && n.iparams[4] != 1) { *why = "iparams[4] (key head of a value head) must be 0 or 1"; return false; }
    return check_state_args(n.src[3], n.src[4], n.src[5], Sk * Sv * Hv, T, why);
}

NodeWork plan_gated_delta_net(const KernelSet &, const rf_node &n, int nth) {
    NodeWork w;
    const int64_t Hv = n.iparams[2], Sk = n.iparams[1], Sv = n.iparams[3];
    w.parts[0] = parts_for(Hv, n.src[0]->ne[1] * Sk * Sv * 4, nth);
    w.per_thread_bytes = sizeof(float) * size_t(2 * Sk);
    return w;
}

// x / max(|x|, eps) times scale into out (ggml_l2_norm: the sum of squares in double).
void l2_normalize(const float *x, int64_t n, float eps, float scale, float *out) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(x[i]) * double(x[i]);
    const float inv = 1.0f / std::fmax(std::sqrt(float(sum)), eps);
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * inv * scale;
}

void run_gated_delta_net(const OpContext &ctx, const rf_node &n, int, int64_t part, int64_t n_parts, int tid) {
    const int64_t Hk = n.iparams[0], Sk = n.iparams[1], Hv = n.iparams[2], Sv = n.iparams[3];
    const rf_tensor &qkv = *n.src[0], &g = *n.src[1], &beta = *n.src[2], &pool = *n.src[3], &info = *n.src[4], &rows = *n.src[5];
    const int64_t T = qkv.ne[1], group = n.iparams[4] ? Hv / Hk : 0;
    const float eps = n.fparams[0], q_scale = n.fparams[1];
    int64_t h0, h1;
    split_range(Hv, part, n_parts, &h0, &h1);
    float *q = reinterpret_cast<float *>(ctx.thread_scratch(tid)), *k = q + Sk;
    const int32_t *ti = static_cast<const int32_t *>(info.data);
    for (int64_t t = 0; t < T; ++t) {
        float *s = state_row(ctx, n, pool, info, rows, t);
        if (!s) return;
        if (ti[2 * t + 1] == 0) std::memset(s + h0 * Sk * Sv, 0, sizeof(float) * size_t((h1 - h0) * Sk * Sv));
        const float *x = row_f32(qkv, t);
        float *out = row_f32(*n.dst, t);
        for (int64_t h = h0; h < h1; ++h) {
            const int64_t kh = group ? h / group : h % Hk;
            l2_normalize(x + kh * Sk, Sk, eps, q_scale, q);
            l2_normalize(x + Hk * Sk + kh * Sk, Sk, eps, 1.0f, k);
            const float *v = x + 2 * Hk * Sk + h * Sv;
            const float decay = std::exp(row_f32(g, t)[h]), b = row_f32(beta, t)[h];
            float *sh = s + h * Sk * Sv, *o = out + h * Sv;
            // Column j of S (value j) is one contiguous row over the keys: decay, read S^T k,
            // add k times the corrected value, then read S^T q from the updated column.
            for (int64_t j = 0; j < Sv; ++j) {
                float *col = sh + j * Sk;
                float sk = 0.0f;
                for (int64_t a = 0; a < Sk; ++a) {
                    col[a] *= decay;
                    sk += col[a] * k[a];
                }
                const float d = (v[j] - sk) * b;
                float sq = 0.0f;
                for (int64_t a = 0; a < Sk; ++a) {
                    col[a] += k[a] * d;
                    sq += col[a] * q[a];
                }
                o[j] = sq;
            }
        }
    }
}

// ---- SOFTPLUS

bool check_softplus(const rf_node &n, std::string *why) {
    for (const rf_tensor *t : {n.dst, n.src[0]}) {
        if (!t) { *why = "softplus needs dst and src0"; return false; }
        if (t->type != RF_TYPE_F32 || !rows_contiguous(*t)) { *why = "softplus: f32 rows, got " + shape_str(*t); return false; }
    }
    if (!same_shape(*n.dst, *n.src[0])) { *why = "dst and src0 shapes differ"; return false; }
    return true;
}

void run_softplus(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const int64_t ne0 = n.dst->ne[0];
    for_rows_unary(n, part, n_parts, [ne0](float *y, const float *x, int64_t, int64_t, int64_t) {
        for (int64_t i = 0; i < ne0; ++i) y[i] = x[i] > 20.0f ? x[i] : std::log1p(std::exp(x[i]));
    });
}

} // namespace

const OpImpl kOpSsmConv = {check_ssm_conv, plan_ssm_conv, run_ssm_conv};
const OpImpl kOpGatedDeltaNet = {check_gated_delta_net, plan_gated_delta_net, run_gated_delta_net};
const OpImpl kOpSoftplus = {check_softplus, plan_simple, run_softplus};

} // namespace rfcpu
