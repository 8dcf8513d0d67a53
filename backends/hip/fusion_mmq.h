// Joined integer tensor-core launches for sequences decoding together (mmq_usable: 5..64 columns
// on NVIDIA): a layer's K / V / Q projections (with their ropes) or its gate / up projections as
// one rf_mmq launch per weight type (matmul_mmq_segments) instead of one per matrix.
#pragma once
#include <string>

#include "backend.h"

namespace rf_hip {

// MATMUL [ROPE] MATMUL [ROPE] [MATMUL [ROPE]] at nodes[i], every matmul of the same activation
// columns and one that matmul_mmq takes, the ropes rotating their matmul's whole product, and the
// K / V appends (SET_ROWS SET_ROWS into f16/f32 pools) that may follow. Returns the nodes covered
// (0: no such run, or no two matmuls of one weight type in it), -1 with `err`.
// ROCMFORGE_HIP_MMQ_APPEND=0 leaves the appends to their own launch (A/B).
int fuse_mmq_run(Backend &b, const rf_graph &g, int i, std::string &err);

} // namespace rf_hip
