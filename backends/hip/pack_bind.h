// A fusion's claim (rocmforge/pack_abi.h) turned into a kernel argument block: the covered
// nodes' tensors bound into rf_kargs slots. No GPU call, so rocmforge-pack-check binds exactly as
// the backend does.
#pragma once
#include <string>

#include "rocmforge/pack_abi.h"

namespace rf_hip {

// The kernels' view of a tensor (kernel_args.h); a null tensor gives an empty one.
rf_ktensor ktensor(const rf_tensor *t);

// Checks what a claim returned (`count` nodes from `first`, the launch geometry, every tensor
// reference naming a covered node's existing tensor) and builds `out`; "" or the reason the claim
// is invalid (a pack bug: the caller reports it with the fusion's name).
std::string bind_claim(const rf_graph &g, int first, int count, const rf_fusion_launch &l, rf_kargs &out);

} // namespace rf_hip
