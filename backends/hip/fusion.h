// Node fusion for decode steps: runs of tiny launches replaced by one kernel that still writes
// every node's result (so no other reader can tell). Only fuses when ROCMFORGE_HIP_FUSE != 0.
#pragma once
#include <string>

#include "backend.h"

namespace rf_hip {

// Tries the patterns at nodes[i]:
//  - several columns on the integer tensor cores: the joined projections of fusion_mmq.h;
//  - ATTENTION of one token that also writes the q8_1 column of its output for the matmul next.
// The kernel packs' fusions (pack_fusion.h) are tried first and cover the rest of a decode layer:
// [ADD] RMS_NORM MUL with the q8_1 columns of the product, a layer's projections with their ropes
// and K/V appends, MATMUL MATMUL SWIGLU and MATMUL ROPE on the dp4a vector and column kernels,
// SWIGLU with the q8_1 columns of its product, SET_ROWS SET_ROWS into f16/f32 pools
// (plugins/packs/*.c). The patterns here need more than a claim can say: several launches, the
// attention's own scratch.
// Every pattern covers consecutive nodes only (none is launched ahead of its turn).
// Returns the number of consecutive nodes consumed (0: no pattern here, run nodes[i] alone),
// or -1 with `err` set.
int fuse_at(Backend &b, const rf_graph &g, int i, std::string &err);

} // namespace rf_hip
