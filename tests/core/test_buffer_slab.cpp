// BufferSlab: many persistent tensors in one backend allocation (weights, KV pools).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "rocmforge/buffer_slab.h"
#include "rocmforge/graph.h"
#include "rocmforge/kv_cache.h"
#include "rocmforge/runtime.h"
#include "rocmforge/types.h"

static std::unique_ptr<rf::Runtime> host_runtime() {
    std::string dir = std::filesystem::path(std::getenv("RF_FAKE_HOST")).parent_path().string();
    return rf::Runtime::create(rf::Config::from_json("{\"backends\": [\"fakehost\"], \"plugin_dirs\": [\"" + dir + "\"]}", "t.json"));
}

TEST_CASE("buffer slab: slices of one allocation, aligned, freed with the slab") {
    auto rt = host_runtime();
    rf::Backend &b = *rt->find("fakehost");
    const uint64_t base = b.memory_use().allocated;
    {
        rf::BufferSlab slab(b, 3 * 256);
        CHECK(b.memory_use().allocated == base); // nothing until the first slice
        rf_buffer_desc s1 = slab.take(10), s2 = slab.take(300);
        CHECK(b.memory_use().allocated == base + 3 * 256); // one allocation, the whole capacity
        CHECK(s1.handle == nullptr);
        CHECK(s2.handle == nullptr);
        CHECK(static_cast<char *>(s2.base) - static_cast<char *>(s1.base) == 256);
        CHECK(reinterpret_cast<uintptr_t>(s1.base) % rf::BufferSlab::kAlign == 0);
        CHECK(slab.used() == 3 * 256);
        b.free(s1); // a slice: left to the slab
        CHECK(b.memory_use().allocated == base + 3 * 256);
        // No room left: a buffer of its own, counted and freed as any other.
        rf_buffer_desc own = slab.take(1);
        CHECK(own.handle != nullptr);
        CHECK(b.memory_use().allocated == base + 3 * 256 + 1);
        b.free(own);
        CHECK(b.memory_use().allocated == base + 3 * 256);
    }
    CHECK(b.memory_use().allocated == base);
}

TEST_CASE("buffer slab: uploaded bytes land in their slice") {
    auto rt = host_runtime();
    rf::Backend &b = *rt->find("fakehost");
    rf::BufferSlab slab(b, 2 * 512);
    std::vector<uint8_t> x(500, 3), y(512, 9);
    rf_buffer_desc dx = b.wrap_or_upload(x.data(), x.size(), &slab), dy = b.wrap_or_upload(y.data(), y.size(), &slab);
    CHECK(std::memcmp(dx.base, x.data(), x.size()) == 0);
    CHECK(std::memcmp(dy.base, y.data(), y.size()) == 0);
    CHECK(static_cast<char *>(dy.base) - static_cast<char *>(dx.base) == 512);
}

TEST_CASE("kv cache: every layer's K and V pool in one allocation") {
    auto rt = host_runtime();
    rf::Backend &b = *rt->find("fakehost");
    const uint64_t base = b.memory_use().allocated;
    rf::KvCacheParams p;
    p.n_ctx = 100; // 7 pages of 16: 112 slots
    p.type_v = RF_TYPE_Q8_0;
    {
        rf::KvCache kv(b, 3, 64, p);
        const uint64_t k_bytes = rf::row_size(RF_TYPE_F16, 64) * 112, v_bytes = rf::row_size(RF_TYPE_Q8_0, 64) * 112;
        const uint64_t layer = rf::BufferSlab::slice_bytes(k_bytes) + rf::BufferSlab::slice_bytes(v_bytes);
        CHECK(b.memory_use().allocated == base + 3 * layer);
        for (int l = 0; l < 3; ++l) {
            const char *k = static_cast<const char *>(kv.k(l)->t.data), *v = static_cast<const char *>(kv.v(l)->t.data);
            CHECK(v - k == (ptrdiff_t)rf::BufferSlab::slice_bytes(k_bytes));
            if (l) CHECK(k - static_cast<const char *>(kv.k(l - 1)->t.data) == (ptrdiff_t)layer);
        }
    }
    CHECK(b.memory_use().allocated == base);
}
