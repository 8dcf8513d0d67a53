// See fusion_match.h.
#include "fusion_match.h"

#include <cstring>

#include "ops.h"

namespace rf_hip {

bool plain_f32(const rf_tensor *t) { return t && t->type == RF_TYPE_F32 && t->nb[0] == 4; }
bool same_shape(const rf_tensor *a, const rf_tensor *b) { return std::memcmp(a->ne, b->ne, sizeof a->ne) == 0; }
bool overlap(const rf_tensor *a, const rf_tensor *b) {
    if (!a || !b || !a->data || !b->data) return false;
    const auto x = (uintptr_t)a->data, y = (uintptr_t)b->data;
    return x < y + byte_extent(b) && y < x + byte_extent(a);
}
bool dense_f32(const rf_tensor *t) {
    return plain_f32(t) && t->nb[1] == 4 * t->ne[0] && t->nb[2] == t->nb[1] * t->ne[1] && t->nb[3] == t->nb[2] * t->ne[2];
}

bool rope_of_product(const rf_node *mm, const rf_node *rp) {
    if (rp->op != RF_OP_ROPE || !unsupported_reason(*rp).empty()) return false;
    const rf_tensor *md = mm->dst, *rx = rp->src[0], *rd = rp->dst, *pos = rp->src[1];
    const int64_t N = md->ne[0], D = rx->ne[0], M = md->ne[1];
    return rp->iparams[0] == RF_ROPE_NORMAL && rx->data == md->data && dense_f32(rx) && dense_f32(rd) && same_shape(rx, rd) &&
           rx->ne[0] * rx->ne[1] == N && rx->ne[2] == M && rx->ne[3] == 1 && pos->ne[0] == M && N % 4 == 0 && D % 2 == 0 &&
           (!overlap(rd, md) || rd->data == md->data) && !overlap(rd, mm->src[0]) && !overlap(rd, pos) && !overlap(rd, rp->src[2]) &&
           (mm->src[0]->type != RF_TYPE_F16 || !overlap(rd, mm->src[1])); // F16: the kernel reads x itself
}

bool pool_append(const rf_node *n) {
    const rf_tensor *x = n->src[0], *s = n->src[1], *p = n->dst;
    return n->op == RF_OP_SET_ROWS && unsupported_reason(*n).empty() && plain_f32(x) && x->ne[2] * x->ne[3] == 1 &&
           s->ne[0] == x->ne[1] && (p->type == RF_TYPE_F16 || p->type == RF_TYPE_F32);
}

} // namespace rf_hip
