// Seeded, thread-independent random weights for `rocmforge mkmodel`: every row of every tensor
// has its own stream derived from (seed, tensor name, row), so the bytes do not depend on how
// rows are split across threads.
#pragma once
#include <cstdint>
#include <string_view>

namespace rf::model_writer {

// splitmix64 step: the standard seeder for xoshiro generators.
uint64_t splitmix64(uint64_t &state);

// Seed of one tensor: mixes the model seed with a hash of the tensor name.
uint64_t tensor_seed(uint64_t model_seed, std::string_view tensor_name);

// Fills dst[0..n) with approximately normal(mean, stddev) values from the stream of row `row`
// of the tensor seeded with `tensor_seed_value`. Uses xoshiro256+ and a sum of four 16-bit
// uniforms (Irwin-Hall), scaled to unit variance: values are bounded by ~3.46 sigma, which
// keeps activations finite and costs about one 64-bit draw per value.
void fill_normal_row(float *dst, int64_t n, uint64_t tensor_seed_value, uint64_t row, float mean,
                     float stddev);

} // namespace rf::model_writer
