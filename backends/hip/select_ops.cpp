// TOPK and GATHER (semantics: abi.h): checks and launches of kernels/select_rows.hip. TOPK over
// a mixture of experts' router logits (a few hundred entries) takes one warp per row
// (rf_topk_f32); over a vocabulary (a sampler's candidates) one block per row (rf_topk_rows_f32).
#include "select_ops.h"

#include "ops.h"

namespace rf_hip {

namespace {

constexpr int64_t kWarpTopkMax = 512; // rf_topk_f32 keeps a row in 16 keys a lane

bool dense_2d(const rf_tensor *t, int type) {
    return t && t->type == type && t->nb[0] == 4 && t->nb[1] == 4 * t->ne[0] && t->ne[2] == 1 && t->ne[3] == 1;
}

} // namespace

bool is_select_op(int op) { return op == RF_OP_TOPK || op == RF_OP_GATHER; }

std::string select_unsupported_reason(const rf_node &n) {
    const rf_tensor *s0 = n.src[0], *s1 = n.src[1], *d = n.dst;
    switch (n.op) {
    case RF_OP_TOPK:
        if (!dense_2d(s0, RF_TYPE_F32) || !dense_2d(d, RF_TYPE_I32)) return "topk needs dense f32 [E, M] -> i32 [k, M]";
        if (d->ne[1] != s0->ne[1] || d->ne[0] < 1 || d->ne[0] > s0->ne[0]) return "topk needs 1 <= k <= E";
        return s0->ne[0] < (1ll << 31) && d->ne[1] <= 0x7fffffff ? "" : "topk: rows too long or too many";
    case RF_OP_GATHER:
        if (!dense_2d(s0, RF_TYPE_F32) || !dense_2d(s1, RF_TYPE_I32) || !dense_2d(d, RF_TYPE_F32))
            return "gather needs dense f32 [E, M], i32 ids [k, M] -> f32 [k, M]";
        if (s1->ne[0] != d->ne[0] || s1->ne[1] != d->ne[1] || s0->ne[1] != d->ne[1]) return "gather shape mismatch";
        return s0->ne[0] < (1ll << 31) && d->ne[1] <= 0x7fffffff ? "" : "gather: rows too long or too many";
    default:
        return "not a selection op";
    }
}

int run_select_node(Backend &b, const rf_node &n, std::string &err) {
    rf_kargs a = make_args(n);
    const unsigned rows = (unsigned)n.dst->ne[1];
    switch (n.op) {
    case RF_OP_TOPK:
        if (n.src[0]->ne[0] <= kWarpTopkMax) return launch(b, "rf_topk_f32", rows, 1, 1, 32, a, err);
        return launch(b, "rf_topk_rows_f32", rows, 1, 1, 1024, a, err); // RF_TOPK_THREADS
    case RF_OP_GATHER: return launch(b, "rf_gather_f32", rows, 1, 1, 64, a, err);
    default:
        err = "op " + std::to_string(n.op) + " is not a selection op";
        return RF_ERR_UNSUPPORTED;
    }
}

std::vector<std::string> select_kernel_names() { return {"rf_topk_f32", "rf_topk_rows_f32", "rf_gather_f32"}; }

} // namespace rf_hip
