// See walk_cache.h.
#include "walk_cache.h"

#include <cstddef>
#include <cstring>

namespace rf_hip {
namespace {

// A tensor's fields the launches depend on, contiguous in rf_tensor: type, flags, ne, nb, data.
constexpr size_t kTensorBytes = offsetof(rf_tensor, data) + sizeof(void *) - offsetof(rf_tensor, type);
static_assert(offsetof(rf_tensor, type) == 0 && offsetof(rf_tensor, data) == 72, "rf_tensor layout (abi.h)");
constexpr size_t kParamBytes = sizeof(((rf_node *)nullptr)->iparams) + sizeof(((rf_node *)nullptr)->fparams);
static_assert(offsetof(rf_node, fparams) == offsetof(rf_node, iparams) + sizeof(((rf_node *)nullptr)->iparams), "rf_node layout");

// Visits g's key as byte runs; put(p, n) returns false to stop (then visit returns false).
template <class Put> bool visit(const rf_graph &g, Put &&put) {
    const int32_t n_nodes = g.n_nodes;
    if (!put(&n_nodes, sizeof n_nodes)) return false;
    for (int i = 0; i < g.n_nodes; ++i) {
        const rf_node *n = g.nodes[i];
        int32_t head[2] = {n->op, n->dst ? 1 : 0}; // op, presence of dst and each source
        for (int s = 0; s < RF_MAX_SRC; ++s) head[1] |= n->src[s] ? 2 << s : 0;
        if (!put(head, sizeof head) || !put(n->iparams, kParamBytes)) return false; // float bits: -0.0, NaN as they are
        if (n->dst && !put(n->dst, kTensorBytes)) return false;
        for (int s = 0; s < RF_MAX_SRC; ++s)
            if (n->src[s] && !put(n->src[s], kTensorBytes)) return false;
    }
    return true;
}

} // namespace

void WalkCache::encode(const rf_graph &g, std::vector<unsigned char> &key) {
    key.clear();
    visit(g, [&](const void *p, size_t n) {
        key.insert(key.end(), (const unsigned char *)p, (const unsigned char *)p + n);
        return true;
    });
}

bool WalkCache::matches(const rf_graph &g, const std::vector<unsigned char> &key) {
    size_t at = 0;
    const bool same = visit(g, [&](const void *p, size_t n) {
        if (at + n > key.size() || std::memcmp(key.data() + at, p, n) != 0) return false;
        at += n;
        return true;
    });
    return same && at == key.size();
}

const WalkCache::Entry *WalkCache::lookup(const rf_graph &g, uint64_t scratch_gen) const {
    for (const Entry &e : entries_)
        if (e.valid && e.gen == scratch_gen && matches(g, e.key)) return &e;
    return nullptr;
}

const WalkCache::Entry *WalkCache::lookup_same(const rf_graph &g, uint64_t scratch_gen) const {
    for (const Entry &e : entries_)
        if (e.valid && e.gen == scratch_gen && e.nodes == g.nodes && e.n_nodes == g.n_nodes) return &e;
    return nullptr;
}

void WalkCache::remember_nodes(const Entry *e, const rf_graph &g) {
    for (Entry &x : entries_) {
        if (&x == e) x.nodes = g.nodes, x.n_nodes = g.n_nodes;
        else if (x.nodes == g.nodes) x.nodes = nullptr, x.n_nodes = 0;
    }
}

uint64_t WalkCache::store(const rf_graph &g, uint64_t scratch_gen, std::vector<LaunchRec> &launches, std::vector<Unit> &units) {
    Entry &e = entries_[next_];
    next_ = (next_ + 1) % kEntries;
    encode(g, e.key);
    e.launches.swap(launches);
    e.units.swap(units);
    e.gen = scratch_gen;
    e.tag = ++last_tag_;
    e.valid = true;
    remember_nodes(&e, g);
    return e.tag;
}

void WalkCache::clear() {
    for (Entry &e : entries_) e.valid = false, e.nodes = nullptr, e.n_nodes = 0;
}

} // namespace rf_hip
