// Op dispatch: which nodes the GPU kernels cover (supports_op) and how each is launched.
#pragma once
#include <string>
#include <vector>

#include "backend.h"

namespace rf_hip {

// Every kernel the dispatcher may launch: a pack must contain all of them.
std::vector<std::string> required_kernel_names();
// Empty when supported, else the reason.
std::string unsupported_reason(const rf_node &n);
int run_node(Backend &b, const rf_node &n, std::string &err);
// True for an M = 1 matmul that runs on q8_1 activations (fusion may prepare them).
bool matmul_reads_q8(const rf_node &n);

} // namespace rf_hip
