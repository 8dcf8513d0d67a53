// Kernel pack plugins without a GPU (backends/hip/pack_plugin.cpp, pack_bind.cpp): every defect of
// a pack is refused when it is opened, with a message naming the file and both sides; a claim is
// bound to the claimed nodes' tensors or refused with a reason.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "pack_bind.h"
#include "pack_plugin.h"

namespace {

std::string dir() {
    const char *d = std::getenv("RF_FAKE_PACK_DIR");
    REQUIRE(d);
    return d;
}
std::string file(const std::string &name) { return dir() + "/" + name + ".so"; }
const std::vector<std::string> kBase = {"rf_add_f32", "rf_mul_f32"};

// The error for opening `name` for sm_90, or "" when it is accepted.
std::string refusal(const std::string &name) {
    rf_hip::PackPlugin p;
    std::string err;
    return rf_hip::open_pack(file(name), "sm_90", kBase, p, err) ? "" : err;
}
bool has(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

} // namespace

TEST_CASE("pack plugin: a good pack opens with its fusions") {
    rf_hip::PackPlugin p;
    std::string err;
    REQUIRE(rf_hip::open_pack(file("rocmforge-pack-fake-sm_90"), "sm_90", kBase, p, err));
    CHECK(err.empty());
    CHECK(p.name == "fake");
    CHECK(!p.base());
    REQUIRE(p.fusions.size() == 1);
    CHECK(std::string(p.fusions[0]->name) == "fake_mul_add");
    REQUIRE(rf_hip::open_pack(file("rocmforge-pack-fakebase-sm_90"), "sm_90", kBase, p, err));
    CHECK(p.base());
}

TEST_CASE("pack plugin: each defect is refused naming both sides") {
    const std::string arch = refusal("fake-pack-wrongarch");
    CHECK(has(arch, "fake-pack-wrongarch.so"));
    CHECK(has(arch, "built for arch 'gfx1030' but the device needs 'sm_90'"));
    const std::string abi = refusal("fake-pack-abi1");
    CHECK(has(abi, "ABI version 1.0 does not match this runtime's " + std::to_string(RF_ABI_MAJOR) + "." +
                       std::to_string(RF_ABI_MINOR)));
    const std::string sum = refusal("fake-pack-badsum");
    CHECK(has(sum, "checksum mismatch (pack declares 0000"));
    CHECK(has(sum, "code object is 5a07f38f"));
    CHECK(has(refusal("fake-pack-nokernel"), "lacks kernel 'rf_mul_f32' that this backend needs"));
    CHECK(has(refusal("fake-pack-badfusion"), "fusion 'fake_mul_add' launches kernel 'rf_not_listed' that the pack does not list"));
    CHECK(has(refusal("fake-pack-kargs"), "kernel argument version 99 but this backend's is " + std::to_string(RF_KARGS_VERSION)));
    CHECK(has(refusal("fake-pack-backend"), "a backend plugin ('fake'), not a kernel pack"));
    CHECK(has(refusal("no-such-pack"), "cannot load"));
}

TEST_CASE("pack plugin: a folder yields only the packs of the arch; a bad explicit pack fails") {
    CHECK(rf_hip::pack_file_for_arch("rocmforge-pack-sm_90.so", "sm_90"));
    CHECK(rf_hip::pack_file_for_arch("rocmforge-pack-extra-sm_90.so", "sm_90"));
    CHECK(!rf_hip::pack_file_for_arch("rocmforge-pack-sm_90.so", "sm_9"));
    CHECK(!rf_hip::pack_file_for_arch("rocmforge-pack-gfx1100.so", "sm_90"));
    CHECK(!rf_hip::pack_file_for_arch("other-sm_90.so", "sm_90"));
    rf_hip::PackSet set;
    std::string err;
    // The folder holds fake-pack-* files with defects too: not named for the arch, never opened.
    REQUIRE(rf_hip::find_packs({"sm_90", {}, {dir()}}, kBase, set, err));
    REQUIRE(set.packs.size() == 2);
    CHECK(set.packs[0].base() != set.packs[1].base()); // rocmforge-pack-fake-sm_90 and -fakebase-sm_90
    CHECK(has(set.looked_for, "rocmforge-pack-other-gfx1100.so"));
    REQUIRE(rf_hip::find_packs({"gfx1100", {}, {dir()}}, kBase, set, err));
    CHECK(set.packs.size() == 1);
    CHECK(!rf_hip::find_packs({"sm_90", {file("fake-pack-wrongarch")}, {}}, kBase, set, err));
    CHECK(has(err, "built for arch 'gfx1030' but the device needs 'sm_90'"));
    CHECK(!rf_hip::find_packs({"sm_90", {dir() + "/absent.so"}, {}}, kBase, set, err));
    CHECK(has(err, "absent.so (from the config's \"packs\") does not exist"));
}

TEST_CASE("pack claim: bound to the claimed nodes' tensors, or refused") {
    float mem[5][4] = {};
    rf_tensor t[5];
    for (int i = 0; i < 5; ++i) t[i] = rf_tensor{RF_TYPE_F32, 0, {4, 1, 1, 1}, {4, 16, 16, 16}, mem[i], nullptr, nullptr};
    rf_node mul{RF_OP_MUL, &t[3], {&t[0], &t[1]}, {}, {}, nullptr};
    rf_node add{RF_OP_ADD, &t[4], {&t[3], &t[2]}, {}, {}, nullptr};
    rf_node *nodes[] = {&mul, &add};
    const rf_graph g{2, nodes};
    rf_fusion_launch l;
    rf_fusion_launch_init(&l);
    l.dst = {1, RF_BIND_DST};
    l.src[0] = {0, 0};
    l.src[2] = {1, 1};
    l.iparams[3] = 7;
    l.threads = 128;
    rf_kargs k{};
    REQUIRE(rf_hip::bind_claim(g, 0, 2, l, k) == "");
    CHECK(k.dst.data == mem[4]);
    CHECK(k.src[0].data == mem[0]);
    CHECK(k.src[1].data == nullptr);
    CHECK(k.src[2].data == mem[2]);
    CHECK(k.src[0].nb[1] == 16);
    CHECK(k.iparams[3] == 7);
    CHECK(has(rf_hip::bind_claim(g, 0, 3, l, k), "claimed 3 node(s) at node 0 of 2"));
    CHECK(has(rf_hip::bind_claim(g, 1, 2, l, k), "claimed 2 node(s) at node 1"));
    CHECK(has(rf_hip::bind_claim(g, 0, 1, l, k), "dst binds node +1, outside the 1 claimed node(s)"));
    l.src[4] = {0, 3};
    CHECK(has(rf_hip::bind_claim(g, 0, 2, l, k), "src[4] binds node +0 src3, which the node does not have"));
    l.src[4] = {RF_BIND_NONE, 0};
    l.threads = 2048;
    CHECK(has(rf_hip::bind_claim(g, 0, 2, l, k), "block of 2048 threads"));
}
