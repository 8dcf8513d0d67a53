// deepseek2 shapes for mkmodel (internal to core/model_writer): the table entries, the tensors
// and the keys as llama.cpp's converter (DeepseekV2Model / DeepseekV3Model) writes them.
#pragma once
#include <vector>

#include "rocmforge/gguf.h"
#include "rocmforge/model_shapes.h"

namespace rf {

void add_deepseek2_shapes(std::vector<ModelShape> &table);
std::vector<ShapeTensor> deepseek2_tensors(const ModelShape &s);
// The deepseek2 keys beyond the llama ones (set_llama_hparam_keys).
void set_deepseek2_keys(gguf::Writer &w, const ModelShape &s);

} // namespace rf
