// The GPU backend observed (set_observer, ABI 2.1) must run exactly as it does unobserved: every
// multi-node case bound together as one graph (enough kernels for graph replay), run three times
// unobserved and three times observed; the written bytes must be identical, and every observed
// call reported once, its units covering the graph's nodes in order, each node once, with times;
// reported one call late (during the next compute(), the last when the observer is removed);
// calls queued without a synchronize and an observer set again (which reports what is pending)
// lose nothing.
#pragma once
#include <string>
#include <vector>

#include "fusion_cases.h"
#include "plugin_handle.h"

namespace opcheck {

// Both timing modes, each on an instance of the GPU plugin at `gpu_path` with `gpu_config` and
// its option observer_events set. Prints one line per check ("ok" / "FAIL"), counts them.
void check_observer(const std::string &gpu_path, const std::string &gpu_config, const std::vector<GraphCase> &cases, int &passed,
                    int &failed);

} // namespace opcheck
