// The human-readable report: per-op table with roofline percentages, per-layer, per-part
// (attention / mlp / norm / output) and per-phase rollups (node time and the time outside ops).
#pragma once
#include <string>

#include "profiler_state.h"

namespace rfprof {

struct ReportOptions {
    int top = 40;               // rows of the per-op/shape table
    std::string trace_path;     // mentioned in the report when set
    int sample_every = 1;       // the profiler's sample_every, named in the per-op header
};

// The caller holds state.mutex(). `end_us`: when the last phase ends (usually now).
std::string format_report(const ProfilerState &state, const ReportOptions &opt, double end_us);

// Which part of the model a node belongs to, from its label ("blk.3.ffn_up" -> "mlp").
const char *label_part(const std::string &label);
// Layer index from a "blk.N." label prefix, -1 if none.
int label_layer(const std::string &label);

} // namespace rfprof
