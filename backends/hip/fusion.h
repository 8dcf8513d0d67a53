// Node fusion for decode steps: runs of tiny launches replaced by one kernel that still writes
// every node's result (so no other reader can tell). Only fuses when ROCMFORGE_HIP_FUSE != 0.
#pragma once
#include <string>

#include "backend.h"

namespace rf_hip {

// Tries the patterns at nodes[i]:
//  - MATMUL MATMUL SWIGLU (gate, up over one vector) -> rf_mvq_multi in SwiGLU form; over 2..16
//    columns on the dp4a column kernels (sequences decoding together) -> rf_mvqn_<type>_<NC>f;
//  - MATMUL ROPE(NORMAL) over its output (K, Q), one token -> rf_mvq_multi in rope form, one
//    token per column on the column kernels -> rf_mvqn_<type>_<NC>f;
//  - several columns on the integer tensor cores: the joined projections of fusion_mmq.h;
//  - ATTENTION of one token that also writes the q8_1 column of its output for the matmul next.
// ([ADD] RMS_NORM MUL with the q8_1 columns of the product, SWIGLU with those of its product,
// and SET_ROWS SET_ROWS into f16/f32 pools are fusions of ROCmForge's kernel packs:
// plugins/packs/norm_fused.c, swiglu_q8.c, kv_append.c; they claim before these.)
// Every pattern covers consecutive nodes only (none is launched ahead of its turn).
// Returns the number of consecutive nodes consumed (0: no pattern here, run nodes[i] alone),
// or -1 with `err` set.
int fuse_at(Backend &b, const rf_graph &g, int i, std::string &err);

} // namespace rf_hip
