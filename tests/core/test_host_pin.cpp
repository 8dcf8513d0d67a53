// ABI 2.3 host_pin / host_unpin through Backend and HostPin (core/model/host_pin.h, the logits
// buffer's pin): a range is pinned once however often it is asked for, a moved range is unpinned
// before the new one is pinned, and nothing stays pinned after release. Host-memory backends and
// plugins of an older minor version (poison past their struct_size) are never asked.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <vector>

#include "fake_plugins.h"
#include "host_pin.h"
#include "rocmforge/runtime.h"

namespace {
struct PinStats {
    int pins = 0, unpins = 0, errors = 0;
    uint64_t bytes = 0;
};
// The counters of the fake plugin `b` was loaded from (tests/core/fake_backend.c).
PinStats pin_stats(const rf::Backend &b) {
    void *lib = dlopen(b.plugin_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(lib);
    using Fn = void (*)(int *, int *, int *, uint64_t *);
    auto fn = reinterpret_cast<Fn>(dlsym(lib, "fake_pin_stats"));
    REQUIRE(fn);
    PinStats s;
    fn(&s.pins, &s.unpins, &s.errors, &s.bytes);
    dlclose(lib);
    return s;
}
} // namespace

TEST_CASE("host pin: pinned once, moved ranges unpinned first, nothing left after release") {
    auto rt = rf::Runtime::create(rf::Config::from_json(
        std::string("{\"backends\": [\"fakedev\", \"fakehost\", \"fakeold\"], \"plugin_dirs\": [\"") + fake_plugin_dir() + "\"]}",
        "t.json"));
    rf::Backend *dev = rt->find("fakedev");
    REQUIRE(dev);
    const PinStats s0 = pin_stats(*dev);
    std::vector<float> a(1000), c(3000);
    {
        rf::HostPin pin;
        CHECK(pin.ensure(dev, a.data(), a.size() * sizeof(float)));
        CHECK(pin.ensure(dev, a.data(), a.size() * sizeof(float))); // asked again: no second pin
        PinStats s = pin_stats(*dev);
        CHECK(s.pins == s0.pins + 1);
        CHECK(s.bytes == 4000);
        CHECK(pin.ensure(dev, c.data(), c.size() * sizeof(float))); // the buffer moved
        s = pin_stats(*dev);
        CHECK(s.pins == s0.pins + 2);
        CHECK(s.unpins == s0.unpins + 1);
        CHECK(s.bytes == 12000);
        CHECK(pin.pinned());
    }
    const PinStats s1 = pin_stats(*dev);
    CHECK(s1.unpins == s0.unpins + 2);
    CHECK(s1.bytes == 0);
    CHECK(s1.errors == 0);

    // Host memory needs no pinning: the backend is not asked.
    rf::Backend *host = rt->find("fakehost");
    REQUIRE(host);
    const int host_pins = pin_stats(*host).pins;
    rf::HostPin hp;
    CHECK_FALSE(hp.ensure(host, a.data(), 4000));
    CHECK(pin_stats(*host).pins == host_pins);

    // An ABI 2.0 plugin has no such slot (poison there): refused with the reason, never called.
    std::string why;
    CHECK_FALSE(rt->find("fakeold")->pin_host(a.data(), 4000, why));
    CHECK_THAT(why, Catch::Contains("2.3"));
    rf::HostPin op;
    CHECK_FALSE(op.ensure(rt->find("fakeold"), a.data(), 4000));
    CHECK_FALSE(op.pinned());
}
