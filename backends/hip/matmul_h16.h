// Prefill matmuls of F16 weights on the tensor cores with staged asynchronous copies
// (kernels/matmul_h16.hip, NVIDIA sm_80+; on sm_90a wgmma, kernels/matmul_h16_wgmma.hip), and on
// sm_90a those of Q4_0 / Q8_0 weights dequantized to f16 in shared memory (the same file).
#pragma once
#include <string>
#include <vector>

#include "backend.h"
#include "kernel_args.h"

namespace rf_hip {

// True where matmul_h16 takes this MATMUL node (F16 weights, f32 activations, M >= 16 tokens,
// K % 32 == 0, 16-byte aligned rows, arch).
bool h16_usable(const Backend &b, const rf_node &n);
// Converts the activations to f16 rows once per source (cached like the quantized copies) and
// launches rf_mm_h16_<BM>.
int matmul_h16(Backend &b, const rf_node &n, std::string &err);
// Prefill of quantized weights (Q4_0, Q8_0, MXFP4, the i-quants and ternary formats; Q4_K, Q5_K,
// Q6_K as Backend::q16w_kquants says) on the wgmma tiles with the weights dequantized to f16 in
// shared memory (rf_mm_q16w_<type>_t<R>_k<KS>, sm_90a): true from Backend::q16w_min tokens on
// (option q16w_min_tokens), batch 1, where the module has wgmma.
bool q16w_usable(const Backend &b, const rf_node &n);
// Converts the activations to f16 rows (as matmul_h16) and launches rf_mm_q16w_<type>_t<R>_k<KS>
// (the token tile and K split chosen per shape).
int matmul_q16w(Backend &b, const rf_node &n, std::string &err);
// MATMUL_ID prefill of F16 experts on the same tiles, columns grouped by expert
// (rf_mm_h16_id_64; the grouping: moe_grouped.cpp). True where the kernel takes weights w
// [K, N, E] (K % 32 == 0, 16-byte aligned rows, arch); always false on AMD.
bool h16_id_usable(const Backend &b, const rf_tensor *w);
// The grouped MATMUL_ID prefill of the formats with no rf_mmqp_id_* tiles (MXFP4, the i-quants,
// the ternary formats) on the dequantizing wgmma tiles (rf_mm_q16w_id_<type>, sm_90a; tiles of
// RF_H16W_BM columns). True where the kernel takes weights w.
bool q16w_id_usable(const Backend &b, const rf_tensor *w);
int launch_q16w_id(Backend &b, const rf_tensor *w, int64_t tiles, rf_kargs &a, std::string &err);
// Launches rf_mm_h16_id_64 over `tiles` tile entries (grid x) with the caller's arguments
// (src[0] the weights, src[1].data the group scratch, aux[0..2]).
int launch_h16_id(Backend &b, const rf_tensor *w, int64_t tiles, rf_kargs &a, std::string &err);
// The kernels matmul_h16 and launch_h16_id may launch (the pack must hold them); empty where
// they never run.
std::vector<std::string> h16_kernel_names();

} // namespace rf_hip
