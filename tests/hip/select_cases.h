// Selection cases (TOPK, GATHER) for opcheck: a sampler's candidates over vocabulary-sized rows
// (random rows, heavy ties, -0 / +0, -inf, and rows whose largest values crowd into a few of the
// kernel's groups, which takes its k-round path), and TOPK -> GATHER as one graph. The router
// sizes of a mixture of experts are in moe_cases.cpp.
#pragma once
#include <random>
#include <string>
#include <vector>

#include "fusion_cases.h"
#include "op_cases.h"

namespace opcheck {

std::vector<Case> select_cases(std::mt19937 &rng);
std::vector<GraphCase> select_graph_cases(std::mt19937 &rng);
// The --perf cases whose names pass `filter` (op_cases.h wanted()).
std::vector<Case> select_perf_cases(std::mt19937 &rng, const std::string &filter);

} // namespace opcheck
