// Op dispatch: which nodes the GPU kernels cover (supports_op) and how each is launched.
#pragma once
#include <string>
#include <vector>

#include "backend.h"
#include "kernel_args.h"
#include "pack_bind.h" // ktensor

namespace rf_hip {

// The node's tensors and parameters as a kernel argument block.
rf_kargs make_args(const rf_node &n);
// Bytes from t->data to the end of its last row: (ne[d] - 1) * nb[d] per outer dim plus one row
// (scalar types: ne[0] elements; block types: nb[1]). A view of a larger tensor (one layer's
// part of a KV pool) gets its own extent, not the whole buffer's.
uint64_t byte_extent(const rf_tensor *t);
// mv.no_weight_prefetch of a decode matmul launch reading `bytes` of weights for `columns`
// activation columns: 0 = pull the weight rows into L2 before rf_kernel_start, 1 = not. By
// default only one column of a small model's matrix (TinyLlama's 2048 x 5632 Q4_K is 6.5 MB),
// whose launches are short enough for the prefetch to overlap the kernel before; a 7B model's
// (9.4-37 MB) lost speed with it (Backend::prefetch_weights). The packs' decode launches follow
// the same rule (pm_decode_input); MATMUL_ID counts the routed experts' rows (moe.cpp).
int no_weight_prefetch_bytes(const Backend &b, uint64_t bytes, int64_t columns);
// Data and row/slice strides all multiples of `a` bytes.
bool aligned(const rf_tensor *t, int64_t a);
// Kernel name suffix of a weight type ("q4_k", ...); null for types no matmul kernel reads.
const char *weight_suffix(int type);
// Compute capability of an NVIDIA arch string ("sm_90" -> 90); 0 for other archs.
int nvidia_sm(const std::string &arch);
// Queues a launch of kernel `name` (grid gx x gy x gz, `threads` per block, `smem` bytes of
// dynamic shared memory) for this compute().
int launch(Backend &b, const std::string &name, unsigned gx, unsigned gy, unsigned gz, unsigned threads, rf_kargs &args,
           std::string &err, unsigned smem = 0);


// Every kernel the dispatcher may launch: a pack must contain all of them.
std::vector<std::string> required_kernel_names();
// Empty when supported, else the reason.
std::string unsupported_reason(const rf_node &n);
int run_node(Backend &b, const rf_node &n, std::string &err);
// True for an M = 1 matmul that runs on q8_1 activations (fusion may prepare them).
bool matmul_reads_q8(const rf_node &n);
// True for an M = 1 matmul that runs on rf_mv_f16 (F16 weights, the f32 vector read as is).
bool matmul_on_mv_f16(const rf_node &n);
// True for a matmul of M > 1 columns that runs on q8_1 columns of its activations (dp4a column
// kernels, integer tensor cores): a fused norm may prepare them.
bool matmul_reads_q8_columns(const Backend &b, const rf_node &n);
// Activation columns one dp4a column kernel launch covers (rf_mvqn_<type>_<NC>x<R>, NC <= 8).
constexpr int64_t kMvqCols = 8;
// True for a matmul of M > 1 columns that dispatch runs on those kernels (matmul_cols_q8), so
// their fused forms (rf_mvqn_<type>_<NC>f) may replace it.
bool matmul_on_mvq_cols(const Backend &b, const rf_node &n);
// Block size (32 or 256) of the CPU backend's int8 activation quantization for a weight type,
// 0 where it multiplies f32 activations. The GPU quantizes the same way (quantize_act.hip).
int act_block(int type);
// Activations of the non-dp4a matmuls as the CPU backend quantizes them (block 32 or 256), or
// only rounded to f16 (block 0, half): dequantized rows in fq_scratch, f32 or (half) f16, dense.
// kx (the kernel's view of src1) is pointed there; reused while the source is unchanged.
int quantized_activations(Backend &b, const rf_tensor *x, int block, bool half, rf_ktensor &kx, std::string &err);
// Bytes of one q8_1 column of K elements in act_scratch.
int64_t q8_column_bytes(int64_t K);
// act_scratch grown to hold `rows` q8_1 columns of K elements (at least 1 MiB): for every kernel
// that writes them (rf_quantize_q8_1, the fused norm, rf_swiglu_q8_1).
bool ensure_q8_scratch(Backend &b, int64_t K, int64_t rows, std::string &err);
// Quantizes the rows of x (K elements each; ne1*ne2*ne3 columns, q8_column_bytes(K) apart) into
// act_scratch as q8_1 unless they are already there (b.q8).
int ensure_q8_columns(Backend &b, const rf_tensor *x, int block, std::string &err);
// The q8_1 block (32 or 256) in which node `next`, a matmul, reads the activation tensor x as
// q8_1 columns (one per row of x; ensure_q8_columns would make them), so that the launch writing
// x may write them too; 0 when `next` is past the graph, not such a matmul, or reads x otherwise.
int q8_columns_read_next(const Backend &b, const rf_graph &g, int next, const rf_tensor *x);
// Drops the cached quantized activations whose source bytes `written` overlaps.
void forget_overwritten(Backend &b, const rf_tensor *written);

} // namespace rf_hip
