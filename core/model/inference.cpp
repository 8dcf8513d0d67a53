// Batch bookkeeping around the forward graph: positions, KV slots, the attention slot table,
// page reservation (all or nothing) and reading the logits (or their top-k candidates) back.
#include "rocmforge/inference.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "forward_graph.h"
#include "host_pin.h"
#include "rocmforge/types.h"

namespace rf {

static KvCacheParams cache_params(const ContextParams &p, const ModelHparams &hp) {
    KvCacheParams c;
    c.k_only = hp.is_mla();
    c.n_ctx = p.n_ctx;
    c.page_size = p.page_size;
    c.n_seq_max = p.n_seq_max;
    c.type_k = p.type_k;
    c.type_v = p.type_v;
    c.prefix_cache = p.prefix_cache;
    return c;
}

// The graph of the last run_graph() call with the arrays it reads, and scratch indexed by
// sequence id (n_seq_max entries each) that decode() and run_graph() refill on every call.
struct InferenceContext::Step {
    ForwardInputs in;
    ForwardKey key; // of `graph`
    std::unique_ptr<Graph> graph;
    ForwardGraphInputs inputs;
    Tensor *logits = nullptr;
    Tensor *top_ids = nullptr, *top_logits = nullptr; // in.top_k > 0: the candidates (TOPK, GATHER)
    std::vector<int64_t> new_tokens; // decode(): tokens of each sequence in the batch
    std::vector<int> seq_index;      // run_graph(): index in order of first appearance, -1: absent
    std::vector<int64_t> next_pos;   // run_graph(): next position of each sequence present
    std::vector<int> batch_seqs;     // run_graph(): sequences in order of first appearance
    std::vector<std::vector<int32_t>> seq_tokens; // run_graph(): each one's tokens in this graph
    HostPin logits_pin;              // logits_ page-locked for the model's backend (host_pin.h)
    // The (cos, sin) rows handed to the ROPE nodes of steps of few tokens: of the global layers'
    // parameters [0] and the sliding-window layers' [1] (nullptr: no such layers, or factors the
    // host cannot read).
    std::unique_ptr<RopeAngleCache> rope_angles[2];
    // submit() / collect(): the submitted batch's state and its output rows.
    enum class Pending { None, Running, Done } pending = Pending::None;
    size_t pending_outputs = 0;
    // set_matmul_input_observer(): per distinct MATMUL input of `graph`, an unread copy (kept
    // valid after the run) and the weights it enters; probe_host: the copy read back.
    struct Probe {
        Tensor *kept = nullptr;
        std::vector<std::string> weights;
        Tensor *logits = nullptr; // MATMUL_ID: the kept router logits its TOPK chose from
        int64_t n_ids = 0, n_expert = 0;
    };
    std::vector<Probe> probes;
    std::vector<float> probe_host, logits_host;
    std::vector<int32_t> ids_host;
};

InferenceContext::InferenceContext(Model &model, Runtime &runtime, const ContextParams &params)
    : model_(model), runtime_(runtime), params_(params),
      cache_(kv_cache_backend(runtime, model.backend(), model.hparams()), model.hparams().n_layer_kv(), model.hparams().n_embd_kv(),
             cache_params(params, model.hparams())),
      executor_(std::make_unique<Executor>(runtime, &model.backend())), step_(std::make_unique<Step>()) {
    if (params_.n_batch <= 0) throw UsageError("batch size (-b) must be positive");
    if (params_.prefix_cache && model.hparams().encoder)
        throw UsageError("prefix caching needs a causal model; " + model.hparams().arch_name +
                         " attends both ways (each position's K/V depend on the tokens after it)");
    if (model.hparams().hybrid()) {
        if (params_.prefix_cache)
            throw UsageError("prefix caching is not supported for " + model.hparams().arch_name +
                             ": the recurrent state of its DeltaNet layers is not kept per cached page");
        Backend &home = kv_cache_backend(runtime, model.backend(), false);
        cache_.attach_recurrent(std::make_unique<RecurrentState>(recurrent_state_backend(runtime, home, model.hparams()),
                                                                 model.hparams(), params_.n_seq_max));
    }
    // Attention reads each head's slice of a pool row: a block type must not straddle heads.
    for (int type : {params_.type_k, params_.type_v}) {
        const int64_t block = type_traits(type)->block_size;
        if (model.hparams().head_dim % block != 0)
            throw UsageError(std::string("KV cache type ") + type_name(type) + " needs a head size that is a multiple of " +
                             std::to_string(block) + "; this model's is " + std::to_string(model.hparams().head_dim) +
                             " (use f16 or f32)");
    }
    const size_t n_seq = (size_t)params_.n_seq_max; // > 0: the page table checked it
    step_->new_tokens.resize(n_seq);
    step_->seq_index.resize(n_seq);
    step_->next_pos.resize(n_seq);
    step_->seq_tokens.resize(n_seq);
    // Room for one row per sequence from the start: decode steps then never move the buffer
    // (which would unpin and pin it again).
    logits_.reserve(n_seq * (size_t)model.hparams().n_vocab);
    const ModelHparams &hp = model.hparams();
    const bool has_local = hp.n_swa > 0 && hp.swa_pattern > 0;
    for (int i = 0; i < (has_local ? 2 : 1); ++i) {
        RopeParams p;
        if (rope_params(model, cache_, i == 1, &p) && p.n_rot > 0)
            step_->rope_angles[i] = std::make_unique<RopeAngleCache>(p, cache_.pages().n_slots());
    }
}

InferenceContext::~InferenceContext() = default;

const std::vector<float> &InferenceContext::decode(const Batch &batch) {
    if (step_->pending != Step::Pending::None) throw Error("decode: a submitted batch was not collected");
    const size_t n_outputs = reserve(batch);
    size_outputs(n_outputs);
    size_t out_row = 0;
    for (size_t first = 0; first < batch.size(); first += (size_t)params_.n_batch) {
        const size_t count = std::min(batch.size() - first, (size_t)params_.n_batch);
        run_graph(batch, first, count, true, out_row);
        for (size_t i = first; i < first + count; ++i) out_row += batch.output[i] ? 1 : 0;
    }
    publish_pages();
    return logits_;
}

void InferenceContext::publish_pages() {
    KvPageTable &pages = cache_.pages();
    if (!pages.prefix_cache()) return;
    for (int seq = 0; seq < params_.n_seq_max; ++seq)
        if (step_->new_tokens[(size_t)seq] > 0) pages.publish(seq);
}

void InferenceContext::submit(const Batch &batch) {
    if (step_->pending != Step::Pending::None) throw Error("decode: a submitted batch was not collected");
    if (batch.size() == 0 || batch.size() > (size_t)params_.n_batch) { // several graphs (or none): decode() as it is, collect() returns it
        decode(batch);
        step_->pending = Step::Pending::Done;
        return;
    }
    step_->pending_outputs = reserve(batch);
    run_graph(batch, 0, batch.size(), false, 0);
    step_->pending = Step::Pending::Running;
}

const std::vector<float> &InferenceContext::collect() {
    Step &st = *step_;
    if (st.pending == Step::Pending::None) throw Error("decode: collect() without a submitted batch");
    const Step::Pending p = st.pending;
    st.pending = Step::Pending::None;
    if (p == Step::Pending::Done) return logits_;
    size_outputs(st.pending_outputs);
    read_outputs(0, st.pending_outputs);
    publish_pages();
    return logits_;
}

bool InferenceContext::candidates_pay_off(int64_t k) const { return k > 0 && k <= kFastTopK && !model_.backend().host_memory(); }

void InferenceContext::set_output_top_k(int64_t k) {
    if (k < 0 || k > model_.hparams().n_vocab)
        throw Error("output top-k " + std::to_string(k) + " outside 0.." + std::to_string(model_.hparams().n_vocab));
    if (step_->pending != Step::Pending::None) throw Error("output top-k: a submitted batch was not collected");
    if (k > 0 && output_hidden_) throw Error("output top-k: the context returns hidden states (embeddings), not logits");
    candidates_.k = k;
}

void InferenceContext::set_output_hidden(bool on) {
    if (step_->pending != Step::Pending::None) throw Error("hidden-state output: a submitted batch was not collected");
    if (on && candidates_.k > 0) throw Error("hidden-state output: an output top-k is set");
    output_hidden_ = on;
}

int64_t InferenceContext::output_width() const {
    return output_hidden_ ? model_.hparams().n_embd : model_.hparams().n_vocab;
}

// Every float is written by the reads that follow (each graph reads all its output rows): no
// zero fill. A buffer that must grow is unpinned before it moves. (Not pinned beyond 256 MiB:
// page-locked memory is the whole machine's, and a buffer that large is a prompt's every logit,
// read once.) With candidates, no logits come back.
void InferenceContext::size_outputs(size_t n_outputs) {
    if (candidates_.k > 0) {
        candidates_.ids.resize(n_outputs * (size_t)candidates_.k);
        candidates_.logits.resize(n_outputs * (size_t)candidates_.k);
        n_outputs = 0;
    }
    const size_t n_logits = n_outputs * (size_t)output_width();
    if (n_logits > logits_.capacity()) step_->logits_pin.release();
    logits_.resize(n_logits);
    const uint64_t pin_bytes = logits_.capacity() * sizeof(float);
    if (pin_bytes <= (256ull << 20)) step_->logits_pin.ensure(&model_.backend(), logits_.data(), pin_bytes);
    else step_->logits_pin.release();
}

size_t InferenceContext::reserve(const Batch &batch) {
    const ModelHparams &hp = model_.hparams();
    if (batch.seq.size() != batch.tokens.size() || batch.output.size() != batch.tokens.size())
        throw Error("decode: batch arrays differ in length");

    // Validate everything and reserve all pages up front, so a full cache changes nothing.
    std::vector<int64_t> &new_tokens = step_->new_tokens; // by sequence id; 0: not in the batch
    std::fill(new_tokens.begin(), new_tokens.end(), 0);
    size_t n_outputs = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
        if (batch.tokens[i] < 0 || batch.tokens[i] >= hp.n_vocab)
            throw Error("decode: token id " + std::to_string(batch.tokens[i]) + " at batch index " +
                        std::to_string(i) + " is outside the vocabulary (0.." + std::to_string(hp.n_vocab - 1) + ")");
        if (batch.seq[i] < 0 || batch.seq[i] >= params_.n_seq_max)
            throw Error("decode: sequence id " + std::to_string(batch.seq[i]) + " at batch index " +
                        std::to_string(i) + " is outside 0.." + std::to_string(params_.n_seq_max - 1));
        new_tokens[(size_t)batch.seq[i]]++;
        n_outputs += batch.output[i] ? 1 : 0;
    }
    KvPageTable &pages = cache_.pages();
    // All sequences together hold at most n_ctx tokens (-c), even when the page-rounded pool
    // has a few slots more.
    int64_t held = 0;
    for (int s = 0; s < params_.n_seq_max; ++s) held += pages.length(s);
    if (held + (int64_t)batch.size() > params_.n_ctx) {
        int seq = 0; // the lowest sequence id in the batch
        while (new_tokens[(size_t)seq] == 0) ++seq;
        throw ContextFullError("context full: " +
                                   (params_.n_seq_max == 1 ? "sequence " + std::to_string(seq) + " holds "
                                                           : "the sequences hold ") +
                                   std::to_string(held) + " tokens and " + std::to_string(batch.size()) +
                                   " more would exceed the context size of " + std::to_string(params_.n_ctx) + " (-c)",
                               seq);
    }
    // Sequences in ascending id order.
    int64_t pages_total = 0;
    int full_seq = -1;
    for (int seq = 0; seq < params_.n_seq_max; ++seq) {
        const int64_t n = new_tokens[(size_t)seq];
        if (n == 0) continue;
        pages_total += pages.pages_needed(seq, n);
        if (pages_total > pages.free_pages() && full_seq < 0) full_seq = seq;
    }
    if (full_seq >= 0)
        throw ContextFullError("context full: sequence " + std::to_string(full_seq) + " holds " +
                                   std::to_string(pages.length(full_seq)) + " tokens; the batch needs " +
                                   std::to_string(pages_total) + " more pages of " +
                                   std::to_string(pages.page_size()) + " tokens but the KV cache (" +
                                   std::to_string(pages.n_slots()) + " tokens) has " +
                                   std::to_string(pages.free_pages()) + " free; raise -c",
                               full_seq);
    for (int seq = 0; seq < params_.n_seq_max; ++seq)
        if (new_tokens[(size_t)seq] > 0) pages.reserve(seq, new_tokens[(size_t)seq]);

    return n_outputs;
}

void InferenceContext::read_outputs(size_t out_row, size_t rows) {
    const Step &st = *step_;
    if (!st.logits || rows == 0) return;
    if (st.top_ids) {
        const size_t k = (size_t)st.in.top_k;
        executor_->read(st.top_ids, candidates_.ids.data() + out_row * k, (uint64_t)(rows * k) * sizeof(int32_t));
        executor_->read(st.top_logits, candidates_.logits.data() + out_row * k, (uint64_t)(rows * k) * sizeof(float));
        return;
    }
    const size_t width = (size_t)(st.in.hidden ? model_.hparams().n_embd : model_.hparams().n_vocab);
    executor_->read(st.logits, logits_.data() + out_row * width, (uint64_t)(rows * width) * sizeof(float));
}

void InferenceContext::run_graph(const Batch &batch, size_t first, size_t count, bool read, size_t out_row) {
    KvPageTable &pages = cache_.pages();
    Step &st = *step_;
    ForwardInputs &in = st.in;
    in.tokens.assign(batch.tokens.begin() + (long)first, batch.tokens.begin() + (long)(first + count));
    in.positions.clear();
    in.slots.clear();
    in.token_info.clear();
    in.output_rows.clear();
    in.top_k = candidates_.k;
    in.hidden = output_hidden_;

    // Sequences in order of first appearance; positions continue each sequence's length.
    std::vector<int> &batch_seqs = st.batch_seqs;
    std::vector<int> &seq_index = st.seq_index;
    std::vector<int64_t> &next_pos = st.next_pos;
    batch_seqs.clear();
    std::fill(seq_index.begin(), seq_index.end(), -1);
    for (size_t i = first; i < first + count; ++i) {
        const int s = batch.seq[i];
        if (seq_index[(size_t)s] < 0) {
            seq_index[(size_t)s] = (int)batch_seqs.size();
            batch_seqs.push_back(s);
            next_pos[(size_t)s] = pages.length(s);
            st.seq_tokens[(size_t)s].clear();
        }
        st.seq_tokens[(size_t)s].push_back(batch.tokens[i]);
        const int32_t pos = (int32_t)next_pos[(size_t)s]++;
        in.positions.push_back(pos);
        in.slots.push_back(pages.slot(s, pos));
        in.token_info.push_back(seq_index[(size_t)s]);
        in.token_info.push_back(pos);
        if (batch.output[i]) in.output_rows.push_back((int32_t)(i - first));
    }
    // Steps of few tokens (decode) hand the ROPE nodes their angles: every layer then reads them
    // instead of evaluating them in double precision on its kernels' path. Larger batches
    // (prompts) evaluate them on the device, where that is spread over many blocks, instead of
    // on the host for every new position.
    constexpr int64_t kRopeAngleMaxTokens = 64;
    for (int i = 0; i < 2; ++i) {
        if (st.rope_angles[i] && (int64_t)count <= kRopeAngleMaxTokens)
            st.rope_angles[i]->gather(in.positions.data(), (int64_t)count, in.rope_angles[i]);
        else
            in.rope_angles[i].clear();
    }
    int64_t n_kv_max = 0;
    for (int s : batch_seqs) n_kv_max = std::max(n_kv_max, next_pos[(size_t)s]);
    in.single_rows = leading_single_rows(in.token_info, (int64_t)batch_seqs.size());
    // Rounded up so consecutive decode steps build graphs of the same shape, which lets the
    // executor reuse its plan (and the GPU backend its captured graph). Entries past a
    // sequence's length are never read: attention stops at each token's position.
    constexpr int64_t kKvRound = 64;
    n_kv_max = (n_kv_max + kKvRound - 1) / kKvRound * kKvRound;
    in.n_kv_max = n_kv_max;
    in.n_seq = (int64_t)batch_seqs.size();
    in.state_rows.assign(batch_seqs.begin(), batch_seqs.end()); // a sequence's state row is its id
    // Column b: the slot of each position of sequence batch_seqs[b] (KvPageTable::slot, page by
    // page), then zeros up to n_kv_max.
    in.slot_table.resize((size_t)(n_kv_max * in.n_seq));
    const int64_t page_size = pages.page_size();
    for (size_t b = 0; b < batch_seqs.size(); ++b) {
        const int s = batch_seqs[b];
        const int64_t len = next_pos[(size_t)s];
        const std::vector<int32_t> &seq_pages = pages.pages(s);
        if ((int64_t)seq_pages.size() * page_size < len) (void)pages.slot(s, len - 1); // throws: not reserved
        int32_t *col = in.slot_table.data() + b * (size_t)n_kv_max;
        for (int64_t p0 = 0, k = 0; p0 < len; p0 += page_size, ++k) {
            const int64_t base = (int64_t)seq_pages[(size_t)k] * page_size;
            const int64_t n = std::min(page_size, len - p0);
            for (int64_t j = 0; j < n; ++j) col[p0 + j] = (int32_t)(base + j);
        }
        std::fill(col + len, col + n_kv_max, 0);
    }

    // The same structure as the last graph: run it again on the new input bytes.
    const ForwardKey key = forward_key(in);
    if (st.graph && key == st.key) {
        st.inputs.bind(in);
    } else {
        st.graph.reset();
        auto g = std::make_unique<Graph>();
        st.logits = build_forward_graph(*g, model_, cache_, in, &st.inputs);
        st.top_ids = st.top_logits = nullptr;
        if (st.logits && in.top_k > 0) {
            st.top_ids = g->topk(st.logits, in.top_k, "output_top_k");
            st.top_logits = g->gather(st.logits, st.top_ids, "output_top_k_logits");
        }
        st.probes.clear();
        if (matmul_observer_) add_matmul_probes(*g);
        st.graph = std::move(g);
        st.key = key;
    }
    // Not waited for: the reads below wait for what they read (a GPU's download waits for its
    // stream), one round trip to the device instead of a synchronize and then the copy.
    executor_->run(*st.graph, false);
    if (matmul_observer_) report_matmul_inputs();
    if (read) read_outputs(out_row, in.output_rows.size());
    for (int s : batch_seqs) pages.commit(s, std::span<const int32_t>(st.seq_tokens[(size_t)s]));
}

void InferenceContext::set_matmul_input_observer(MatmulInputObserver observer) {
    if (step_->pending != Step::Pending::None) throw Error("set_matmul_input_observer: a submitted batch was not collected");
    matmul_observer_ = std::move(observer);
    step_->graph.reset(); // the next graph is built with (or without) the probes
    step_->probes.clear();
}

void InferenceContext::add_matmul_probes(Graph &g) {
    // One probe per distinct input: attn_q/k/v (and ffn_gate/up) share theirs. A SCALE by 1
    // nobody reads is kept by the executor until after the run, so the input can be read back.
    // An expert product's ids come from a TOPK of router logits: the logits are kept and the
    // host repeats the selection (abi.h TOPK: largest first, the lower index on ties).
    std::vector<std::pair<Tensor *, size_t>> seen;
    const Graph &cg = g; // the const accessors: reading does not mark the graph changed
    const size_t n = cg.nodes().size();
    for (size_t i = 0; i < n; ++i) {
        const rf_node &node = cg.nodes()[i];
        const Graph::NodeRefs &r = cg.node_refs()[i];
        const bool id = node.op == RF_OP_MATMUL_ID;
        if ((node.op != RF_OP_MATMUL && !id) || !r.src[0] || r.src[0]->kind != TensorKind::Persistent || !r.src[1]) continue;
        Tensor *x = r.src[1];
        if (x->type() != RF_TYPE_F32) continue;
        Tensor *logits = nullptr;
        if (id) {
            for (size_t j = 0; j < i && !logits; ++j)
                if (cg.node_refs()[j].dst == r.src[2] && cg.nodes()[j].op == RF_OP_TOPK && cg.node_refs()[j].src[0] &&
                    cg.node_refs()[j].src[0]->type() == RF_TYPE_F32)
                    logits = cg.node_refs()[j].src[0];
            if (!logits)
                throw Error(std::string("imatrix: the expert ids of ") + r.src[0]->label() +
                            " do not come from a TOPK of f32 router logits");
        }
        size_t k = 0;
        while (k < seen.size() && !(seen[k].first == x && (step_->probes[seen[k].second].logits != nullptr) == id)) ++k;
        if (k == seen.size()) {
            seen.emplace_back(x, step_->probes.size());
            Step::Probe p;
            p.kept = g.scale(x, 1.0f, "imatrix_probe");
            if (id) {
                p.logits = g.scale(logits, 1.0f, "imatrix_probe_logits");
                p.n_ids = r.src[2]->ne(0);
                p.n_expert = r.src[0]->ne(2);
            }
            step_->probes.push_back(std::move(p));
        }
        step_->probes[seen[k].second].weights.emplace_back(r.src[0]->label());
    }
}

void InferenceContext::report_matmul_inputs() {
    Step &st = *step_;
    for (const Step::Probe &p : st.probes) {
        MatmulInput in;
        in.n_cols = p.kept->ne(0);
        in.n_rows = p.kept->n_elements() / in.n_cols;
        st.probe_host.resize((size_t)(in.n_cols * in.n_rows));
        executor_->read(p.kept, st.probe_host.data(), st.probe_host.size() * sizeof(float));
        in.x = st.probe_host.data();
        if (p.logits) {
            const int64_t E = p.logits->ne(0), T = p.logits->n_elements() / E;
            st.logits_host.resize((size_t)(E * T));
            executor_->read(p.logits, st.logits_host.data(), st.logits_host.size() * sizeof(float));
            st.ids_host.resize((size_t)(p.n_ids * T));
            std::vector<int32_t> order((size_t)E);
            for (int64_t t = 0; t < T; ++t) {
                const float *v = st.logits_host.data() + t * E;
                for (int32_t e = 0; e < (int32_t)E; ++e) order[(size_t)e] = e;
                std::stable_sort(order.begin(), order.end(), [v](int32_t a, int32_t b) { return v[a] > v[b]; });
                std::copy(order.begin(), order.begin() + p.n_ids, st.ids_host.begin() + t * p.n_ids);
            }
            in.ids = st.ids_host.data();
            in.n_ids = p.n_ids;
            in.n_tokens = T;
            in.x_per_token = in.n_rows / T;
            in.n_expert = p.n_expert;
        }
        for (const std::string &w : p.weights) matmul_observer_(w, in);
    }
}

} // namespace rf
