// Paged KV cache: one pool of fixed-size pages shared by every sequence, a page table per
// sequence mapping positions to pool slots, and per-layer K and V pool tensors.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/buffer_slab.h"
#include "rocmforge/graph.h"
#include "rocmforge/prefix_cache.h"
#include "rocmforge/recurrent_state.h"

namespace rf {

// Thrown when the pool has no page left for a sequence's next tokens. Nothing was changed: the
// caller can report it and stop cleanly.
class ContextFullError : public Error {
public:
    ContextFullError(const std::string &msg, int seq) : Error(msg), seq_(seq) {}
    int seq() const { return seq_; }

private:
    int seq_;
};

// Occupancy of the page pool at one moment. Pages are interchangeable, so a free page serves any
// sequence (no external fragmentation); the waste is the unfilled tail of each sequence's last
// page (internal fragmentation).
struct KvPoolStats {
    int64_t pages_total = 0, pages_used = 0; // used: held by a sequence
    int64_t tokens = 0;         // positions stored, all sequences (a shared page counts for each)
    int64_t slots_reserved = 0; // pages_used * page_size
    int64_t slots_filled = 0;   // slots of those pages that hold a token (a shared page once)
    // Prefix caching: pages in the cache (held by sequences or not) and those held by none,
    // which are free for new tokens (evicted when needed).
    int64_t pages_cached = 0, pages_evictable = 0;
    // Share of the reserved slots that hold no token (0 when nothing is reserved).
    double internal_fragmentation() const {
        return slots_reserved ? 1.0 - double(slots_filled) / double(slots_reserved) : 0.0;
    }
};

// Prefix-cache counters since the table was made: sequences looked up, those that mapped at
// least one cached page, and the prompt positions so mapped (whose prefill was skipped).
struct PrefixCacheStats {
    int64_t lookups = 0, hits = 0, cached_tokens = 0;
};

// Host-side bookkeeping: which pages each sequence owns and how many positions it holds.
// Slot of position p of sequence s = page_table[s][p / page_size] * page_size + p % page_size.
//
// With prefix caching on, the table also records each sequence's tokens, caches its full pages
// (publish()) in a PrefixBlockTable, and lets a new sequence map the cached pages its prompt
// begins with (map_cached_prefix()). A cached page may be mapped by several sequences; none
// writes to it (a sequence writes only past its length, and cached pages are full). A cached
// page no sequence holds counts as free: reserve() evicts it when the free list is empty.
class KvPageTable {
public:
    KvPageTable(int64_t n_pages, int64_t page_size, int n_seq_max, bool prefix_cache = false);

    int64_t page_size() const { return page_size_; }
    int64_t n_pages() const { return n_pages_; }
    int64_t n_slots() const { return n_pages_ * page_size_; }
    // Pages reserve() can hand out: never used, or cached and held by no sequence.
    int64_t free_pages() const { return (int64_t)free_list_.size() + (cache_ ? cache_->evictable_pages() : 0); }
    int n_seq_max() const { return (int)seqs_.size(); }
    bool prefix_cache() const { return cache_ != nullptr; }

    // Positions stored for `seq` (the next token's position).
    int64_t length(int seq) const;
    // Pages `seq` would need in addition to what it owns to hold `n_new` more positions.
    int64_t pages_needed(int seq, int64_t n_new) const;
    // Takes the pages for `n_new` more positions of `seq` (length unchanged until commit).
    // Throws ContextFullError (and takes nothing) when the pool cannot provide them.
    void reserve(int seq, int64_t n_new);
    // Marks `n_new` more positions of `seq` as stored (they must have been reserved). Without
    // their tokens the sequence's later pages are never cached.
    void commit(int seq, int64_t n_new);
    // The same, with the tokens at those positions (recorded when prefix caching is on).
    void commit(int seq, std::span<const int32_t> tokens);
    // Prefix caching: caches the full pages of `seq` not cached yet (its pages after one that
    // could not be cached stay private). Call once their K/V are written. No-op when off.
    void publish(int seq);
    // Prefix caching: maps into the empty sequence `seq` the cached pages that hold the longest
    // run of whole pages `tokens` begins with, leaving at least the last token to compute (its
    // logits are the ones a prompt needs). Returns the positions mapped (the new length); 0 when
    // off. Counts a lookup in prefix_stats().
    int64_t map_cached_prefix(int seq, std::span<const int32_t> tokens);
    const PrefixCacheStats &prefix_stats() const { return prefix_stats_; }
    // Prefix caching: the tokens at positions 0..length(seq), or nullptr when off or unknown
    // (positions committed without their tokens).
    const std::vector<int32_t> *tokens(int seq) const;
    // Whether page `index` of `seq` is a cached page (mapped or published): not to be written.
    bool page_cached(int seq, size_t index) const;
    // Pages clear(seq) would make free_pages() count: private ones and cached ones only it holds.
    int64_t pages_freed_by_clear(int seq) const;
    // Gives `seq` a fresh page in place of its last one (evicting if needed; throws
    // ContextFullError, changing nothing, when none is free) and returns {old, new}; the old
    // page is released, its content intact until the next page is taken, for the caller to
    // copy (copy-on-write: KvCache::truncate).
    std::pair<int32_t, int32_t> replace_last_page(int seq);
    // Slot of position `pos` of `seq`; the position must lie in a page the sequence owns.
    int32_t slot(int seq, int64_t pos) const;
    // Returns every page of `seq` to the pool and sets its length to 0.
    void clear(int seq);
    // Keeps the first `length` positions of `seq` (at most its length), returning whole pages
    // past them to the pool. Throws rf::Error, changing nothing, when the new last page is a
    // cached one cut short (it would be written next): KvCache::truncate copies it first.
    void truncate(int seq, int64_t length);
    const std::vector<int32_t> &pages(int seq) const;
    KvPoolStats stats() const;

private:
    void check_seq(int seq) const;
    // A page off the free list, else an evicted cached one; -1 when there is neither.
    int32_t take_page();
    struct Seq;
    // Checks and counts n_new more positions of seq (commit without the token record).
    Seq &grow(int seq, int64_t n_new);
    struct Seq {
        std::vector<int32_t> pages;
        int64_t length = 0;
        // Prefix caching: the tokens at positions 0..length (while tokens_known), and how many
        // leading pages are cached pages this sequence holds a reference to.
        std::vector<int32_t> tokens;
        bool tokens_known = true;
        size_t n_cached = 0;
    };
    int64_t n_pages_, page_size_;
    std::vector<int32_t> free_list_; // popped from the back; lowest page ids handed out first
    std::vector<Seq> seqs_;
    std::unique_ptr<PrefixBlockTable> cache_; // null: prefix caching off
    PrefixCacheStats prefix_stats_;
};

struct KvCacheParams {
    int64_t n_ctx = 4096;    // tokens of all sequences together (rounded up to whole pages)
    int64_t page_size = 16;
    int n_seq_max = 1;
    int type_k = RF_TYPE_F16; // f16, q8_0 or f32
    int type_v = RF_TYPE_F16;
    bool prefix_cache = false; // KvPageTable's prefix caching (causal models only)
    // Latent attention (deepseek2): one pool per layer, whose rows also hold V (the latent at
    // their start): v() is k() and type_v is unused.
    bool k_only = false;
};

// The pools: for each layer a K and a V PersistentTensor [row, n_slots] on `backend`, where
// row = n_embd_kv (head_dim * n_head_kv) elements of type_k / type_v.
class KvCache {
public:
    // Throws rf::UsageError for an unsupported cache type or a row the type cannot hold.
    KvCache(Backend &backend, int64_t n_layer, int64_t n_embd_kv, const KvCacheParams &params);

    KvPageTable &pages() { return pages_; }
    const KvPageTable &pages() const { return pages_; }
    Tensor *k(int64_t layer) { return k_[layer]->get(); }
    Tensor *v(int64_t layer) { return k_only_ ? k(layer) : v_[layer]->get(); }
    bool k_only() const { return k_only_; }
    int type_k() const { return type_k_; }
    int type_v() const { return type_v_; }
    uint64_t bytes_per_token() const { return bytes_per_token(n_layer_, n_embd_kv_, type_k_, type_v_, k_only_); }
    // Over all layers, K + V (K alone when k_only), for a model of n_layer layers with K/V rows
    // of n_embd_kv elements.
    static uint64_t bytes_per_token(int64_t n_layer, int64_t n_embd_kv, int type_k, int type_v, bool k_only = false);
    uint64_t total_bytes() const { return bytes_per_token() * (uint64_t)pages_.n_slots(); }
    // "KV cache: 4096 tokens (256 pages of 16), f16/f16, 128.0 KiB per token, 512.00 MiB": the
    // tokens are n_ctx (-c); the pool may hold a few slots more (whole pages, one spare page
    // per extra sequence), which the page count and the bytes include.
    std::string summary() const;
    int64_t n_ctx() const { return n_ctx_; }
    // Makes `dst` hold a copy of the first `n` positions of `src` (kv_sequence_copy.cpp); dst's
    // old content is dropped. Throws ContextFullError, changing nothing, when the pool lacks pages.
    void copy_prefix(int src, int dst, int64_t n);
    // KvPageTable::truncate, first copying a cached page that would be cut short to a private
    // page (copy-on-write). Throws ContextFullError, changing nothing, when no page is free.
    void truncate(int seq, int64_t length);
    // Hybrid models (qwen35): the recurrent layers' per-sequence state beside the pages. With it,
    // copy_prefix copies a whole sequence only and truncate refuses to cut into one (rf::Error):
    // the state holds every position.
    void attach_recurrent(std::unique_ptr<RecurrentState> state) { recurrent_ = std::move(state); }
    RecurrentState *recurrent() { return recurrent_.get(); }

private:
    // The K and V rows of every layer in page `from` copied to page `to`, through the host.
    void copy_page(int32_t from, int32_t to);
    KvPageTable pages_;
    int64_t n_ctx_;
    int64_t n_layer_, n_embd_kv_;
    int type_k_, type_v_;
    bool k_only_;
    std::unique_ptr<BufferSlab> slab_; // every layer's K and V pool in one allocation (before k_, v_)
    std::vector<std::unique_ptr<PersistentTensor>> k_, v_;
    std::unique_ptr<RecurrentState> recurrent_;
};

// The backend the KV cache lives on: the one op_overrides puts attention on, else the weights'
// backend (where attention then runs); for an encoder (bidirectional attention) the first
// backend that runs that attention when the weights' one does not. The pools are state that
// changes every step, so they live with the op that reads them all; the executor refuses to copy
// them (executor.cpp).
Backend &kv_cache_backend(const Runtime &runtime, Backend &weights_backend, bool bidirectional = false);
// The same for a model: encoders as above; latent attention (deepseek2), which only the CPU
// backend runs, on a host-memory backend (the weights' when it is one); rf::Error naming it when
// none is started.
struct ModelHparams;
Backend &kv_cache_backend(const Runtime &runtime, Backend &weights_backend, const ModelHparams &hp);

// Parses a --cache-type value ("f16", "q8_0", "f32"); throws rf::UsageError otherwise.
int kv_cache_type_from_name(const std::string &name);

} // namespace rf
