// run_graph_observed: what the CPU backend ran, reported to a set_observer observer (ABI 2.1).
// compute() is synchronous, so every node is a unit of its own, timed by the pool's host clock
// marks, and the report is made before compute() returns.
#include <vector>

#include "backend.h"

namespace rfcpu {

int run_graph_observed(CpuBackend &be, const rf_graph &graph, std::string *message) {
    if (!be.observing) return run_graph(be, graph, message);
    const uint64_t call = be.observed_calls++;
    if (graph.n_nodes <= 0) return run_graph(be, graph, message);
    std::vector<uint64_t> marks(size_t(graph.n_nodes) + 1);
    const int rc = run_graph(be, graph, message, marks.data());
    if (rc != RF_OK) return rc; // a failed call reports nothing
    std::vector<int32_t> index(size_t(graph.n_nodes));
    std::vector<rf_exec_unit> units(size_t(graph.n_nodes));
    for (int32_t i = 0; i < graph.n_nodes; ++i) {
        index[size_t(i)] = i;
        units[size_t(i)] = {rf_op_name(graph.nodes[i]->op), &index[size_t(i)], 1, marks[size_t(i)], marks[size_t(i) + 1]};
    }
    be.observer.ran(be.observer.user, call, units.data(), graph.n_nodes);
    return RF_OK;
}

} // namespace rfcpu
