// Copying a sequence's prefix into another: new pages for dst, then the K and V rows of each
// page copied through the host (a page is page_size contiguous slots of every pool).
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
    const int64_t page_size = pt.page_size();
    const int64_t n_pages = (n + page_size - 1) / page_size;
    if (n_pages > pt.free_pages() + (int64_t)pt.pages(dst).size())
        throw ContextFullError("context full: copying " + std::to_string(n) + " tokens into sequence " +
                                   std::to_string(dst) + " needs " + std::to_string(n_pages) + " pages of " +
                                   std::to_string(page_size) + ", the KV cache has " + std::to_string(pt.free_pages()) + " free",
                               dst);
    pt.clear(dst);
    pt.reserve(dst, n);
    pt.commit(dst, n);
    std::vector<uint8_t> staging;
    for (int64_t layer = 0; layer < n_layer_; ++layer) {
        for (Tensor *t : {k(layer), v(layer)}) {
            const uint64_t page_bytes = (uint64_t)t->t.nb[1] * (uint64_t)page_size;
            staging.resize(page_bytes);
            auto *base = static_cast<uint8_t *>(t->t.data);
            for (int64_t p = 0; p < n_pages; ++p) {
                const uint64_t from = (uint64_t)pt.pages(src)[(size_t)p] * page_bytes;
                const uint64_t to = (uint64_t)pt.pages(dst)[(size_t)p] * page_bytes;
                t->home->download(staging.data(), base + from, page_bytes);
                t->home->upload(base + to, staging.data(), page_bytes);
            }
        }
    }
}

} // namespace rf
