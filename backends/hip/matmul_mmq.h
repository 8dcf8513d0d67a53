// Quantized matmuls of a few to a few dozen activation columns on the integer tensor cores
// (kernels/matmul_mmq.hip): batched decode of many sequences, short prompts.
#pragma once
#include <string>
#include <vector>

#include "backend.h"
#include "kernel_args.h"
#include "rocmforge/pack_abi.h"

namespace rf_hip {

// True where matmul_mmq takes this MATMUL node (weight type, column count, alignment, arch).
bool mmq_usable(const Backend &b, const rf_node &n);
// Quantizes the activation columns (q8_1, shared with the dp4a kernels) and launches the
// integer tensor-core kernel(s).
int matmul_mmq(Backend &b, const rf_node &n, std::string &err);
// The launch matmul_mmq makes for n (mmq_usable): kernel, grid, K split and the kernel's tuning
// members (rf_pack_device.matmul_tiles, ABI 2.7). The kernel name stays valid for the process. A
// pack's joined launch over several matrices (plugins/packs/proj_runs.c; the kernel's segments on
// grid z) keeps each matrix's tiles, so it writes the same bits as separate launches.
void mmq_tiles(const Backend &b, const rf_node &n, rf_matmul_tiles &t);
// The same for prefill-sized column counts (more than 64): rf_mmqp_* (matmul_mmq_prefill.hip).
bool mmqp_usable(const Backend &b, const rf_node &n);
int matmul_mmqp(Backend &b, const rf_node &n, std::string &err);
// MATMUL_ID prefill on the same tiles with columns grouped by expert (rf_mmqp_id_*; the
// grouping: moe_grouped.cpp). True where the kernels take weights w [K, N, E] (type, alignment,
// arch); always false on AMD.
bool mmqp_id_usable(const Backend &b, const rf_tensor *w);
// Columns per tile (64 or 128) for weight type `type` and `pairs` (token, slot) columns routed
// over `experts` experts.
int mmqp_id_cols(const Backend &b, int type, int64_t pairs, int64_t experts);
// Launches rf_mmqp_id_<type>_<cols> over `tiles` tile entries (grid y) with the caller's
// arguments (src[0] the weights, src[1].data the group scratch, scratch unused, aux[0..2]).
int launch_mmqp_id(Backend &b, const rf_tensor *w, int cols, int64_t tiles, rf_kargs &a, std::string &err);
// The kernels matmul_mmq, matmul_mmqp and launch_mmqp_id may launch (the pack must hold them).
std::vector<std::string> mmq_kernel_names();

} // namespace rf_hip
