#include "random_weights.h"

#include <cmath>

namespace rf::model_writer {

uint64_t splitmix64(uint64_t &state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t tensor_seed(uint64_t model_seed, std::string_view tensor_name) {
    uint64_t h = 0xCBF29CE484222325ull; // FNV-1a 64
    for (unsigned char c : tensor_name) {
        h ^= c;
        h *= 0x100000001B3ull;
    }
    uint64_t state = model_seed ^ h;
    return splitmix64(state);
}

Xoshiro256Plus::Xoshiro256Plus(uint64_t seed) {
    for (uint64_t &w : s) w = splitmix64(seed);
}

Xoshiro256Plus row_rng(uint64_t stream_seed, uint64_t row) {
    uint64_t mix = stream_seed ^ (row * 0xD1B54A32D192ED03ull);
    return Xoshiro256Plus(splitmix64(mix));
}

void fill_normal_row(float *dst, int64_t n, uint64_t stream_seed, uint64_t row, float mean,
                     float stddev) {
    Xoshiro256Plus rng = row_rng(stream_seed, row);
    // Sum of four U{0..65535} has mean 4 * 65535 / 2 and variance 4 * (65536^2 - 1) / 12.
    const float kMean = 4.0f * 65535.0f / 2.0f;
    const float kInvStd = 1.0f / std::sqrt(4.0f * (65536.0f * 65536.0f - 1.0f) / 12.0f);
    const float scale = stddev * kInvStd;
    for (int64_t i = 0; i < n; ++i) {
        const uint64_t r = rng.next();
        const uint32_t sum = uint32_t(r & 0xFFFF) + uint32_t((r >> 16) & 0xFFFF) +
                             uint32_t((r >> 32) & 0xFFFF) + uint32_t(r >> 48);
        dst[i] = mean + (float(sum) - kMean) * scale;
    }
}

} // namespace rf::model_writer
