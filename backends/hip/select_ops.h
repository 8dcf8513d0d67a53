// Selection ops on the GPU (kernels/select_rows.hip): TOPK and GATHER. ops.cpp's supports_op and
// dispatch hand these ops here.
#pragma once
#include <string>
#include <vector>

#include "backend.h"

namespace rf_hip {

bool is_select_op(int op);
// Empty when the node is supported, else the reason.
std::string select_unsupported_reason(const rf_node &n);
int run_select_node(Backend &b, const rf_node &n, std::string &err);
// The kernels run_select_node may launch (a pack must hold them).
std::vector<std::string> select_kernel_names();

} // namespace rf_hip
