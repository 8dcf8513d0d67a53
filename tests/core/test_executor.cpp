#include <catch2/catch.hpp>

#include <array>
#include <dlfcn.h>
#include <utility>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "rocmforge/error.h"
#include "rocmforge/graph.h"
#include "rocmforge/kv_cache.h"
#include "rocmforge/runtime.h"

static std::unique_ptr<rf::Runtime> fake_runtime(const std::string &backends, const std::string &extra = "") {
    std::string dir = std::filesystem::path(std::getenv("RF_FAKE_HOST")).parent_path().string();
    return rf::Runtime::create(rf::Config::from_json(
        "{\"backends\": " + backends + ", \"plugin_dirs\": [\"" + dir + "\"]" + extra + "}", "t.json"));
}

// The first four f32 values of a result.
static std::array<float, 4> read4(rf::Executor &ex, const rf::Tensor *t) {
    std::array<float, 4> out{};
    ex.read(t, out.data(), sizeof out);
    return out;
}

TEST_CASE("executor: nodes split across a device and a host backend with copies between") {
    auto rt = fake_runtime("[\"fakedev\", \"fakehost\"]");
    rf::Executor ex(*rt);
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (int run = 0; run < 3; ++run) { // reruns reuse the arenas
        const int64_t n = 37 + run * 100;
        std::vector<float> x(n * 3);
        for (auto &v : x) v = dist(rng);
        rf::Graph g;
        auto *in = g.input("x", RF_TYPE_F32, {n, 3}, x.data());
        auto *y = g.scale(in, 2.0f);  // fakedev supports only SCALE
        auto *z = g.add(y, in);       // fakehost: y and x copied from the device
        auto *w = g.scale(z, 0.5f);   // back on fakedev
        auto *u = g.mul(w, w);        // fakehost again
        ex.run(g);
        std::vector<float> out_w(n * 3), out_u(n * 3);
        ex.read(w, out_w.data(), out_w.size() * 4);
        ex.read(u, out_u.data(), out_u.size() * 4);
        for (size_t i = 0; i < x.size(); ++i) {
            REQUIRE(out_w[i] == Approx(1.5f * x[i]));
            REQUIRE(out_u[i] == Approx(2.25f * x[i] * x[i]));
        }
    }
}

namespace {
// compute() and compute_same() calls the fake plugin `b` was loaded from has had.
std::pair<int, int> compute_calls(const rf::Backend &b) {
    void *lib = dlopen(b.plugin_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(lib);
    using Fn = void (*)(int *, int *);
    auto fn = reinterpret_cast<Fn>(dlsym(lib, "fake_compute_stats"));
    REQUIRE(fn);
    int c = 0, s = 0;
    fn(&c, &s);
    dlclose(lib);
    return {c, s};
}
} // namespace

// ABI 2.9: a rerun of an unchanged graph is compute_same() from the second rerun on (the first
// hands the backend the rerun's node array through compute()); a rerun whose rebinding moved an
// address is compute(); a new graph object starts over.
TEST_CASE("executor: reruns of an unchanged graph are compute_same, moved inputs compute") {
    auto rt = fake_runtime("[\"fakehost\"]");
    rf::Backend *host = rt->find("fakehost");
    REQUIRE(host);
    rf::Executor ex(*rt);
    std::vector<float> a(8, 1.f), b(8, 5.f);
    rf::Graph g;
    auto *in = g.input("x", RF_TYPE_F32, {8}, a.data()); // zero-copy on a host backend
    auto *y = g.scale(in, 2.0f);
    const auto c0 = compute_calls(*host);
    auto calls = [&] {
        const auto c = compute_calls(*host);
        return std::pair<int, int>{c.first - c0.first, c.second - c0.second};
    };
    ex.run(g); // planned and bound: compute
    CHECK(calls() == std::pair<int, int>{1, 0});
    a[0] = 3.f;
    ex.run(g); // first rerun: compute, with the rerun's node array
    CHECK(calls() == std::pair<int, int>{2, 0});
    CHECK(read4(ex, y)[0] == 6.f);
    a[0] = 4.f;
    ex.run(g); // unchanged: compute_same, new input bytes read all the same
    ex.run(g);
    CHECK(calls() == std::pair<int, int>{2, 2});
    CHECK(read4(ex, y)[0] == 8.f);
    in->host_data = b.data(); // the input moved: its address in the node changes
    ex.run(g);
    CHECK(calls() == std::pair<int, int>{3, 2});
    CHECK(read4(ex, y)[0] == 10.f);
    ex.run(g);
    CHECK(calls() == std::pair<int, int>{3, 3});
    rf::Graph g2; // another graph: planned, then its first rerun hands over the array again
    auto *in2 = g2.input("x", RF_TYPE_F32, {8}, b.data());
    auto *y2 = g2.scale(in2, 3.0f);
    ex.run(g2);
    ex.run(g2);
    CHECK(calls() == std::pair<int, int>{5, 3});
    ex.run(g2);
    CHECK(calls() == std::pair<int, int>{5, 4});
    CHECK(read4(ex, y2)[0] == 15.f);
}

// A backend built against an older minor version (no compute_same in its struct) gets compute().
TEST_CASE("executor: reruns on a backend without compute_same are compute") {
    auto rt = fake_runtime("[\"fakeold\", \"fakehost\"]");
    rf::Backend *old = rt->find("fakeold");
    REQUIRE(old);
    rf::Executor ex(*rt);
    std::vector<float> a(8, 1.f);
    rf::Graph g;
    auto *in = g.input("x", RF_TYPE_F32, {8}, a.data());
    auto *y = g.scale(in, 2.0f); // fakeold runs SCALE (a "device": the input is uploaded)
    for (int i = 0; i < 4; ++i) {
        a[0] = (float)i;
        ex.run(g);
        CHECK(read4(ex, y)[0] == 2.f * i);
    }
}

TEST_CASE("executor: an op no backend supports is an error naming it") {
    auto rt = fake_runtime("[\"fakedev\"]");
    rf::Executor ex(*rt);
    float x[4] = {1, 2, 3, 4};
    rf::Graph g;
    auto *in = g.input("x", RF_TYPE_F32, {4}, x);
    g.add(in, in, "my_add");
    CHECK_THROWS_WITH(ex.run(g), Catch::Contains("no backend supports op add") && Catch::Contains("my_add"));
}

TEST_CASE("executor: op_overrides pin an op to a backend") {
    auto rt = fake_runtime("[\"fakedev\", \"fakehost\"]", ", \"op_overrides\": {\"scale\": \"fakehost\"}");
    rf::Executor ex(*rt);
    float x[4] = {1, 2, 3, 4};
    rf::Graph g;
    auto *in = g.input("x", RF_TYPE_F32, {4}, x);
    auto *y = g.scale(in, 3.0f);
    ex.run(g);
    CHECK(read4(ex, y)[3] == 12.0f);
    CHECK(y->home->name() == "fakehost");
}

TEST_CASE("executor: an input first read late keeps its uploaded bytes on a device backend") {
    // Regression: inputs are uploaded before node 0, so planning them from their first reader
    // let earlier intermediates reuse (and overwrite) their memory.
    auto rt = fake_runtime("[\"fakedev\"]");
    rf::Executor ex(*rt);
    std::vector<float> x(64, 1.0f), late(64);
    for (int i = 0; i < 64; ++i) late[i] = float(i);
    rf::Graph g;
    auto *a = g.scale(g.input("x", RF_TYPE_F32, {64}, x.data()), 2.0f);
    auto *b = g.scale(a, 3.0f);
    auto *c = g.scale(b, 4.0f);
    auto *d = g.scale(g.input("late", RF_TYPE_F32, {64}, late.data()), 5.0f);
    ex.run(g);
    std::vector<float> out_c(64), out_d(64);
    ex.read(c, out_c.data(), 256);
    ex.read(d, out_d.data(), 256);
    for (int i = 0; i < 64; ++i) {
        REQUIRE(out_c[i] == 24.0f);
        REQUIRE(out_d[i] == 5.0f * i);
    }
}

TEST_CASE("executor: a graph of the same structure reuses the plan with new input data") {
    auto rt = fake_runtime("[\"fakedev\"]");
    rf::Executor ex(*rt);
    for (int run = 0; run < 4; ++run) {
        std::vector<float> x(100);
        for (int i = 0; i < 100; ++i) x[i] = float(i * (run + 1));
        rf::Graph g;
        auto *a = g.scale(g.input("x", RF_TYPE_F32, {100}, x.data()), 2.0f);
        auto *b = g.scale(a, 0.25f);
        ex.run(g);
        std::vector<float> out(100);
        ex.read(b, out.data(), 400);
        for (int i = 0; i < 100; ++i) REQUIRE(out[i] == 0.5f * x[i]);
    }
}

TEST_CASE("backend memory use: allocations counted until freed, with their peak") {
    auto rt = fake_runtime("[\"fakehost\"]");
    rf::Backend *b = rt->find("fakehost");
    REQUIRE(b != nullptr);
    const uint64_t base = b->memory_use().allocated;
    rf_buffer_desc a = b->alloc(1000), c = b->alloc(24);
    CHECK(b->memory_use().allocated == base + 1024);
    b->free(a);
    CHECK(b->memory_use().allocated == base + 24);
    CHECK(b->memory_use().peak_allocated >= base + 1024);
    // No buffer_from_host in this plugin: wrap_or_upload allocates and uploads, counted as allocated.
    std::vector<uint8_t> host(512, 7);
    rf_buffer_desc w = b->wrap_or_upload(host.data(), host.size());
    CHECK(b->memory_use().allocated == base + 24 + 512);
    CHECK(b->memory_use().from_host == 0);
    b->free(w);
    b->free(c);
    CHECK(b->memory_use().allocated == base);

    // The executor's arena is an allocation too.
    rf::Executor ex(*rt);
    float x[64];
    for (int i = 0; i < 64; ++i) x[i] = float(i);
    rf::Graph g;
    auto *in = g.input("x", RF_TYPE_F32, {64}, x);
    g.add(g.scale(in, 2.0f), in);
    ex.run(g);
    CHECK(b->memory_use().allocated == base + ex.arena_bytes(b));
    CHECK(ex.arena_bytes(b) > 0);
}

// State (persistent, not a weight: a KV pool) stays on its backend; weights may be copied.
TEST_CASE("executor: an override that would copy persistent state every run is refused with the reason") {
    auto rt = fake_runtime("[\"fakedev\", \"fakehost\"]", ", \"op_overrides\": {\"scale\": \"fakehost\"}");
    rf::Backend &dev = *rt->find("fakedev");
    rf::PersistentTensor state(dev, "cache_k_l0", RF_TYPE_F32, {4});
    rf::Executor ex(*rt);
    rf::Graph g;
    g.scale(state.get(), 2.0f, "blk.0.attention");
    try {
        ex.run(g);
        FAIL("the state was copied");
    } catch (const rf::UsageError &e) {
        CHECK_THAT(e.what(), Catch::Contains("op_overrides.scale puts node blk.0.attention on 'fakehost'") &&
                                 Catch::Contains("reads 'cache_k_l0', state that lives on 'fakedev'") &&
                                 Catch::Contains("refused"));
    }

    // A weight is constant: copying it is slow but not refused.
    const float w[4] = {1, 2, 3, 4};
    const int64_t ne[4] = {4, 1, 1, 1};
    rf::PersistentTensor weight(dev, "w", RF_TYPE_F32, ne, w);
    rf::Graph g2;
    auto *y = g2.scale(weight.get(), 2.0f);
    ex.run(g2);
    CHECK(read4(ex, y)[3] == 8.0f);
    CHECK(y->home->name() == "fakehost");
}

TEST_CASE("executor: without an override, a node reading state runs where the state lives") {
    auto rt = fake_runtime("[\"fakehost\", \"fakedev\"]");
    rf::Backend &dev = *rt->find("fakedev");
    rf::PersistentTensor state(dev, "cache_v_l0", RF_TYPE_F32, {4});
    const float v[4] = {1, 2, 3, 4};
    dev.upload(state.get()->t.data, v, sizeof v);
    rf::Executor ex(*rt);
    rf::Graph g;
    auto *y = g.scale(state.get(), 0.5f);
    ex.run(g);
    CHECK(read4(ex, y)[1] == 1.0f);
    CHECK(y->home == &dev);
}

TEST_CASE("executor: set_rows moved away from its pool by op_overrides is refused") {
    auto rt = fake_runtime("[\"fakedev\", \"fakehost\"]", ", \"op_overrides\": {\"set_rows\": \"fakehost\"}");
    rf::PersistentTensor pool(*rt->find("fakedev"), "cache_k_l0", RF_TYPE_F32, {4, 8});
    std::vector<float> rows(8, 1.0f);
    int32_t slots[2] = {0, 5};
    rf::Executor ex(*rt);
    rf::Graph g;
    g.set_rows(pool.get(), g.input("k", RF_TYPE_F32, {4, 2}, rows.data()), g.input("slots", RF_TYPE_I32, {2}, slots));
    CHECK_THROWS_WITH(ex.run(g), Catch::Contains("op_overrides puts set_rows on 'fakehost'") &&
                                     Catch::Contains("appends in place to 'cache_k_l0' on 'fakedev'") &&
                                     Catch::Contains("override attention instead"));
}

TEST_CASE("kv cache: lives on the backend op_overrides puts attention on, else with the weights") {
    auto plain = fake_runtime("[\"fakedev\", \"fakehost\"]");
    CHECK(&rf::kv_cache_backend(*plain, *plain->find("fakedev")) == plain->find("fakedev"));
    auto moved = fake_runtime("[\"fakedev\", \"fakehost\"]", ", \"op_overrides\": {\"attention\": \"fakehost\"}");
    CHECK(&rf::kv_cache_backend(*moved, *moved->find("fakedev")) == moved->find("fakehost"));
}
