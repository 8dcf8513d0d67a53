// Mixture-of-experts cases (TOPK, MOE_WEIGHTS, MATMUL_ID, MOE_SUM) for opcheck: single nodes for
// every weight type with decode and prefill shapes, a whole expert FFN as one graph, and the
// decode/prefill shapes of Mixtral 8x7B and Qwen3-30B-A3B for --perf (bytes = the chosen
// experts' weights only).
#pragma once
#include <random>
#include <vector>

#include "fusion_cases.h"
#include "op_cases.h"

namespace opcheck {

std::vector<Case> moe_cases(std::mt19937 &rng);
std::vector<GraphCase> moe_graph_cases(std::mt19937 &rng);
// The --perf cases whose names pass `filter` (op_cases.h wanted()).
std::vector<Case> moe_perf_cases(std::mt19937 &rng, const std::string &filter);

} // namespace opcheck
