// Running a model: batches of tokens from one or more sequences go through one graph each,
// appending their K/V to the shared paged cache and returning the logits asked for.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <memory>
#include <span>
#include <vector>

#include "rocmforge/graph.h"
#include "rocmforge/kv_cache.h"
#include "rocmforge/model.h"
#include "rocmforge/sampler.h"

namespace rf {

// Tokens to run. Each token is appended to its sequence: positions continue where the sequence
// stands in the cache, in batch order.
struct Batch {
    std::vector<int32_t> tokens;
    std::vector<int32_t> seq;
    std::vector<uint8_t> output; // 1: return this token's logits

    void add(int32_t token, int32_t seq_id, bool want_logits) {
        tokens.push_back(token);
        seq.push_back(seq_id);
        output.push_back(want_logits ? 1 : 0);
    }
    void clear() { tokens.clear(), seq.clear(), output.clear(); }
    size_t size() const { return tokens.size(); }
};

struct ContextParams {
    int64_t n_ctx = 4096;  // KV capacity in tokens, shared by all sequences
    int64_t n_batch = 512; // most tokens per graph; larger batches are split
    int n_seq_max = 1;
    int64_t page_size = 16;
    int type_k = RF_TYPE_F16;
    int type_v = RF_TYPE_F16;
    // Automatic prefix caching (KvPageTable): full pages of the sequences' tokens stay cached
    // after they end, and map_cached_prefix() maps them into a new sequence. Causal models
    // only: an encoder's K/V at a position depend on the tokens after it.
    bool prefix_cache = false;
};

class InferenceContext {
public:
    InferenceContext(Model &model, Runtime &runtime, const ContextParams &params);
    ~InferenceContext();

    // Runs the batch (split into graphs of at most n_batch tokens). Returns the logits of the
    // tokens marked output, in batch order, n_vocab floats each (valid until the next call).
    // Throws ContextFullError before running anything when the cache cannot hold the batch,
    // rf::Error for a bad token id or sequence id.
    const std::vector<float> &decode(const Batch &batch);
    // Sees the activations entering every weight matrix product (`rocmforge imatrix`): when set,
    // graphs built from then on keep each MATMUL / MATMUL_ID input with a persistent weight (and
    // the router logits an expert product's TOPK chose from), and after each graph of decode()
    // the observer is called once per weight, in graph order, with the weight's name
    // ("blk.0.attn_q.weight") and its input. An empty function removes it. Throws rf::Error
    // when an expert product's ids do not come from a TOPK of f32 logits.
    struct MatmulInput {
        const float *x = nullptr; // f32 rows of n_cols (the weight's row length)
        int64_t n_cols = 0, n_rows = 0;
        // MATMUL_ID only (ids null otherwise): x holds per token x_per_token rows, and
        // ids[k + n_ids * t] (k < n_ids) is the k-th expert of token t, whose input is row
        // k % x_per_token of that token's rows; n_expert experts in the weight.
        const int32_t *ids = nullptr;
        int64_t n_ids = 0, x_per_token = 0, n_tokens = 0, n_expert = 0;
    };
    using MatmulInputObserver = std::function<void(const std::string &weight, const MatmulInput &input)>;
    void set_matmul_input_observer(MatmulInputObserver observer);
    // decode() in two halves, so that the host can work while the device runs the batch:
    // submit() validates, reserves and starts it (all of decode() when the batch needs several
    // graphs) and returns; collect() waits and returns the logits as decode() would. The logits
    // of the call before stay valid until collect(). One batch at a time: decode() or submit()
    // with one submitted, or collect() without, throws rf::Error. Errors of the run itself may
    // come from either half.
    void submit(const Batch &batch);
    const std::vector<float> &collect();

    // k > 0: from the next batch on, decode() and collect() return no logits (an empty vector)
    // and candidates() holds each output row's k best instead (Sampler::sample_candidates);
    // 0 (the default): whole logits rows. Throws rf::Error for k < 0 or k > n_vocab.
    void set_output_top_k(int64_t k);
    int64_t output_top_k() const { return candidates_.k; }
    // true: from the next batch on, decode() and collect() return each output row's hidden
    // state after the final norm (n_embd floats a row, output_width()) instead of its logits:
    // embeddings. Throws rf::Error with an output top-k set, or a batch submitted.
    void set_output_hidden(bool on);
    bool output_hidden() const { return output_hidden_; }
    // Floats per output row of decode(): n_embd with output_hidden(), else n_vocab.
    int64_t output_width() const;
    // Valid after decode() / collect() with output_top_k() > 0, until the next call.
    const Candidates &candidates() const { return candidates_; }
    // Whether k candidates per row save anything: the logits live in device memory (a GPU), so
    // the selection runs there and a few bytes per row come back instead of the row, and k is at
    // most kFastTopK (beyond it the GPU's selection takes a slow path: read the rows instead).
    static constexpr int64_t kFastTopK = 256;
    bool candidates_pay_off(int64_t k) const;

    void clear_sequence(int seq) { cache_.pages().clear(seq); }
    // Prefix caching: maps the cached pages `prompt` begins with into the empty sequence `seq`
    // (KvPageTable::map_cached_prefix) and returns the positions mapped; the prompt's tokens
    // from there on are the ones to decode. 0 when the context caches no prefixes.
    int64_t map_cached_prefix(int seq, std::span<const int32_t> prompt) { return cache_.pages().map_cached_prefix(seq, prompt); }
    int64_t seq_length(int seq) const { return cache_.pages().length(seq); }
    KvCache &cache() { return cache_; }
    const Model &model() const { return model_; }
    const ContextParams &params() const { return params_; }
    Executor &executor() { return *executor_; }
    Runtime &runtime() { return runtime_; }

private:
    // Checks the batch and reserves its pages (all or nothing); returns its output rows.
    size_t reserve(const Batch &batch);
    // logits_ (or candidates_) sized for n_outputs rows, logits_ pinned for the model's backend.
    void size_outputs(size_t n_outputs);
    // Runs tokens [first, first + count) as one graph; read: waits and reads its output rows
    // into rows out_row.. of logits_ or candidates_; else returns while it runs (submit()).
    void run_graph(const Batch &batch, size_t first, size_t count, bool read, size_t out_row);
    // The last graph's output rows into rows out_row.. (waits for the graph).
    void read_outputs(size_t out_row, size_t rows);
    // Prefix caching: the full pages of the batch's sequences into the cache, once their K/V
    // are written (after the outputs were read).
    void publish_pages();

    Model &model_;
    Runtime &runtime_;
    ContextParams params_;
    KvCache cache_;
    std::unique_ptr<Executor> executor_;
    std::vector<float> logits_;
    Candidates candidates_; // its k: the output top-k (0: whole rows)
    bool output_hidden_ = false;
    // The last graph with its input arrays and per-call scratch: a step whose inputs have the
    // same structure (decode steps between n_kv_max roundings) runs it again instead of
    // building a new one.
    struct Step;
    std::unique_ptr<Step> step_;
    MatmulInputObserver matmul_observer_;
    // Adds the observer's probes to a newly built graph (step_->probes).
    void add_matmul_probes(Graph &g);
    void report_matmul_inputs();
};

// A context's output top-k for one scope (a generation); the previous one is back at its end.
class ScopedOutputTopK {
public:
    ScopedOutputTopK(InferenceContext &ctx, int64_t k) : ctx_(ctx), previous_(ctx.output_top_k()) { ctx.set_output_top_k(k); }
    ~ScopedOutputTopK() {
        try {
            ctx_.set_output_top_k(previous_);
        } catch (...) { // a batch left submitted by an exception: the next submit() reports it
        }
    }
    ScopedOutputTopK(const ScopedOutputTopK &) = delete;
    ScopedOutputTopK &operator=(const ScopedOutputTopK &) = delete;

private:
    InferenceContext &ctx_;
    int64_t previous_;
};

// A context's hidden-state output for one scope (an embedding); the previous mode is back at
// its end.
class ScopedOutputHidden {
public:
    ScopedOutputHidden(InferenceContext &ctx, bool on) : ctx_(ctx), previous_(ctx.output_hidden()) { ctx.set_output_hidden(on); }
    ~ScopedOutputHidden() {
        try {
            ctx_.set_output_hidden(previous_);
        } catch (...) { // a batch left submitted by an exception: the next submit() reports it
        }
    }
    ScopedOutputHidden(const ScopedOutputHidden &) = delete;
    ScopedOutputHidden &operator=(const ScopedOutputHidden &) = delete;

private:
    InferenceContext &ctx_;
    bool previous_;
};

} // namespace rf
