#include "block_pool.h"

#include <cstring>

#include "parallel_rows.h"
#include "random_weights.h"
#include "rocmforge/abi.h"
#include "rocmforge/error.h"
#include "rocmforge/types.h"

namespace rf::model_writer {

bool use_block_pool(int type) {
    switch (type) {
    case RF_TYPE_Q2_K:
    case RF_TYPE_Q3_K:
    case RF_TYPE_Q4_K:
    case RF_TYPE_Q5_K:
    case RF_TYPE_Q6_K:
    case RF_TYPE_IQ2_XXS:
    case RF_TYPE_IQ2_XS:
    case RF_TYPE_IQ2_S:
    case RF_TYPE_IQ3_XXS:
    case RF_TYPE_IQ3_S:
    case RF_TYPE_IQ1_S:
    case RF_TYPE_IQ1_M: return true;
    default: return false;
    }
}

BlockPool::BlockPool(int type, uint64_t pool_seed, float mean, float stddev, int n_threads,
                     bool unit_importance, int64_t n_blocks)
    : type_(type) {
    const TypeTraits *t = type_traits(type);
    if (!t || !t->quantized || n_blocks <= 0 || n_blocks > int64_t(UINT32_MAX))
        throw Error("block pool: bad type " + std::to_string(type) + " or size " +
                    std::to_string(n_blocks));
    block_elems_ = t->block_size;
    block_bytes_ = t->type_size;
    n_blocks_ = uint32_t(n_blocks);
    blocks_.resize(block_bytes_ * size_t(n_blocks));
    const std::vector<float> ones(static_cast<size_t>(block_elems_), 1.0f);
    parallel_for_rows(n_blocks, n_threads, [&](int, int64_t begin, int64_t end) {
        std::vector<float> f(static_cast<size_t>(block_elems_));
        for (int64_t b = begin; b < end; ++b) {
            fill_normal_row(f.data(), block_elems_, pool_seed, uint64_t(b), mean, stddev);
            quantize_row_weighted(type_, f.data(), blocks_.data() + size_t(b) * block_bytes_, block_elems_,
                                  unit_importance ? ones.data() : nullptr);
        }
    });
}

void BlockPool::fill_row(uint8_t *dst, int64_t row_len, uint64_t stream_seed, uint64_t row) const {
    Xoshiro256Plus rng = row_rng(stream_seed, row);
    const int64_t n = row_len / block_elems_;
    for (int64_t i = 0; i < n; ++i)
        std::memcpy(dst + size_t(i) * block_bytes_, blocks_.data() + size_t(rng.below(n_blocks_)) * block_bytes_,
                    block_bytes_);
}

} // namespace rf::model_writer
