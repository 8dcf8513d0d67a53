// See fusion.h. Patterns are matched on data pointers and shapes (the graph has no tensor ids).
#include "fusion.h"

#include <cstring>

#include "ops.h"

namespace rf_hip {
namespace {

bool plain_f32(const rf_tensor *t) { return t && t->type == RF_TYPE_F32 && t->nb[0] == 4; }
bool same_shape(const rf_tensor *a, const rf_tensor *b) { return std::memcmp(a->ne, b->ne, sizeof a->ne) == 0; }
bool is_row(const rf_tensor *t, int64_t K) { return t->ne[0] == K && t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1; }

rf_ktensor kt(const rf_tensor *t) {
    rf_ktensor k{};
    if (!t) return k;
    k.data = t->data;
    for (int i = 0; i < 4; ++i) { k.ne[i] = t->ne[i]; k.nb[i] = t->nb[i]; }
    k.type = t->type;
    return k;
}

} // namespace

int fuse_at(Backend &b, const rf_graph &g, int i, std::string &err) {
    const rf_node *add = nullptr, *norm = nullptr, *mul = nullptr;
    int at = i;
    const rf_node *n0 = g.nodes[at];
    if (n0->op == RF_OP_ADD) { add = n0; ++at; }
    if (at + 1 >= g.n_nodes) return 0;
    norm = g.nodes[at];
    mul = g.nodes[at + 1];
    if (norm->op != RF_OP_RMS_NORM || mul->op != RF_OP_MUL) return 0;
    const rf_tensor *x = norm->src[0], *nd = norm->dst, *w = mul->src[1];
    if (!plain_f32(x) || !plain_f32(nd) || !plain_f32(mul->dst) || !plain_f32(mul->src[0]) || !plain_f32(w)) return 0;
    const int64_t K = x->ne[0];
    if (mul->src[0]->data != nd->data || !same_shape(mul->src[0], nd) || !same_shape(mul->dst, nd) || !same_shape(x, nd) ||
        !is_row(w, K) || (size_t)w->data % 4)
        return 0;
    if (add) {
        const rf_tensor *s0 = add->src[0], *s1 = add->src[1], *ad = add->dst;
        if (!plain_f32(s0) || !plain_f32(s1) || !plain_f32(ad) || !same_shape(s0, ad) || !same_shape(s1, ad) ||
            ad->data != x->data || !same_shape(ad, x))
            return 0;
    }
    const int64_t rows = x->ne[1] * x->ne[2] * x->ne[3];
    if (rows <= 0 || rows > 65535) return 0;
    const int used = add ? 3 : 2;
    // The q8_1 vector for the following M = 1 matmuls (decode: Q/K/V or gate/up).
    const rf_node *next = i + used < g.n_nodes ? g.nodes[i + used] : nullptr;
    const bool quantize = rows == 1 && K % 32 == 0 && next && matmul_reads_q8(*next) && next->src[1]->data == mul->dst->data;
    const int64_t col = (K + K / 32 * 8 + 15) / 16 * 16;
    if (quantize && !ensure_scratch(b, b.act_scratch, std::max<uint64_t>(col, 1 << 20), false, err)) return -1;

    auto f = b.kernels.functions.find("rf_add_rms_norm_mul");
    if (f == b.kernels.functions.end()) return 0;
    LaunchRec r;
    r.f = f->second;
    r.grid[0] = (unsigned)rows;
    r.threads = 1024; // one block per row: latency-bound, so as many threads as a block takes
    rf_kargs &a = r.args;
    a.src[0] = kt(add ? add->src[0] : x);
    a.src[1] = kt(add ? add->src[1] : nullptr);
    a.src[2] = kt(w);
    a.src[3] = kt(add ? add->dst : nullptr);
    a.src[4] = kt(nd);
    a.dst = kt(mul->dst);
    a.fparams[0] = norm->fparams[0];
    if (quantize) {
        a.aux[0] = col;
        a.scratch = b.act_scratch.ptr;
    }
    b.queue.add(r);
    b.q8_src = quantize ? mul->dst->data : nullptr;
    b.q8_k = quantize ? K : 0;
    return used;
}

} // namespace rf_hip
