// KvPageTable's prefix caching: publishing a sequence's full pages, mapping cached pages into a
// new sequence, and the page swap behind copy-on-write.
#include <algorithm>
#include <string>

#include "rocmforge/kv_cache.h"

namespace rf {

void KvPageTable::publish(int seq) {
    check_seq(seq);
    Seq &s = seqs_[(size_t)seq];
    if (!cache_ || !s.tokens_known) return;
    const size_t full = (size_t)(s.length / page_size_);
    while (s.n_cached < full) {
        const size_t k = s.n_cached;
        const std::span<const int32_t> tokens(s.tokens.data() + k * (size_t)page_size_, (size_t)page_size_);
        // Its parent must be cached for the chain to name the prefix: a page after one that
        // another sequence's page already caches (the same content) stays private.
        if (!cache_->insert(k == 0 ? -1 : s.pages[k - 1], tokens, s.pages[k])) return;
        ++s.n_cached;
    }
}

int64_t KvPageTable::map_cached_prefix(int seq, std::span<const int32_t> tokens) {
    check_seq(seq);
    Seq &s = seqs_[(size_t)seq];
    if (!cache_) return 0;
    if (s.length != 0 || !s.pages.empty())
        throw Error("KV cache: cached prefix mapped into sequence " + std::to_string(seq) + ", which is not empty");
    ++prefix_stats_.lookups;
    // Whole pages before the last token: that one is always computed.
    const size_t most = tokens.empty() ? 0 : (tokens.size() - 1) / (size_t)page_size_;
    for (size_t k = 0; k < most; ++k) {
        const std::span<const int32_t> page_tokens = tokens.subspan(k * (size_t)page_size_, (size_t)page_size_);
        const int32_t page = cache_->acquire(k == 0 ? -1 : s.pages[k - 1], page_tokens);
        if (page < 0) break;
        s.pages.push_back(page);
    }
    s.n_cached = s.pages.size();
    s.length = (int64_t)s.n_cached * page_size_;
    s.tokens.assign(tokens.begin(), tokens.begin() + s.length);
    s.tokens_known = true;
    if (s.length > 0) ++prefix_stats_.hits;
    prefix_stats_.cached_tokens += s.length;
    return s.length;
}

const std::vector<int32_t> *KvPageTable::tokens(int seq) const {
    check_seq(seq);
    const Seq &s = seqs_[(size_t)seq];
    return cache_ && s.tokens_known ? &s.tokens : nullptr;
}

bool KvPageTable::page_cached(int seq, size_t index) const {
    check_seq(seq);
    return index < seqs_[(size_t)seq].n_cached;
}

int64_t KvPageTable::pages_freed_by_clear(int seq) const {
    check_seq(seq);
    const Seq &s = seqs_[(size_t)seq];
    int64_t n = (int64_t)(s.pages.size() - s.n_cached);
    for (size_t k = 0; k < s.n_cached; ++k) n += cache_->refcount(s.pages[k]) == 1 ? 1 : 0;
    return n;
}

std::pair<int32_t, int32_t> KvPageTable::replace_last_page(int seq) {
    check_seq(seq);
    Seq &s = seqs_[(size_t)seq];
    if (s.pages.empty()) throw Error("KV cache: sequence " + std::to_string(seq) + " has no page to replace");
    // Taken before the old page is released, so an eviction cannot hand back the page to copy.
    const int32_t fresh = take_page();
    if (fresh < 0)
        throw ContextFullError("context full: copying the last page of sequence " + std::to_string(seq) +
                                   " needs a free page and the KV cache has none; raise -c",
                               seq);
    const int32_t old = s.pages.back();
    if (s.n_cached == s.pages.size()) {
        cache_->release(old); // still cached, content intact: the caller copies it now
        --s.n_cached;
    } else {
        free_list_.push_back(old);
    }
    s.pages.back() = fresh;
    return {old, fresh};
}

} // namespace rf
