// Tensor tests the decode fusions (fusion.cpp, fusion_mmq.cpp) match patterns with. The graph has
// no tensor ids: patterns are matched on data pointers, shapes and strides.
#pragma once
#include <cstdint>

#include "rocmforge/abi.h"

namespace rf_hip {

bool plain_f32(const rf_tensor *t);                      // f32 with 4-byte elements
bool dense_f32(const rf_tensor *t);                      // plain_f32 and no gaps between rows / slices
bool same_shape(const rf_tensor *a, const rf_tensor *b); // equal ne[]
// The byte ranges of a and b intersect (byte_extent of each; null or data-less: no).
bool overlap(const rf_tensor *a, const rf_tensor *b);
// A ROPE NORMAL over the whole product of matmul mm, one token per column (what rf_mvq_proj and
// the rope forms rotate): rows in pairs, dense. The rotated rows may replace the product exactly,
// or lie on a q8_1 matmul's input vector (the kernels read only its q8_1 copy, made before the
// launch; an F16 matmul's launch reads the vector itself); no other overlap.
bool rope_of_product(const rf_node *mm, const rf_node *rp);
// A SET_ROWS of f32 rows into an f16/f32 pool (a KV append).
bool pool_append(const rf_node *n);

} // namespace rf_hip
