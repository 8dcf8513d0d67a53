// compute(): validates and plans every node on the calling thread, sizes the scratch once, then
// runs the whole graph as one pool schedule: the phases of all nodes in order, each cut into
// the parts its op planned (see thread_pool.h for how parts are handed out).
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <vector>

#include "backend.h"
#include "ops.h"

namespace rfcpu {

namespace {

constexpr size_t kAlign = 64;
size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// One schedule phase: phase `phase` of node `node`.
struct PhaseRef {
    int32_t node;
    int32_t phase;
};

struct GraphJob {
    const rf_graph *graph;
    const PhaseRef *phases;
    OpContext *ctx;
};

void run_part(void *arg, int32_t p, int64_t part, int64_t n_parts, int tid) {
    auto &job = *static_cast<GraphJob *>(arg);
    const PhaseRef ref = job.phases[p];
    const rf_node &node = *job.graph->nodes[ref.node];
    try {
        op_impl(node.op)->run(*job.ctx, node, ref.phase, part, n_parts, tid);
    } catch (const std::exception &e) {
        job.ctx->errors.fail("node " + std::to_string(ref.node) + " " + op_name(node.op) + ": " + e.what());
    } catch (...) {
        job.ctx->errors.fail("node " + std::to_string(ref.node) + " " + op_name(node.op) + ": unknown error");
    }
}

} // namespace

CpuBackend::~CpuBackend() {
    pool.reset();
    std::free(scratch);
}

bool CpuBackend::ensure_scratch(size_t bytes) {
    if (bytes <= scratch_size) return true;
    void *p = std::aligned_alloc(kAlign, align_up(bytes));
    if (!p) return false;
    std::free(scratch);
    scratch = static_cast<uint8_t *>(p);
    scratch_size = align_up(bytes);
    return true;
}

int node_supported(const CpuBackend &, const rf_node &node, std::string *why) {
    std::string reason;
    if (node.op == RF_OP_NONE) return 1;
    const OpImpl *impl = op_impl(node.op);
    bool ok = impl != nullptr;
    if (!ok) reason = "op not implemented";
    else ok = impl->check(node, &reason);
    if (!ok && why) *why = reason;
    return ok ? 1 : 0;
}

int run_graph(CpuBackend &be, const rf_graph &graph, std::string *message, uint64_t *marks_ns) {
    if (graph.n_nodes < 0 || (graph.n_nodes > 0 && !graph.nodes)) {
        *message = "graph has no node array";
        return RF_ERR_INVALID;
    }
    const int nth = be.pool->size();
    std::vector<PhaseRef> phases;
    std::vector<int64_t> parts;
    size_t shared = 0, per_thread = 0;
    for (int32_t i = 0; i < graph.n_nodes; ++i) {
        const rf_node *node = graph.nodes[i];
        if (!node || (node->op != RF_OP_NONE && !node->dst)) {
            *message = "node " + std::to_string(i) + " is null or has no dst";
            return RF_ERR_INVALID;
        }
        std::string why;
        if (!node_supported(be, *node, &why)) {
            *message = "node " + std::to_string(i) + " (" + (node->label ? node->label : "unnamed") + ") " +
                       op_name(node->op) + " not supported by the cpu backend: " + why;
            return RF_ERR_UNSUPPORTED;
        }
        if (node->op == RF_OP_NONE) continue;
        const NodeWork w = op_impl(node->op)->plan(*be.ks, *node, nth);
        for (int ph = 0; ph < std::min(w.n_phases, kMaxNodePhases); ++ph) {
            phases.push_back({i, ph});
            parts.push_back(std::max<int64_t>(1, w.parts[ph]));
        }
        shared = std::max(shared, align_up(w.shared_bytes));
        per_thread = std::max(per_thread, align_up(w.per_thread_bytes));
    }
    const size_t total = shared + per_thread * size_t(nth);
    if (!be.ensure_scratch(total)) {
        *message = "cpu backend: cannot allocate " + std::to_string(total) + " bytes of scratch (" +
                   std::to_string(available_memory_bytes()) + " bytes available)";
        return RF_ERR_OUT_OF_MEMORY;
    }
    ErrorSink errors;
    OpContext ctx{*be.ks, errors, be.scratch, be.scratch + shared, per_thread};
    GraphJob job{&graph, phases.data(), &ctx};
    std::vector<uint64_t> phase_end(marks_ns ? phases.size() : 0);
    if (marks_ns) marks_ns[0] = ThreadPool::steady_clock_ns();
    for (size_t p0 = 0; p0 < phases.size(); p0 += size_t(ThreadPool::kMaxPhases)) {
        const size_t n = std::min(phases.size() - p0, size_t(ThreadPool::kMaxPhases));
        job.phases = phases.data() + p0;
        be.pool->run(int32_t(n), parts.data() + p0, run_part, &job, marks_ns ? phase_end.data() + p0 : nullptr);
    }
    if (marks_ns) {
        // A node ends with its last phase; one without phases (RF_OP_NONE) took no time.
        size_t p = 0;
        for (int32_t i = 0; i < graph.n_nodes; ++i) {
            marks_ns[i + 1] = marks_ns[i];
            for (; p < phases.size() && phases[p].node == i; ++p) marks_ns[i + 1] = phase_end[p];
        }
    }
    if (errors.failed.load()) {
        *message = errors.message;
        return RF_ERR_INVALID;
    }
    return RF_OK;
}

} // namespace rfcpu
