// Batch bookkeeping around the forward graph: positions, KV slots, the attention slot table,
// page reservation (all or nothing) and reading the logits back.
#include "rocmforge/inference.h"

#include <algorithm>
#include <map>
#include <string>

#include "forward_graph.h"
#include "rocmforge/types.h"

namespace rf {

static KvCacheParams cache_params(const ContextParams &p) {
    KvCacheParams c;
    c.n_ctx = p.n_ctx;
    c.page_size = p.page_size;
    c.n_seq_max = p.n_seq_max;
    c.type_k = p.type_k;
    c.type_v = p.type_v;
    return c;
}

InferenceContext::InferenceContext(Model &model, Runtime &runtime, const ContextParams &params)
    : model_(model), runtime_(runtime), params_(params),
      cache_(model.backend(), model.hparams().n_layer, model.hparams().n_embd_kv(), cache_params(params)),
      executor_(std::make_unique<Executor>(runtime)) {
    if (params_.n_batch <= 0) throw UsageError("batch size (-b) must be positive");
    // Attention reads each head's slice of a pool row: a block type must not straddle heads.
    for (int type : {params_.type_k, params_.type_v}) {
        const int64_t block = type_traits(type)->block_size;
        if (model.hparams().head_dim % block != 0)
            throw UsageError(std::string("KV cache type ") + type_name(type) + " needs a head size that is a multiple of " +
                             std::to_string(block) + "; this model's is " + std::to_string(model.hparams().head_dim) +
                             " (use f16 or f32)");
    }
}

InferenceContext::~InferenceContext() = default;

const std::vector<float> &InferenceContext::decode(const Batch &batch) {
    const ModelHparams &hp = model_.hparams();
    if (batch.seq.size() != batch.tokens.size() || batch.output.size() != batch.tokens.size())
        throw Error("decode: batch arrays differ in length");

    // Validate everything and reserve all pages up front, so a full cache changes nothing.
    std::map<int, int64_t> new_tokens;
    size_t n_outputs = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
        if (batch.tokens[i] < 0 || batch.tokens[i] >= hp.n_vocab)
            throw Error("decode: token id " + std::to_string(batch.tokens[i]) + " at batch index " +
                        std::to_string(i) + " is outside the vocabulary (0.." + std::to_string(hp.n_vocab - 1) + ")");
        if (batch.seq[i] < 0 || batch.seq[i] >= params_.n_seq_max)
            throw Error("decode: sequence id " + std::to_string(batch.seq[i]) + " at batch index " +
                        std::to_string(i) + " is outside 0.." + std::to_string(params_.n_seq_max - 1));
        new_tokens[batch.seq[i]]++;
        n_outputs += batch.output[i] ? 1 : 0;
    }
    KvPageTable &pages = cache_.pages();
    // All sequences together hold at most n_ctx tokens (-c), even when the page-rounded pool
    // has a few slots more.
    int64_t held = 0;
    for (int s = 0; s < params_.n_seq_max; ++s) held += pages.length(s);
    if (held + (int64_t)batch.size() > params_.n_ctx) {
        const int seq = new_tokens.begin()->first;
        throw ContextFullError("context full: " +
                                   (params_.n_seq_max == 1 ? "sequence " + std::to_string(seq) + " holds "
                                                           : "the sequences hold ") +
                                   std::to_string(held) + " tokens and " + std::to_string(batch.size()) +
                                   " more would exceed the context size of " + std::to_string(params_.n_ctx) + " (-c)",
                               seq);
    }
    int64_t pages_total = 0;
    int full_seq = -1;
    for (const auto &[seq, n] : new_tokens) {
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
    for (const auto &[seq, n] : new_tokens) pages.reserve(seq, n);

    logits_.assign(n_outputs * (size_t)hp.n_vocab, 0.0f);
    float *out = logits_.data();
    for (size_t first = 0; first < batch.size(); first += (size_t)params_.n_batch) {
        const size_t count = std::min(batch.size() - first, (size_t)params_.n_batch);
        size_t sub_outputs = 0;
        for (size_t i = first; i < first + count; ++i) sub_outputs += batch.output[i] ? 1 : 0;
        run_graph(batch, first, count, out);
        out += sub_outputs * (size_t)hp.n_vocab;
    }
    return logits_;
}

void InferenceContext::run_graph(const Batch &batch, size_t first, size_t count, float *logits_out) {
    KvPageTable &pages = cache_.pages();
    ForwardInputs in;
    in.tokens.assign(batch.tokens.begin() + (long)first, batch.tokens.begin() + (long)(first + count));

    // Sequences in order of first appearance; positions continue each sequence's length.
    std::vector<int> batch_seqs;
    std::map<int, int> seq_index;
    std::map<int, int64_t> next_pos;
    for (size_t i = first; i < first + count; ++i) {
        const int s = batch.seq[i];
        if (!seq_index.count(s)) {
            seq_index[s] = (int)batch_seqs.size();
            batch_seqs.push_back(s);
            next_pos[s] = pages.length(s);
        }
        const int32_t pos = (int32_t)next_pos[s]++;
        in.positions.push_back(pos);
        in.slots.push_back(pages.slot(s, pos));
        in.token_info.push_back(seq_index[s]);
        in.token_info.push_back(pos);
        if (batch.output[i]) in.output_rows.push_back((int32_t)(i - first));
    }
    int64_t n_kv_max = 0;
    for (int s : batch_seqs) n_kv_max = std::max(n_kv_max, next_pos[s]);
    // Rounded up so consecutive decode steps build graphs of the same shape, which lets the
    // executor reuse its plan (and the GPU backend its captured graph). Entries past a
    // sequence's length are never read: attention stops at each token's position.
    constexpr int64_t kKvRound = 64;
    n_kv_max = (n_kv_max + kKvRound - 1) / kKvRound * kKvRound;
    in.n_kv_max = n_kv_max;
    in.n_seq = (int64_t)batch_seqs.size();
    in.slot_table.assign((size_t)(n_kv_max * in.n_seq), 0);
    for (size_t b = 0; b < batch_seqs.size(); ++b)
        for (int64_t p = 0; p < next_pos[batch_seqs[b]]; ++p)
            in.slot_table[b * (size_t)n_kv_max + (size_t)p] = pages.slot(batch_seqs[b], p);

    Graph graph;
    Tensor *logits = build_forward_graph(graph, model_, cache_, in);
    executor_->run(graph);
    if (logits)
        executor_->read(logits, logits_out, (uint64_t)in.output_rows.size() * (uint64_t)model_.hparams().n_vocab * sizeof(float));
    for (int s : batch_seqs) pages.commit(s, next_pos[s] - pages.length(s));
}

} // namespace rf
