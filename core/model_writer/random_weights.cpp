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

namespace {

struct Xoshiro256Plus {
    uint64_t s[4];
    explicit Xoshiro256Plus(uint64_t seed) {
        for (uint64_t &w : s) w = splitmix64(seed);
    }
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t next() {
        const uint64_t result = s[0] + s[3];
        const uint64_t t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return result;
    }
};

} // namespace

void fill_normal_row(float *dst, int64_t n, uint64_t tensor_seed_value, uint64_t row, float mean,
                     float stddev) {
    uint64_t mix = tensor_seed_value ^ (row * 0xD1B54A32D192ED03ull);
    Xoshiro256Plus rng(splitmix64(mix));
    // Sum of four U(0, 65535) has mean 131070 and variance 4 * (65536^2 - 1) / 12.
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
