// Fast random K-quant tensors for `rocmforge mkmodel`. The K-quant reference quantizers search
// scales per sub-block and cost 50-200 ns per weight (a llama2-7b Q4_K_M model would take ~10
// minutes on two cores), while every 256-weight super-block is self-contained (its own scales).
// So a pool of super-blocks is quantized once with rf::quantize_row from normal random floats,
// and each tensor row is assembled from pool blocks picked by the row's seeded generator: every
// block is a genuine quantization of normal(mean, stddev) data and rows still differ, at the
// cost of a memcpy per block.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rf::model_writer {

// True for the types worth pooling (the K-quants and the 256-element grid i-quants, whose
// searches cost even more); the others are quantized row by row.
bool use_block_pool(int type);

class BlockPool {
public:
    static constexpr int64_t kDefaultBlocks = 16384;

    // Quantizes n_blocks blocks of normal(mean, stddev) values from the stream `pool_seed`;
    // unit_importance: with importance weights all 1 (mkmodel's synthetic importance matrix).
    BlockPool(int type, uint64_t pool_seed, float mean, float stddev, int n_threads,
              bool unit_importance = false, int64_t n_blocks = kDefaultBlocks);

    // Writes one row of row_len elements (a multiple of the block size): the pool blocks chosen
    // by row_rng(stream_seed, row).
    void fill_row(uint8_t *dst, int64_t row_len, uint64_t stream_seed, uint64_t row) const;

private:
    int type_;
    int64_t block_elems_;
    size_t block_bytes_;
    uint32_t n_blocks_;
    std::vector<uint8_t> blocks_;
};

} // namespace rf::model_writer
