// See walk_cache.h.
#include "walk_cache.h"

#include <cstring>

namespace rf_hip {
namespace {

void put_tensor(std::vector<uint64_t> &k, const rf_tensor *t) {
    if (!t) {
        k.push_back(0);
        return;
    }
    k.push_back(1 | (uint64_t)(uint32_t)t->type << 8 | (uint64_t)(uint32_t)t->flags << 32);
    for (int d = 0; d < RF_MAX_DIMS; ++d) k.push_back((uint64_t)t->ne[d]);
    for (int d = 0; d < RF_MAX_DIMS; ++d) k.push_back((uint64_t)t->nb[d]);
    k.push_back((uint64_t)(uintptr_t)t->data);
}

} // namespace

void WalkCache::encode(const rf_graph &g, std::vector<uint64_t> &key) {
    key.clear();
    key.push_back((uint64_t)(uint32_t)g.n_nodes);
    for (int i = 0; i < g.n_nodes; ++i) {
        const rf_node *n = g.nodes[i];
        uint32_t p[2 * RF_MAX_PARAMS];
        static_assert(sizeof(n->iparams) + sizeof(n->fparams) == sizeof p, "node parameters");
        std::memcpy(p, n->iparams, sizeof n->iparams);
        std::memcpy(p + RF_MAX_PARAMS, n->fparams, sizeof n->fparams); // bit patterns: -0.0 and NaN as they are
        key.push_back((uint64_t)(uint32_t)n->op);
        for (int j = 0; j < 2 * RF_MAX_PARAMS; j += 2) key.push_back(p[j] | (uint64_t)p[j + 1] << 32);
        put_tensor(key, n->dst);
        for (int s = 0; s < RF_MAX_SRC; ++s) put_tensor(key, n->src[s]);
    }
}

const std::vector<LaunchRec> *WalkCache::lookup(const rf_graph &g, uint64_t scratch_gen) {
    encode(g, cur_);
    for (const Entry &e : entries_)
        if (e.valid && e.gen == scratch_gen && e.key == cur_) return &e.launches;
    return nullptr;
}

void WalkCache::store(uint64_t scratch_gen, const std::vector<LaunchRec> &launches) {
    Entry &e = entries_[next_];
    next_ = (next_ + 1) % kEntries;
    e.key.swap(cur_);
    e.launches = launches;
    e.gen = scratch_gen;
    e.valid = true;
}

void WalkCache::clear() {
    for (Entry &e : entries_) e.valid = false;
}

} // namespace rf_hip
