// Paged KV cache: page bookkeeping per sequence and the per-layer pool tensors.
#include "rocmforge/kv_cache.h"
#include "rocmforge/model.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "rocmforge/types.h"

namespace rf {

KvPageTable::KvPageTable(int64_t n_pages, int64_t page_size, int n_seq_max, bool prefix_cache)
    : n_pages_(n_pages), page_size_(page_size), cache_(prefix_cache ? std::make_unique<PrefixBlockTable>() : nullptr) {
    if (n_pages <= 0 || page_size <= 0)
        throw UsageError("KV cache: need at least one page of at least one token (got " +
                         std::to_string(n_pages) + " pages of " + std::to_string(page_size) + ")");
    if (n_seq_max <= 0) throw UsageError("KV cache: need at least one sequence");
    if (n_pages * page_size > INT32_MAX) throw UsageError("KV cache: too many slots for i32 slot ids");
    free_list_.resize((size_t)n_pages);
    for (int64_t i = 0; i < n_pages; ++i) free_list_[(size_t)i] = (int32_t)(n_pages - 1 - i);
    seqs_.resize((size_t)n_seq_max);
}

void KvPageTable::check_seq(int seq) const {
    if (seq < 0 || seq >= (int)seqs_.size())
        throw Error("KV cache: sequence id " + std::to_string(seq) + " out of range (0.." +
                    std::to_string(seqs_.size() - 1) + ")");
}

int64_t KvPageTable::length(int seq) const {
    check_seq(seq);
    return seqs_[(size_t)seq].length;
}

const std::vector<int32_t> &KvPageTable::pages(int seq) const {
    check_seq(seq);
    return seqs_[(size_t)seq].pages;
}

int64_t KvPageTable::pages_needed(int seq, int64_t n_new) const {
    check_seq(seq);
    const Seq &s = seqs_[(size_t)seq];
    const int64_t total = (s.length + n_new + page_size_ - 1) / page_size_;
    return std::max<int64_t>(0, total - (int64_t)s.pages.size());
}

int32_t KvPageTable::take_page() {
    if (!free_list_.empty()) {
        const int32_t page = free_list_.back();
        free_list_.pop_back();
        return page;
    }
    return cache_ ? cache_->evict_one() : -1;
}

void KvPageTable::reserve(int seq, int64_t n_new) {
    const int64_t need = pages_needed(seq, n_new);
    if (need > free_pages()) {
        const Seq &s = seqs_[(size_t)seq];
        throw ContextFullError("context full: sequence " + std::to_string(seq) + " holds " +
                                   std::to_string(s.length) + " tokens and needs " +
                                   std::to_string(n_new) + " more, but the KV cache (" +
                                   std::to_string(n_slots()) + " tokens) has " +
                                   std::to_string(free_pages() * page_size_) +
                                   " free slots in whole pages; raise -c",
                               seq);
    }
    Seq &s = seqs_[(size_t)seq];
    for (int64_t i = 0; i < need; ++i) s.pages.push_back(take_page());
}

KvPageTable::Seq &KvPageTable::grow(int seq, int64_t n_new) {
    check_seq(seq);
    Seq &s = seqs_[(size_t)seq];
    if (n_new < 0 || (s.length + n_new + page_size_ - 1) / page_size_ > (int64_t)s.pages.size())
        throw Error("KV cache: commit of " + std::to_string(n_new) + " tokens to sequence " +
                    std::to_string(seq) + " beyond its reserved pages");
    s.length += n_new;
    return s;
}

void KvPageTable::commit(int seq, int64_t n_new) {
    Seq &s = grow(seq, n_new);
    if (n_new > 0) s.tokens_known = false, s.tokens.clear();
}

void KvPageTable::commit(int seq, std::span<const int32_t> tokens) {
    Seq &s = grow(seq, (int64_t)tokens.size());
    if (cache_ && s.tokens_known) s.tokens.insert(s.tokens.end(), tokens.begin(), tokens.end());
}

int32_t KvPageTable::slot(int seq, int64_t pos) const {
    check_seq(seq);
    const Seq &s = seqs_[(size_t)seq];
    const int64_t page = pos / page_size_;
    if (pos < 0 || page >= (int64_t)s.pages.size())
        throw Error("KV cache: position " + std::to_string(pos) + " of sequence " +
                    std::to_string(seq) + " is not in a reserved page");
    return (int32_t)(s.pages[(size_t)page] * page_size_ + pos % page_size_);
}

KvPoolStats KvPageTable::stats() const {
    KvPoolStats st;
    st.pages_total = n_pages_;
    st.pages_used = n_pages_ - free_pages();
    st.slots_reserved = st.pages_used * page_size_;
    if (cache_) st.pages_cached = cache_->cached_pages(), st.pages_evictable = cache_->evictable_pages();
    std::vector<bool> counted(cache_ ? (size_t)n_pages_ : 0); // cached pages seen in an earlier sequence
    for (const Seq &s : seqs_) {
        st.tokens += s.length;
        st.slots_filled += s.length;
        for (size_t k = 0; k < s.n_cached; ++k) // full pages, shared ones filled once
            if (counted[(size_t)s.pages[k]]) st.slots_filled -= page_size_;
            else counted[(size_t)s.pages[k]] = true;
    }
    return st;
}

void KvPageTable::clear(int seq) { truncate(seq, 0); }

void KvPageTable::truncate(int seq, int64_t length) {
    check_seq(seq);
    Seq &s = seqs_[(size_t)seq];
    if (length < 0 || length > s.length)
        throw Error("KV cache: cannot cut sequence " + std::to_string(seq) + " of " + std::to_string(s.length) +
                    " tokens to " + std::to_string(length));
    const size_t keep = (size_t)((length + page_size_ - 1) / page_size_);
    if (length % page_size_ != 0 && keep <= s.n_cached)
        throw Error("KV cache: cutting sequence " + std::to_string(seq) + " to " + std::to_string(length) +
                    " tokens leaves a cached page partly filled (KvCache::truncate copies it)");
    // Returned in reverse so the sequence's first freed page is the next one handed out, and a
    // cached chain's last page is the first evicted.
    for (size_t i = s.pages.size(); i > keep; --i) {
        if (i - 1 < s.n_cached) cache_->release(s.pages[i - 1]);
        else free_list_.push_back(s.pages[i - 1]);
    }
    s.pages.resize(keep);
    s.n_cached = std::min(s.n_cached, keep);
    s.length = length;
    if (length == 0) s.tokens_known = true; // an empty sequence starts a fresh record
    if (s.tokens_known) s.tokens.resize(std::min(s.tokens.size(), (size_t)length));
    else s.tokens.clear();
}

namespace {

// Whether b runs bidirectional ATTENTION (abi.h iparams[2]) on f16 pools: a one-token probe.
bool runs_bidirectional_attention(const Backend &b) {
    constexpr int64_t D = 64;
    rf_tensor q{}, k{}, v{}, slots{}, info{}, d{};
    init_tensor_layout(q, RF_TYPE_F32, {D, 1, 1});
    init_tensor_layout(k, RF_TYPE_F16, {D, 1});
    init_tensor_layout(v, RF_TYPE_F16, {D, 1});
    init_tensor_layout(slots, RF_TYPE_I32, {1, 1});
    init_tensor_layout(info, RF_TYPE_I32, {2, 1});
    init_tensor_layout(d, RF_TYPE_F32, {D, 1});
    rf_node n{};
    n.op = RF_OP_ATTENTION;
    n.dst = &d;
    n.src[0] = &q, n.src[1] = &k, n.src[2] = &v, n.src[3] = &slots, n.src[4] = &info;
    n.fparams[0] = 1.0f;
    n.iparams[2] = 1;
    return b.supports(n);
}

} // namespace

Backend &kv_cache_backend(const Runtime &runtime, Backend &weights_backend, bool bidirectional) {
    if (Backend *b = runtime.override_backend(RF_OP_ATTENTION)) return *b;
    if (!bidirectional || runs_bidirectional_attention(weights_backend)) return weights_backend;
    // An encoder on a backend without bidirectional attention (the HIP one): the pools go where
    // that attention runs, the rest of the graph stays with the weights.
    for (Backend *b : runtime.backends())
        if (runs_bidirectional_attention(*b)) return *b;
    return weights_backend; // none: the executor names the node no backend runs
}

Backend &kv_cache_backend(const Runtime &runtime, Backend &weights_backend, const ModelHparams &hp) {
    if (!hp.is_mla()) return kv_cache_backend(runtime, weights_backend, hp.encoder);
    if (Backend *b = runtime.override_backend(RF_OP_ATTENTION)) return *b;
    // The HIP kernels take one head size for K and V (and at most 256): the pools stay on the
    // host, so that attention runs there and the rest of the graph with the weights.
    if (weights_backend.host_memory()) return weights_backend;
    for (Backend *b : runtime.backends())
        if (b->host_memory()) return *b;
    throw Error(hp.arch_name + ": multi-head latent attention runs on the CPU backend only, and none is started");
}

int kv_cache_type_from_name(const std::string &name) {
    const int t = type_from_name(name);
    if (t != RF_TYPE_F16 && t != RF_TYPE_Q8_0 && t != RF_TYPE_F32)
        throw UsageError("unsupported KV cache type '" + name + "' (use f16, q8_0 or f32)");
    return t;
}

static int64_t pages_for(int64_t n_ctx, int64_t page_size) {
    if (n_ctx <= 0) throw UsageError("context size (-c) must be positive, got " + std::to_string(n_ctx));
    if (page_size <= 0) throw UsageError("KV page size must be positive");
    return (n_ctx + page_size - 1) / page_size;
}

static void check_cache_type(int type, int64_t row, const char *which) {
    if (type != RF_TYPE_F16 && type != RF_TYPE_Q8_0 && type != RF_TYPE_F32)
        throw UsageError(std::string("unsupported KV cache type for ") + which + ": " + type_name(type) +
                         " (use f16, q8_0 or f32)");
    const TypeTraits *tt = type_traits(type);
    if (row % tt->block_size != 0)
        throw UsageError(std::string("KV cache type ") + tt->name + " for " + which +
                         " needs a row length (head_dim * n_head_kv = " + std::to_string(row) +
                         ") that is a multiple of " + std::to_string(tt->block_size));
}

KvCache::KvCache(Backend &backend, int64_t n_layer, int64_t n_embd_kv, const KvCacheParams &params)
    // One spare page per extra sequence: each sequence's last page may be partly empty, so n_ctx
    // tokens split over n_seq sequences always fit.
    : pages_(pages_for(params.n_ctx, params.page_size) + std::max(0, params.n_seq_max - 1), params.page_size,
             params.n_seq_max, params.prefix_cache),
      n_ctx_(params.n_ctx), n_layer_(n_layer), n_embd_kv_(n_embd_kv), type_k_(params.type_k), type_v_(params.type_v),
      k_only_(params.k_only) {
    check_cache_type(type_k_, n_embd_kv, "K");
    if (!k_only_) check_cache_type(type_v_, n_embd_kv, "V");
    const int64_t n_slots = pages_.n_slots();
    const uint64_t v_bytes = k_only_ ? 0 : BufferSlab::slice_bytes(row_size(type_v_, n_embd_kv) * n_slots);
    slab_ = std::make_unique<BufferSlab>(backend, (uint64_t)n_layer * (BufferSlab::slice_bytes(row_size(type_k_, n_embd_kv) * n_slots) + v_bytes));
    for (int64_t l = 0; l < n_layer; ++l) {
        k_.push_back(std::make_unique<PersistentTensor>(backend, "cache_k_l" + std::to_string(l), type_k_,
                                                        std::initializer_list<int64_t>{n_embd_kv, n_slots}, slab_.get()));
        if (!k_only_) v_.push_back(std::make_unique<PersistentTensor>(backend, "cache_v_l" + std::to_string(l), type_v_,
                                                        std::initializer_list<int64_t>{n_embd_kv, n_slots}, slab_.get()));
    }
}

uint64_t KvCache::bytes_per_token(int64_t n_layer, int64_t n_embd_kv, int type_k, int type_v, bool k_only) {
    return (uint64_t)n_layer * (row_size(type_k, n_embd_kv) + (k_only ? 0 : row_size(type_v, n_embd_kv)));
}

std::string KvCache::summary() const {
    char buf[256];
    std::snprintf(buf, sizeof buf, "KV cache: %lld tokens (%lld pages of %lld), %s/%s, %.1f KiB per token, %.2f MiB",
                  (long long)n_ctx_, (long long)pages_.n_pages(), (long long)pages_.page_size(),
                  type_name(type_k_), k_only_ ? "none (V in the K rows)" : type_name(type_v_), bytes_per_token() / 1024.0,
                  total_bytes() / (1024.0 * 1024.0));
    if (recurrent_) return std::string(buf) + "; " + recurrent_->summary();
    return buf;
}

} // namespace rf
