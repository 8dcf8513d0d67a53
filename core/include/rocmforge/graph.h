// Tensors, the compute graph builder and the executor that schedules a graph over backends.
#pragma once
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "rocmforge/abi.h"
#include "rocmforge/rope_yarn.h"
#include "rocmforge/runtime.h"

namespace rf {

class BufferSlab; // buffer_slab.h

enum class TensorKind {
    Persistent,   // weights, KV pools: allocated by their owner, live across graphs
    Input,        // host data uploaded by the executor before the graph runs
    Intermediate, // produced by a node; memory assigned by the executor
    View,         // a reshape/row range of another tensor
};

struct Tensor {
    rf_tensor t{};               // t.data valid once allocated; t.name: see label()
    TensorKind kind = TensorKind::Intermediate;
    Backend *home = nullptr;     // backend whose memory holds the data
    // Owned name of inputs and persistent tensors (t.name points at it). Tensors a Graph creates
    // for a node or a view leave it empty: their t.name points into the graph's label storage.
    std::string name;
    Tensor *view_src = nullptr;  // View: the tensor it views
    uint64_t view_offset = 0;    // View: byte offset into view_src
    const void *host_data = nullptr; // Input: host bytes (valid until Executor::run returns)

    // Executor scratch for one run (graph-owned tensors only; reset at the start of each run).
    struct Plan {
        int first = -1, last = -1; // node indices of the first writer/reader and last reader
        int readers = 0;
        uint64_t offset = 0;
        bool placed = false;       // has an arena offset
    } plan;
    int graph_index = -1; // position in its Graph's tensors() (-1: not graph-owned)

    // The name profilers and messages show: "blk.3.attn_q", "tokens", "cache_k_l3".
    const char *label() const { return t.name ? t.name : name.c_str(); }
    int type() const { return t.type; }
    int64_t ne(int i) const { return t.ne[i]; }
    int64_t n_elements() const { return t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]; }
    uint64_t nbytes() const; // contiguous size
    bool contiguous() const;
};

// Fills ne/nb for a contiguous tensor of `type` (row-major, ne[0] fastest).
void init_tensor_layout(rf_tensor &t, int type, std::initializer_list<int64_t> ne);
void init_tensor_layout(rf_tensor &t, int type, const int64_t ne[4]);

// A persistent tensor with its own buffer on a backend (weights, KV pools). Frees on destruction.
class PersistentTensor {
public:
    // Its bytes from `slab` when given (freed with the slab), else an allocation of its own.
    PersistentTensor(Backend &backend, std::string name, int type, std::initializer_list<int64_t> ne,
                     BufferSlab *slab = nullptr);
    // Places existing host bytes (e.g. mmap'd GGUF data): wrapped without a copy when possible.
    PersistentTensor(Backend &backend, std::string name, int type, const int64_t ne[4],
                     const void *host_bytes, BufferSlab *slab = nullptr);
    ~PersistentTensor();
    PersistentTensor(const PersistentTensor &) = delete;
    PersistentTensor &operator=(const PersistentTensor &) = delete;
    Tensor *get() { return &tensor_; }
    const Tensor *get() const { return &tensor_; }

private:
    Tensor tensor_;
    rf_buffer_desc buffer_{};
};

// A sequence whose elements never move (like std::deque), stored in chunks of 128 elements, so
// that building a graph of a few hundred nodes takes a handful of allocations.
template <class T>
class StableVector {
    static constexpr size_t kShift = 7, kChunk = size_t(1) << kShift;

public:
    template <class V>
    class Iter {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = std::remove_const_t<V>;
        using difference_type = std::ptrdiff_t;
        using pointer = V *;
        using reference = V &;
        Iter() = default;
        Iter(const std::unique_ptr<value_type[]> *chunks, size_t i) : chunks_(chunks), i_(i) {}
        reference operator*() const { return chunks_[i_ >> kShift][i_ & (kChunk - 1)]; }
        pointer operator->() const { return &**this; }
        Iter &operator++() { ++i_; return *this; }
        Iter operator++(int) { Iter r = *this; ++i_; return r; }
        bool operator==(const Iter &o) const { return i_ == o.i_; }
        bool operator!=(const Iter &o) const { return i_ != o.i_; }

    private:
        const std::unique_ptr<value_type[]> *chunks_ = nullptr;
        size_t i_ = 0;
    };
    using iterator = Iter<T>;
    using const_iterator = Iter<const T>;
    using value_type = T;
    using size_type = size_t;

    StableVector() = default;
    StableVector(const StableVector &) = delete;
    StableVector &operator=(const StableVector &) = delete;

    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T &operator[](size_t i) { return chunks_[i >> kShift][i & (kChunk - 1)]; }
    const T &operator[](size_t i) const { return chunks_[i >> kShift][i & (kChunk - 1)]; }
    T &back() { return (*this)[size_ - 1]; }
    const T &back() const { return (*this)[size_ - 1]; }
    T &front() { return (*this)[0]; }
    const T &front() const { return (*this)[0]; }
    iterator begin() { return {chunks_.data(), 0}; }
    iterator end() { return {chunks_.data(), size_}; }
    const_iterator begin() const { return {chunks_.data(), 0}; }
    const_iterator end() const { return {chunks_.data(), size_}; }
    // Value-initialises the new element (elements of a chunk are constructed with the chunk).
    T &emplace_back() {
        if ((size_ >> kShift) == chunks_.size()) chunks_.push_back(std::make_unique<T[]>(kChunk));
        return (*this)[size_++];
    }
    void push_back(const T &v) { emplace_back() = v; }

private:
    std::vector<std::unique_ptr<T[]>> chunks_;
    size_t size_ = 0;
};

// Builds one forward pass. Op semantics are those of abi.h. Every op returns a new tensor owned
// by the graph; `label` names the node for profilers (a prefix set with set_prefix is prepended).
//
// Running the same Graph object again (a decode loop keeping its graph) reuses the executor's plan,
// bindings and node list outright as long as the graph has not changed since: no op or tensor was
// added and the non-const nodes() / tensors() accessors were not called (each of these marks the
// graph changed). Between such runs only the inputs' host bytes (or host_data pointers) change.
class Graph {
public:
    Graph();
    Graph(const Graph &) = delete;
    Graph &operator=(const Graph &) = delete;

    void set_prefix(std::string prefix) { prefix_ = std::move(prefix); } // e.g. "blk.3."

    Tensor *input(const std::string &name, int type, std::initializer_list<int64_t> ne,
                  const void *host_data);

    Tensor *get_rows(Tensor *table, Tensor *ids, const char *label = "get_rows");
    Tensor *matmul(Tensor *w, Tensor *x, const char *label = "matmul");
    Tensor *add(Tensor *a, Tensor *b, const char *label = "add");
    Tensor *mul(Tensor *a, Tensor *b, const char *label = "mul");
    Tensor *scale(Tensor *a, float s, const char *label = "scale");
    Tensor *rms_norm(Tensor *a, float eps, const char *label = "rms_norm");
    // (a - mean) / sqrt(var + eps) over each row (abi.h LAYER_NORM).
    Tensor *layer_norm(Tensor *a, float eps, const char *label = "layer_norm");
    // angles: optional f32[2, n_rot/2, T], the tokens' (cos, sin) rows (rope_angles.h; abi.h ROPE src3).
    // yarn: YaRN's parameters (abi.h ROPE iparams[2] = 1), or nullptr for plain RoPE.
    Tensor *rope(Tensor *x, Tensor *positions, Tensor *freq_factors, int mode, int n_rot,
                 float freq_base, float freq_scale, const char *label = "rope", Tensor *angles = nullptr,
                 const RopeYarn *yarn = nullptr);
    Tensor *softmax(Tensor *a, float scale, const char *label = "softmax");
    Tensor *silu(Tensor *a, const char *label = "silu");
    Tensor *swiglu(Tensor *gate, Tensor *up, const char *label = "swiglu");
    // gpt-oss's clamped SwiGLU (abi.h SWIGLU_OAI).
    Tensor *swiglu_oai(Tensor *gate, Tensor *up, float alpha, float limit, const char *label = "swiglu_oai");
    Tensor *geglu(Tensor *gate, Tensor *up, const char *label = "geglu");
    Tensor *gelu(Tensor *a, const char *label = "gelu");
    Tensor *sigmoid(Tensor *a, const char *label = "sigmoid");
    Tensor *softcap(Tensor *a, float cap, const char *label = "softcap");
    // Writes src rows into pool rows `slots` (in place). Returns the pool; later readers of the
    // pool in this graph are ordered after it.
    Tensor *set_rows(Tensor *pool, Tensor *src, Tensor *slots, const char *label = "kv_append");
    Tensor *attention(Tensor *q, Tensor *k_pool, Tensor *v_pool, Tensor *slot_table,
                      Tensor *token_info, float scale, const char *label = "attention");
    // Attention variants (abi.h): only the last `window` positions (0: all), scores soft-capped
    // at `softcap` (0: none), every position of the sequence in the node (bidirectional:
    // encoders; no window then).
    struct AttentionLimits {
        int64_t window = 0;
        float softcap = 0.0f;
        bool bidirectional = false;
        Tensor *sinks = nullptr; // f32 [Hq]: per-head sink logits in the denominator (gpt-oss)
        // V head size (abi.h, ABI 2.15) when it differs from Q's; the V pool then holds the V
        // heads at the start of its rows (latent attention: the K pool itself). 0: Q's.
        int64_t v_head_size = 0;
    };
    // single_rows: ATTENTION's split hint (abi.h iparams[1]; 0: none).
    Tensor *attention(Tensor *q, Tensor *k_pool, Tensor *v_pool, Tensor *slot_table,
                      Tensor *token_info, float scale, AttentionLimits limits, const char *label,
                      int64_t single_rows = 0);
    Tensor *argmax(Tensor *a, const char *label = "argmax");
    // Mixture of experts (abi.h): the k largest router logits of each token, their gating
    // weights (over_chosen: softmax over the k chosen; else the chosen of the softmax over all),
    // the chosen experts' matmuls of a 3-D weight [K, N, E], and their weighted sum.
    Tensor *topk(Tensor *logits, int64_t k, const char *label = "topk");
    // The entries of each row of a [E, M] f32 tensor at the indices ids [k, M] (TOPK's): f32 [k, M].
    Tensor *gather(Tensor *a, Tensor *ids, const char *label = "gather");
    Tensor *moe_weights(Tensor *logits, Tensor *ids, bool over_chosen, const char *label = "moe_weights");
    // The softmax of the chosen logits from them alone (abi.h MOE_WEIGHTS iparams[0] = 2: gpt-oss).
    Tensor *moe_weights_of_chosen(Tensor *logits, Tensor *ids, const char *label = "moe_weights");
    // The chosen entries of probabilities [E, M] (e.g. SIGMOID's) divided by their sum (abi.h
    // MOE_WEIGHTS iparams[0] = 3: DeepSeek-V3's normalised sigmoid gating).
    Tensor *moe_weights_of_probs(Tensor *probs, Tensor *ids, const char *label = "moe_weights");
    // a [E, M] with the experts outside the n_used best of n_groups groups set to -inf (abi.h
    // MOE_GROUP_MASK: DeepSeek-V3's grouped top-k).
    Tensor *moe_group_mask(Tensor *a, int64_t n_groups, int64_t n_used, const char *label = "moe_group_mask");
    // a [Da, ...] followed by b [Db, ...] along dim 0 (abi.h CONCAT).
    Tensor *concat(Tensor *a, Tensor *b, const char *label = "concat");
    Tensor *matmul_id(Tensor *w, Tensor *x, Tensor *ids, const char *label = "matmul_id");
    // y [N, S, M] plus the bias row bias[:, ids[s, m]] of each slot's expert (bias f32 [N, E]).
    Tensor *add_id(Tensor *y, Tensor *bias, Tensor *ids, const char *label = "add_id");
    Tensor *moe_sum(Tensor *y, Tensor *weights, const char *label = "moe_sum");
    Tensor *copy(Tensor *a, int type, const char *label = "copy");
    // Recurrent layers (abi.h SSM_CONV, GATED_DELTA_NET, SOFTPLUS; graph_recurrent.cpp): the
    // state pools are updated in place (like set_rows' pool), rows picks each batch sequence's row.
    Tensor *ssm_conv(Tensor *x, Tensor *kernel, Tensor *state, Tensor *token_info, Tensor *rows, const char *label = "ssm_conv");
    struct DeltaNetHeads {
        int64_t n_k_heads, k_dim, n_v_heads, v_dim;
        bool interleaved = false; // value head h reads key head h / (Hv / Hk), else h % Hk
    };
    Tensor *gated_delta_net(Tensor *qkv, Tensor *g, Tensor *beta, Tensor *state, Tensor *token_info, Tensor *rows,
                            DeltaNetHeads heads, float l2_eps, float q_scale, const char *label = "gated_delta_net");
    Tensor *softplus(Tensor *a, const char *label = "softplus");

    // Views (no node): same bytes, new shape; `a` must be contiguous.
    Tensor *reshape(Tensor *a, std::initializer_list<int64_t> ne);
    // Rows [first, first+count) of a 2-D tensor (ne[1] is the row index).
    Tensor *rows(Tensor *a, int64_t first, int64_t count);

    // The Tensor objects behind each node's dst and sources (same order as nodes()).
    struct NodeRefs {
        Tensor *dst = nullptr;
        Tensor *src[RF_MAX_SRC] = {};
    };

    const StableVector<rf_node> &nodes() const { return nodes_; }
    const StableVector<NodeRefs> &node_refs() const { return refs_; }
    const StableVector<Tensor> &tensors() const { return tensors_; }
    // Mutable access marks the graph changed (the executor then checks its plan again).
    StableVector<rf_node> &nodes() { ++version_; return nodes_; }
    StableVector<Tensor> &tensors() { ++version_; return tensors_; }

    // Identity of this graph object (unique per process) and a count of its changes: equal pairs
    // mean the same, unchanged graph.
    uint64_t id() const { return id_; }
    uint64_t version() const { return version_; }

private:
    friend class Executor;
    Tensor *new_tensor(TensorKind kind, int type, std::initializer_list<int64_t> ne);
    Tensor *add_node(int op, Tensor *dst, std::initializer_list<Tensor *> srcs, const char *label);
    uint64_t id_;
    uint64_t version_ = 0;
    // Copies prefix_ + label, NUL-terminated, into label storage that never moves.
    const char *store_label(const char *label);
    std::string prefix_;
    StableVector<Tensor> tensors_;
    StableVector<rf_node> nodes_;
    StableVector<NodeRefs> refs_;
    std::vector<std::unique_ptr<char[]>> label_blocks_;
    size_t label_used_ = 0, label_room_ = 0; // in the last block
};

// Schedules a graph: assigns each node to a backend (config op_overrides, then the first backend
// in priority order whose supports_op accepts it, in-place nodes to their target's home),
// allocates intermediates in per-backend arenas (reused across runs; memory of dead tensors is
// recycled within a run), uploads inputs, inserts copies where a source lives on another backend,
// and runs the node sequence backend by backend. Throws rf::Error when no backend can run a node.
class Executor {
public:
    // home: where nodes without weights run when it supports them, before the priority order
    // (the backend holding the model's weights); nullptr: the runtime's first.
    explicit Executor(Runtime &runtime, Backend *home = nullptr);
    ~Executor();
    // wait = false: returns once every backend has been handed its part (a GPU may still be
    // running it); read() then waits for what it reads. The next run() must come after that read.
    void run(Graph &graph, bool wait = true);
    // Copies a tensor's bytes (any backend) into host memory. The tensor must be contiguous.
    void read(const Tensor *t, void *dst, uint64_t bytes);
    // Bytes reserved in arenas, per backend (for memory reports).
    uint64_t arena_bytes(const Backend *b) const;
    // At debug level (-vv, ROCMFORGE_LOG=debug) plan() logs each node's backend and the reason.

private:
    struct Impl;
    struct Step;
    void plan(Graph &g, std::vector<Step> &steps, std::vector<Tensor *> &order);
    void bind_and_execute(Graph &g, std::vector<Step> &steps, std::vector<Tensor *> &order);
    void rerun(Graph &g);
    std::unique_ptr<Impl> impl_;
};

} // namespace rf
