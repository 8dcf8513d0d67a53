// compute(): validates and plans every node on the calling thread, sizes the scratch once, then
// runs the whole graph in one pool job with a barrier after each phase of each node.
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

struct GraphJob {
    CpuBackend *be;
    const rf_graph *graph;
    const std::vector<NodeWork> *plans;
    OpContext *ctx;
};

void graph_job(void *arg, int ith, int nth) {
    auto &job = *static_cast<GraphJob *>(arg);
    for (int32_t i = 0; i < job.graph->n_nodes; ++i) {
        const rf_node &node = *job.graph->nodes[i];
        if (node.op == RF_OP_NONE) continue;
        const OpImpl *impl = op_impl(node.op);
        const int phases = (*job.plans)[size_t(i)].n_phases;
        for (int ph = 0; ph < phases; ++ph) {
            try {
                impl->run(*job.ctx, node, ph, ith, nth);
            } catch (const std::exception &e) {
                job.ctx->errors.fail(std::string("node ") + std::to_string(i) + " " + op_name(node.op) + ": " + e.what());
            } catch (...) {
                job.ctx->errors.fail(std::string("node ") + std::to_string(i) + " " + op_name(node.op) + ": unknown error");
            }
            job.be->pool->barrier();
        }
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

int run_graph(CpuBackend &be, const rf_graph &graph, std::string *message) {
    if (graph.n_nodes < 0 || (graph.n_nodes > 0 && !graph.nodes)) {
        *message = "graph has no node array";
        return RF_ERR_INVALID;
    }
    const int nth = be.pool->size();
    std::vector<NodeWork> plans(size_t(graph.n_nodes));
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
        plans[size_t(i)] = op_impl(node->op)->plan(*be.ks, *node, nth);
        shared = std::max(shared, align_up(plans[size_t(i)].shared_bytes));
        per_thread = std::max(per_thread, align_up(plans[size_t(i)].per_thread_bytes));
    }
    const size_t total = shared + per_thread * size_t(nth);
    if (!be.ensure_scratch(total)) {
        *message = "cpu backend: cannot allocate " + std::to_string(total) + " bytes of scratch (" +
                   std::to_string(available_memory_bytes()) + " bytes available)";
        return RF_ERR_OUT_OF_MEMORY;
    }
    ErrorSink errors;
    OpContext ctx{*be.ks, errors, be.scratch, be.scratch + shared, per_thread};
    GraphJob job{&be, &graph, &plans, &ctx};
    be.pool->run(graph_job, &job);
    if (errors.failed.load()) {
        *message = errors.message;
        return RF_ERR_INVALID;
    }
    return RF_OK;
}

} // namespace rfcpu
