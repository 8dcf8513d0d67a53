// The LLaMA-family forward pass as a Graph (internal to core/model).
#pragma once
#include <cstdint>
#include <vector>

#include "rocmforge/graph.h"
#include "rocmforge/kv_cache.h"
#include "rocmforge/model.h"

namespace rf {

// Host arrays the graph reads (they must outlive Executor::run).
struct ForwardInputs {
    std::vector<int32_t> tokens;      // [T]
    std::vector<int32_t> positions;   // [T]
    std::vector<int32_t> slots;       // [T] KV slot each token's K/V row is written to
    std::vector<int32_t> slot_table;  // [n_kv_max, n_seq]: slot of position p of batch sequence s
    std::vector<int32_t> token_info;  // [2, T]: (batch sequence index, position)
    std::vector<int32_t> output_rows; // batch rows whose logits are wanted, ascending
    int64_t n_kv_max = 0;
    int64_t n_seq = 0;
};

// Builds embeddings -> layers -> final norm -> output matmul of the output rows. Returns the
// logits tensor [n_vocab, output_rows.size()] or nullptr when no row is wanted (the graph then
// only appends K/V to the cache).
Tensor *build_forward_graph(Graph &g, const Model &model, KvCache &cache, const ForwardInputs &in);

} // namespace rf
