// See softmax_draw.h.
#include "softmax_draw.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>

#include "isa_clones.h"

namespace rf {

// Vectorized loops, also compiled for AVX2 and AVX-512 (isa_clones.h).
RF_ISA_CLONES bool softmax_weigh(const float *l, int64_t n, float t, SoftmaxWeights &sw) {
    std::vector<float> &weights = sw.weights;
    std::vector<double> &blocks = sw.blocks;
    double &total = sw.total;
    constexpr int64_t kBlock = kSoftmaxBlock;
    // The largest logit and whether one is NaN, on the bits (integer max and or: the loop
    // vectorizes, where float comparisons stay branches): a float's bits with the magnitude bits
    // of negative values flipped order as the floats do.
    uint32_t nan = 0;
    int32_t kmax = INT32_MIN;
    for (int64_t i = 0; i < n; ++i) {
        const uint32_t b = std::bit_cast<uint32_t>(l[i]);
        nan |= (0x7F800000u - (b & 0x7FFFFFFFu)) >> 31;
        const int32_t key = (int32_t)(b ^ ((uint32_t)((int32_t)b >> 31) & 0x7FFFFFFFu));
        kmax = std::max(kmax, key);
    }
    if (nan) return false;
    const float mx = std::bit_cast<float>((uint32_t)kmax ^ ((uint32_t)(kmax >> 31) & 0x7FFFFFFFu));
    weights.resize((size_t)n);
    if (mx == INFINITY || mx == -INFINITY) {
        // +inf: those tokens alone, equally; all -inf: every token equally (nothing to prefer).
        for (int64_t i = 0; i < n; ++i) weights[(size_t)i] = mx == -INFINITY || l[i] == INFINITY ? 1.0f : 0.0f;
    } else {
        const float inv_t = 1.0f / t;
        for (int64_t i = 0; i < n; ++i) weights[(size_t)i] = exp_nonpositive((l[i] - mx) * inv_t);
    }
    // Block sums in a fixed order (8 lanes, then the lanes pairwise), the total in double.
    const int64_t nb = (n + kBlock - 1) / kBlock;
    blocks.resize((size_t)nb);
    total = 0;
    for (int64_t b = 0; b < nb; ++b) {
        const float *w = weights.data() + b * kBlock;
        const int64_t m = std::min(kBlock, n - b * kBlock);
        float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t j = 0;
        for (; j + 8 <= m; j += 8)
            for (int k = 0; k < 8; ++k) lane[k] += w[j + k];
        for (; j < m; ++j) lane[j % 8] += w[j];
        const double s = (double)(((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])));
        blocks[(size_t)b] = s;
        total += s;
    }
    return true;
}

int64_t softmax_pick(const SoftmaxWeights &sw, double u) {
    const std::vector<float> &weights = sw.weights;
    const std::vector<double> &blocks = sw.blocks;
    constexpr int64_t kBlock = kSoftmaxBlock;
    const int64_t n = (int64_t)weights.size(), nb = (int64_t)blocks.size();
    const double target = u * sw.total;
    // The block holding the target, then the token inside it, both walked in double. Where the
    // block's sum (summed in lanes) and the walk inside it (in order) round apart and the walk
    // stops short, the block's last token of non-zero weight.
    double cum = 0;
    for (int64_t b = 0; b < nb; ++b) {
        const double s = blocks[(size_t)b];
        if (s <= 0) continue;
        if (cum + s <= target && b + 1 < nb) {
            cum += s;
            continue;
        }
        int64_t last_nonzero = -1;
        for (int64_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) {
            if (!(weights[(size_t)i] > 0)) continue;
            cum += weights[(size_t)i];
            last_nonzero = i;
            if (target < cum) return i;
        }
        return last_nonzero; // s > 0: the block has one
    }
    // Rounding left the target past the blocks: the last token of non-zero weight.
    for (int64_t i = n - 1; i >= 0; --i)
        if (weights[(size_t)i] > 0) return i;
    return n - 1;
}

} // namespace rf
