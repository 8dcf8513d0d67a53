// Quantized matmuls of a few to a few dozen activation columns on the integer tensor cores
// (kernels/matmul_mmq.hip): batched decode of many sequences, short prompts.
#pragma once
#include <string>
#include <vector>

#include "backend.h"
#include "kernel_args.h"

namespace rf_hip {

// True where matmul_mmq takes this MATMUL node (weight type, column count, alignment, arch).
bool mmq_usable(const Backend &b, const rf_node &n);
// Quantizes the activation columns (q8_1, shared with the dp4a kernels) and launches the
// integer tensor-core kernel(s).
int matmul_mmq(Backend &b, const rf_node &n, std::string &err);
// One launch over up to kMmqMaxSegments matmuls that mmq_usable takes (a layer's K / V / Q or
// gate / up projections), each pair mmq_joinable: fewer launches and one grid for all. The
// caller checks that no output overlaps another or any input (the order of the products is
// then free).
constexpr int kMmqMaxSegments = 3;
// Optionally one segment's outputs are also appended to an f16/f32 cache pool as SET_ROWS(pool,
// product, slots) would (the V append of sequences decoding together): column m into row slots[m].
struct MmqAppend {
    const rf_tensor *pool = nullptr, *slots = nullptr;
    int segment = -1;
};
int matmul_mmq_segments(Backend &b, const rf_node *const *mm, int count, std::string &err, const MmqAppend *append = nullptr);
// Same weight type, K and K split (so the joined launch computes every output bit as separate
// ones would), the same activation tensor, an f32 output of `c` with 4-byte elements and a
// column stride below 2 GiB (the kernel takes it as a 32-bit parameter).
bool mmq_joinable(const Backend &b, const rf_node &a, const rf_node &c);
// ROCMFORGE_HIP_MMQ_SEGMENTS=0 turns the joined launches off (A/B); on by default.
bool mmq_segments_on();
// The same for prefill-sized column counts (more than 64): rf_mmqp_* (matmul_mmq_prefill.hip).
bool mmqp_usable(const Backend &b, const rf_node &n);
int matmul_mmqp(Backend &b, const rf_node &n, std::string &err);
// MATMUL_ID prefill on the same tiles with columns grouped by expert (rf_mmqp_id_*; the
// grouping: moe_grouped.cpp). True where the kernels take weights w [K, N, E] (type, alignment,
// arch); always false on AMD.
bool mmqp_id_usable(const Backend &b, const rf_tensor *w);
// Columns per tile (64 or 128) for weight type `type` and `pairs` (token, slot) columns routed
// over `experts` experts.
int mmqp_id_cols(int type, int64_t pairs, int64_t experts);
// Launches rf_mmqp_id_<type>_<cols> over `tiles` tile entries (grid y) with the caller's
// arguments (src[0] the weights, src[1].data the group scratch, scratch unused, aux[0..2]).
int launch_mmqp_id(Backend &b, const rf_tensor *w, int cols, int64_t tiles, rf_kargs &a, std::string &err);
// The kernels matmul_mmq, matmul_mmqp and launch_mmqp_id may launch (the pack must hold them).
std::vector<std::string> mmq_kernel_names();

} // namespace rf_hip
