// Host rows of RoPE's (cos, sin), the values the CPU backend's ROPE evaluates per token.
#include "rocmforge/rope_angles.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace rf {

void rope_angles_row(const RopeParams &p, int32_t pos, float *out) {
    // The expression of the CPU backend's run_rope, operand for operand (same double roundings).
    const double base = p.freq_base, fscale = p.freq_scale;
    const int half = p.n_rot / 2;
    if (p.yarn) {
        float dims[2];
        rope_yarn_corr_dims(p.yarn_params, p.n_rot, p.freq_base, dims);
        const double mscale = rope_yarn_mscale(p.yarn_params, p.freq_scale);
        for (int i = 0; i < half; ++i) {
            double extrap = double(pos) * std::pow(base, -2.0 * double(i) / double(2 * half));
            if (p.factors) extrap /= double(p.factors[i]);
            const double theta = rope_yarn_theta(p.yarn_params, dims, i, extrap, fscale);
            out[2 * i] = float(std::cos(theta) * mscale);
            out[2 * i + 1] = float(std::sin(theta) * mscale);
        }
        return;
    }
    for (int i = 0; i < half; ++i) {
        double theta = double(pos) * fscale * std::pow(base, -2.0 * double(i) / double(2 * half));
        if (p.factors) theta /= double(p.factors[i]);
        out[2 * i] = float(std::cos(theta));
        out[2 * i + 1] = float(std::sin(theta));
    }
}

RopeAngleCache::RopeAngleCache(const RopeParams &p, int64_t n_positions) : p_(p), n_positions_(std::max<int64_t>(0, n_positions)) {
    if (p.factors) {
        factors_.assign(p.factors, p.factors + p.n_rot / 2);
        p_.factors = factors_.data();
    }
}

void RopeAngleCache::gather(const int32_t *positions, int64_t T, std::vector<float> &out) {
    const size_t row = (size_t)p_.n_rot;
    out.resize((size_t)T * row);
    for (int64_t t = 0; t < T; ++t) {
        const int32_t pos = positions[t];
        float *dst = out.data() + (size_t)t * row;
        if (pos < 0 || pos >= n_positions_) {
            rope_angles_row(p_, pos, dst);
            continue;
        }
        if ((size_t)pos >= computed_.size()) {
            // Grown in steps of 1024 positions (or to the end) so a decode loop resizes rarely.
            const size_t n = (size_t)std::min<int64_t>(n_positions_, ((int64_t)pos / 1024 + 1) * 1024);
            computed_.resize(n, 0);
            rows_.resize(n * row);
        }
        float *cached = rows_.data() + (size_t)pos * row;
        if (!computed_[(size_t)pos]) {
            rope_angles_row(p_, pos, cached);
            computed_[(size_t)pos] = 1;
        }
        std::memcpy(dst, cached, row * sizeof(float));
    }
}

} // namespace rf
