// ABI versioning: plugins of another major version are refused, plugins of an older minor version
// (a shorter vtable) work with the slots they have, and missing optional slots get the defaults.
// fakeold and fakemin fill every slot beyond their struct_size with a poison address, so a host
// that reads past struct_size crashes this test instead of passing.
#include <catch2/catch.hpp>

#include <vector>

#include "fake_plugins.h"
#include "rocmforge/graph.h"
#include "rocmforge/plugin_loader.h"
#include "rocmforge/runtime.h"

static std::string fake_file(const std::string &name) { return fake_plugin_dir() + "/rocmforge-" + name + ".so"; }

TEST_CASE("abi: another major version is refused naming both versions") {
    auto lp = rf::load_plugin_file(fake_file("badabi"));
    CHECK(lp.info == nullptr);
    const std::string ours = std::to_string(RF_ABI_MAJOR) + "." + std::to_string(RF_ABI_MINOR);
    CHECK_THAT(lp.record.status, Catch::Contains("ABI version 99.0") && Catch::Contains("runtime's " + ours));
}

TEST_CASE("abi: a vtable too short for a required slot is refused at load, naming the slot") {
    auto lp = rf::load_plugin_file(fake_file("fakeshort"));
    CHECK(lp.info == nullptr);
    CHECK_FALSE(lp.record.loaded);
    CHECK_THAT(lp.record.status, Catch::Contains("incomplete backend vtable") && Catch::Contains("'compute'"));
}

TEST_CASE("abi: RF_SLOT reads a slot only within struct_size") {
    rf_backend_vtable vt{};
    vt.synchronize = [](void *, char *, size_t) { return int(RF_OK); };
    vt.struct_size = offsetof(rf_backend_vtable, synchronize);
    CHECK(RF_SLOT(&vt, rf_backend_vtable, synchronize) == nullptr);
    vt.struct_size = offsetof(rf_backend_vtable, synchronize) + sizeof(vt.synchronize);
    CHECK(RF_SLOT(&vt, rf_backend_vtable, synchronize) == vt.synchronize);
}

// fakehost: a full vtable with every optional slot NULL; fakeold: an older minor version's vtable
// (it ends where 1.0's did: no 1.1 slots and later); fakemin: nothing beyond compute (no synchronize, events, buffer_from_host). The last two
// are "device" backends, so the executor copies across and synchronizes them.
TEST_CASE("abi: plugins without optional slots run graphs, copies and uploads with the defaults") {
    for (const char *name : {"fakehost", "fakeold", "fakemin"}) {
        INFO("backend " << name);
        auto lp = rf::load_plugin_file(fake_file(name));
        REQUIRE(lp.info != nullptr);
        auto rt = rf::Runtime::create(rf::Config::from_json(
            std::string("{\"backends\": [\"") + name + "\", \"fakehost\"], \"plugin_dirs\": [\"" + fake_plugin_dir() + "\"]}", "t.json"));
        rf::Backend *b = rt->find(name);
        REQUIRE(b != nullptr);

        // No buffer_from_host: wrap_or_upload allocates and uploads.
        std::vector<float> host(64, 3.0f), back(64);
        rf_buffer_desc d = b->wrap_or_upload(host.data(), host.size() * sizeof(float));
        b->download(back.data(), d.base, back.size() * sizeof(float));
        CHECK(back == host);
        b->free(d);

        rf::Executor ex(*rt);
        std::vector<float> x(40);
        for (size_t i = 0; i < x.size(); ++i) x[i] = float(i) - 7.0f;
        for (int run = 0; run < 2; ++run) { // the second run replays the cached plan
            rf::Graph g;
            auto *in = g.input("x", RF_TYPE_F32, {40}, x.data());
            auto *y = g.scale(in, 2.0f);   // on `name`
            auto *z = g.add(y, in);        // on fakehost: y copied from `name` after synchronize
            auto *w = g.scale(z, 0.5f);    // back on `name`
            ex.run(g);
            std::vector<float> out(40);
            ex.read(w, out.data(), out.size() * sizeof(float));
            for (size_t i = 0; i < x.size(); ++i) REQUIRE(out[i] == 1.5f * x[i]);
        }
    }
}

// ABI 1.3 list_devices: absent in the fake plugins (NULL slot: devices() says why, no call), and
// the CPU plugin lists exactly the one device its device_info describes.
TEST_CASE("abi: devices listed through list_devices, or why not") {
    auto rt = rf::Runtime::create(rf::Config::from_json(
        std::string("{\"backends\": [\"fakeold\", \"fakehost\"], \"plugin_dirs\": [\"") + fake_plugin_dir() + "\"]}", "t.json"));
    std::string why;
    CHECK(rt->find("fakeold")->devices(why).empty());
    CHECK_THAT(why, Catch::Contains("does not list"));
    // Nor device_memory (ABI 2.2): the slot lies past its struct_size, where fakeold has poison.
    uint64_t free_b = 0, total = 0;
    CHECK_FALSE(rf::plugin_device_memory(rt->find("fakeold")->plugin_vtable(), 0, free_b, total, why));
    CHECK_THAT(why, Catch::Contains("before 2.2"));
}

// ABI 2.14 (gpt-oss): a node that needs a newer minor version than a plugin's never reaches its
// supports_op (fakeoai13 would claim SWIGLU_OAI as it claims ADD); older nodes do.
TEST_CASE("abi: nodes of a newer minor version are declined for older plugins") {
    auto rt = rf::Runtime::create(rf::Config::from_json(
        std::string("{\"backends\": [\"fakeoai13\", \"fakeoai\"], \"plugin_dirs\": [\"") + fake_plugin_dir() + "\"]}", "t.json"));
    rf::Backend *old = rt->find("fakeoai13"), *cur = rt->find("fakeoai");
    REQUIRE(old);
    REQUIRE(cur);
    CHECK(old->abi_minor() == 13);
    CHECK(cur->abi_minor() == RF_ABI_MINOR);
    rf_tensor a{}, b{}, d{};
    rf::init_tensor_layout(a, RF_TYPE_F32, {8});
    rf::init_tensor_layout(b, RF_TYPE_F32, {8});
    rf::init_tensor_layout(d, RF_TYPE_F32, {8});
    rf_node n{};
    n.dst = &d;
    n.src[0] = &a;
    n.src[1] = &b;
    n.op = RF_OP_SWIGLU_OAI;
    CHECK(rf_node_abi_minor(&n) == 14);
    CHECK_FALSE(old->supports(n));
    CHECK(cur->supports(n));
    n.op = RF_OP_ADD;
    CHECK(rf_node_abi_minor(&n) == 0);
    CHECK(old->supports(n));
    // The new parameters of older ops: sinks, YaRN, the softmax of the chosen logits.
    rf_node att{};
    att.op = RF_OP_ATTENTION;
    CHECK(rf_node_abi_minor(&att) == 0);
    att.src[5] = &a;
    CHECK(rf_node_abi_minor(&att) == 14);
    rf_node rope{};
    rope.op = RF_OP_ROPE;
    rope.iparams[2] = 1;
    CHECK(rf_node_abi_minor(&rope) == 14);
    rf_node mw{};
    mw.op = RF_OP_MOE_WEIGHTS;
    mw.iparams[0] = 1;
    CHECK(rf_node_abi_minor(&mw) == 0);
    mw.iparams[0] = 2;
    CHECK(rf_node_abi_minor(&mw) == 14);
    // ABI 2.15 (deepseek2): the two new ops, MOE_WEIGHTS' normalised probabilities, and an
    // ATTENTION whose V heads differ from Q's (dst rows of Dv * Hq).
    mw.iparams[0] = 3;
    CHECK(rf_node_abi_minor(&mw) == 15);
    for (int op : {RF_OP_CONCAT, RF_OP_MOE_GROUP_MASK}) {
        rf_node x{};
        x.op = op;
        CHECK(rf_node_abi_minor(&x) == 15);
    }
    rf_tensor q{}, out{};
    rf::init_tensor_layout(q, RF_TYPE_F32, {96, 4, 2});
    rf::init_tensor_layout(out, RF_TYPE_F32, {96 * 4, 2});
    rf_node mla{};
    mla.op = RF_OP_ATTENTION;
    mla.src[0] = &q;
    mla.dst = &out;
    CHECK(rf_node_abi_minor(&mla) == 0);
    rf::init_tensor_layout(out, RF_TYPE_F32, {64 * 4, 2});
    CHECK(rf_node_abi_minor(&mla) == 15);
    // ABI 2.16 (Qwen3.5's DeltaNet layers).
    for (int op : {RF_OP_SSM_CONV, RF_OP_GATED_DELTA_NET, RF_OP_SOFTPLUS}) {
        rf_node x{};
        x.op = op;
        CHECK(rf_node_abi_minor(&x) == 16);
    }
}
