#include "slow_op.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "rocmforge/types.h"

namespace rfprof {

SlowOp parse_slow_op(const char *value, std::string *why) {
    SlowOp r;
    if (!value || !*value) return r;
    const std::string v = value;
    const size_t a = v.find(':'), b = v.rfind(':');
    auto bad = [&](const std::string &m) {
        if (why) *why = "ROCMFORGE_DEBUG_SLOW_OP=" + v + ": " + m + " (expected OP[:TYPE]:MICROSECONDS, e.g. matmul:q4_K:300)";
        return SlowOp{};
    };
    if (a == std::string::npos || a == 0) return bad("no op or no microseconds");
    r.op = v.substr(0, a);
    if (b != a) r.type = v.substr(a + 1, b - a - 1);
    char *end = nullptr;
    r.usec = std::strtod(v.c_str() + b + 1, &end);
    if (end == v.c_str() + b + 1 || *end || !(r.usec > 0)) return bad("the microseconds are not a positive number");
    r.active = true;
    return r;
}

const SlowOp &slow_op_from_env() {
    static const SlowOp s = [] {
        std::string why;
        SlowOp r = parse_slow_op(std::getenv("ROCMFORGE_DEBUG_SLOW_OP"), &why);
        if (!why.empty()) std::fprintf(stderr, "profiler: ignored: %s\n", why.c_str());
        if (r.active)
            std::fprintf(stderr, "profiler: ROCMFORGE_DEBUG_SLOW_OP: %s%s%s nodes cost %g us more\n", r.op.c_str(),
                         r.type.empty() ? "" : ":", r.type.c_str(), r.usec);
        return r;
    }();
    return s;
}

void apply_slow_op(const SlowOp &s, const rf_graph &graph) {
    if (!s.active) return;
    int n = 0;
    for (int i = 0; i < graph.n_nodes; ++i) {
        const rf_node *node = graph.nodes[i];
        if (!node || s.op != rf_op_name(node->op)) continue;
        if (!s.type.empty() && (!node->src[0] || s.type != rf::type_name(node->src[0]->type))) continue;
        ++n;
    }
    if (!n) return;
    // Host time, spent where the node's caller waits: as a slower op would cost it.
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(s.usec * n);
    while (std::chrono::steady_clock::now() < until) {
    }
}

} // namespace rfprof
