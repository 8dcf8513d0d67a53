// One plugin serving several devices: two instances of the "twocpu" test plugin
// (two_cpu_backend.c: two devices, each a CPU backend of its own with a memory budget of its own)
// in one runtime, a model on each, memory counted per device, the same tokens as the CPU backend.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "rocmforge/error.h"
#include "rocmforge/inference.h"
#include "rocmforge/model.h"
#include "tiny_model.h"

using namespace rf;
using namespace rf_test;

namespace {

constexpr uint64_t kDeviceMemory = 256ull << 20; // two_cpu_backend.c's TWOCPU_MEMORY

std::string twocpu_dir() {
    const char *p = std::getenv("RF_TWOCPU");
    REQUIRE(p != nullptr);
    return std::filesystem::path(p).parent_path().string();
}

Config twocpu_config(const std::vector<std::string> &backends) {
    Config c;
    c.backends = backends;
    c.backends_explicit = true;
    c.plugin_dirs = {twocpu_dir()};
    if (const char *root = std::getenv("ROCMFORGE_BUILD_ROOT")) c.plugin_dirs.push_back(std::string(root) + "/backends/cpu");
    c.n_threads = 2;
    return c;
}

ContextParams params() {
    ContextParams p;
    p.n_ctx = 64;
    p.n_batch = 32;
    p.page_size = 16;
    return p;
}

// Greedy tokens after a prompt: argmax of each step's logits, fed back.
std::vector<int32_t> greedy(Model &model, Runtime &rt, int n) {
    InferenceContext ctx(model, rt, params());
    const int64_t V = model.hparams().n_vocab;
    Batch b;
    for (int32_t t : {1, 15, 42, 7, 88}) b.add(t, 0, false);
    b.output.back() = 1;
    std::vector<int32_t> out;
    for (int i = 0; i < n; ++i) {
        const auto &logits = ctx.decode(b);
        REQUIRE(logits.size() == size_t(V));
        const int32_t next = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
        out.push_back(next);
        b.clear();
        b.add(next, 0, true);
    }
    // The KV cache lives on the model's device.
    CHECK(ctx.cache().k(0)->home == &model.backend());
    return out;
}

} // namespace

TEST_CASE("devices: two instances of one plugin in one runtime, a model on each, memory per device") {
    TinySpec spec;
    const std::string path = temp_path("devices_tiny.gguf");
    write_tiny_model(path, spec);

    auto rt = Runtime::create(twocpu_config({"twocpu:0", "twocpu:1", "cpu"}));
    Backend *d0 = rt->find("twocpu:0"), *d1 = rt->find("twocpu:1");
    REQUIRE(d0 != nullptr);
    REQUIRE(d1 != nullptr);
    CHECK(d0->plugin_name() == "twocpu");
    CHECK(d1->plugin_name() == "twocpu");
    CHECK(d0->device_index() == 0);
    CHECK(d1->device_index() == 1);
    CHECK_THAT(std::string(d0->info().name), Catch::StartsWith("twocpu device 0"));
    CHECK_THAT(std::string(d1->info().name), Catch::StartsWith("twocpu device 1"));
    CHECK(d0->context() != d1->context());

    // The model on device 1: only device 1's memory holds it, in the core's count and the device's.
    ModelLoadOptions on1;
    on1.backend = "twocpu:1";
    auto m1 = Model::load(path, *rt, on1);
    CHECK(&m1->backend() == d1);
    CHECK(d1->memory_use().allocated >= m1->weight_bytes());
    CHECK(d0->memory_use().allocated == 0);
    CHECK(d1->current_info().free_memory == kDeviceMemory - d1->memory_use().allocated);
    CHECK(d0->current_info().free_memory == kDeviceMemory);

    // Running it keeps everything there: KV pool and executor arenas on device 1, none on 0.
    const auto tokens1 = greedy(*m1, *rt, 12);
    CHECK(d0->memory_use().peak_allocated == 0);
    CHECK(d1->memory_use().peak_allocated > d1->memory_use().allocated);

    // The same model on device 0 (the default placement: the config's first backend).
    auto m0 = Model::load(path, *rt);
    CHECK(&m0->backend() == d0);
    CHECK(d0->memory_use().allocated == d1->memory_use().allocated);
    uint64_t free0 = 0, total0 = 0;
    std::string why;
    REQUIRE(plugin_device_memory(d0->plugin_vtable(), 0, free0, total0, why));
    CHECK(total0 == kDeviceMemory);
    CHECK(free0 == kDeviceMemory - d0->memory_use().allocated);
    const auto tokens0 = greedy(*m0, *rt, 12);
    CHECK(tokens0 == tokens1);

    // And the CPU backend itself gives the same tokens.
    ModelLoadOptions on_cpu;
    on_cpu.backend = "cpu";
    auto mc = Model::load(path, *rt, on_cpu);
    CHECK(greedy(*mc, *rt, 12) == tokens1);

    // A backend that did not start is refused, naming those that did.
    ModelLoadOptions nowhere;
    nowhere.backend = "twocpu:5";
    CHECK_THROWS_MATCHES(Model::load(path, *rt, nowhere), UsageError,
                         Catch::Matchers::Predicate<UsageError>([](const UsageError &e) {
                             const std::string m = e.what();
                             return m.find("'twocpu:5'") != std::string::npos && m.find("twocpu:0, twocpu:1, cpu") != std::string::npos;
                         }));
    m1.reset();
    CHECK(d1->memory_use().allocated == 0); // the model's weights are given back to device 1
}

TEST_CASE("devices: a model on device 1 started alone runs as on device 0") {
    TinySpec spec;
    spec.seed = 77;
    const std::string path = temp_path("devices_tiny_alone.gguf");
    write_tiny_model(path, spec);
    std::vector<int32_t> tokens[2];
    for (int d = 0; d < 2; ++d) {
        auto rt = Runtime::create(twocpu_config({"twocpu:" + std::to_string(d)}));
        REQUIRE(rt->primary()->device_index() == d);
        auto m = Model::load(path, *rt);
        tokens[d] = greedy(*m, *rt, 10);
    }
    CHECK(tokens[0] == tokens[1]);
}

TEST_CASE("devices: a device index out of range is refused with the count and the devices") {
    for (const auto &[backends, device] : std::vector<std::pair<std::vector<std::string>, int>>{
             {{"twocpu:2"}, -1}, {{"twocpu"}, 3}}) {
        Config c = twocpu_config(backends);
        // --device N (c.device) is checked against a backend of CPUs only when the config gave
        // that backend its device itself; here it goes through backend_options.twocpu.device.
        if (device >= 0) c.backend_json["twocpu"] = "{\"device\": " + std::to_string(device) + "}";
        try {
            Runtime::create(c);
            FAIL("started on a device that does not exist");
        } catch (const UsageError &e) {
            const std::string m = e.what();
            INFO(m);
            CHECK(m.find("device " + std::to_string(device < 0 ? 2 : device) + " is out of range") != std::string::npos);
            CHECK(m.find("has 2 devices") != std::string::npos);
            CHECK(m.find("0: twocpu device 0") != std::string::npos);
            CHECK(m.find("1: twocpu device 1") != std::string::npos);
            CHECK(e.exit_code() == kExitUsage);
        }
    }
}
