// Prefill matmuls of F16 weights on the tensor cores with staged asynchronous copies
// (kernels/matmul_h16.hip), NVIDIA sm_80+.
#pragma once
#include <string>
#include <vector>

#include "backend.h"

namespace rf_hip {

// True where matmul_h16 takes this MATMUL node (F16 weights, f32 activations, M >= 16 tokens,
// K % 32 == 0, 16-byte aligned rows, arch).
bool h16_usable(const Backend &b, const rf_node &n);
// Converts the activations to f16 rows once per source (cached like the quantized copies) and
// launches rf_mm_h16_<BM>.
int matmul_h16(Backend &b, const rf_node &n, std::string &err);
// The kernels matmul_h16 may launch (the pack must hold them); empty where it never runs.
std::vector<std::string> h16_kernel_names();

} // namespace rf_hip
