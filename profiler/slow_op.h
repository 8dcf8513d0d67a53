// ROCMFORGE_DEBUG_SLOW_OP=OP[:TYPE]:MICROSECONDS: every node of that op (and weight type) costs
// that much more host time after its backend's compute(): a deliberate, known regression for
// checking that a baseline comparison reports exactly it (docs/PROFILING_GUIDE.md). It lives in
// the profiler's wrapper, the one plugin that stands between the core and a backend, so that
// the core's compute path carries no debugging hook: it acts only with the profiler on.
#pragma once
#include <string>

#include "rocmforge/abi.h"

namespace rfprof {

struct SlowOp {
    bool active = false;
    std::string op, type; // rf_op_name spelling; type: of src[0] ("q4_K"), empty for any
    double usec = 0;
};

// Parses the variable's value; a malformed one is inactive and *why says why.
SlowOp parse_slow_op(const char *value, std::string *why);
// The variable as read once per process (a warning on stderr when active or malformed).
const SlowOp &slow_op_from_env();
// Busy-waits usec for each node of the graph that matches.
void apply_slow_op(const SlowOp &s, const rf_graph &graph);

} // namespace rfprof
