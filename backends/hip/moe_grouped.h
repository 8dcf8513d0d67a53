// MATMUL_ID prefill with the columns grouped by expert on the GPU (kernels/moe_group.hip) and
// multiplied on the tensor-core prefill tiles (rf_mmqp_id_* for Q4_K/Q5_K/Q6_K/Q4_0/Q8_0,
// rf_mm_h16_id_64 for F16), one launch for all experts.
#pragma once
#include <string>
#include <vector>

#include "backend.h"

namespace rf_hip {

// True where matmul_id_grouped takes this (supported) MATMUL_ID node: NVIDIA sm_80+, weight types
// of those kernels, at most 512 experts, at least the option moe_group_min (default 64)
// (token, slot) columns.
bool matmul_id_grouped_usable(const Backend &b, const rf_node &n);
int matmul_id_grouped(Backend &b, const rf_node &n, std::string &err);
// The kernels matmul_id_grouped launches besides mmq_kernel_names()'s (the pack must hold them).
std::vector<std::string> moe_group_kernel_names();

} // namespace rf_hip
