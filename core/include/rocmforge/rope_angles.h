// The (cos, sin) of RoPE's rotations as the op set defines them (abi.h ROPE): for pair i of
// position pos, theta_i = pos * freq_scale * freq_base^(-2i / n_rot) / factor_i evaluated in
// double, its cosine and sine each rounded to float once. A forward graph hands the rows of its
// tokens to every layer's ROPE (src3) so that a backend reads two floats per pair instead of
// evaluating double-precision trigonometry in each layer's kernels.
#pragma once

#include <cstdint>
#include <vector>

#include "rocmforge/rope_yarn.h"

namespace rf {

struct RopeParams {
    int n_rot = 0; // dims rotated (even): n_rot / 2 pairs
    float freq_base = 10000.0f, freq_scale = 1.0f;
    const float *factors = nullptr; // [n_rot / 2] frequency factors, or nullptr
    bool yarn = false;              // YaRN (rope_yarn.h): the rows hold mscale cos, mscale sin
    RopeYarn yarn_params;
};

// One position's row: out[2i] = cos theta_i, out[2i + 1] = sin theta_i for i < n_rot / 2.
void rope_angles_row(const RopeParams &p, int32_t pos, float *out);

// Rows of positions [0, n_positions) computed on first use and kept (every decode step asks for
// the next position of each sequence, every layer's ROPE for the same rows); other positions
// are computed each time.
class RopeAngleCache {
public:
    RopeAngleCache(const RopeParams &p, int64_t n_positions);
    // The rows of positions[0..T) one after another: out holds T * n_rot floats.
    void gather(const int32_t *positions, int64_t T, std::vector<float> &out);

private:
    RopeParams p_;                 // factors point into factors_
    std::vector<float> factors_;
    int64_t n_positions_;
    std::vector<float> rows_;      // grown to the highest position asked for
    std::vector<uint8_t> computed_;
};

} // namespace rf
