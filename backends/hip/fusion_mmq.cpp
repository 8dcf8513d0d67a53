// See fusion_mmq.h.
#include "fusion_mmq.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
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

// A SET_ROWS the run's launches take over: `pool` row slots[m] = column m of the segment's final
// output (its rotation when it has a rope: the K append; its product otherwise: the V append).
struct PoolAppend {
    const rf_node *n = nullptr;
    int seg = -1;
};

// rf_rope_f32 of rope p reading `px` (its product, or that product's scratch copy), its rotated rows
// also appended to a pool when `app` is given (kernels/rope.hip, aux[1..3]).
rf_kargs rope_args(const rf_node &p, const rf_ktensor &px, const rf_node *app) {
    rf_kargs a = make_args(p);
    a.src[0] = px;
    if (app) {
        a.aux[1] = (long long)(uintptr_t)app->dst->data;
        a.aux[2] = (long long)(uintptr_t)app->src[1]->data;
        a.aux[3] = app->dst->nb[1];
        a.iparams[2] = app->dst->type;
    }
    return a;
}

// Both in one launch (kernels/rope.hip, aux[0]): p's head groups, then q's. Neither writes what
// the other reads (fuse_mmq_run's checks), so the order between them is free.
int rope_pair(Backend &b, const rf_node &p, const rf_ktensor &px, const rf_node *app, const rf_node &q, const rf_ktensor &qx,
              std::string &err) {
    rf_kargs a = rope_args(p, px, app);
    a.src[3] = qx;
    a.src[4] = ktensor(q.dst);
    const int64_t gp = (p.src[0]->ne[1] + 7) / 8, gq = (q.src[0]->ne[1] + 7) / 8;
    a.aux[0] = gp;
    return launch(b, "rf_rope_f32", (unsigned)std::min<int64_t>(p.src[0]->ne[2], 65535), (unsigned)(gp + gq), 1, 256, a, err);
}

int rope_one(Backend &b, const rf_node &p, const rf_ktensor &px, const rf_node *app, std::string &err) {
    rf_kargs a = rope_args(p, px, app);
    return launch(b, "rf_rope_f32", (unsigned)std::min<int64_t>(p.src[0]->ne[2], 65535), (unsigned)((p.src[0]->ne[1] + 7) / 8), 1,
                  256, a, err);
}

// One output of a run (a product or a rotation) and its segment.
struct Output { const rf_tensor *t; int seg; bool product; };

// What a run reads and writes: the overlap rules of fuse_mmq_run and find_appends.
struct RunTensors {
    std::vector<const rf_tensor *> finals; // per segment: its rotation, or its product
    std::vector<bool> rotated;
    std::vector<Output> outputs;           // in node order
    std::vector<const rf_tensor *> reads;  // the activations, then weights, positions, factors
    int64_t M = 0; // columns (tokens)
};

// The two SET_ROWS after the run, when they are the K append of a segment's rotation and the V
// append of another's product without rope (either order): each source is that whole output seen as
// [N, M] dense rows, into f16/f32 pools. The pools overlap each other, the slots and everything the
// run reads or writes in no byte; the slots overlap none of the run's outputs (they are read while
// those are written). found[0]: the rotation's append, found[1]: the product's.
bool find_appends(const rf_graph &g, int j, const RunTensors &run, PoolAppend (&found)[2]) {
    if (j + 1 >= g.n_nodes) return false;
    for (int k = 0; k < 2; ++k) {
        const rf_node *n = g.nodes[j + k];
        if (!pool_append(n) || n->dst->nb[1] > INT32_MAX) return false;
        const rf_tensor *x = n->src[0];
        int seg = -1;
        for (size_t s = 0; s < run.finals.size(); ++s) {
            const rf_tensor *f = run.finals[s];
            const int64_t N = f->ne[0] * f->ne[1] * f->ne[2] / run.M; // the product's rows
            if (x->data == f->data && x->ne[0] == N && x->ne[1] == run.M && x->nb[1] == 4 * N) seg = (int)s;
        }
        if (seg < 0) return false;
        PoolAppend &slot = found[run.rotated[(size_t)seg] ? 0 : 1];
        if (slot.n) return false; // two of one kind
        slot = {n, seg};
    }
    const rf_tensor *pools[2] = {found[0].n->dst, found[1].n->dst}, *slots[2] = {found[0].n->src[1], found[1].n->src[1]};
    if (overlap(pools[0], pools[1])) return false;
    for (const rf_tensor *p : pools) {
        for (const rf_tensor *sl : slots)
            if (overlap(p, sl)) return false;
        for (const Output &o : run.outputs)
            if (overlap(p, o.t)) return false;
        for (const rf_tensor *t : run.reads)
            if (overlap(p, t)) return false;
    }
    for (const rf_tensor *sl : slots)
        for (const Output &o : run.outputs)
            if (overlap(sl, o.t)) return false;
    return true;
}

struct Seg {
    const rf_node *mm, *rp;
    bool dead = false;  // the product's bytes hold a later output of the run: it goes to scratch
    rf_node shadow{};   // mm with its product in proj_scratch (dead only)
    rf_tensor out{};    // that product
};

// ROCMFORGE_HIP_MMQ_APPEND=0: the K/V appends after a joined run stay separate launches (A/B).
bool appends_on() {
    static const bool v = [] {
        const char *s = std::getenv("ROCMFORGE_HIP_MMQ_APPEND");
        return !(s && *s == '0');
    }();
    return v;
}

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
// The K and V appends that follow (SET_ROWS of K's rotation and of V's product) are written by the
// rope and by V's matmul epilogue when find_appends allows it: one launch fewer per layer.
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

    RunTensors run;
    run.M = first->src[1]->ne[1];
    run.reads.push_back(first->src[1]);
    for (int s = 0; s < (int)segs.size(); ++s) {
        const rf_node *mm = segs[s].mm, *rp = segs[s].rp;
        run.finals.push_back(rp ? rp->dst : mm->dst);
        run.rotated.push_back(rp != nullptr);
        run.outputs.push_back({mm->dst, s, true});
        run.reads.push_back(mm->src[0]);
        if (rp) {
            run.outputs.push_back({rp->dst, s, false});
            run.reads.push_back(rp->src[1]);
            run.reads.push_back(rp->src[2]);
        }
    }
    const std::vector<Output> &outs = run.outputs;
    for (size_t k = 0; k < outs.size(); ++k) {
        const Output &o = outs[k];
        for (size_t f = 1; f < run.reads.size(); ++f) // weights, positions, factors (not the activations: below)
            if (overlap(o.t, run.reads[f])) return 0;
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
    // The K and V appends that follow: the rope writes the K rows to their pool, the matmul epilogue
    // the V rows (the same conversions as rf_set_rows2): one launch fewer per layer.
    PoolAppend apps[2];
    const bool appends = appends_on() && find_appends(g, j, run, apps);

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
        MmqAppend v_append;
        for (int s : grp) {
            if (appends && s == apps[1].seg) v_append = {apps[1].n->dst, apps[1].n->src[1], (int)mm.size()};
            mm.push_back(segs[s].dead ? &segs[s].shadow : segs[s].mm);
        }
        if (int r = matmul_mmq_segments(b, mm.data(), (int)mm.size(), err, &v_append)) return r == RF_ERR_OUT_OF_MEMORY ? -1 : 0;
    }
    for (const Seg &s : segs)
        if (!s.dead) forget_overwritten(b, s.mm->dst);
    // A rope reads its product (or the scratch copy) as the rope's own [D, H, T] view of it; the
    // one that appends its rows goes first (the kernel appends for its first tensor only).
    struct Rope { const rf_node *rp; rf_ktensor x; const rf_node *app; };
    std::vector<Rope> ropes;
    for (int s = 0; s < (int)segs.size(); ++s)
        if (const rf_node *rp = segs[s].rp) {
            rf_ktensor x = ktensor(rp->src[0]);
            if (segs[s].dead) x.data = segs[s].out.data;
            const rf_node *app = appends && s == apps[0].seg ? apps[0].n : nullptr;
            ropes.insert(app ? ropes.begin() : ropes.end(), {rp, x, app});
        }
    int r = RF_OK;
    if (ropes.size() == 2 && same_rotation(*ropes[0].rp, *ropes[1].rp)) {
        r = rope_pair(b, *ropes[0].rp, ropes[0].x, ropes[0].app, *ropes[1].rp, ropes[1].x, err);
    } else {
        for (const Rope &o : ropes)
            if (!r) r = rope_one(b, *o.rp, o.x, o.app, err);
    }
    if (r) return -1;
    for (const Rope &o : ropes) forget_overwritten(b, o.rp->dst);
    // A dead product's bytes were not written, but a later output of the run covers them.
    for (const Seg &s : segs)
        if (s.dead) forget_overwritten(b, s.mm->dst);
    if (!appends) return j - i;
    for (const PoolAppend &p : apps) forget_overwritten(b, p.n->dst);
    return j + 2 - i;
}

} // namespace rf_hip
