#include "float_tensor.h"

#include <algorithm>

#include "rocmforge/types.h"

void add_float_tensor(rf::gguf::Writer &wr, const std::string &name, std::vector<int64_t> ne, std::vector<float> vals, int type) {
    wr.add_tensor(name, type, ne, [vals = std::move(vals), type](uint8_t *dst) {
        if (type == RF_TYPE_F16) {
            auto *h = reinterpret_cast<uint16_t *>(dst);
            for (size_t i = 0; i < vals.size(); ++i) h[i] = rf::fp32_to_fp16(vals[i]);
        } else {
            std::copy(vals.begin(), vals.end(), reinterpret_cast<float *>(dst));
        }
    });
}
