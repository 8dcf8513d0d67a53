// Device tensors and nodes of a multi-node case (fusion_cases.h) on one backend plugin.
#pragma once
#include <vector>

#include "fusion_cases.h"
#include "plugin_handle.h"

namespace opcheck {

// A tensor view of h with dense strides (data set by the caller).
void set_dense(rf_tensor &t, const HostTensor &h);

struct BoundGraph {
    std::vector<rf_tensor> t;
    std::vector<rf_node> nodes;
    std::vector<rf_node *> ptrs;
};

// Device tensors for a graph case (written ones poisoned unless they keep their contents; views
// on their base's bytes) and its nodes. Freed by the plugin's free_all().
BoundGraph bind_graph(Plugin &p, const GraphCase &c);

} // namespace opcheck
