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

// The tensor whose q8_1 columns the claim's launch can write (ABI 2.4, rf_fusion_launch.q8_of;
// *x = null when it offers none): "" or the reason the offer is invalid (aux indices outside
// 0..3 or equal, not an f32 tensor of rows with K % 32 == 0 elements).
std::string bind_q8(const rf_graph &g, int first, int count, const rf_fusion_launch &l, const rf_tensor **x);
// The columns lent into the argument block (scratch = column 0, the stride and the block into the
// launch's aux slots), or, with block 0, none (scratch null, both slots 0).
void lend_q8(const rf_fusion_launch &l, void *scratch, int64_t stride, int block, rf_kargs &out);

} // namespace rf_hip
