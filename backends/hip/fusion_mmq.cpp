// See fusion_mmq.h.
#include "fusion_mmq.h"

#include <vector>

#include "fusion_match.h"
#include "matmul_mmq.h"
#include "ops.h"

namespace rf_hip {

// The run's matmuls are launched first, grouped by weight type, then its ropes in node order.
// That reorders the graph (a rope ran before the next matmul), which is the same computation
// when:
//  - no product overlaps another output (product or rotation), the activations, a weight or a
//    rope's positions / factors: a product is written while the others' inputs are still read;
//  - a rotation overlaps no other output and none of the ropes' inputs but its own product,
//    which it may replace exactly. It may lie on the activations: every launch reads their
//    q8_1 copy, made before the first one (one copy: the same activation block for all types).
int fuse_mmq_run(Backend &b, const rf_graph &g, int i, std::string &err) {
    if (!mmq_segments_on()) return 0;
    struct Seg { const rf_node *mm, *rp; };
    std::vector<Seg> segs;
    const rf_node *first = g.nodes[i];
    int j = i;
    while ((int)segs.size() < kMmqMaxSegments && j < g.n_nodes) {
        const rf_node *mm = g.nodes[j];
        if (mm->op != RF_OP_MATMUL || !unsupported_reason(*mm).empty() || !mmq_usable(b, *mm)) break;
        if (mm != first && (!same_shape(mm->src[1], first->src[1]) || mm->src[1]->data != first->src[1]->data ||
                            act_block(mm->src[0]->type) != act_block(first->src[0]->type)))
            break;
        const rf_node *rp = j + 1 < g.n_nodes && rope_of_product(mm, g.nodes[j + 1]) ? g.nodes[j + 1] : nullptr;
        segs.push_back({mm, rp});
        j += rp ? 2 : 1;
    }
    // Groups of one weight type (a Q4_K_M layer's V is often Q6_K), in node order.
    std::vector<std::vector<const rf_node *>> groups;
    bool joined = false;
    for (const Seg &s : segs) {
        std::vector<const rf_node *> *to = nullptr;
        for (auto &grp : groups)
            if (mmq_joinable(b, *grp.front(), *s.mm)) to = &grp;
        if (to) {
            to->push_back(s.mm);
            joined = true;
        } else {
            groups.push_back({s.mm});
        }
    }
    if (!joined) return 0;

    std::vector<const rf_tensor *> products, rotations, reads = {first->src[1]};
    for (const Seg &s : segs) {
        products.push_back(s.mm->dst);
        reads.push_back(s.mm->src[0]);
        if (s.rp) {
            rotations.push_back(s.rp->dst);
            reads.push_back(s.rp->src[1]);
            reads.push_back(s.rp->src[2]);
        }
    }
    for (size_t p = 0; p < products.size(); ++p) {
        for (const rf_tensor *r : reads)
            if (overlap(products[p], r)) return 0;
        for (size_t q = p + 1; q < products.size(); ++q)
            if (overlap(products[p], products[q])) return 0;
    }
    for (const Seg &s : segs) {
        if (!s.rp) continue;
        const rf_tensor *rd = s.rp->dst;
        for (size_t k = 1; k < reads.size(); ++k) // reads[0], the activations, may be overwritten
            if (overlap(rd, reads[k])) return 0;
        for (const rf_tensor *p : products)
            if (overlap(rd, p) && !(p == s.mm->dst && rd->data == p->data)) return 0;
        for (const rf_tensor *o : rotations)
            if (o != rd && overlap(rd, o)) return 0;
    }

    for (const auto &grp : groups)
        if (int r = matmul_mmq_segments(b, grp.data(), (int)grp.size(), err)) return r == RF_ERR_OUT_OF_MEMORY ? -1 : 0;
    for (const rf_tensor *p : products) forget_overwritten(b, p);
    for (const Seg &s : segs)
        if (s.rp && run_node(b, *s.rp, err)) return -1;
    return j - i;
}

} // namespace rf_hip
