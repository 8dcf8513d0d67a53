// Several devices of one plugin: instance names ("fakemulti:1"), each instance on its own device
// with its own memory count, the device index checked against the plugin's list, options per
// instance, and an ABI 2.1 plugin (no device_memory slot: poison there) still listing its devices.
#include <catch2/catch.hpp>

#include <vector>

#include "fake_plugins.h"
#include "rocmforge/error.h"
#include "rocmforge/graph.h"
#include "rocmforge/runtime.h"

using namespace rf;

namespace {

constexpr uint64_t kDeviceMemory = 1ull << 20; // tests/core/meson.build: FAKE_DEVICE_MEMORY of fakemulti

Config config(const std::string &json) {
    std::string j = json;
    j.insert(j.find('{') + 1, "\"plugin_dirs\": [\"" + fake_plugin_dir() + "\"], ");
    return Config::from_json(j, "t.json");
}

// The UsageError message of creating a runtime for `json` ("" when it started).
std::string usage_error(const Config &c) {
    try {
        Runtime::create(c);
    } catch (const UsageError &e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("devices: instance names parse, bad ones and duplicates are refused") {
    CHECK(parse_backend_ref("hip", "t").plugin == "hip");
    CHECK(parse_backend_ref("hip", "t").device == -1);
    CHECK(parse_backend_ref("hip:12", "t").plugin == "hip");
    CHECK(parse_backend_ref("hip:12", "t").device == 12);
    for (const char *bad : {"hip:", ":1", "hip:x", "hip:-1", "hip:1:2", "hip:99999"}) {
        INFO(bad);
        CHECK_THROWS_AS(parse_backend_ref(bad, "t"), UsageError);
    }
    CHECK_THROWS_WITH(Config::from_json(R"({"backends": ["hip:x"]})", "t.json"), Catch::Contains("NAME:DEVICE"));
    CHECK_THROWS_WITH(Config::from_json(R"({"backend_options": {"hip:1": {"device": 0}}})", "t.json"),
                      Catch::Contains("contradicts"));
    // --backend cpu:0 keeps the CPU fallback from being added a second time.
    Config c;
    c.require_backends({"cpu:0"});
    CHECK(c.backends == std::vector<std::string>{"cpu:0"});
}

TEST_CASE("devices: an instance's options are the plugin's with its own over them, and its device") {
    const Config c = Config::from_json(
        R"({"backends": ["x:1", "x"], "device": 3, "n_threads": 2,
            "backend_options": {"x": {"mode": "a", "speed": 1}, "x:1": {"mode": "b"}}})", "t.json");
    CHECK(c.backend_config_json("x") == R"({"mode":"a","speed":1,"n_threads":2,"device":3})");
    CHECK(c.backend_config_json("x:1") == R"({"speed":1,"mode":"b","n_threads":2,"device":1})");
}

TEST_CASE("devices: two instances of one plugin on devices 0 and 1, memory counted per device") {
    auto rt = Runtime::create(config(R"({"backends": ["fakemulti:1", "fakemulti:0", "fakehost"]})"));
    Backend *d0 = rt->find("fakemulti:0"), *d1 = rt->find("fakemulti:1");
    REQUIRE(d0 != nullptr);
    REQUIRE(d1 != nullptr);
    CHECK(rt->primary() == d1); // placement: the config's first
    CHECK(d0->device_index() == 0);
    CHECK(d1->device_index() == 1);
    CHECK(d1->plugin_name() == "fakemulti");
    CHECK(std::string(d0->info().name) == "fake fakemulti device 0");
    CHECK(std::string(d1->info().name) == "fake fakemulti device 1");
    CHECK(rt->find("fakemulti") == nullptr); // instances go by the names the config gave them

    const rf_buffer_desc a = d1->alloc(100000);
    CHECK(d1->memory_use().allocated == 100000);
    CHECK(d0->memory_use().allocated == 0);
    CHECK(d1->current_info().free_memory == kDeviceMemory - 100000);
    CHECK(d0->current_info().free_memory == kDeviceMemory);
    uint64_t free_b = 0, total = 0;
    std::string why;
    REQUIRE(plugin_device_memory(d0->plugin_vtable(), 1, free_b, total, why));
    CHECK(free_b == kDeviceMemory - 100000);
    CHECK(total == kDeviceMemory);
    CHECK_FALSE(plugin_device_memory(d0->plugin_vtable(), 2, free_b, total, why));
    CHECK_THAT(why, Catch::Contains("no device 2"));
    // Device 1 is full beyond its own free memory, device 0 is not.
    CHECK_THROWS_WITH(d1->alloc(kDeviceMemory - 50000), Catch::Contains("device 1") && Catch::Contains("free"));
    const rf_buffer_desc b = d0->alloc(kDeviceMemory - 50000);
    d0->free(b);
    d1->free(a);
    CHECK(d1->memory_use().allocated == 0);
    CHECK(d1->memory_use().peak_allocated == 100000);
    CHECK(d1->current_info().free_memory == kDeviceMemory);

    const auto devices = d0->devices(why);
    REQUIRE(devices.size() == 2);
    CHECK(std::string(devices[1].name) == "fake fakemulti device 1");
}

TEST_CASE("devices: a graph across two devices of one plugin is copied between them") {
    // scale on device 1 (the first), add moved to device 0: its input crosses devices. The two
    // instances are "device" backends (not host memory), so the executor must copy.
    auto rt = Runtime::create(config(R"({"backends": ["fakemulti:1", "fakemulti:0"], "op_overrides": {"add": "fakemulti:0"}})"));
    Backend *d0 = rt->find("fakemulti:0"), *d1 = rt->find("fakemulti:1");
    Executor ex(*rt);
    std::vector<float> x(40);
    for (size_t i = 0; i < x.size(); ++i) x[i] = float(i) - 7.0f;
    for (int run = 0; run < 2; ++run) {
        Graph g;
        auto *in = g.input("x", RF_TYPE_F32, {40}, x.data());
        auto *y = g.scale(in, 2.0f); // device 1
        auto *z = g.add(y, in);      // device 0
        auto *w = g.scale(z, 0.5f);  // device 1
        ex.run(g);
        std::vector<float> out(40);
        ex.read(w, out.data(), out.size() * sizeof(float));
        for (size_t i = 0; i < x.size(); ++i) REQUIRE(out[i] == 1.5f * x[i]);
    }
    CHECK(ex.arena_bytes(d0) > 0);
    CHECK(ex.arena_bytes(d1) > 0);

    // With a home backend, nodes without weights run there first (a model placed on device 0).
    Executor home0(*rt, d0);
    Graph g;
    auto *in = g.input("x", RF_TYPE_F32, {40}, x.data());
    auto *y = g.scale(in, 2.0f);
    home0.run(g);
    std::vector<float> out(40);
    home0.read(y, out.data(), out.size() * sizeof(float));
    CHECK(out[10] == 2.0f * x[10]);
    CHECK(home0.arena_bytes(d0) > 0);
    CHECK(home0.arena_bytes(d1) == 0);
}

TEST_CASE("devices: a device out of range is refused with the count and the devices found") {
    for (const char *json : {R"({"backends": ["fakemulti:2"]})", R"({"backends": ["fakemulti"], "device": 5})",
                             R"({"backends": ["fakemulti"], "backend_options": {"fakemulti": {"device": 7}}})"}) {
        INFO(json);
        const std::string m = usage_error(config(json));
        CHECK_THAT(m, Catch::Contains("is out of range") && Catch::Contains("has 2 devices") &&
                          Catch::Contains("0: fake fakemulti device 0 (fake, 0.0 GiB)") &&
                          Catch::Contains("1: fake fakemulti device 1"));
    }
    // The same index is fine on a plugin with that many devices.
    CHECK(usage_error(config(R"({"backends": ["fakemulti"], "device": 1})")).empty());
    // --device N leaves a backend of CPUs on its one device, as before (fakehost: no list_devices).
    CHECK(usage_error(config(R"({"backends": ["fakehost"], "device": 4})")).empty());
}

TEST_CASE("devices: one device named twice, and options for an instance not started, are refused") {
    CHECK_THAT(usage_error(config(R"({"backends": ["fakemulti", "fakemulti:0"]})")),
               Catch::Contains("'fakemulti' and 'fakemulti:0' both name device 0"));
    CHECK_THAT(usage_error(config(R"({"backends": ["fakemulti:1", "fakemulti"], "device": 1})")),
               Catch::Contains("both name device 1"));
    CHECK_THAT(usage_error(config(R"({"backends": ["fakemulti:0"], "backend_options": {"fakemulti:1": {}}})")),
               Catch::Contains("instance 'fakemulti:1'"));
    CHECK_THAT(usage_error(config(R"({"backends": ["fakemulti:0"], "op_overrides": {"add": "fakemulti"}})")),
               Catch::Contains("names backend 'fakemulti'") && Catch::Contains("backends started: fakemulti:0"));
}

TEST_CASE("devices: one device, one name: nothing changes") {
    auto rt = Runtime::create(config(R"({"backends": ["fakehost"]})"));
    REQUIRE(rt->find("fakehost") != nullptr);
    CHECK(rt->primary()->name() == "fakehost");
    CHECK(rt->primary()->plugin_name() == "fakehost");
    CHECK(rt->primary()->device_index() == 0);
}

// fakemultiold: built against ABI 2.1, it lists two devices but has no device_memory slot; the
// slot's place holds a poison address, so reading past its struct_size crashes this test.
TEST_CASE("abi: a 2.1 plugin lists its devices and runs on device 1 without device_memory") {
    auto rt = Runtime::create(config(R"({"backends": ["fakemultiold:1", "fakemultiold:0"]})"));
    Backend *d1 = rt->find("fakemultiold:1");
    REQUIRE(d1 != nullptr);
    std::string why;
    CHECK(d1->devices(why).size() == 2);
    uint64_t free_b = 0, total = 0;
    CHECK_FALSE(plugin_device_memory(d1->plugin_vtable(), 1, free_b, total, why));
    CHECK_THAT(why, Catch::Contains("before 2.2"));
    CHECK(d1->current_info().free_memory == kDeviceMemory); // device_info still says it
    const rf_buffer_desc a = d1->alloc(1000);
    CHECK(d1->current_info().free_memory == kDeviceMemory - 1000);
    d1->free(a);
    CHECK(usage_error(config(R"({"backends": ["fakemultiold:3"]})")).find("has 2 devices") != std::string::npos);
}
