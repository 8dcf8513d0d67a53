// Copying a sequence's prefix into another: new pages for dst, then the K and V rows of each
// page copied through the host (a page is page_size contiguous slots of every pool); and the
// copy-on-write of a cached page that a truncation cuts short.
#include <span>
#include <vector>

#include "rocmforge/kv_cache.h"
#include "rocmforge/runtime.h"

namespace rf {

void KvCache::copy_prefix(int src, int dst, int64_t n) {
    KvPageTable &pt = pages_;
    if (src == dst) throw Error("KV cache: cannot copy sequence " + std::to_string(src) + " onto itself");
    if (n < 0 || n > pt.length(src))
        throw Error("KV cache: sequence " + std::to_string(src) + " holds " + std::to_string(pt.length(src)) +
                    " tokens, cannot copy " + std::to_string(n));
    if (recurrent_ && n != 0 && n != pt.length(src))
        throw Error("KV cache: copying " + std::to_string(n) + " of the " + std::to_string(pt.length(src)) + " tokens of sequence " +
                    std::to_string(src) + " is not supported with recurrent layers: their state holds the whole sequence");
    const int64_t page_size = pt.page_size();
    const int64_t n_pages = (n + page_size - 1) / page_size;
    if (n_pages > pt.free_pages() + pt.pages_freed_by_clear(dst))
        throw ContextFullError("context full: copying " + std::to_string(n) + " tokens into sequence " +
                                   std::to_string(dst) + " needs " + std::to_string(n_pages) + " pages of " +
                                   std::to_string(page_size) + ", the KV cache has " + std::to_string(pt.free_pages()) + " free",
                               dst);
    pt.clear(dst);
    pt.reserve(dst, n);
    const std::vector<int32_t> *tokens = pt.tokens(src);
    if (tokens) pt.commit(dst, std::span<const int32_t>(tokens->data(), (size_t)n));
    else pt.commit(dst, n);
    for (int64_t p = 0; p < n_pages; ++p) copy_page(pt.pages(src)[(size_t)p], pt.pages(dst)[(size_t)p]);
    if (recurrent_ && n > 0) recurrent_->copy(src, dst);
}

void KvCache::copy_page(int32_t from, int32_t to) {
    std::vector<uint8_t> staging;
    for (int64_t layer = 0; layer < n_layer_; ++layer) {
        for (Tensor *t : {k(layer), v(layer)}) {
            if (k_only_ && t != k(layer)) continue;
            const uint64_t page_bytes = (uint64_t)t->t.nb[1] * (uint64_t)pages_.page_size();
            staging.resize(page_bytes);
            auto *base = static_cast<uint8_t *>(t->t.data);
            t->home->download(staging.data(), base + (uint64_t)from * page_bytes, page_bytes);
            t->home->upload(base + (uint64_t)to * page_bytes, staging.data(), page_bytes);
        }
    }
}

void KvCache::truncate(int seq, int64_t length) {
    KvPageTable &pt = pages_;
    if (recurrent_ && length != 0 && length != pt.length(seq))
        throw Error("KV cache: cutting sequence " + std::to_string(seq) + " from " + std::to_string(pt.length(seq)) + " to " +
                    std::to_string(length) + " tokens is not supported with recurrent layers (their state cannot be rolled back; "
                    "speculative decoding needs it)");
    const int64_t page_size = pt.page_size();
    const size_t keep = (size_t)((length + page_size - 1) / page_size);
    if (length < 0 || length > pt.length(seq) || length % page_size == 0 || !pt.page_cached(seq, keep - 1))
        return pt.truncate(seq, length); // nothing cached cut short (or a bad length it reports)
    // The page to cut is cached, hence full: cut to its end, give the sequence its own copy of
    // it, then cut inside the copy. (Checked first: with no page free, nothing changes.)
    if (pt.free_pages() == 0)
        throw ContextFullError("context full: cutting sequence " + std::to_string(seq) +
                                   " inside a cached page needs a free page to copy it to; raise -c",
                               seq);
    pt.truncate(seq, (int64_t)keep * page_size);
    const auto [old_page, new_page] = pt.replace_last_page(seq);
    copy_page(old_page, new_page);
    pt.truncate(seq, length);
}

} // namespace rf
