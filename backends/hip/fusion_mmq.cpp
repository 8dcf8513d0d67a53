// See fusion_mmq.h.
#include "fusion_mmq.h"

#include <algorithm>
#include <vector>

#include "fusion_match.h"
#include "matmul_mmq.h"
#include "ops.h"
#include "pack_bind.h"

namespace rf_hip {
namespace {

// Two ropes one rf_rope_f32 launch can do: the same tokens, positions, factors and parameters.
bool same_rotation(const rf_node &p, const rf_node &q) {
    const rf_tensor *fp = p.src[2], *fq = q.src[2];
    return p.src[1]->data == q.src[1]->data && (fp ? fq && fp->data == fq->data : !fq) && p.iparams[0] == q.iparams[0] &&
           p.iparams[1] == q.iparams[1] && p.fparams[0] == q.fparams[0] && p.fparams[1] == q.fparams[1] &&
           p.src[0]->ne[2] == q.src[0]->ne[2] && p.src[0]->ne[3] == 1 && q.src[0]->ne[3] == 1;
}

// Both in one launch (kernels/rope.hip, aux[0]): p's head groups, then q's, p reading `px`
// (its product, or that product's scratch copy). Neither writes what the other reads
// (fuse_mmq_run's checks), so the order between them is free.
int rope_pair(Backend &b, const rf_node &p, const rf_ktensor &px, const rf_node &q, const rf_ktensor &qx, std::string &err) {
    rf_kargs a = make_args(p);
    a.src[0] = px;
    a.src[3] = qx;
    a.src[4] = ktensor(q.dst);
    const int64_t gp = (p.src[0]->ne[1] + 7) / 8, gq = (q.src[0]->ne[1] + 7) / 8;
    a.aux[0] = gp;
    return launch(b, "rf_rope_f32", (unsigned)std::min<int64_t>(p.src[0]->ne[2], 65535), (unsigned)(gp + gq), 1, 256, a, err);
}

int rope_one(Backend &b, const rf_node &p, const rf_ktensor &px, std::string &err) {
    rf_kargs a = make_args(p);
    a.src[0] = px;
    return launch(b, "rf_rope_f32", (unsigned)std::min<int64_t>(p.src[0]->ne[2], 65535), (unsigned)((p.src[0]->ne[1] + 7) / 8), 1,
                  256, a, err);
}

struct Seg {
    const rf_node *mm, *rp;
    bool dead = false;  // the product's bytes hold a later output of the run: it goes to scratch
    rf_node shadow{};   // mm with its product in proj_scratch (dead only)
    rf_tensor out{};    // that product
};

// The run's outputs in node order (products and rotations) and whether each is a product.
struct Output { const rf_tensor *t; int seg; bool product; };

} // namespace

// The run's matmuls are launched first, grouped by weight type, then its ropes (one launch for
// two). That reorders the graph (a rope ran before the next matmul); it is the same computation
// when:
//  - a product that a later output of the run overlaps is dead (the executor recycles bytes after
//    a tensor's last reader: its rope, or nothing): it is written to proj_scratch, its rope reads
//    it there, and its own bytes get what the later output writes, as before;
//  - every other overlap between outputs is a rope replacing its own product exactly (in place);
//  - no output overlaps a weight or a rope's positions / factors, and no product written in place
//    overlaps the activations. A rotation may lie on them: every launch reads their q8_1 copy,
//    made before the first one (one copy: the same activation block for all weight types).
int fuse_mmq_run(Backend &b, const rf_graph &g, int i, std::string &err) {
    if (!mmq_segments_on()) return 0;
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
    std::vector<std::vector<int>> groups;
    bool joined = false;
    for (int s = 0; s < (int)segs.size(); ++s) {
        std::vector<int> *to = nullptr;
        for (auto &grp : groups)
            if (mmq_joinable(b, *segs[grp.front()].mm, *segs[s].mm)) to = &grp;
        if (to) {
            to->push_back(s);
            joined = true;
        } else {
            groups.push_back({s});
        }
    }
    if (!joined) return 0;

    std::vector<Output> outs;
    std::vector<const rf_tensor *> fixed; // weights, positions, factors
    for (int s = 0; s < (int)segs.size(); ++s) {
        outs.push_back({segs[s].mm->dst, s, true});
        fixed.push_back(segs[s].mm->src[0]);
        if (const rf_node *rp = segs[s].rp) {
            outs.push_back({rp->dst, s, false});
            fixed.push_back(rp->src[1]);
            fixed.push_back(rp->src[2]);
        }
    }
    for (size_t k = 0; k < outs.size(); ++k) {
        const Output &o = outs[k];
        for (const rf_tensor *f : fixed)
            if (overlap(o.t, f)) return 0;
        for (size_t l = k + 1; l < outs.size(); ++l) {
            const Output &later = outs[l];
            if (!overlap(o.t, later.t)) continue;
            if (o.product && !later.product && later.seg == o.seg && later.t->data == o.t->data) continue; // rope in place
            if (!o.product) return 0; // a rotation is read after the run
            segs[o.seg].dead = true;
        }
    }
    uint64_t scratch = 0;
    for (const Seg &s : segs) {
        if (s.dead) {
            if (!s.rp || !dense_f32(s.mm->dst)) return 0;
            scratch += (uint64_t)s.mm->dst->ne[0] * (uint64_t)s.mm->dst->ne[1] * 4;
        } else if (overlap(s.mm->dst, first->src[1])) {
            return 0;
        }
    }
    if (scratch && !ensure_scratch(b, b.proj_scratch, scratch, false, err)) return -1;
    uint64_t at = 0;
    for (Seg &s : segs) {
        if (!s.dead) continue;
        s.out = *s.mm->dst;
        s.out.data = (char *)b.proj_scratch.ptr + at;
        s.shadow = *s.mm;
        s.shadow.dst = &s.out;
        at += (uint64_t)s.out.ne[0] * (uint64_t)s.out.ne[1] * 4;
    }

    for (const auto &grp : groups) {
        std::vector<const rf_node *> mm;
        for (int s : grp) mm.push_back(segs[s].dead ? &segs[s].shadow : segs[s].mm);
        if (int r = matmul_mmq_segments(b, mm.data(), (int)mm.size(), err)) return r == RF_ERR_OUT_OF_MEMORY ? -1 : 0;
    }
    for (const Seg &s : segs)
        if (!s.dead) forget_overwritten(b, s.mm->dst);
    // A rope reads its product (or the scratch copy) as the rope's own [D, H, T] view of it.
    std::vector<std::pair<const rf_node *, rf_ktensor>> ropes;
    for (const Seg &s : segs)
        if (s.rp) {
            rf_ktensor x = ktensor(s.rp->src[0]);
            if (s.dead) x.data = s.out.data;
            ropes.push_back({s.rp, x});
        }
    int r = RF_OK;
    if (ropes.size() == 2 && same_rotation(*ropes[0].first, *ropes[1].first)) {
        r = rope_pair(b, *ropes[0].first, ropes[0].second, *ropes[1].first, ropes[1].second, err);
    } else {
        for (const auto &[rp, x] : ropes)
            if (!r) r = rope_one(b, *rp, x, err);
    }
    if (r) return -1;
    for (const auto &[rp, x] : ropes) forget_overwritten(b, rp->dst);
    // A dead product's bytes were not written, but a later output of the run covers them.
    for (const Seg &s : segs)
        if (s.dead) forget_overwritten(b, s.mm->dst);
    return j - i;
}

} // namespace rf_hip
