// Times one node on one backend through the ABI: warm-up runs, then timed repetitions, each
// measured with the backend's events when it has them, else the host clock after synchronize.
#pragma once
#include <vector>

#include "rocmforge/abi.h"
#include "rocmforge/runtime.h"

namespace rfbench {

struct TimerOptions {
    int warmup = 2;
    int reps = 10;
    double max_seconds = 20; // stop repeating a case (after 3 reps) once it has taken this long
};

// Milliseconds per repetition. Throws rf::Error with the backend's message on failure.
std::vector<double> time_node(rf::Backend &backend, rf_node &node, const TimerOptions &opt);

} // namespace rfbench
