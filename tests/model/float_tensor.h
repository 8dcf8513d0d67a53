// The reference models' tensors: float values (already rounded to the file type) written into a
// GGUF as F16 or F32, shared by the decoder (tiny_model.cpp) and encoder (tiny_encoder.cpp) writers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "rocmforge/gguf.h"

void add_float_tensor(rf::gguf::Writer &wr, const std::string &name, std::vector<int64_t> ne, std::vector<float> vals, int type);
