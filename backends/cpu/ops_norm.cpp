// Row reductions: RMS_NORM, LAYER_NORM, SOFTMAX (f32 -> f32 over ne[0]) and ARGMAX (f32 -> i32).
#include <cmath>

#include "ops.h"

namespace rfcpu {
namespace {

bool check_rowwise(const rf_node &n, std::string *why) {
    const rf_tensor *d = n.dst, *a = n.src[0];
    if (!d || !a) { *why = "dst/src0 missing"; return false; }
    if (d->type != RF_TYPE_F32 || a->type != RF_TYPE_F32) { *why = "needs f32 src0 and dst"; return false; }
    if (!rows_contiguous(*d) || !rows_contiguous(*a)) { *why = "rows are not contiguous"; return false; }
    if (!same_shape(*d, *a)) { *why = "dst and src0 shapes differ"; return false; }
    return true;
}

void run_rms_norm(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const int64_t k = n.dst->ne[0];
    const float eps = n.fparams[0];
    for_rows_unary(n, part, n_parts, [&](float *y, const float *x, int64_t, int64_t, int64_t) {
        double ss = 0;
        for (int64_t i = 0; i < k; ++i) ss += double(x[i]) * x[i];
        const float s = float(1.0 / std::sqrt(ss / double(k) + double(eps)));
        for (int64_t i = 0; i < k; ++i) y[i] = x[i] * s;
    });
}

// As ggml_norm on the CPU: mean and variance summed in double, one f32 scale per row.
void run_layer_norm(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const int64_t k = n.dst->ne[0];
    const float eps = n.fparams[0];
    for_rows_unary(n, part, n_parts, [&](float *y, const float *x, int64_t, int64_t, int64_t) {
        double sum = 0;
        for (int64_t i = 0; i < k; ++i) sum += x[i];
        const float mean = float(sum / double(k));
        double ss = 0;
        for (int64_t i = 0; i < k; ++i) {
            y[i] = x[i] - mean;
            ss += double(y[i] * y[i]);
        }
        const float s = 1.0f / std::sqrt(float(ss / double(k)) + eps);
        for (int64_t i = 0; i < k; ++i) y[i] *= s;
    });
}

void run_softmax(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const int64_t k = n.dst->ne[0];
    const float scale = n.fparams[0];
    for_rows_unary(n, part, n_parts, [&](float *y, const float *x, int64_t, int64_t, int64_t) {
        float mx = -INFINITY;
        for (int64_t i = 0; i < k; ++i) mx = std::fmax(mx, x[i] * scale);
        double sum = 0;
        for (int64_t i = 0; i < k; ++i) {
            y[i] = std::exp(x[i] * scale - mx);
            sum += y[i];
        }
        const float inv = float(1.0 / sum);
        for (int64_t i = 0; i < k; ++i) y[i] *= inv;
    });
}

bool check_argmax(const rf_node &n, std::string *why) {
    const rf_tensor *d = n.dst, *a = n.src[0];
    if (!d || !a) { *why = "dst/src0 missing"; return false; }
    if (a->type != RF_TYPE_F32 || d->type != RF_TYPE_I32) { *why = "needs f32 src0 and i32 dst"; return false; }
    if (!rows_contiguous(*a) || !is_contiguous(*d)) { *why = "layout not contiguous"; return false; }
    if (a->ne[2] != 1 || a->ne[3] != 1 || nelements(*d) != a->ne[1]) {
        *why = "dst must have one element per src0 row (2-D src0)";
        return false;
    }
    return true;
}

void run_argmax(const OpContext &, const rf_node &n, int, int64_t part, int64_t n_parts, int) {
    const rf_tensor &a = *n.src[0];
    auto *out = static_cast<int32_t *>(n.dst->data);
    int64_t r0, r1;
    split_range(a.ne[1], part, n_parts, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        const float *x = row_f32(a, r);
        int64_t best = 0;
        for (int64_t i = 1; i < a.ne[0]; ++i)
            if (x[i] > x[best]) best = i;
        out[r] = int32_t(best);
    }
}

} // namespace

const OpImpl kOpRmsNorm = {check_rowwise, plan_simple, run_rms_norm};
const OpImpl kOpLayerNorm = {check_rowwise, plan_simple, run_layer_norm};
const OpImpl kOpSoftmax = {check_rowwise, plan_simple, run_softmax};
const OpImpl kOpArgmax = {check_argmax, plan_simple, run_argmax};

} // namespace rfcpu
