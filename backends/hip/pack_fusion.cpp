#include "pack_fusion.h"

#include "ops.h"
#include "pack_bind.h"

namespace rf_hip {

int pack_claim_at(Backend &b, const rf_graph &g, int i, std::string &err) {
    const int op = g.nodes[i]->op;
    for (const PackFusion &pf : b.kernels.fusions) {
        if (pf.fusion->first_op != op) continue;
        rf_fusion_launch l;
        rf_fusion_launch_init(&l);
        const int count = pf.fusion->claim(&g, i, &b.pack_device, &l);
        if (count == 0) continue;
        const std::string who = "fusion '" + std::string(pf.fusion->name) + "' of kernel pack " + pf.pack->path;
        LaunchRec r;
        if (std::string e = bind_claim(g, i, count, l, r.args); !e.empty()) { err = who + ": " + e; return -1; }
        // Kernels needing more than the default dynamic shared memory would need the function's
        // limit raised (ops.cpp does that for the base kernels); packs stay below it for now.
        if (l.shared_bytes > 48 * 1024) { err = who + ": asks for " + std::to_string(l.shared_bytes) + " bytes of shared memory (at most 49152)"; return -1; }
        r.f = pf.function;
        for (int d = 0; d < 3; ++d) r.grid[d] = l.grid[d];
        r.threads = l.threads;
        r.smem = l.shared_bytes;
        r.plain_edge = !pf.programmatic;
        r.stamps = pf.stamps; // else the observer puts its stamp kernel before the launch (launch_queue.h)
        b.queue.add(r);
        ++b.stats.pack_claims;
        // The launch wrote every covered node's result: activation copies of those bytes are stale.
        for (int k = i; k < i + count; ++k) forget_overwritten(b, g.nodes[k]->dst);
        return count;
    }
    return 0;
}

} // namespace rf_hip
