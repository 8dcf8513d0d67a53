// ROPE: rotary position embedding, normal (adjacent pairs) and NeoX (halves) layouts, optional
// per-frequency factors (Llama 3), YaRN (iparams[2], gpt-oss). Angles are computed in double once
// per token.
#include <cmath>

#include "ops.h"
#include "rocmforge/rope_yarn.h"

namespace rfcpu {
namespace {

bool check_rope(const rf_node &n, std::string *why) {
    const rf_tensor *d = n.dst, *x = n.src[0], *pos = n.src[1], *ff = n.src[2];
    if (!d || !x || !pos) { *why = "dst/src0/src1 missing"; return false; }
    if (d->type != RF_TYPE_F32 || x->type != RF_TYPE_F32 || pos->type != RF_TYPE_I32) {
        *why = "needs f32 src0/dst and i32 positions";
        return false;
    }
    if (!rows_contiguous(*d) || !rows_contiguous(*x) || !is_contiguous(*pos) || !same_shape(*d, *x)) {
        *why = "layout not supported";
        return false;
    }
    const int mode = n.iparams[0], n_rot = n.iparams[1];
    if (mode != RF_ROPE_NORMAL && mode != RF_ROPE_NEOX) { *why = "unknown rope mode"; return false; }
    if (n_rot <= 0 || n_rot % 2 || n_rot > d->ne[0]) { *why = "n_rot must be even and <= ne0"; return false; }
    if (x->ne[3] != 1 || nelements(*pos) != x->ne[2]) { *why = "positions must have ne2 entries"; return false; }
    if (ff && (ff->type != RF_TYPE_F32 || nelements(*ff) < n_rot / 2 || !is_contiguous(*ff))) {
        *why = "freq factors must be f32[n_rot/2]";
        return false;
    }
    if (n.iparams[2] != 0 && (n.iparams[2] != 1 || n.iparams[3] <= 0 || !(n.fparams[0] > 0) || !(n.fparams[1] > 0))) {
        *why = "YaRN needs iparams[2] = 1, n_ctx_orig > 0 and positive base and scale";
        return false;
    }
    return true;
}

NodeWork plan_rope(const KernelSet &, const rf_node &n, int nth) {
    NodeWork w;
    w.parts[0] = parts_for(n.dst->ne[1] * n.dst->ne[2], n.dst->ne[0] * 4, nth);
    w.per_thread_bytes = size_t(n.iparams[1]) * sizeof(float); // cos/sin per rotated pair
    return w;
}

void run_rope(const OpContext &ctx, const rf_node &n, int, int64_t part, int64_t n_parts, int tid) {
    const rf_tensor &d = *n.dst, &x = *n.src[0];
    const auto *pos = static_cast<const int32_t *>(n.src[1]->data);
    const float *ff = n.src[2] ? static_cast<const float *>(n.src[2]->data) : nullptr;
    const bool neox = n.iparams[0] == RF_ROPE_NEOX;
    const int64_t ne0 = d.ne[0], H = d.ne[1], half = n.iparams[1] / 2;
    const double base = n.fparams[0], fscale = n.fparams[1];
    const bool yarn = n.iparams[2] == 1;
    rf::RopeYarn y;
    float dims[2] = {0, 0};
    double mscale = 1.0;
    if (yarn) {
        y.n_ctx_orig = n.iparams[3];
        y.ext_factor = n.fparams[2], y.attn_factor = n.fparams[3], y.beta_fast = n.fparams[4], y.beta_slow = n.fparams[5];
        rf::rope_yarn_corr_dims(y, n.iparams[1], n.fparams[0], dims);
        mscale = rf::rope_yarn_mscale(y, n.fparams[1]);
    }
    auto *cs = reinterpret_cast<float *>(ctx.thread_scratch(tid)); // cos[i], sin[i] interleaved
    int64_t r0, r1, cached_t = -1;
    split_range(H * d.ne[2], part, n_parts, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        const int64_t h = r % H, t = r / H;
        if (t != cached_t) {
            for (int64_t i = 0; i < half && yarn; ++i) { // rope_angles.cpp's expression, operand for operand
                double extrap = double(pos[t]) * std::pow(base, -2.0 * double(i) / double(2 * half));
                if (ff) extrap /= double(ff[i]);
                const double theta = rf::rope_yarn_theta(y, dims, (int)i, extrap, fscale);
                cs[2 * i] = float(std::cos(theta) * mscale);
                cs[2 * i + 1] = float(std::sin(theta) * mscale);
            }
            for (int64_t i = 0; i < half && !yarn; ++i) {
                double theta = double(pos[t]) * fscale * std::pow(base, -2.0 * double(i) / double(2 * half));
                if (ff) theta /= double(ff[i]);
                cs[2 * i] = float(std::cos(theta));
                cs[2 * i + 1] = float(std::sin(theta));
            }
            cached_t = t;
        }
        const float *src = row_f32(x, h, t);
        float *dst = row_f32(d, h, t);
        for (int64_t i = 0; i < half; ++i) {
            const int64_t a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
            const float x0 = src[a], x1 = src[b], c = cs[2 * i], s = cs[2 * i + 1];
            dst[a] = x0 * c - x1 * s;
            dst[b] = x0 * s + x1 * c;
        }
        for (int64_t i = 2 * half; i < ne0; ++i) dst[i] = src[i];
    }
}

} // namespace

const OpImpl kOpRope = {check_rope, plan_rope, run_rope};

} // namespace rfcpu
