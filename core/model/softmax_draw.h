// One draw from softmax(logits / T) over a whole vocabulary in O(n) (the sampler's path without
// top-k, top-p or min-p: what OpenAI requests ask for). The weights exp((l - max) / T) are float
// and computed by a branch-free exp the compiler vectorizes: glibc's double exp per token was
// several times slower (rocmforge-bench-sampler times the draw), and a busy server makes a few
// draws per helper thread every step. The inverse CDF is walked in token-id
// order, per block of kSoftmaxBlock tokens first.
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace rf {

// exp(x) for x <= 0 (and -inf): 2^n * 2^r by range reduction and a degree-6 polynomial, relative
// error below 3e-7; 0 below -87.3 (where float's normal range ends) and for -inf. Inline, so the
// loops that call it vectorize.
inline float exp_nonpositive(float x) {
    // n = round(x / ln 2) by the add-magic trick (round to nearest, no rounding instruction
    // needed), r = x - n ln 2 in two steps (ln 2 split so n * kLn2Hi is exact): |r| <= ln 2 / 2.
    // No float comparisons (the compiler keeps those as branches, which stops the callers' loops
    // vectorizing): the clamp and the cut below -87.3 work on |x|'s bits.
    constexpr float kLog2e = 1.44269504088896341f, kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
    constexpr float kMagic = 12582912.0f; // 1.5 * 2^23
    constexpr uint32_t kMag = std::bit_cast<uint32_t>(87.3f);
    const uint32_t m = std::bit_cast<uint32_t>(x) & 0x7FFFFFFFu;          // |x| (x <= 0, -inf included)
    const float keep = (float)(int32_t)(((kMag - m) >> 31) ^ 1u);         // 1 where |x| <= 87.3
    const float xc = std::bit_cast<float>(std::min(m, kMag) | 0x80000000u); // -min(|x|, 87.3)
    const float t = xc * kLog2e + kMagic;
    const float nf = t - kMagic;
    const float r = (xc - nf * kLn2Hi) - nf * kLn2Lo;
    // exp(r) on |r| <= 0.347: Taylor terms to r^6 (the remainder r^7 / 5040 < 2.9e-7 relative).
    const float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720))))));
    const int32_t e = (std::bit_cast<int32_t>(t) - 0x4B400000) + 127; // n + 127, in [1, 127]
    return p * std::bit_cast<float>(e << 23) * keep;
}

// The weights of one draw: per token exp((l - max) / t), per block of kSoftmaxBlock tokens their
// sum, and the total.
constexpr int64_t kSoftmaxBlock = 64;
struct SoftmaxWeights {
    std::vector<float> &weights;
    std::vector<double> &blocks;
    double total = 0;
};

// Weighs n >= 1 logits at temperature t > 0 into w; false (nothing weighed) when one is NaN.
bool softmax_weigh(const float *l, int64_t n, float t, SoftmaxWeights &w);
// The token at u in [0, 1) of the cumulative weights: the first whose cumulative weight exceeds
// u times the total. Tokens of weight 0 (logit -inf, or more than ~87 T below the largest) are
// never drawn.
int64_t softmax_pick(const SoftmaxWeights &w, double u);

} // namespace rf
