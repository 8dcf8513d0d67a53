#include "pack_fusion.h"

#include <cstdint>

#include "matmul_mmq.h"
#include "ops.h"
#include "pack_bind.h"

namespace rf_hip {

namespace {

// Binds launch `l` of a claim over nodes [i, i + count) and queues it: 0, -1 (invalid claim) or -2
// (no device memory), with `err` naming the fusion (`who`). `lent`: the scratch lent to the claim.
// *offered: the q8_1 columns the launch writes for the next node, if it was lent them.
// *queued: the queue's length after the claim's previous launch (SIZE_MAX: none, or dropped),
// updated: a launch may run beside that one only where nothing was queued between them.
int queue_claimed(Backend &b, const rf_graph &g, int i, int count, const PackFusion &pf, const rf_fusion_launch &l, void *lent,
                  uint64_t lent_bytes, const std::string &who, Backend::ActCopy *offered, size_t *queued, std::string &err) {
    LaunchRec r;
    const rf_tensor *q8x = nullptr, *act = nullptr;
    int act_block = 0;
    if (std::string e = bind_claim(g, i, count, l, r.args); !e.empty()) { err = who + ": " + e; return -1; }
    if (std::string e = bind_q8(g, i, count, l, &q8x); !e.empty()) { err = who + ": " + e; return -1; }
    if (std::string e = bind_act_in(g, i, count, l, &act, &act_block); !e.empty()) { err = who + ": " + e; return -1; }
    if (std::string e = bind_words(g, i, count, l, r.args, lent, lent_bytes); !e.empty()) { err = who + ": " + e; return -1; }
    hipFunction_t f = pf.function;
    if (l.kernel && !(f = claim_kernel(b.kernels, pf, l.kernel, err))) { err = who + ": " + err; return -1; }
    // The activations it reads: the q8_1 columns made now (before the launch, in the queue) or
    // the copy an earlier node left; or the f32 rows themselves.
    if (act_block == RF_ACT_IN_F32) {
        lend_act_in(l, act->data, act->nb[1], r.args);
    } else if (act) {
        if (int e = ensure_q8_columns(b, act, act_block, err)) {
            err = who + ": its matmul input: " + err;
            return e == RF_ERR_OUT_OF_MEMORY ? -2 : -1;
        }
        lend_act_in(l, b.q8.where, q8_column_bytes(act->ne[0]), r.args);
    }
    // The q8_1 columns it offers, lent when the next node is a matmul that reads them.
    const int64_t q8_rows = q8x ? q8x->ne[1] * q8x->ne[2] * q8x->ne[3] : 0;
    const int q8_block = q8x ? q8_columns_read_next(b, g, i + count, q8x) : 0;
    if (q8_block && !ensure_q8_scratch(b, q8x->ne[0], q8_rows, err)) return -2;
    if (q8x) lend_q8(l, b.act_scratch.ptr, q8_column_bytes(q8x->ne[0]), q8_block, r.args);
    // Kernels needing more than the default dynamic shared memory would need the function's
    // limit raised (ops.cpp does that for the base kernels); packs stay below it for now.
    if (l.shared_bytes > 48 * 1024) { err = who + ": asks for " + std::to_string(l.shared_bytes) + " bytes of shared memory (at most 49152)"; return -1; }
    r.f = f;
    r.kernel = l.kernel ? l.kernel : pf.fusion->kernel;
    for (int d = 0; d < 3; ++d) r.grid[d] = l.grid[d];
    r.threads = l.threads;
    r.smem = l.shared_bytes;
    r.plain_edge = !pf.programmatic;
    r.stamps = pf.stamps; // else the observer puts its stamp kernel before the launch (launch_queue.h)
    // Beside the claim's launch before it (rf_fusion_launch.beside_previous) where that is the
    // kernel queued last (no activation copy made between) and no observer times the kernels one
    // after another.
    r.beside_prev = l.beside_previous && *queued == b.queue.pending().size() && !b.queue.stamping();
    *queued = SIZE_MAX;
    const size_t before = b.queue.pending().size();
    b.queue.add(r); // (which drops a launch of an empty grid)
    if (b.queue.pending().size() == before + 1) *queued = before + 1;
    if (q8_block) *offered = {q8x->data, byte_extent(q8x), q8x->ne[0], q8_rows, q8_block, b.act_scratch.ptr};
    return 0;
}

} // namespace

int pack_claim_at(Backend &b, const rf_graph &g, int i, std::string &err) {
    const int op = g.nodes[i]->op;
    for (const PackFusion &pf : b.kernels.fusions) {
        if (pf.fusion->first_op != op) continue;
        rf_fusion_launch ls[RF_FUSION_MAX_LAUNCHES];
        for (rf_fusion_launch &l : ls) rf_fusion_launch_init(&l);
        int32_t n = 1;
        // ABI 2.7: a fusion that may fill several launches (run in order) says so with claim_launches.
        const auto many = RF_SLOT(pf.fusion, rf_fusion, claim_launches);
        const int count = many ? many(&g, i, &b.pack_device, ls, RF_FUSION_MAX_LAUNCHES, &n) : pf.fusion->claim(&g, i, &b.pack_device, ls);
        if (count == 0) continue;
        const std::string who = "fusion '" + std::string(pf.fusion->name) + "' of kernel pack " + pf.pack->path;
        if (n < 1 || n > RF_FUSION_MAX_LAUNCHES) {
            err = who + ": " + std::to_string(n) + " launches (1.." + std::to_string(RF_FUSION_MAX_LAUNCHES) + ")";
            return -1;
        }
        // Scratch lent to all its launches: they run in queue order, as the next claim's do.
        const uint64_t lent_bytes = ls[0].lent_bytes;
        if (lent_bytes && !ensure_scratch(b, b.lent_scratch, lent_bytes, false, err)) {
            err = who + ": its lent scratch: " + err;
            return -2;
        }
        Backend::ActCopy offered{};
        size_t queued = SIZE_MAX;
        for (int k = 0; k < n; ++k)
            if (int r = queue_claimed(b, g, i, count, pf, ls[k], lent_bytes ? b.lent_scratch.ptr : nullptr, lent_bytes, who, &offered,
                                      &queued, err))
                return r;
        ++b.stats.pack_claims;
        b.rule = pf.rule.c_str();
        // The launches wrote every covered node's result: activation copies of those bytes are stale.
        for (int k = i; k < i + count; ++k) forget_overwritten(b, g.nodes[k]->dst);
        if (offered.src) b.q8 = offered;
        return count;
    }
    return 0;
}

int32_t pack_matmul_form(const rf_pack_device *d, const rf_node *n) {
    const Backend &b = *static_cast<const Backend *>(d->backend);
    if (!n || n->op != RF_OP_MATMUL) return RF_MATMUL_OTHER;
    if (matmul_reads_q8(*n) || matmul_on_mv_f16(*n)) return RF_MATMUL_VECTOR;
    return matmul_on_mvq_cols(b, *n) ? RF_MATMUL_COLUMNS : RF_MATMUL_OTHER;
}

int32_t pack_matmul_tiles(const rf_pack_device *d, const rf_node *n, rf_matmul_tiles *t) {
    const Backend &b = *static_cast<const Backend *>(d->backend);
    // dispatch_node's order: one activation row takes the vector kernels first.
    if (!n || !t || n->op != RF_OP_MATMUL || !n->src[0] || !n->src[1] || n->src[1]->ne[1] < 2 ||
        !unsupported_reason(*n).empty() || !mmq_usable(b, *n))
        return 0;
    mmq_tiles(b, *n, *t);
    return t->kernel ? 1 : 0;
}

} // namespace rf_hip
