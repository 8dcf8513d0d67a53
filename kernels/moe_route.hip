// A mixture of experts' routing after its router matmul, TOPK then MOE_WEIGHTS of the same
// logits, in one launch (the "moe_route" pack fusion): a warp per token row finds the k experts
// as rf_topk_f32 does, then their weights as rf_moe_weights_f32 does, from the ids it has just
// stored (the same bits as the two launches). One launch of a few microseconds less per layer.
// Arguments: src[0] = the logits [E, M] (E <= 512), dst = the ids [k, M] (i32), src[1] = the
// weights [k, M] (f32, the MOE_WEIGHTS node's output), moe_weights.over_chosen. Grid M, 32 threads.
#include "select_rows.hip"
#include "matmul_id.hip"

RF_KERNEL __launch_bounds__(32) void rf_moe_route_f32(rf_kargs a) {
    rf_kernel_start();
    topk_warp_row(a.src[0], a.dst, blockIdx.x);
    __syncthreads(); // lane 0's ids, visible to the block (one warp): portable to HIP on AMD
    moe_weights_warp_row(a.src[0], a.dst, a.src[1], a.moe_weights.over_chosen, blockIdx.x);
}
