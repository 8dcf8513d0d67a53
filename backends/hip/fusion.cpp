// See fusion.h. Patterns are matched on data pointers and shapes (the graph has no tensor ids).
#include "fusion.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "fusion_match.h"
#include "fusion_mmq.h"
#include "ops.h"

namespace rf_hip {
namespace {

// An M = 1 matmul with one weight matrix and one vector (what rf_mvq_multi and rf_mvq_proj
// cover): q8_1 weights, or F16 weights whose rows are dotted with the f32 vector itself
// (rf_mv_f16's mv_f16_dot), which the launch then reads.
bool vec_matmul(const rf_node *n) {
    if (!matmul_reads_q8(*n) && !matmul_on_mv_f16(*n)) return false;
    const rf_tensor *w = n->src[0], *x = n->src[1], *d = n->dst;
    return x->ne[2] * x->ne[3] == 1 && w->ne[2] * w->ne[3] == 1 && dense_f32(d) && w->ne[0] % 32 == 0 &&
           w->ne[1] <= (int64_t)1 << 30;
}
// The vector a fused M = 1 launch reads (rf_kargs.scratch): the q8_1 copy of x (made now if
// needed), or x itself for F16 weights. 0 on success, else ensure_q8_columns' status.
int fused_vector(Backend &b, const rf_node *mm, void *&where, std::string &err) {
    if (mm->src[0]->type == RF_TYPE_F16) {
        where = mm->src[1]->data;
        return RF_OK;
    }
    const int r = ensure_q8_columns(b, mm->src[1], act_block(mm->src[0]->type), err);
    where = b.q8.where;
    return r;
}
// A matmul of 2..mvq_max_cols columns on the dp4a column kernels (their fusions are the packs').
bool cols_matmul(const Backend &b, const rf_node *n) {
    if (!matmul_on_mvq_cols(b, *n)) return false;
    const rf_tensor *w = n->src[0], *x = n->src[1], *d = n->dst;
    return x->ne[2] * x->ne[3] == 1 && w->ne[2] * w->ne[3] == 1 && dense_f32(d) && w->ne[0] % 32 == 0 &&
           w->ne[1] <= (int64_t)1 << 30;
}
bool same_vector(const rf_node *a, const rf_node *b) {
    return a->src[1]->data == b->src[1]->data && a->src[1]->ne[0] == b->src[1]->ne[0];
}

int add_launch(Backend &b, const char *name, unsigned blocks, unsigned threads, const rf_kargs &a) {
    auto f = b.kernels.functions.find(name);
    if (f == b.kernels.functions.end()) return 0;
    LaunchRec r;
    r.f = f->second;
    r.grid[0] = blocks;
    r.threads = threads;
    r.args = a;
    b.queue.add(r);
    return 1;
}

// MATMUL [ROPE] MATMUL [ROPE] [MATMUL [ROPE]] over one vector, one token (a layer's K, V, Q
// projections with their rotations) -> one rf_mvq_proj launch, with up to two SET_ROWS that
// follow and append a segment's final output to a pool (the K and V appends). The ropes must
// agree (positions, factors, n_rot, head size, base, scale). A product whose bytes a later output
// of the run reuses is dead (the executor recycles bytes only after a tensor's last reader, and
// its only reader in the run is its rope, which the kernel feeds from shared memory): it is not
// written.
int fuse_projections(Backend &b, const rf_graph &g, int i, std::string &err) {
    struct Seg { const rf_node *mm, *rp; };
    Seg segs[3];
    int nseg = 0, j = i;
    const rf_node *rope0 = nullptr, *first = g.nodes[i];
    while (nseg < 3 && j < g.n_nodes) {
        const rf_node *mm = g.nodes[j];
        if (mm->op != RF_OP_MATMUL || !vec_matmul(mm) || !same_vector(mm, first) || mm->dst->ne[0] % 4 ||
            mm->src[0]->ne[0] != first->src[0]->ne[0] || act_block(mm->src[0]->type) != act_block(first->src[0]->type))
            break;
        const rf_node *rp = j + 1 < g.n_nodes && rope_of_product(mm, g.nodes[j + 1]) ? g.nodes[j + 1] : nullptr;
        if (rp && rope0 &&
            (rp->src[1]->data != rope0->src[1]->data || rp->src[2] != rope0->src[2] ||
             (rp->src[2] && rp->src[2]->data != rope0->src[2]->data) || rp->iparams[1] != rope0->iparams[1] ||
             rp->src[0]->ne[0] != rope0->src[0]->ne[0] || rp->fparams[0] != rope0->fparams[0] || rp->fparams[1] != rope0->fparams[1]))
            break;
        if (rp && !rope0) rope0 = rp;
        segs[nseg++] = {mm, rp};
        j += rp ? 2 : 1;
    }
    if (nseg < 2 || !rope0) return 0;
    // Outputs in node order; inputs the kernel reads (the vector only for F16, else its q8_1 copy).
    std::vector<const rf_tensor *> outs, ins = {rope0->src[1], rope0->src[2]};
    if (first->src[0]->type == RF_TYPE_F16) ins.push_back(first->src[1]);
    for (int s = 0; s < nseg; ++s) {
        outs.push_back(segs[s].mm->dst);
        if (segs[s].rp) outs.push_back(segs[s].rp->dst);
        ins.push_back(segs[s].mm->src[0]);
    }
    for (const rf_tensor *o : outs)
        for (const rf_tensor *t : ins)
            if (overlap(o, t)) return 0;
    // The appends: a pool (persistent, never an arena tensor) overlaps nothing the launch reads or
    // writes; the slots are read only.
    struct Append { const rf_node *n; int seg; };
    std::vector<Append> apps;
    while (apps.size() < 2 && j < g.n_nodes && pool_append(g.nodes[j])) {
        const rf_node *ap = g.nodes[j];
        const rf_tensor *src = ap->src[0], *pool = ap->dst, *slots = ap->src[1];
        int seg = -1;
        for (int s = 0; s < nseg; ++s) {
            const rf_tensor *fin = segs[s].rp ? segs[s].rp->dst : segs[s].mm->dst;
            if (src->data == fin->data && src->ne[1] == 1 && src->ne[0] == segs[s].mm->dst->ne[0]) seg = s;
        }
        bool ok = seg >= 0 && pool->ne[0] >= src->ne[0] && !overlap(pool, slots);
        for (const rf_tensor *t : outs) ok = ok && !overlap(pool, t) && !overlap(slots, t);
        for (const rf_tensor *t : ins) ok = ok && !overlap(pool, t);
        for (const Append &o : apps) ok = ok && !overlap(pool, o.n->dst) && !overlap(pool, o.n->src[1]) && !overlap(o.n->dst, slots);
        if (!ok) break;
        apps.push_back({ap, seg});
        ++j;
    }
    auto dead = [&](const rf_tensor *o) {
        const auto at = std::find(outs.begin(), outs.end(), o);
        return std::any_of(at + 1, outs.end(), [&](const rf_tensor *l) { return overlap(o, l); });
    };
    void *vec = nullptr;
    if (int r = fused_vector(b, first, vec, err)) return r == RF_ERR_OUT_OF_MEMORY ? -1 : 0;
    rf_kargs a{};
    int64_t blocks = 0;
    for (int s = 0; s < nseg; ++s) {
        a.src[s] = ktensor(segs[s].mm->src[0]);
        const rf_tensor *prod = segs[s].mm->dst, *rot = segs[s].rp ? segs[s].rp->dst : nullptr;
        a.dst.ne[s] = dead(prod) ? 0 : (long long)(uintptr_t)prod->data;
        a.dst.nb[s] = rot ? (long long)(uintptr_t)rot->data : 0;
        blocks += prod->ne[0] / 4;
    }
    a.src[3] = ktensor(rope0->src[1]);
    if (rope0->src[2]) a.src[4] = ktensor(rope0->src[2]);
    a.scratch = vec;
    a.iparams[1] = rope0->iparams[1];
    a.iparams[2] = (int)rope0->src[0]->ne[0];
    a.iparams[3] = nseg;
    a.fparams[0] = rope0->fparams[0];
    a.fparams[1] = rope0->fparams[1];
    for (size_t k = 0; k < apps.size(); ++k) {
        const rf_tensor *pool = apps[k].n->dst, *slots = apps[k].n->src[1];
        a.aux[k] = (long long)(uintptr_t)pool->data;
        a.aux[2 + k] = (long long)(uintptr_t)slots->data;
        (k == 0 ? a.dst.ne[3] : a.dst.nb[3]) = pool->nb[1];
        a.iparams[4 + k] = apps[k].seg + 1;
        a.iparams[6 + k] = pool->type;
    }
    if (!add_launch(b, "rf_mvq_proj", (unsigned)blocks, 128, a)) return 0;
    for (const rf_tensor *o : outs) forget_overwritten(b, o);
    for (const Append &o : apps) forget_overwritten(b, o.n->dst);
    return j - i;
}

// Decode matmul patterns: a layer's joined projections over one vector here; gate + up + SwiGLU
// and matmul + rope over one vector or the column kernels are the packs' (plugins/packs/gate_up.c,
// matmul_rope.c); several columns on the tensor cores, fusion_mmq.cpp.
int fuse_matmuls(Backend &b, const rf_graph &g, int i, std::string &err) {
    const rf_node *m0 = g.nodes[i];
    if (vec_matmul(m0)) return b.fuse_projections && !overlap(m0->dst, m0->src[1]) ? fuse_projections(b, g, i, err) : 0;
    if (cols_matmul(b, m0)) return 0;
    return fuse_mmq_run(b, g, i, err);
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
    if (g.nodes[i]->op == RF_OP_MATMUL) return b.fuse_beyond_norm ? fuse_matmuls(b, g, i, err) : 0;
    if (g.nodes[i]->op == RF_OP_ATTENTION) return b.fuse_beyond_norm ? fuse_attention_q8(b, g, i, err) : 0;
    return 0;
}

} // namespace rf_hip
