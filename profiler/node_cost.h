// What one node costs on paper: bytes it moves and floating-point operations it performs, plus
// the human-readable shape/type strings used as the per-op table's grouping key.
#pragma once
#include <cstdint>
#include <string>

#include "rocmforge/abi.h"

namespace rfprof {

const char *op_name(int op);

// Bytes a tensor occupies if stored contiguously (rows of ne[0] elements); 0 for unknown types.
double tensor_bytes(const rf_tensor *t);

struct NodeCost {
    double bytes = 0; // src + dst bytes actually touched (see node_cost.cpp for the special cases)
    double flops = 0; // matmul 2*K*N*M, attention ~4*D*n_kv*Hq*T, elementwise: one per element
};
NodeCost node_cost(const rf_node &node);

// "[4096,4096] x [4096,1]" style: the shapes of the sources (dst for source-less nodes).
std::string node_shapes(const rf_node &node);
// "q4_K,f32": the types of the sources.
std::string node_dtypes(const rf_node &node);

} // namespace rfprof
