// The fusions of loaded kernel packs (kernel_pack.h) offered the graph during compute(), before
// the backend's own fusions (fusion.h) and kernels.
#pragma once
#include <string>

#include "backend.h"

namespace rf_hip {

// Offers nodes[i..] to every pack fusion that starts at nodes[i]'s op, in load order. The first
// claim queues its launch and returns the number of nodes it covers; 0: none claimed; -1 with
// `err` naming the pack and fusion when a claim is invalid (a pack bug); -2 with `err` when the
// q8_1 columns it writes find no device memory.
int pack_claim_at(Backend &b, const rf_graph &g, int i, std::string &err);

// rf_pack_device.matmul_form (ABI 2.6): the form the backend runs a MATMUL in by itself
// (dispatch_node's choice), so a pack's matmul fusion replaces only launches of its kernels.
int32_t pack_matmul_form(const rf_pack_device *d, const rf_node *n);
// rf_pack_device.matmul_tiles (ABI 2.7): the tensor-core tile launch matmul_mmq would make for a
// MATMUL it takes (dispatch_node's choice; 0 for any other, and with the matmul fusions off).
int32_t pack_matmul_tiles(const rf_pack_device *d, const rf_node *n, rf_matmul_tiles *t);

} // namespace rf_hip
