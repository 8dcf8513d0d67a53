#include "device_tensor.h"

#include <algorithm>
#include <cstring>
#include <random>

#include "rocmforge/error.h"
#include "rocmforge/graph.h"
#include "rocmforge/types.h"

namespace rfbench {

DeviceTensor::DeviceTensor(rf::Backend &backend, int type, std::initializer_list<int64_t> ne) : backend_(backend) {
    rf::init_tensor_layout(t_, type, ne);
    bytes_ = uint64_t(t_.nb[1]) * uint64_t(t_.ne[1] * t_.ne[2] * t_.ne[3]);
    buf_ = backend_.alloc(bytes_);
    t_.data = buf_.base;
    t_.buffer = buf_.handle;
}

DeviceTensor::~DeviceTensor() { backend_.free(buf_); }

void DeviceTensor::fill(const void *host, uint64_t n) { backend_.upload(t_.data, host, std::min(n, bytes_)); }

void DeviceTensor::fill_random(uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    const int64_t row_len = t_.ne[0];
    const uint64_t row_bytes = uint64_t(t_.nb[1]);
    const uint64_t rows = bytes_ / row_bytes;
    // Quantize a few distinct rows, then tile them over the whole tensor.
    const uint64_t distinct = std::min<uint64_t>(rows, 16);
    std::vector<uint8_t> pattern(distinct * row_bytes);
    std::vector<float> f(static_cast<size_t>(row_len));
    for (uint64_t r = 0; r < distinct; ++r) {
        for (auto &v : f) v = dist(rng);
        uint8_t *dst = pattern.data() + r * row_bytes;
        switch (t_.type) {
        case RF_TYPE_F32: std::memcpy(dst, f.data(), row_bytes); break;
        case RF_TYPE_F16:
            for (int64_t i = 0; i < row_len; ++i) {
                const uint16_t h = rf::fp32_to_fp16(f[size_t(i)]);
                std::memcpy(dst + 2 * i, &h, 2);
            }
            break;
        case RF_TYPE_BF16:
            for (int64_t i = 0; i < row_len; ++i) {
                const uint16_t h = rf::fp32_to_bf16(f[size_t(i)]);
                std::memcpy(dst + 2 * i, &h, 2);
            }
            break;
        default:
            if (!rf::can_quantize(t_.type))
                throw rf::Error(std::string("bench: cannot fill a tensor of type ") + rf::type_name(t_.type));
            rf::quantize_row(t_.type, f.data(), dst, row_len);
        }
    }
    // Upload in chunks of whole patterns.
    const uint64_t chunk_rows = std::max<uint64_t>(distinct, (64ull << 20) / row_bytes / distinct * distinct);
    std::vector<uint8_t> chunk(std::min(rows, chunk_rows) * row_bytes);
    for (uint64_t off = 0; off < chunk.size(); off += pattern.size())
        std::memcpy(chunk.data() + off, pattern.data(), std::min<uint64_t>(pattern.size(), chunk.size() - off));
    for (uint64_t r = 0; r < rows; r += chunk_rows) {
        const uint64_t n = std::min(chunk_rows, rows - r) * row_bytes;
        backend_.upload(static_cast<uint8_t *>(t_.data) + r * row_bytes, chunk.data(), n);
    }
}

} // namespace rfbench
