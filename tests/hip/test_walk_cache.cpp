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

// Stores n launches for graph g as one unit per launch; returns the entry's tag.
uint64_t store(WalkCache &c, const rf_graph &g, uint64_t gen, int n) {
    std::vector<LaunchRec> v(n);
    std::vector<WalkCache::Unit> u;
    for (int i = 0; i < n; ++i) {
        v[i].grid[0] = 1 + i, v[i].args.aux[0] = 100 + i;
        u.push_back({i, 1, uint32_t(i + 1)});
    }
    return c.store(g, gen, v, u);
}

} // namespace

TEST_CASE("walk cache: the same graph reuses the saved launches", "[walk_cache]") {
    TinyGraph t;
    WalkCache c;
    REQUIRE_FALSE(c.lookup(t.g, 0)); // nothing saved yet
    const uint64_t tag = store(c, t.g, 0, 3);
    CHECK(tag != 0);
    const WalkCache::Entry *e = c.lookup(t.g, 0);
    REQUIRE(e);
    REQUIRE(e->launches.size() == 3);
    CHECK(e->launches[2].args.aux[0] == 102);
    REQUIRE(e->units.size() == 3);
    CHECK(e->units[2].end == 3);
    CHECK(e->tag == tag);
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
        store(c, t[i].g, 0, 1 + i);
    }
    CHECK_FALSE(c.lookup(t[0].g, 0)); // replaced by the fifth
    for (int i = 1; i <= WalkCache::kEntries; ++i) {
        const WalkCache::Entry *e = c.lookup(t[i].g, 0);
        REQUIRE(e);
        CHECK(e->launches.size() == size_t(1 + i));
        CHECK(e->tag == uint64_t(1 + i)); // a new tag per store
    }
}

TEST_CASE("walk cache: any change of the graph makes compute() walk it again", "[walk_cache]") {
    auto changed = [](void (*edit)(TinyGraph &)) {
        TinyGraph t;
        WalkCache c;
        store(c, t.g, 7, 2);
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
    CHECK(changed([](TinyGraph &t) { t.rope.fparams[0] = 5000.f; }));     // a float parameter
    CHECK(changed([](TinyGraph &t) { t.rope.src[2] = &t.pos; }));          // a source added
    CHECK(changed([](TinyGraph &t) { t.rope.op = RF_OP_ADD; }));           // the op
    CHECK(changed([](TinyGraph &t) { t.g.n_nodes = 1; }));                 // fewer nodes
    // The same graph, but the parameters differ only in -0.0 against 0.0: still a change.
    CHECK(changed([](TinyGraph &t) { t.mm.fparams[3] = -0.f; }));
}

TEST_CASE("walk cache: a scratch reallocation since the save, or a cleared cache, is a miss", "[walk_cache]") {
    TinyGraph t;
    WalkCache c;
    store(c, t.g, 1, 1);
    CHECK_FALSE(c.lookup(t.g, 2)); // a scratch buffer was reallocated: its old address may be in the list
    CHECK(c.lookup(t.g, 1) != nullptr);
    c.clear();
    CHECK_FALSE(c.lookup(t.g, 1));
}

TEST_CASE("launch queue: record() keeps the launches as added, repeat() queues them again", "[walk_cache]") {
    LaunchQueue q;
    std::vector<LaunchRec> sink;
    LaunchRec stamp_kernel, plain, empty;
    stamp_kernel.f = reinterpret_cast<hipFunction_t>(&stamp_kernel);
    stamp_kernel.mark = true;
    plain.f = reinterpret_cast<hipFunction_t>(&plain);
    plain.grid[0] = 5;
    plain.stamps = false; // a pack kernel without stamps: the queue puts the stamp kernel before it
    empty.f = plain.f;
    empty.grid[1] = 0; // dropped by add(): never recorded either
    q.begin();
    q.set_stamping(true, stamp_kernel);
    q.record(&sink);
    q.add(plain);
    q.add(empty);
    q.record(nullptr);
    q.add(plain); // not recorded any more
    REQUIRE(q.pending().size() == 3); // stamp kernel, plain, plain
    CHECK(q.pending()[0].mark);
    REQUIRE(sink.size() == 1);
    CHECK(sink[0].grid[0] == 5);
    CHECK_FALSE(sink[0].mark);
    q.set_stamping(false, LaunchRec{});
    q.begin();
    REQUIRE(q.pending().empty());
    q.repeat(sink);
    REQUIRE(q.pending().size() == 1);
    CHECK(q.pending()[0].f == plain.f);
    // Without graphs (or before a tagged flush) there is nothing to replay: the caller flushes.
    bool done = true;
    std::string err;
    CHECK(q.replay_tagged(nullptr, 1, done, err) == RF_OK);
    CHECK_FALSE(done);
}

// compute_same (ABI 2.9): the entry of the last call with a node array, found by the array alone.
TEST_CASE("walk cache: the entry of a node array, without comparing the nodes", "[walk_cache]") {
    TinyGraph t, u; // u: equal nodes and tensors (t's addresses) in another node array
    u.w.data = t.w.data, u.x.data = t.x.data, u.y.data = t.y.data, u.pos.data = t.pos.data, u.z.data = t.z.data;
    WalkCache c;
    CHECK_FALSE(c.lookup_same(t.g, 0));
    store(c, t.g, 0, 3); // stored by a call with t's array
    const WalkCache::Entry *e = c.lookup_same(t.g, 0);
    REQUIRE(e);
    CHECK(e->launches.size() == 3);
    CHECK_FALSE(c.lookup_same(u.g, 0)); // another array: nothing, though its nodes are equal
    CHECK_FALSE(c.lookup_same(t.g, 1)); // a scratch buffer reallocated since
    rf_graph shorter{1, t.nodes};
    CHECK_FALSE(c.lookup_same(shorter, 0)); // the same array, fewer nodes
    // u's array found t's entry by comparing (equal nodes): now the entry is u's array's.
    const WalkCache::Entry *f = c.lookup(u.g, 0);
    REQUIRE(f == e);
    c.remember_nodes(f, u.g);
    CHECK(c.lookup_same(u.g, 0) == e);
    CHECK_FALSE(c.lookup_same(t.g, 0));
    // A new graph stored from u's array takes the array over.
    t.rope.iparams[1] = 2;
    store(c, t.g, 0, 1);
    u.rope.iparams[1] = 2;
    const WalkCache::Entry *g2 = c.lookup(u.g, 0);
    REQUIRE(g2);
    CHECK(g2->launches.size() == 1);
    c.remember_nodes(g2, u.g);
    CHECK(c.lookup_same(u.g, 0) == g2);
    c.clear();
    CHECK_FALSE(c.lookup_same(u.g, 0));
}
