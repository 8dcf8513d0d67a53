// See fusion.h. Patterns are matched on data pointers and shapes (the graph has no tensor ids).
#include "fusion.h"

#include "fusion_match.h"
#include "ops.h"

namespace rf_hip {
namespace {

// An M = 1 matmul with one weight matrix and one vector on the vector kernels: q8_1 weights, or
// F16 weights whose rows are dotted with the f32 vector itself (rf_mv_f16's mv_f16_dot).
bool vec_matmul(const rf_node *n) {
    if (!matmul_reads_q8(*n) && !matmul_on_mv_f16(*n)) return false;
    const rf_tensor *w = n->src[0], *x = n->src[1], *d = n->dst;
    return x->ne[2] * x->ne[3] == 1 && w->ne[2] * w->ne[3] == 1 && dense_f32(d) && w->ne[0] % 32 == 0 &&
           w->ne[1] <= (int64_t)1 << 30;
}
// ATTENTION (decode, one token) whose output an M = 1 matmul reads next: the attention kernel
// also writes the q8_1 copy (no separate quantize launch); the matmul then finds it cached.
int fuse_attention_q8(Backend &b, const rf_graph &g, int i, std::string &err) {
    if (i + 1 >= g.n_nodes) return 0;
    const rf_node *at = g.nodes[i], *mm = g.nodes[i + 1];
    if (!matmul_reads_q8(*mm) || !vec_matmul(mm) || mm->src[1]->data != at->dst->data || mm->src[1]->ne[0] != at->dst->ne[0]) return 0;
    const int r = attention_with_q8(b, *at, act_block(mm->src[0]->type), err);
    return r == RF_OK ? 1 : r == RF_ERR_OUT_OF_MEMORY ? -1 : 0;
}

} // namespace

int fuse_at(Backend &b, const rf_graph &g, int i, std::string &err) {
    if (g.nodes[i]->op == RF_OP_ATTENTION) return b.fuse_beyond_norm ? fuse_attention_q8(b, g, i, err) : 0;
    return 0;
}

} // namespace rf_hip
