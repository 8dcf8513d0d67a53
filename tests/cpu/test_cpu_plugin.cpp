// The exported ABI of rocmforge-cpu.so: plugin info, every vtable slot, config parsing, device
// info, buffers, supports_op and error reporting.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "cpu_test_util.h"

using namespace cputest;

TEST_CASE("cpu plugin: info and vtable", "[cpu][abi]") {
    const rf_plugin_info &info = plugin();
    CHECK(info.abi_major == RF_ABI_MAJOR);
    CHECK(info.abi_minor == RF_ABI_MINOR);
    CHECK(info.kind == RF_PLUGIN_BACKEND);
    CHECK(std::string(info.name) == "cpu");
    const rf_backend_vtable &vt = vtable();
    CHECK(vt.struct_size == sizeof(rf_backend_vtable));
    CHECK(vt.init);
    CHECK(vt.shutdown);
    CHECK(vt.device_info);
    CHECK(vt.buffer_alloc);
    CHECK(vt.buffer_free);
    CHECK(vt.upload);
    CHECK(vt.download);
    CHECK(vt.supports_op);
    CHECK(vt.compute);
    CHECK(vt.synchronize);
    CHECK(vt.buffer_from_host);
    CHECK(vt.set_observer);
    CHECK(vt.device_memory);
    CHECK(vt.retired_compute_timed == nullptr); // retired in ABI 2.1: never set
    CHECK(vt.retired_compute_events == nullptr);
}

TEST_CASE("cpu plugin: list_devices (ABI 1.3) gives the one device init describes", "[cpu][abi]") {
    const auto list = RF_SLOT(&vtable(), rf_backend_vtable, list_devices);
    REQUIRE(list);
    int32_t n = -1;
    char err[256] = {0};
    CHECK(list(nullptr, 0, &n, err, sizeof err) == RF_OK); // the count alone
    CHECK(n == 1);
    rf_device_info listed[2]{};
    REQUIRE(list(listed, 2, &n, err, sizeof err) == RF_OK);
    CHECK(n == 1);
    Backend be("{}");
    rf_device_info info{};
    REQUIRE(vtable().device_info(be.ctx(), &info) == RF_OK);
    CHECK(std::string(listed[0].name) == info.name);
    CHECK(std::string(listed[0].arch) == info.arch);
    CHECK(listed[0].kind == RF_DEVICE_CPU);
    CHECK(listed[0].total_memory == info.total_memory);
    CHECK(list(listed, 2, nullptr, err, sizeof err) == RF_ERR_INVALID);
    CHECK(std::string(err).find("list_devices") != std::string::npos);
}

TEST_CASE("cpu plugin: device_memory (ABI 2.2) of its one device, none beyond", "[cpu][abi]") {
    const auto memory = RF_SLOT(&vtable(), rf_backend_vtable, device_memory);
    REQUIRE(memory);
    uint64_t free_b = 0, total = 0;
    char err[256] = {0};
    REQUIRE(memory(0, &free_b, &total, err, sizeof err) == RF_OK);
    CHECK(total > 0);
    CHECK(free_b > 0);
    CHECK(free_b <= total);
    CHECK(memory(1, &free_b, &total, err, sizeof err) == RF_ERR_INVALID);
    CHECK(std::string(err).find("no device 1 (1 found)") != std::string::npos);
}

TEST_CASE("cpu plugin: config and device info", "[cpu][abi]") {
    Backend be(R"({"n_threads": 2})");
    rf_device_info info{};
    REQUIRE(vtable().device_info(be.ctx(), &info) == RF_OK);
    CHECK(std::strlen(info.name) > 0);
    const std::string arch = info.arch;
    CHECK((arch == "x86_64-avx512vnni" || arch == "x86_64-avx2" || arch == "x86_64-scalar"));
    CHECK(info.kind == RF_DEVICE_CPU);
    CHECK(info.host_memory == 1);
    CHECK(info.total_memory > 0);
    CHECK(std::string(info.details).find("threads=2") != std::string::npos);

    Backend scalar(R"({"simd": "scalar"})");
    CHECK(scalar.arch() == "x86_64-scalar");
    Backend empty("{}");
    Backend null_cfg("");

    void *ctx = nullptr;
    char err[256] = {};
    CHECK(vtable().init("{\"n_threads\": -1}", &ctx, err, sizeof err) == RF_ERR_INVALID);
    CHECK(std::string(err).find("n_threads") != std::string::npos);
    CHECK(vtable().init("{\"simd\": \"neon\"}", &ctx, err, sizeof err) == RF_ERR_INVALID);
    CHECK(std::string(err).find("neon") != std::string::npos);
    CHECK(vtable().init("{not json", &ctx, err, sizeof err) == RF_ERR_INVALID);
    CHECK(std::string(err).find("JSON") != std::string::npos);
}

TEST_CASE("cpu plugin: option_keys lists exactly the keys init reads; no flags, so it must start", "[cpu][abi]") {
    const auto option_keys = RF_SLOT(&vtable(), rf_backend_vtable, option_keys);
    REQUIRE(option_keys != nullptr);
    std::vector<std::string> keys;
    for (const char *const *k = option_keys(); *k; ++k) keys.emplace_back(*k);
    CHECK(keys == std::vector<std::string>{"n_threads", "weights", "simd"});
    // init reads each listed key: a value of the wrong type is refused naming it.
    for (const auto &key : keys) {
        void *ctx = nullptr;
        char err[256] = {};
        CHECK(vtable().init(("{\"" + key + "\": [true]}").c_str(), &ctx, err, sizeof err) == RF_ERR_INVALID);
        CHECK_THAT(err, Catch::Contains(key));
    }
    CHECK(RF_SLOT(&vtable(), rf_backend_vtable, flags) == nullptr);
}

TEST_CASE("cpu plugin: buffers", "[cpu][abi]") {
    Backend be("{}");
    const rf_backend_vtable &vt = vtable();
    char err[256] = {};
    rf_buffer_desc buf{};
    REQUIRE(vt.buffer_alloc(be.ctx(), 1000, &buf, err, sizeof err) == RF_OK);
    CHECK(reinterpret_cast<uintptr_t>(buf.base) % 64 == 0);
    CHECK(buf.size == 1000);
    std::vector<uint8_t> src(1000), dst(1000);
    for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 7);
    REQUIRE(vt.upload(be.ctx(), buf.base, src.data(), 1000, err, sizeof err) == RF_OK);
    REQUIRE(vt.download(be.ctx(), dst.data(), buf.base, 1000, err, sizeof err) == RF_OK);
    CHECK(src == dst);
    vt.buffer_free(be.ctx(), buf.handle);

    rf_buffer_desc huge{};
    CHECK(vt.buffer_alloc(be.ctx(), uint64_t(1) << 62, &huge, err, sizeof err) == RF_ERR_OUT_OF_MEMORY);
    CHECK(std::string(err).find(std::to_string(uint64_t(1) << 62)) != std::string::npos);

    rf_buffer_desc wrapped{};
    REQUIRE(vt.buffer_from_host(be.ctx(), src.data(), src.size(), &wrapped, err, sizeof err) == RF_OK);
    CHECK(wrapped.base == src.data()); // no copy
    vt.buffer_free(be.ctx(), wrapped.handle);
    CHECK(src[1] == 7); // host memory untouched by free
}

TEST_CASE("cpu plugin: supports_op and compute errors", "[cpu][abi]") {
    Backend be(R"({"n_threads": 2})");
    Tensor a(RF_TYPE_F32, {8, 2}), b(RF_TYPE_F32, {8, 2}), h(RF_TYPE_F16, {8, 2});
    rf_node ok = make_node(RF_OP_SCALE, b, {&a});
    ok.fparams[0] = 2.f;
    CHECK(be.supports(ok));
    rf_node bad_type = make_node(RF_OP_SCALE, h, {&a});
    CHECK_FALSE(be.supports(bad_type));
    rf_node unknown = make_node(RF_OP_COUNT + 5, b, {&a});
    CHECK_FALSE(be.supports(unknown));
    std::string err;
    CHECK(be.run(unknown, &err) == RF_ERR_UNSUPPORTED);
    CHECK(err.find("not supported") != std::string::npos);

    rf_tensor strided = a.t; // non-contiguous rows: nb[0] = 8
    strided.nb[0] = 8;
    strided.ne[0] = 4;
    rf_node nc = make_node(RF_OP_SCALE, b, {&a});
    nc.src[0] = &strided;
    CHECK_FALSE(be.supports(nc));

    Tensor table(RF_TYPE_F32, {8, 4}), ids(RF_TYPE_I32, {2}), out(RF_TYPE_F32, {8, 2});
    ids.i32()[0] = 1;
    ids.i32()[1] = 4; // out of range
    rf_node gr = make_node(RF_OP_GET_ROWS, out, {&table, &ids});
    CHECK(be.run(gr, &err) == RF_ERR_INVALID);
    CHECK(err.find("row id 4") != std::string::npos);
}

TEST_CASE("cpu plugin: weights config copies offered host memory", "[cpu][abi]") {
    Backend be(R"({"n_threads": 2, "weights": "copy"})");
    const rf_backend_vtable &vt = vtable();
    std::vector<uint8_t> src(1000);
    for (size_t i = 0; i < src.size(); ++i) src[i] = uint8_t(i * 7);
    rf_buffer_desc d{};
    char err[256] = {0};
    REQUIRE(vt.buffer_from_host(be.ctx(), src.data(), src.size(), &d, err, sizeof err) == RF_OK);
    CHECK(d.base != src.data());
    CHECK(std::memcmp(d.base, src.data(), src.size()) == 0);
    vt.buffer_free(be.ctx(), d.handle);

    void *ctx = nullptr;
    CHECK(vt.init(R"({"weights": "sometimes"})", &ctx, err, sizeof err) == RF_ERR_INVALID);
    CHECK(std::string(err).find("weights") != std::string::npos);
}

TEST_CASE("cpu plugin: long graphs on more threads than cores stay exact", "[cpu][threads]") {
    // 300 dependent nodes of mixed sizes (one-part and many-part phases) on an oversubscribed
    // pool: every node must see its predecessor's complete result.
    for (int threads : {1, 3, 8}) {
        INFO("threads " << threads);
        Backend be("{\"n_threads\": " + std::to_string(threads) + "}");
        for (int64_t n : {int64_t(16), int64_t(1) << 18}) {
            INFO("elements " << n);
            Tensor a(RF_TYPE_F32, {n}), b(RF_TYPE_F32, {n}), one(RF_TYPE_F32, {n});
            for (int64_t i = 0; i < n; ++i) { a.f32()[i] = float(i % 5); one.f32()[i] = 1.f; }
            std::vector<rf_node> nodes;
            nodes.reserve(300);
            for (int k = 0; k < 300; ++k) {
                Tensor &src = k % 2 ? b : a, &dst = k % 2 ? a : b;
                nodes.push_back(make_node(RF_OP_ADD, dst, {&src, &one}));
            }
            std::vector<rf_node *> ptrs;
            for (auto &nd : nodes) ptrs.push_back(&nd);
            std::string err;
            for (int rep = 0; rep < 3; ++rep) {
                for (int64_t i = 0; i < n; ++i) a.f32()[i] = float(i % 5);
                REQUIRE(be.run_graph(ptrs, &err) == RF_OK);
                bool exact = true;
                for (int64_t i = 0; i < n; ++i) exact = exact && a.f32()[i] == float(i % 5 + 300);
                CHECK(exact);
            }
        }
    }
}

namespace {
// What an observer was told: per report, its call number and units (copied: they live only
// during ran()).
struct SeenUnit {
    std::string name;
    std::vector<int32_t> nodes;
    uint64_t start_ns, end_ns;
};
struct Seen {
    std::vector<uint64_t> calls;
    std::vector<std::vector<SeenUnit>> units;
};
void seen_ran(void *user, uint64_t call, const rf_exec_unit *units, int32_t n) {
    auto *s = static_cast<Seen *>(user);
    s->calls.push_back(call);
    s->units.emplace_back();
    for (int32_t i = 0; i < n; ++i)
        s->units.back().push_back({units[i].name, std::vector<int32_t>(units[i].nodes, units[i].nodes + units[i].n_nodes),
                                   units[i].start_ns, units[i].end_ns});
}
} // namespace

TEST_CASE("cpu plugin: an observer is told every node with its host-clock time, results unchanged", "[cpu][threads]") {
    REQUIRE(vtable().set_observer != nullptr);
    auto steady_ns = [] {
        return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch()).count());
    };
    for (int threads : {1, 3}) {
        INFO("threads " << threads);
        Backend be("{\"n_threads\": " + std::to_string(threads) + "}");
        Seen seen;
        const rf_exec_observer obs = {sizeof(rf_exec_observer), &seen, seen_ran};
        char err[256] = {0};
        REQUIRE(vtable().set_observer(be.ctx(), &obs, err, sizeof err) == RF_OK);
        const int64_t n = int64_t(1) << 18;
        Tensor a(RF_TYPE_F32, {n}), b(RF_TYPE_F32, {n}), one(RF_TYPE_F32, {n});
        for (int64_t i = 0; i < n; ++i) { a.f32()[i] = float(i % 7); one.f32()[i] = 1.f; }
        // add, a no-op node (no work: it ends where its predecessor did), add, add.
        std::vector<rf_node> nodes = {make_node(RF_OP_ADD, b, {&a, &one}), rf_node{},
                                      make_node(RF_OP_ADD, a, {&b, &one}), make_node(RF_OP_ADD, b, {&a, &one})};
        std::vector<rf_node *> ptrs;
        for (auto &nd : nodes) ptrs.push_back(&nd);
        const rf_graph g = {int32_t(ptrs.size()), ptrs.data()};
        const uint64_t before = steady_ns();
        REQUIRE(vtable().compute(be.ctx(), &g, err, sizeof err) == RF_OK);
        const uint64_t after = steady_ns();
        bool exact = true;
        for (int64_t i = 0; i < n; ++i) exact = exact && b.f32()[i] == float(i % 7 + 3);
        CHECK(exact);
        // Reported before compute() returned: call 0, one unit per node, back to back.
        REQUIRE(seen.calls == std::vector<uint64_t>{0});
        const auto &u = seen.units[0];
        REQUIRE(u.size() == 4);
        const char *names[4] = {"add", "none", "add", "add"};
        for (size_t i = 0; i < u.size(); ++i) {
            CHECK(u[i].name == names[i]);
            CHECK(u[i].nodes == std::vector<int32_t>{int32_t(i)});
            CHECK(u[i].end_ns >= u[i].start_ns);
            if (i) CHECK(u[i].start_ns == u[i - 1].end_ns);
        }
        CHECK(u[0].start_ns >= before);
        CHECK(u[3].end_ns <= after);
        CHECK(u[1].end_ns == u[1].start_ns); // the no-op node
        CHECK(u[0].end_ns > u[0].start_ns);  // 2^18 additions take more than a nanosecond

        // A failing graph reports like compute() does, is counted, and reports nothing.
        rf_node bad = make_node(RF_OP_ADD, b, {&a, &one});
        bad.src[1] = nullptr;
        rf_node *bad_ptr = &bad;
        const rf_graph bg = {1, &bad_ptr};
        err[0] = 0;
        CHECK(vtable().compute(be.ctx(), &bg, err, sizeof err) != RF_OK);
        CHECK(std::strlen(err) > 0);
        REQUIRE(vtable().compute(be.ctx(), &g, err, sizeof err) == RF_OK);
        CHECK(seen.calls == std::vector<uint64_t>{0, 2});

        // Stopped: nothing more is reported; a bad observer is refused with a message.
        REQUIRE(vtable().set_observer(be.ctx(), nullptr, err, sizeof err) == RF_OK);
        REQUIRE(vtable().compute(be.ctx(), &g, err, sizeof err) == RF_OK);
        CHECK(seen.calls.size() == 2);
        const rf_exec_observer no_callback = {sizeof(rf_exec_observer), &seen, nullptr};
        err[0] = 0;
        CHECK(vtable().set_observer(be.ctx(), &no_callback, err, sizeof err) == RF_ERR_INVALID);
        CHECK_THAT(std::string(err), Catch::Contains("ran()"));

        // A 2.10 observer (its struct ends before chose) is served; one shorter than ran is not.
        rf_exec_observer old_obs = {sizeof(rf_exec_observer), &seen, seen_ran};
        old_obs.struct_size = offsetof(rf_exec_observer, chose);
        REQUIRE(vtable().set_observer(be.ctx(), &old_obs, err, sizeof err) == RF_OK);
        REQUIRE(vtable().compute(be.ctx(), &g, err, sizeof err) == RF_OK);
        CHECK(seen.calls.size() == 3);
        old_obs.struct_size = offsetof(rf_exec_observer, ran);
        CHECK(vtable().set_observer(be.ctx(), &old_obs, err, sizeof err) == RF_ERR_INVALID);
        REQUIRE(vtable().set_observer(be.ctx(), nullptr, err, sizeof err) == RF_OK);
    }
}
