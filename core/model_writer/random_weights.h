// Seeded, thread-independent random weights for `rocmforge mkmodel`: every row of every tensor
// has its own stream derived from (seed, tensor name, row), so the bytes do not depend on how
// rows are split across threads.
#pragma once
#include <cstdint>
#include <string_view>

namespace rf::model_writer {

// splitmix64 step: the standard seeder for xoshiro generators.
uint64_t splitmix64(uint64_t &state);

// Seed of one tensor (or any named stream): mixes the model seed with a hash of the name.
uint64_t tensor_seed(uint64_t model_seed, std::string_view tensor_name);

// xoshiro256+: fast, small state, good enough statistics for random weights.
struct Xoshiro256Plus {
    uint64_t s[4];
    explicit Xoshiro256Plus(uint64_t seed);
    uint64_t next() {
        const uint64_t result = s[0] + s[3];
        const uint64_t t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = (s[3] << 45) | (s[3] >> 19);
        return result;
    }
    // Uniform in [0, n) for n < 2^32 (multiply-shift on the high bits).
    uint32_t below(uint32_t n) { return uint32_t(((next() >> 32) * uint64_t(n)) >> 32); }
};

// The generator of row `row` of the stream seeded with `stream_seed`.
Xoshiro256Plus row_rng(uint64_t stream_seed, uint64_t row);

// Fills dst[0..n) with approximately normal(mean, stddev) values from row_rng(stream_seed, row).
// Each value is a sum of four 16-bit uniforms (Irwin-Hall) scaled to unit variance: bounded by
// ~3.46 sigma, which keeps activations finite, and about one 64-bit draw per value.
void fill_normal_row(float *dst, int64_t n, uint64_t stream_seed, uint64_t row, float mean,
                     float stddev);

} // namespace rf::model_writer
