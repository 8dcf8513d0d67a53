// The forward pass of every supported architecture as a Graph (internal to core/model).
#pragma once
#include <cstdint>
#include <vector>

#include "rocmforge/graph.h"
#include "rocmforge/kv_cache.h"
#include "rocmforge/model.h"
#include "rocmforge/rope_angles.h"

namespace rf {

// Host arrays the graph reads (they must outlive Executor::run).
struct ForwardInputs {
    std::vector<int32_t> tokens;      // [T]
    std::vector<int32_t> positions;   // [T]
    std::vector<int32_t> slots;       // [T] KV slot each token's K/V row is written to
    std::vector<int32_t> slot_table;  // [n_kv_max, n_seq]: slot of position p of batch sequence s
    std::vector<int32_t> token_info;  // [2, T]: (batch sequence index, position)
    std::vector<int32_t> output_rows; // batch rows whose logits are wanted, ascending
    std::vector<int32_t> state_rows;  // [n_seq] hybrid models: recurrent-state row of each batch sequence
    int64_t n_kv_max = 0;
    int64_t n_seq = 0;
    // Tokens at the front that are each the only token of their sequence here (decode rows
    // ahead of prompt rows, as a server's mixed step lays them out); 0 when that is all of
    // them or none. Passed to ATTENTION as its split hint (abi.h): speed only, never results.
    int64_t single_rows = 0;
    // > 0: the caller appends TOPK and GATHER of this many candidates to the logits (part of
    // the graph's structure, so part of its key).
    int64_t top_k = 0;
    // true: the graph returns the output rows' hidden states after the final norm
    // [n_embd, rows] instead of their logits (embeddings; top_k must be 0).
    bool hidden = false;
    // The tokens' RoPE (cos, sin) rows (rope_angles.h), [2, n_rot/2, T] each, of the global
    // layers' parameters [0] and the sliding-window layers' [1]; empty: the ROPE nodes evaluate
    // the angles themselves (part of the graph's structure, so part of its key).
    std::vector<float> rope_angles[2];
};

// Everything of ForwardInputs the graph's structure depends on: inputs with equal keys give
// identical graphs (the same nodes, shapes and names), differing only in the input bytes.
struct ForwardKey {
    int64_t n_tokens = -1, n_kv_max = -1, n_seq = -1, n_outputs = -1, single_rows = -1, top_k = -1;
    int out_mode = -1;      // 0: no logits, 1: all rows, 2: a contiguous range, 3: gathered rows
    int64_t out_first = -1; // first row of a contiguous range
    bool rope_angles[2] = {false, false};
    bool hidden = false;
    bool operator==(const ForwardKey &) const = default;
};
ForwardKey forward_key(const ForwardInputs &in);

// ForwardInputs::single_rows of a token_info ([2, T]: batch sequence index in 0..n_seq-1,
// position): how many tokens at the front are each the only token of their sequence, 0 when
// all are (a decode step: no split) or the first is not.
int64_t leading_single_rows(const std::vector<int32_t> &token_info, int64_t n_seq);

// The graph's input tensors, whose host_data point into a ForwardInputs (out_ids: nullptr unless
// the output rows are gathered).
struct ForwardGraphInputs {
    Tensor *tokens = nullptr, *positions = nullptr, *slots = nullptr, *slot_table = nullptr,
           *token_info = nullptr, *out_ids = nullptr;
    Tensor *state_rows = nullptr; // hybrid models
    Tensor *rope_angles[2] = {nullptr, nullptr};
    // Points the input tensors at `in`'s arrays (which must have the key the graph was built for).
    void bind(const ForwardInputs &in) const;
};

// Adds the graph's input tensors for `in` (their host_data point into it): the tokens, positions,
// KV slots, slot table and token info, the output rows where they are gathered (neither all rows
// nor one contiguous range), and the RoPE (cos, sin) rows that `in` carries.
ForwardGraphInputs add_graph_inputs(Graph &g, const ModelHparams &hp, const ForwardInputs &in);

// Keeps only the rows of t [n, T] whose logits `in` wants (row-wise ops after this see only those):
// t itself when all are, else the gathered (gi.out_ids) or contiguous rows.
Tensor *select_output_rows(Graph &g, const ForwardGraphInputs &gi, const ForwardInputs &in, Tensor *t);

// The RoPE parameters of the model's global (local = false) or sliding-window layers with the
// host values of its frequency factors; false when those cannot be read as f32 from the file.
bool rope_params(const Model &model, const KvCache &cache, bool local, RopeParams *p);

// Builds embeddings -> layers -> final norm -> output matmul of the output rows. Returns the
// logits tensor [n_vocab, output_rows.size()] (in.hidden: the normed hidden states
// [n_embd, output_rows.size()], no output matmul) or nullptr when no row is wanted (the graph then
// only appends K/V to the cache). `inputs`, when given, receives the input tensors.
Tensor *build_forward_graph(Graph &g, const Model &model, KvCache &cache, const ForwardInputs &in,
                            ForwardGraphInputs *inputs = nullptr);
// The encoders' graph (bert, nomic-bert; encoder_graph.cpp), which build_forward_graph hands them
// to: the hidden states of the output rows (in.hidden must be set: encoders have no logits).
Tensor *build_encoder_graph(Graph &g, const Model &model, KvCache &cache, const ForwardInputs &in,
                            ForwardGraphInputs *inputs);
// The FFN parts shared by the graphs: the routed experts of h [n_embd, T] and the shared expert
// gated by sigmoid(ffn_gate_inp_shexp . h) (both [n_embd, T]).
Tensor *moe_ffn(Graph &g, const LayerWeights &w, const ModelHparams &hp, Tensor *h);
Tensor *shared_expert_ffn(Graph &g, const LayerWeights &w, Tensor *h);
// A layer's FFN of the normed h [n_embd, T]: the experts (plus a shared one where the layer has
// it) or the dense SwiGLU / GeGLU FFN: [n_embd, T].
Tensor *layer_ffn(Graph &g, const LayerWeights &w, const ModelHparams &hp, Tensor *h);
// Qwen3.5's hybrid stack (forward_qwen35.cpp), which build_forward_graph hands it to.
Tensor *build_qwen35_graph(Graph &g, const Model &model, KvCache &cache, const ForwardInputs &in,
                           ForwardGraphInputs *inputs);

// deepseek2's graph (forward_deepseek2.cpp), which build_forward_graph hands it to.
Tensor *build_deepseek2_graph(Graph &g, const Model &model, KvCache &cache, const ForwardInputs &in,
                              ForwardGraphInputs *inputs);

} // namespace rf
