// make_qkx2_quants for 8 independent groups at once, one group per SIMD lane (GCC vector
// extensions, any ISA). Each lane performs exactly the scalar routine's float operations in
// the same order, including its data-dependent updates (done with per-lane selects), so the
// results are bit-identical to make_qkx2_quants; the 8 serial accumulation chains now run in
// parallel instead of back to back, which is what makes Q2_K/Q4_K/Q5_K quantization fast.
#include <cstring>

#include "quant_internal.h"

// The 32-byte vectors only stay in registers with AVX; the AVX2 clone below is picked at run
// time where the CPU has it (IEEE results are the same either way: no FMA, no reassociation).
// meson.build passes -Wno-psabi for the by-value vector helpers, which are all inlined.

namespace rf::quant {

namespace {

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));

inline v8f splat(float f) { return v8f{f, f, f, f, f, f, f, f}; }
inline v8i splati(int v) { return v8i{v, v, v, v, v, v, v, v}; }
inline v8f as_float(v8i v) {
    v8f f;
    std::memcpy(&f, &v, sizeof f);
    return f;
}
inline v8i as_int(v8f f) {
    v8i v;
    std::memcpy(&v, &f, sizeof v);
    return v;
}
inline v8f vabs(v8f f) { return as_float(as_int(f) & splati(0x7fffffff)); }
// nearest_int per lane (same magic-constant rounding as the scalar one).
inline v8i vnearest(v8f f) {
    const v8f val = f + splat(12582912.f);
    return (as_int(val) & splati(0x007fffff)) - splati(0x00400000);
}
inline v8i vclamp(v8i l, int lo, int hi) {
    l = l < splati(lo) ? splati(lo) : l;
    return l > splati(hi) ? splati(hi) : l;
}
inline v8f to_float(v8i v) { return __builtin_convertvector(v, v8f); }
inline v8f select(v8i mask, v8f a, v8f b) { return mask ? a : b; }

} // namespace

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
void make_qkx2_quants_x8(int n, int nmax, const float *x, const float *weights, uint8_t *L,
                         float *scales, float *the_mins, float rmin, float rdelta, int nstep,
                         bool use_mad) {
    constexpr int kMaxN = 32;
    v8f xs[kMaxN] = {}, ws[kMaxN] = {};
    v8i Lv[kMaxN], Laux[kMaxN];
    for (int i = 0; i < n; ++i)
        for (int g = 0; g < 8; ++g) {
            xs[i][g] = x[g * n + i];
            ws[i][g] = weights[g * n + i];
        }

    v8f min = xs[0], max = xs[0];
    v8f sum_w = ws[0];
    v8f sum_x = sum_w * xs[0];
    for (int i = 1; i < n; ++i) {
        min = select(xs[i] < min, xs[i], min);
        max = select(xs[i] > max, xs[i], max);
        sum_w += ws[i];
        sum_x += ws[i] * xs[i];
    }
    min = select(min > splat(0), splat(0), min);
    const v8i flat = max == min; // scalar code returns early for these lanes
    const v8f flat_min = min;

    v8f iscale = splat(static_cast<float>(nmax)) / (max - min);
    v8f scale = splat(1) / iscale;
    v8f best_error = splat(0);
    for (int i = 0; i < n; ++i) {
        Lv[i] = vclamp(vnearest(iscale * (xs[i] - min)), 0, nmax);
        v8f diff = scale * to_float(Lv[i]) + min - xs[i];
        diff = use_mad ? vabs(diff) : diff * diff;
        best_error += ws[i] * diff;
    }
    for (int is = 0; nstep >= 1 && is <= nstep; ++is) {
        const float num = rmin + rdelta * is + nmax;
        iscale = splat(num) / (max - min);
        v8f sum_l = splat(0), sum_l2 = splat(0), sum_xl = splat(0);
        for (int i = 0; i < n; ++i) {
            Laux[i] = vclamp(vnearest(iscale * (xs[i] - min)), 0, nmax);
            const v8f l = to_float(Laux[i]);
            sum_l += ws[i] * l;
            sum_l2 += ws[i] * l * l;
            sum_xl += ws[i] * l * xs[i];
        }
        const v8f D = sum_w * sum_l2 - sum_l * sum_l;
        v8f this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
        v8f this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
        const v8i min_pos = this_min > splat(0);
        this_min = select(min_pos, splat(0), this_min);
        this_scale = select(min_pos, sum_xl / sum_l2, this_scale);
        v8f cur_error = splat(0);
        for (int i = 0; i < n; ++i) {
            v8f diff = this_scale * to_float(Laux[i]) + this_min - xs[i];
            diff = use_mad ? vabs(diff) : diff * diff;
            cur_error += ws[i] * diff;
        }
        const v8i better = (D > splat(0)) & (cur_error < best_error);
        for (int i = 0; i < n; ++i) Lv[i] = better ? Laux[i] : Lv[i];
        best_error = select(better, cur_error, best_error);
        scale = select(better, this_scale, scale);
        min = select(better, this_min, min);
    }
    scale = select(flat, splat(0), scale);
    min = select(flat, flat_min, min);
    for (int g = 0; g < 8; ++g) {
        scales[g] = scale[g];
        the_mins[g] = -min[g];
        for (int i = 0; i < n; ++i) L[g * n + i] = flat[g] ? 0 : static_cast<uint8_t>(Lv[i][g]);
    }
}

} // namespace rf::quant
