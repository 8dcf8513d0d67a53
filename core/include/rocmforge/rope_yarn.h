// YaRN RoPE (abi.h ROPE iparams[2] = 1) as ggml_rope_ext computes it: the correction dims in f32
// (ggml_rope_yarn_corr_dims, whose floor / ceil must see ggml's f32 values), then per pair i a
// mix of the interpolated and extrapolated angle by the ramp, and the magnitude scale. Header
// only: the core's (cos, sin) rows, the CPU backend and the float64 tests evaluate the same
// expressions.
#pragma once

#include <algorithm>
#include <cmath>

namespace rf {

struct RopeYarn {
    int n_ctx_orig = 0;       // the context the model was trained at before scaling
    float ext_factor = 0.0f;  // 0: no extrapolation mix (then only attn_factor scales)
    float attn_factor = 1.0f;
    float beta_fast = 32.0f, beta_slow = 1.0f;
};

// The ramp's ends [c0, c1] for n_rot rotated dims.
inline void rope_yarn_corr_dims(const RopeYarn &y, int n_rot, float freq_base, float dims[2]) {
    auto corr_dim = [&](float beta) {
        return float(n_rot) * logf(float(y.n_ctx_orig) / (beta * 2.0f * float(M_PI))) / (2.0f * logf(freq_base));
    };
    dims[0] = std::max(0.0f, floorf(corr_dim(y.beta_fast)));
    dims[1] = std::min(float(n_rot - 1), ceilf(corr_dim(y.beta_slow)));
}

// The scale of cos and sin.
inline float rope_yarn_mscale(const RopeYarn &y, float freq_scale) {
    float m = y.attn_factor;
    if (y.ext_factor != 0.0f) m *= 1.0f + 0.1f * logf(1.0f / freq_scale);
    return m;
}

// Pair i's angle from its extrapolated (unscaled) angle theta_extrap, in double.
inline double rope_yarn_theta(const RopeYarn &y, const float dims[2], int i, double theta_extrap, double freq_scale) {
    const double interp = theta_extrap * freq_scale;
    if (y.ext_factor == 0.0f) return interp;
    const float t = (float(i) - dims[0]) / std::max(0.001f, dims[1] - dims[0]);
    const double mix = double(1.0f - std::min(1.0f, std::max(0.0f, t))) * double(y.ext_factor);
    return interp * (1.0 - mix) + theta_extrap * mix;
}

} // namespace rf
