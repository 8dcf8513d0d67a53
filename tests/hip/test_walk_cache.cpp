// The HIP backend's reuse of a call's launch list for the same graph (backends/hip/walk_cache.h),
// without a GPU: which changes of a graph must make compute() walk it again.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "launch_queue.h"
#include "walk_cache.h"

using namespace rf_hip;

namespace {

// A two-node graph: MATMUL(w, x) -> y, ROPE(y, pos) -> z.
struct TinyGraph {
    rf_tensor w{}, x{}, y{}, pos{}, z{};
    rf_node mm{}, rope{};
    rf_node *nodes[2] = {&mm, &rope};
    rf_graph g{2, nodes};
    float buf[64];
    TinyGraph() {
        for (rf_tensor *t : {&w, &x, &y, &pos, &z}) {
            t->type = RF_TYPE_F32;
            for (int d = 0; d < RF_MAX_DIMS; ++d) t->ne[d] = 1;
            t->ne[0] = 4;
            t->nb[0] = 4;
            for (int d = 1; d < RF_MAX_DIMS; ++d) t->nb[d] = t->nb[d - 1] * t->ne[d - 1];
        }
        w.data = buf, x.data = buf + 8, y.data = buf + 16, pos.data = buf + 24, z.data = buf + 32;
        w.flags = RF_TENSOR_WEIGHT;
        mm.op = RF_OP_MATMUL, mm.dst = &y, mm.src[0] = &w, mm.src[1] = &x;
        rope.op = RF_OP_ROPE, rope.dst = &z, rope.src[0] = &y, rope.src[1] = &pos;
        rope.iparams[0] = RF_ROPE_NORMAL, rope.iparams[1] = 4, rope.fparams[0] = 10000.f, rope.fparams[1] = 1.f;
    }
};

std::vector<LaunchRec> launches(int n) {
    std::vector<LaunchRec> v(n);
    for (int i = 0; i < n; ++i) v[i].grid[0] = 1 + i, v[i].args.aux[0] = 100 + i;
    return v;
}

} // namespace

TEST_CASE("walk cache: the same graph reuses the saved launches", "[walk_cache]") {
    TinyGraph t;
    WalkCache c;
    REQUIRE_FALSE(c.lookup(t.g, 0)); // nothing saved yet
    c.store(0, launches(3));
    const std::vector<LaunchRec> *l = c.lookup(t.g, 0);
    REQUIRE(l);
    REQUIRE(l->size() == 3);
    CHECK((*l)[2].args.aux[0] == 102);
    // A copy of the graph with its own node and tensor objects but the same contents: reused
    // (the key is what the nodes say, not where they live).
    TinyGraph u;
    std::memcpy(u.buf, t.buf, sizeof t.buf);
    for (rf_tensor *p : {&u.w, &u.x, &u.y, &u.pos, &u.z}) p->data = (char *)t.buf + ((char *)p->data - (char *)u.buf);
    CHECK(c.lookup(u.g, 0));
}

TEST_CASE("walk cache: graphs called in turn keep their own lists, the oldest goes first", "[walk_cache]") {
    TinyGraph t[WalkCache::kEntries + 1];
    WalkCache c;
    for (int i = 0; i <= WalkCache::kEntries; ++i) { // distinct graphs: each its own input address
        t[i].x.data = t[i].buf + 40 + i;
        REQUIRE_FALSE(c.lookup(t[i].g, 0));
        c.store(0, launches(1 + i));
    }
    CHECK_FALSE(c.lookup(t[0].g, 0)); // replaced by the fifth
    for (int i = 1; i <= WalkCache::kEntries; ++i) {
        const std::vector<LaunchRec> *l = c.lookup(t[i].g, 0);
        REQUIRE(l);
        CHECK(l->size() == size_t(1 + i));
    }
}

TEST_CASE("walk cache: any change of the graph makes compute() walk it again", "[walk_cache]") {
    auto changed = [](void (*edit)(TinyGraph &)) {
        TinyGraph t;
        WalkCache c;
        c.lookup(t.g, 7);
        c.store(7, launches(2));
        REQUIRE(c.lookup(t.g, 7));
        edit(t);
        return !c.lookup(t.g, 7);
    };
    CHECK(changed([](TinyGraph &t) { t.x.data = t.buf + 40; }));           // an input moved
    CHECK(changed([](TinyGraph &t) { t.z.ne[1] = 2; }));                   // a shape
    CHECK(changed([](TinyGraph &t) { t.y.nb[1] = 32; }));                  // a stride
    CHECK(changed([](TinyGraph &t) { t.w.type = RF_TYPE_F16; }));          // a type
    CHECK(changed([](TinyGraph &t) { t.w.flags = 0; }));                   // a flag
    CHECK(changed([](TinyGraph &t) { t.rope.iparams[1] = 2; }));           // an integer parameter
    CHECK(changed([](TinyGraph &t) { t.rope.fparams[1] = -0.f; t.rope.fparams[0] = 0.f; })); // a float's bits
    CHECK(changed([](TinyGraph &t) { t.rope.src[2] = &t.pos; }));          // a source added
    CHECK(changed([](TinyGraph &t) { t.rope.op = RF_OP_ADD; }));           // the op
    CHECK(changed([](TinyGraph &t) { t.g.n_nodes = 1; }));                 // fewer nodes
    // The same graph, but the parameters differ only in -0.0 against 0.0: still a change.
    CHECK(changed([](TinyGraph &t) { t.mm.fparams[3] = -0.f; }));
}

TEST_CASE("walk cache: a scratch reallocation since the save, or a cleared cache, is a miss", "[walk_cache]") {
    TinyGraph t;
    WalkCache c;
    c.lookup(t.g, 1);
    c.store(1, launches(1));
    CHECK_FALSE(c.lookup(t.g, 2)); // a scratch buffer was reallocated: its old address may be in the list
    CHECK(c.lookup(t.g, 1) != nullptr);
    c.clear();
    CHECK_FALSE(c.lookup(t.g, 1));
}

TEST_CASE("launch queue: repeat() queues a saved list in place of begin()..add()", "[walk_cache]") {
    LaunchQueue q;
    q.begin();
    LaunchRec r;
    r.f = reinterpret_cast<hipFunction_t>(&r);
    r.grid[0] = 5;
    q.add(r);
    const std::vector<LaunchRec> saved = q.pending();
    q.begin();
    REQUIRE(q.pending().empty());
    q.repeat(saved);
    REQUIRE(q.pending().size() == 1);
    CHECK(q.pending()[0].grid[0] == 5);
    CHECK(q.pending()[0].f == r.f);
}
