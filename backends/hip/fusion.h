// Node fusion for decode steps: runs of tiny launches replaced by one kernel that still writes
// every node's result (so no other reader can tell). Only fuses when ROCMFORGE_HIP_FUSE != 0.
#pragma once
#include <string>

#include "backend.h"

namespace rf_hip {

// Tries the one pattern still built in at nodes[i]: ATTENTION of one token that also writes the
// q8_1 column of its output for the matmul next (into the attention's own scratch, which only the
// backend sizes).
// The kernel packs' fusions (pack_fusion.h) are tried first and cover the rest of a decode layer:
// [ADD] RMS_NORM MUL with the q8_1 columns of the product, a layer's projections with their ropes
// and K/V appends (on the dp4a vector kernels, and over several tokens on the tensor-core tiles),
// MATMUL MATMUL SWIGLU and MATMUL ROPE on the dp4a vector and column kernels, SWIGLU with the q8_1
// columns of its product, SET_ROWS SET_ROWS into f16/f32 pools (plugins/packs/*.c).
// Every pattern covers consecutive nodes only (none is launched ahead of its turn).
// Returns the number of consecutive nodes consumed (0: no pattern here, run nodes[i] alone),
// or -1 with `err` set.
int fuse_at(Backend &b, const rf_graph &g, int i, std::string &err);

} // namespace rf_hip
