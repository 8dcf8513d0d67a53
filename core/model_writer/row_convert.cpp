#include "row_convert.h"

#include <cstring>
#include <vector>

#include "parallel_rows.h"
#include "rocmforge/error.h"
#include "rocmforge/escape.h"
#include "rocmforge/types.h"

namespace rf::model_writer {

void check_row_fits(const std::string &tensor_name, int type, int64_t row_len) {
    const TypeTraits *t = type_traits(type);
    if (!t) throw UsageError("tensor " + quote_name(tensor_name) + ": unknown type id " + std::to_string(type));
    if (!can_quantize(type) && !importance_required(type))
        throw UsageError("tensor " + quote_name(tensor_name) + ": cannot convert to " + t->name +
                         " (no quantizer for that type)");
    if (row_len % t->block_size != 0)
        throw UsageError("tensor " + quote_name(tensor_name) + ": row length " + std::to_string(row_len) +
                         " is not a multiple of the " + t->name + " block size " +
                         std::to_string(t->block_size));
}

void convert_rows(int src_type, const uint8_t *src, int dst_type, uint8_t *dst, int64_t row_len,
                  int64_t n_rows, int n_threads, const float *importance, int64_t rows_per_matrix) {
    const size_t src_row = row_size(src_type, row_len);
    const size_t dst_row = row_size(dst_type, row_len);
    if (src_type == dst_type) {
        std::memcpy(dst, src, src_row * size_t(n_rows));
        return;
    }
    std::vector<std::vector<float>> scratch(static_cast<size_t>(n_threads));
    parallel_for_rows(n_rows, n_threads, [&](int worker, int64_t begin, int64_t end) {
        std::vector<float> &f = scratch[size_t(worker)];
        f.resize(size_t(row_len));
        for (int64_t r = begin; r < end; ++r) {
            dequantize_row(src_type, src + size_t(r) * src_row, f.data(), row_len);
            const float *imp = importance ? importance + (r / rows_per_matrix) * row_len : nullptr;
            quantize_row_weighted(dst_type, f.data(), dst + size_t(r) * dst_row, row_len, imp);
        }
    });
}

} // namespace rf::model_writer
