// Multi-node cases: the node patterns the HIP backend fuses (backends/hip/fusion.h) as small
// graphs, run on the GPU plugin (which fuses them) and on the CPU plugin (which runs the nodes
// one by one); every tensor a node writes is compared.
#pragma once
#include <random>
#include <string>
#include <vector>

#include "op_cases.h"

namespace opcheck {

struct GraphTensor {
    HostTensor host;    // contents of an input (or the starting contents of a written pool)
    int view_of = -1;   // >= 0: same bytes as that tensor, this shape (dense strides)
    bool written = false; // compared after the run; poisoned first unless `keep`
    bool keep = false;    // a written tensor that starts with its contents (KV pools)
    bool weight = false;  // flagged RF_TENSOR_WEIGHT (a model weight: never written)
};

struct GraphNode {
    int op = RF_OP_NONE;
    int dst = -1;
    int src[RF_MAX_SRC]; // tensor indices, -1 = NULL source
    int32_t iparams[8] = {};
    float fparams[8] = {};
    GraphNode() { for (int &s : src) s = -1; }
};

struct GraphCase {
    std::string name;
    std::vector<GraphTensor> tensors;
    std::vector<GraphNode> nodes;
    double max_nmse = 1e-6;
};

// Each fusion with one and several activation columns, the quantized types of the decode kernels,
// odd sizes where the kernels allow them.
std::vector<GraphCase> fusion_cases(std::mt19937 &rng);

} // namespace opcheck
