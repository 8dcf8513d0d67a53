// Qwen3.5's mkmodel shapes, tensors and keys (model_shapes_qwen35.cpp).
#pragma once
#include <vector>

#include "rocmforge/gguf.h"
#include "rocmforge/model_shapes.h"

namespace rf {

void add_qwen35_shapes(std::vector<ModelShape> &table);
std::vector<ShapeTensor> qwen35_tensors(const ModelShape &s);
// The keys llama.cpp's converter adds for qwen35 / qwen35moe (after the llama ones).
void set_qwen35_keys(gguf::Writer &w, const ModelShape &s);

} // namespace rf
