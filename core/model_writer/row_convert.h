// Row-by-row type conversion of a whole tensor, spread over threads: each row is dequantized
// to f32 (a copy for f32 input) and quantized to the destination type with the reference
// quantizers, so results match ggml's byte for byte whatever the thread count.
#pragma once
#include <cstdint>
#include <string>

namespace rf::model_writer {

// Throws rf::Error (usage) naming the tensor when rows of `row_len` elements cannot be stored
// as `type` (row length not a multiple of its block size, or a type without a quantizer).
void check_row_fits(const std::string &tensor_name, int type, int64_t row_len);

// importance: null, or row_len importance weights per matrix of rows_per_matrix rows (an
// expert tensor's matrices each have their own), handed to rf::quantize_row_weighted.
void convert_rows(int src_type, const uint8_t *src, int dst_type, uint8_t *dst, int64_t row_len,
                  int64_t n_rows, int n_threads, const float *importance = nullptr,
                  int64_t rows_per_matrix = 0);

} // namespace rf::model_writer
