// Quantized matmuls of a few to a few dozen activation columns on the integer tensor cores
// (kernels/matmul_mmq.hip): batched decode of many sequences, short prompts.
#pragma once
#include <string>
#include <vector>

#include "backend.h"

namespace rf_hip {

// True where matmul_mmq takes this MATMUL node (weight type, column count, alignment, arch).
bool mmq_usable(const Backend &b, const rf_node &n);
// Quantizes the activation columns (q8_1, shared with the dp4a kernels) and launches the
// integer tensor-core kernel(s).
int matmul_mmq(Backend &b, const rf_node &n, std::string &err);
// The same for prefill-sized column counts (more than 64): rf_mmqp_* (matmul_mmq_prefill.hip).
bool mmqp_usable(const Backend &b, const rf_node &n);
int matmul_mmqp(Backend &b, const rf_node &n, std::string &err);
// The kernels matmul_mmq and matmul_mmqp may launch (the pack must hold them).
std::vector<std::string> mmq_kernel_names();

} // namespace rf_hip
