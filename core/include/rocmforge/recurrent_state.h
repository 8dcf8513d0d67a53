// The per-sequence state of recurrent layers (Qwen3.5's Gated DeltaNet), beside the paged KV
// cache: for each recurrent layer a conv pool [(K-1) * channels, n_seq_max] (the last K - 1
// inputs of the short convolution) and a delta-rule pool [S_k * S_v * H_v, n_seq_max] (each
// value head's state matrix), one f32 row per sequence id. A token at position 0 starts from a
// zero state (abi.h), so clearing a sequence needs no write here; copying one copies its rows.
// The state holds a sequence's whole past: it cannot be cut back to an earlier position.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/buffer_slab.h"
#include "rocmforge/graph.h"

namespace rf {

struct ModelHparams;

class RecurrentState {
public:
    RecurrentState(Backend &backend, const ModelHparams &hp, int n_seq_max);
    // Pools of model layer `layer` (nullptr for a full-attention layer).
    Tensor *conv(int64_t layer) { return conv_[(size_t)layer] ? conv_[(size_t)layer]->get() : nullptr; }
    Tensor *delta(int64_t layer) { return delta_[(size_t)layer] ? delta_[(size_t)layer]->get() : nullptr; }
    // Rows of sequence `src` copied to `dst`, every layer, through the host.
    void copy(int src, int dst);
    uint64_t bytes_per_sequence() const { return bytes_per_seq_; }
    uint64_t total_bytes() const { return bytes_per_seq_ * (uint64_t)n_seq_max_; }
    // "recurrent state: 24 layers, 3.1 MiB per sequence, 4 sequences, 12.50 MiB"
    std::string summary() const;
    static uint64_t bytes_per_sequence(const ModelHparams &hp);

private:
    int n_seq_max_;
    uint64_t bytes_per_seq_ = 0;
    int64_t n_layers_ = 0;
    std::unique_ptr<BufferSlab> slab_; // before the pools
    std::vector<std::unique_ptr<PersistentTensor>> conv_, delta_;
};

// The backend the state lives on: the first of `preferred` (the KV cache's), then the runtime's
// order, that runs SSM_CONV and GATED_DELTA_NET on it; throws rf::UsageError naming the ops when
// none does.
Backend &recurrent_state_backend(const Runtime &runtime, Backend &preferred, const ModelHparams &hp);

} // namespace rf
