// MATMUL_ID prefill with the columns grouped by expert on the GPU (kernels/moe_group.hip) and
// multiplied on the integer tensor-core prefill tiles (rf_mmqp_id_*), one launch for all experts.
#pragma once
#include <string>
#include <vector>

#include "backend.h"

namespace rf_hip {

// True where matmul_id_grouped takes this (supported) MATMUL_ID node: NVIDIA sm_80+, weight types
// of the prefill kernels, at least ROCMFORGE_HIP_MOE_GROUP_MIN (default 64) (token, slot) columns.
bool matmul_id_grouped_usable(const Backend &b, const rf_node &n);
int matmul_id_grouped(Backend &b, const rf_node &n, std::string &err);
// The kernels matmul_id_grouped launches besides mmq_kernel_names()'s (the pack must hold them).
std::vector<std::string> moe_group_kernel_names();

} // namespace rf_hip
