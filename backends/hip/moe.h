// Mixture-of-experts ops on the GPU (kernels/matmul_id.hip): MOE_WEIGHTS, MATMUL_ID, MOE_SUM
// (TOPK: select_ops.h). ops.cpp's supports_op and dispatch hand these ops here.
#pragma once
#include <string>
#include <vector>

#include "backend.h"

namespace rf_hip {

bool is_moe_op(int op);
// Empty when the node is supported, else the reason.
std::string moe_unsupported_reason(const rf_node &n);
int run_moe_node(Backend &b, const rf_node &n, std::string &err);
// Whether a supported MATMUL_ID runs on the routed-column dp4a kernels (its activations read as
// q8_1 columns, ensure_q8_columns).
bool matmul_id_reads_q8_columns(const rf_node &n);
// The kernels run_moe_node may launch (a pack must hold them).
std::vector<std::string> moe_kernel_names();

} // namespace rf_hip
