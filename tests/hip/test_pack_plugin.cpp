// Kernel pack plugins without a GPU (backends/hip/pack_plugin.cpp, pack_bind.cpp): every defect of
// a pack is refused when it is opened, with a message naming the file and both sides; a claim is
// bound to the claimed nodes' tensors or refused with a reason.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstddef>
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

// ROCmForge's own sm_90 pack (RF_OWN_PACK), opened and verified; false where this build has none.
bool open_own_pack(rf_hip::PackPlugin &p) {
    const char *own = std::getenv("RF_OWN_PACK");
    if (!own || !*own) return false;
    std::string err;
    INFO(err);
    REQUIRE(rf_hip::open_pack(own, "sm_90", {}, p, err));
    return true;
}
const rf_fusion *fusion_named(const rf_hip::PackPlugin &p, const std::string &name) {
    for (const rf_fusion *x : p.fusions)
        if (name == x->name) return x;
    return nullptr;
}

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

// Packs of the previous minor (2.10: raw parameter slots) and of a newer one than this runtime's
// are served: rf_kargs has the layout of 2.10, and what a newer pack appends it writes only where
// rf_pack_device says this backend has it (pack_abi.h, ABI 2.11).
TEST_CASE("pack plugin: packs of ABI 2.10 and of a newer minor are served, their parameters arriving") {
    float mem[5][4] = {};
    rf_tensor t[5];
    for (int i = 0; i < 5; ++i) t[i] = rf_tensor{RF_TYPE_F32, 0, {4, 1, 1, 1}, {4, 16, 16, 16}, mem[i], nullptr, nullptr};
    rf_node mul{RF_OP_MUL, &t[3], {&t[0], &t[1]}, {}, {}, nullptr};
    rf_node add{RF_OP_ADD, &t[4], {&t[3], &t[2]}, {}, {}, nullptr};
    rf_node *nodes[] = {&mul, &add};
    const rf_graph g{2, nodes};
    const rf_pack_device dev{sizeof(rf_pack_device), "sm_90", 132, 32, sizeof(rf_fusion_launch)};
    const struct {
        const char *name;
        uint32_t minor;
    } packs[] = {{"rocmforge-pack-fake-sm_90", RF_ABI_MINOR}, {"fake-pack-minor10", 10}, {"fake-pack-minor17", 17}};
    STATIC_REQUIRE(RF_ABI_MINOR == 16); // minor10 an older minor (raw parameter slots), minor17 a newer one
    for (const auto &pk : packs) {
        INFO(pk.name);
        rf_hip::PackPlugin p;
        std::string err;
        REQUIRE(rf_hip::open_pack(file(pk.name), "sm_90", kBase, p, err));
        CHECK(err.empty());
        const auto entry = reinterpret_cast<rf_plugin_entry_fn>(dlsym(p.library.get(), RF_PLUGIN_ENTRY_SYMBOL));
        REQUIRE(entry);
        CHECK(entry()->abi_major == RF_ABI_MAJOR);
        CHECK(entry()->abi_minor == pk.minor);
        REQUIRE(p.fusions.size() == 1);
        rf_fusion_launch l;
        rf_fusion_launch_init(&l);
        REQUIRE(p.fusions[0]->claim(&g, 0, &dev, &l) == 2);
        rf_kargs k{};
        REQUIRE(rf_hip::bind_claim(g, 0, 2, l, k) == "");
        CHECK(k.dst.data == mem[4]);
        CHECK(k.src[3].data == mem[3]);
        // The same values through the named members and the raw slots.
        CHECK(k.rope.mode == RF_ROPE_NEOX);
        CHECK(k.rope.n_rot == 96);
        CHECK(k.rope.freq_base == 500000.f);
        CHECK(k.rope.freq_scale == 0.25f);
        CHECK(k.iparams[0] == RF_ROPE_NEOX);
        CHECK(k.iparams[1] == 96);
        CHECK(k.fparams[0] == 500000.f);
        CHECK(k.fparams[1] == 0.25f);
        CHECK(k.iparams[2] == 0); // the slots the claim left
        CHECK(k.fparams[7] == 0.f);
    }
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

TEST_CASE("pack claim: q8_1 columns offered, checked, lent or not (ABI 2.4)") {
    alignas(16) float mem[3][64] = {};
    rf_tensor t[3];
    for (int i = 0; i < 3; ++i) t[i] = rf_tensor{RF_TYPE_F32, 0, {64, 1, 1, 1}, {4, 256, 256, 256}, mem[i], nullptr, nullptr};
    rf_node norm{RF_OP_RMS_NORM, &t[1], {&t[0]}, {}, {}, nullptr};
    rf_node *nodes[] = {&norm};
    const rf_graph g{1, nodes};
    rf_fusion_launch l;
    rf_fusion_launch_init(&l);
    const rf_tensor *x = &t[0];
    CHECK(rf_hip::bind_q8(g, 0, 1, l, &x) == ""); // none offered
    CHECK(x == nullptr);
    l.q8_of = {0, RF_BIND_DST};
    l.q8_aux_stride = 2;
    l.q8_aux_block = 3;
    REQUIRE(rf_hip::bind_q8(g, 0, 1, l, &x) == "");
    CHECK(x == &t[1]);
    rf_kargs k{};
    rf_hip::lend_q8(l, mem[2], 96, 256, k);
    CHECK(k.scratch == mem[2]);
    CHECK(k.aux[2] == 96);
    CHECK(k.aux[3] == 256);
    rf_hip::lend_q8(l, mem[2], 96, 0, k); // not wanted: no scratch, both slots 0
    CHECK(k.scratch == nullptr);
    CHECK(k.aux[2] == 0);
    CHECK(k.aux[3] == 0);
    l.q8_aux_block = 2;
    CHECK(has(rf_hip::bind_q8(g, 0, 1, l, &x), "two different ones of 0..3"));
    l.q8_aux_block = 4;
    CHECK(has(rf_hip::bind_q8(g, 0, 1, l, &x), "two different ones of 0..3"));
    l.q8_aux_block = 1;
    l.q8_of = {0, 1};
    CHECK(has(rf_hip::bind_q8(g, 0, 1, l, &x), "q8_of binds node +0 src1, which the node does not have"));
    t[1].ne[0] = 48;
    l.q8_of = {0, RF_BIND_DST};
    CHECK(has(rf_hip::bind_q8(g, 0, 1, l, &x), "not f32 rows of a multiple of 32 elements"));
}

// ROCmForge's own sm_90 pack, where this build has one: its fused norm offers the q8_1 columns of
// the product only to a backend whose rf_fusion_launch has them (rf_pack_device.launch_size).
TEST_CASE("in-tree pack: the fused norm offers q8_1 columns to a 2.4 backend only") {
    rf_hip::PackPlugin p;
    if (!open_own_pack(p)) return; // no NVIDIA toolkit in this build: no pack
    const rf_fusion *f = fusion_named(p, "rms_norm_mul_1");
    REQUIRE(f);
    alignas(16) static float mem[4][256] = {};
    rf_tensor t[4];
    for (int i = 0; i < 4; ++i) t[i] = rf_tensor{RF_TYPE_F32, 0, {256, 1, 1, 1}, {4, 1024, 1024, 1024}, mem[i], nullptr, nullptr};
    t[3].flags = RF_TENSOR_WEIGHT;
    rf_node norm{RF_OP_RMS_NORM, &t[1], {&t[0]}, {}, {1e-5f}, nullptr};
    rf_node mul{RF_OP_MUL, &t[2], {&t[1], &t[3]}, {}, {}, nullptr};
    rf_node *nodes[] = {&norm, &mul};
    const rf_graph g{2, nodes};
    rf_pack_device dev{sizeof(rf_pack_device), "sm_90", 132, 32, sizeof(rf_fusion_launch)};
    rf_fusion_launch l;
    rf_fusion_launch_init(&l);
    REQUIRE(f->claim(&g, 0, &dev, &l) == 2);
    CHECK(l.q8_of.node == 1);
    CHECK(l.q8_of.which == RF_BIND_DST);
    CHECK(l.norm.weight_is_model == 1);
    dev.struct_size = offsetof(rf_pack_device, launch_size); // a 2.3 backend's device
    rf_fusion_launch_init(&l);
    REQUIRE(f->claim(&g, 0, &dev, &l) == 2);
    CHECK(l.q8_of.node == RF_BIND_NONE);
}

TEST_CASE("in-tree pack: the fused norm spreads a row over a thread-block cluster on sm_90 only") {
    rf_hip::PackPlugin p;
    if (!open_own_pack(p)) return;
    const rf_fusion *f = fusion_named(p, "rms_norm_mul_1");
    REQUIRE(f);
    // Rows of K = 4096 (three rows), 5120 (one block would take two pieces a thread) and 256 (no
    // whole 256-blocks for two blocks: one block).
    alignas(16) static float mem[4][3 * 5120] = {};
    auto claim = [&](int64_t K, int64_t rows, const char *arch, uint32_t launch_size, rf_fusion_launch &l) {
        rf_tensor t[4];
        for (int i = 0; i < 4; ++i)
            t[i] = rf_tensor{RF_TYPE_F32, 0, {K, i == 3 ? 1 : rows, 1, 1}, {4, 4 * K, 4 * K * rows, 4 * K * rows}, mem[i], nullptr, nullptr};
        t[3].flags = RF_TENSOR_WEIGHT;
        rf_node norm{RF_OP_RMS_NORM, &t[1], {&t[0]}, {}, {1e-5f}, nullptr};
        rf_node mul{RF_OP_MUL, &t[2], {&t[1], &t[3]}, {}, {}, nullptr};
        rf_node *nodes[] = {&norm, &mul};
        const rf_graph g{2, nodes};
        rf_pack_device dev{sizeof(rf_pack_device), arch, 132, 32, launch_size};
        rf_fusion_launch_init(&l);
        return f->claim(&g, 0, &dev, &l);
    };
    const auto kernel = [](const rf_fusion_launch &l) { return std::string(l.kernel ? l.kernel : "(own)"); };
    rf_fusion_launch l;
    REQUIRE(claim(4096, 3, "sm_90", sizeof(rf_fusion_launch), l) == 2);
    CHECK(kernel(l) == "rf_add_rms_norm_mul_c4");
    CHECK(l.grid[0] == 12); // rows x blocks
    CHECK(l.threads == 256);
    CHECK(l.norm.cluster_blocks == 4);
    REQUIRE(claim(5120, 1, "sm_90", sizeof(rf_fusion_launch), l) == 2);
    CHECK(kernel(l) == "rf_add_rms_norm_mul_c4");
    CHECK(l.threads == 320);
    REQUIRE(claim(256, 1, "sm_90", sizeof(rf_fusion_launch), l) == 2);
    CHECK(kernel(l) == "(own)");
    CHECK(l.grid[0] == 1);
    // No clusters before sm_90 or on AMD, nor for a backend whose launch cannot name a kernel.
    for (const char *arch : {"sm_80", "gfx1100"}) {
        REQUIRE(claim(4096, 3, arch, sizeof(rf_fusion_launch), l) == 2);
        CHECK(kernel(l) == "(own)");
        CHECK(l.grid[0] == 3);
        CHECK(l.norm.cluster_blocks == 0);
    }
    REQUIRE(claim(4096, 1, "sm_90", (uint32_t)offsetof(rf_fusion_launch, kernel), l) == 2);
    CHECK(kernel(l) == "(own)");
    CHECK(claim(5120, 1, "sm_80", sizeof(rf_fusion_launch), l) == 0); // two pieces a thread: another fusion's
}

TEST_CASE("pack claim: a matmul's activations read as q8_1 columns or f32 rows, checked (ABI 2.6)") {
    alignas(16) static float mem[3][256] = {};
    rf_tensor t[3];
    for (int i = 0; i < 3; ++i) t[i] = rf_tensor{RF_TYPE_F32, 0, {256, 1, 1, 1}, {4, 1024, 1024, 1024}, mem[i], nullptr, nullptr};
    t[0].type = RF_TYPE_Q4_K;
    t[0].nb[0] = 144;
    rf_node mm{RF_OP_MATMUL, &t[2], {&t[0], &t[1]}, {}, {}, nullptr};
    rf_node *nodes[] = {&mm};
    const rf_graph g{1, nodes};
    rf_fusion_launch l;
    rf_fusion_launch_init(&l);
    const rf_tensor *x = &t[0];
    int block = -1;
    CHECK(rf_hip::bind_act_in(g, 0, 1, l, &x, &block) == ""); // none read
    CHECK(x == nullptr);
    CHECK(block == 0);
    l.act_in = {0, 1};
    l.act_in_block = 256;
    l.q8_aux_stride = 2;
    REQUIRE(rf_hip::bind_act_in(g, 0, 1, l, &x, &block) == "");
    CHECK(x == &t[1]);
    CHECK(block == 256);
    rf_kargs k{};
    rf_hip::lend_act_in(l, mem[2], 288, k);
    CHECK(k.scratch == mem[2]);
    CHECK(k.aux[2] == 288);
    l.act_in_block = RF_ACT_IN_F32;
    REQUIRE(rf_hip::bind_act_in(g, 0, 1, l, &x, &block) == "");
    CHECK(block == RF_ACT_IN_F32);
    l.act_in_block = 64;
    CHECK(has(rf_hip::bind_act_in(g, 0, 1, l, &x, &block), "act_in in blocks of 64"));
    l.act_in_block = 256;
    l.q8_aux_stride = 4;
    CHECK(has(rf_hip::bind_act_in(g, 0, 1, l, &x, &block), "aux slot 4"));
    l.q8_aux_stride = 0;
    l.q8_of = {0, RF_BIND_DST};
    CHECK(has(rf_hip::bind_act_in(g, 0, 1, l, &x, &block), "both act_in and q8_of"));
    l.q8_of = {RF_BIND_NONE, 0};
    l.act_in = {0, 0}; // the weight: not f32 rows
    CHECK(has(rf_hip::bind_act_in(g, 0, 1, l, &x, &block), "not f32 rows of a multiple of 256"));
    l.act_in = {0, 1};
    t[1].ne[0] = 96; // 96 elements: whole blocks of 32, not of 256
    CHECK(has(rf_hip::bind_act_in(g, 0, 1, l, &x, &block), "not f32 rows of a multiple of 256"));
    l.act_in_block = 32;
    CHECK(rf_hip::bind_act_in(g, 0, 1, l, &x, &block) == "");
}

// The own pack's gate/up fusion claims only where the backend says how it runs the matmuls
// (rf_pack_device.matmul_form, ABI 2.6): a 2.5 backend's device, or one that names no form, gets
// no claim; the claim names the column kernel and lends nothing itself.
TEST_CASE("in-tree pack: gate/up + SwiGLU claims only from a 2.6 backend that names the matmul form") {
    rf_hip::PackPlugin p;
    if (!open_own_pack(p)) return; // no NVIDIA toolkit in this build: no pack
    const rf_fusion *f = fusion_named(p, "gate_up_swiglu");
    REQUIRE(f);
    alignas(16) static unsigned char mem[7][4096] = {};
    rf_tensor t[7];
    for (int i = 0; i < 7; ++i) t[i] = rf_tensor{RF_TYPE_F32, 0, {256, 2, 1, 1}, {4, 1024, 2048, 2048}, mem[i], nullptr, nullptr};
    for (int i : {0, 1}) t[i] = rf_tensor{RF_TYPE_Q4_K, 0, {256, 8, 1, 1}, {144, 144, 1152, 1152}, mem[i], nullptr, nullptr};
    for (int i : {3, 4, 5}) t[i] = rf_tensor{RF_TYPE_F32, 0, {8, 2, 1, 1}, {4, 32, 64, 64}, mem[i], nullptr, nullptr};
    rf_node gate{RF_OP_MATMUL, &t[3], {&t[0], &t[2]}, {}, {}, nullptr};
    rf_node up{RF_OP_MATMUL, &t[4], {&t[1], &t[2]}, {}, {}, nullptr};
    rf_node sw{RF_OP_SWIGLU, &t[5], {&t[3], &t[4]}, {}, {}, nullptr};
    rf_node *nodes[] = {&gate, &up, &sw};
    const rf_graph g{3, nodes};
    static int32_t form = RF_MATMUL_COLUMNS;
    auto answer = [](const rf_pack_device *, const rf_node *) -> int32_t { return form; };
    rf_pack_device dev{sizeof(rf_pack_device), "sm_90", 132, 32, sizeof(rf_fusion_launch), answer, nullptr};
    rf_fusion_launch l;
    rf_fusion_launch_init(&l);
    REQUIRE(f->claim(&g, 0, &dev, &l) == 3);
    REQUIRE(l.kernel);
    CHECK(std::string(l.kernel) == "rf_mvqn_q4_k_2f");
    CHECK(l.act_in.node == 0);
    CHECK(l.act_in.which == 1);
    CHECK(l.act_in_block == 256);
    CHECK(l.grid[0] == 2);
    // A device without options (dev.options NULL): the defaults. Several columns: not the whole
    // matrix into L2 before the wait, its head (the first blocks' rows, about 4 MB: here both
    // blocks of this 1 KB matrix).
    CHECK(l.mv.no_weight_prefetch == 0);
    CHECK(l.mv.prefetch_head_blocks == 2);
    {
        // The backend's options (rf_pack_device.options, ABI 2.10): no head, then every matrix whole.
        rf_pack_options opt{sizeof(rf_pack_options), RF_PACK_PREFETCH_SMALL, 1, 8ull << 20, 0, 0, 4};
        dev.options = &opt;
        rf_fusion_launch_init(&l);
        REQUIRE(f->claim(&g, 0, &dev, &l) == 3);
        CHECK(l.mv.no_weight_prefetch == 1);
        CHECK(l.mv.prefetch_head_blocks == 0);
        opt.weight_prefetch = RF_PACK_PREFETCH_ALL;
        rf_fusion_launch_init(&l);
        REQUIRE(f->claim(&g, 0, &dev, &l) == 3);
        CHECK(l.mv.no_weight_prefetch == 0);
        CHECK(l.mv.prefetch_head_blocks == 0);
        // A 2.9 backend's device has no options member: the defaults again.
        dev.struct_size = offsetof(rf_pack_device, options);
        rf_fusion_launch_init(&l);
        REQUIRE(f->claim(&g, 0, &dev, &l) == 3);
        CHECK(l.mv.no_weight_prefetch == 0);
        CHECK(l.mv.prefetch_head_blocks == 2);
        dev.struct_size = sizeof(rf_pack_device);
        dev.options = nullptr;
    }
    {
        // One column of a small matrix (at most 8 MiB): its rows pulled into L2 before the wait,
        // as the backend does for its own one-column matmuls; the kernel's form for one row.
        for (int i : {2, 3, 4, 5}) t[i].ne[1] = 1, t[i].nb[2] = t[i].nb[3] = t[i].nb[1];
        form = RF_MATMUL_VECTOR;
        rf_fusion_launch_init(&l);
        REQUIRE(f->claim(&g, 0, &dev, &l) == 3);
        CHECK(l.mv.no_weight_prefetch == 0);
        CHECK(l.mv.prefetch_head_blocks == 0); // every block
        t[0].ne[1] = t[1].ne[1] = 65536; // 9.4 MB each (never read: the claim only looks at shapes)
        t[0].nb[2] = t[0].nb[3] = t[1].nb[2] = t[1].nb[3] = 65536 * 144;
        rf_fusion_launch_init(&l);
        REQUIRE(f->claim(&g, 0, &dev, &l) == 3);
        CHECK(l.mv.no_weight_prefetch == 0);
        CHECK(l.mv.prefetch_head_blocks == 2); // its head: 4 MB, capped at the launch's blocks (the outputs keep 8 rows)
        // F16 gate / up run on rf_mvq_multi's SwiGLU form (no column kernel): the same head.
        for (int i : {0, 1}) t[i].type = RF_TYPE_F16, t[i].nb[0] = 2, t[i].nb[1] = 512, t[i].nb[2] = t[i].nb[3] = 65536 * 512;
        rf_fusion_launch_init(&l);
        REQUIRE(f->claim(&g, 0, &dev, &l) == 3);
        CHECK(l.kernel == nullptr);
        CHECK(l.mv.form == RF_KP_MV_GATED);
        CHECK(l.mv.no_weight_prefetch == 0);
        CHECK(l.mv.prefetch_head_blocks == 2);
        for (int i : {0, 1}) t[i].type = RF_TYPE_Q4_K, t[i].nb[0] = t[i].nb[1] = 144;
        t[0].ne[1] = t[1].ne[1] = 8;
        t[0].nb[2] = t[0].nb[3] = t[1].nb[2] = t[1].nb[3] = 1152;
        for (int i : {2, 3, 4, 5}) t[i].ne[1] = 2, t[i].nb[2] = t[i].nb[3] = 2 * t[i].nb[1];
    }
    form = RF_MATMUL_OTHER; // e.g. the tensor cores
    rf_fusion_launch_init(&l);
    CHECK(f->claim(&g, 0, &dev, &l) == 0);
    form = RF_MATMUL_COLUMNS;
    dev.struct_size = offsetof(rf_pack_device, matmul_form); // a 2.5 backend's device
    rf_fusion_launch_init(&l);
    CHECK(f->claim(&g, 0, &dev, &l) == 0);
    dev.struct_size = sizeof(rf_pack_device);
    dev.launch_size = offsetof(rf_fusion_launch, act_in); // a 2.5 backend's launch
    rf_fusion_launch_init(&l);
    CHECK(f->claim(&g, 0, &dev, &l) == 0);
}

// The own pack's tensor-core run joins gate and up only where the backend names its tile launch
// (rf_pack_device.matmul_tiles, ABI 2.7) and runs several launches (claim_launches); through the
// single-launch claim a 2.6 backend calls, and from a 2.6 backend's device, it claims nothing.
TEST_CASE("in-tree pack: the tensor-core run claims only from a 2.7 backend that names its tiles") {
    rf_hip::PackPlugin p;
    if (!open_own_pack(p)) return;
    const rf_fusion *f = fusion_named(p, "mmq_run");
    REQUIRE(f);
    const auto many = RF_SLOT(f, rf_fusion, claim_launches);
    REQUIRE(many);
    alignas(16) static unsigned char mem[5][8192] = {};
    rf_tensor t[5];
    t[2] = rf_tensor{RF_TYPE_F32, 0, {256, 8, 1, 1}, {4, 1024, 8192, 8192}, mem[2], nullptr, nullptr};
    for (int i : {0, 1}) t[i] = rf_tensor{RF_TYPE_Q4_K, 0, {256, 64, 1, 1}, {144, 144, 9216, 9216}, mem[i], nullptr, nullptr};
    for (int i : {3, 4}) t[i] = rf_tensor{RF_TYPE_F32, 0, {64, 8, 1, 1}, {4, 256, 2048, 2048}, mem[i], nullptr, nullptr};
    rf_node gate{RF_OP_MATMUL, &t[3], {&t[0], &t[2]}, {}, {}, nullptr};
    rf_node up{RF_OP_MATMUL, &t[4], {&t[1], &t[2]}, {}, {}, nullptr};
    rf_node *nodes[] = {&gate, &up};
    const rf_graph g{2, nodes};
    auto other = [](const rf_pack_device *, const rf_node *) -> int32_t { return RF_MATMUL_OTHER; };
    auto tiles = [](const rf_pack_device *, const rf_node *, rf_matmul_tiles *tl) -> int32_t {
        *tl = rf_matmul_tiles{"rf_mmq_q4_k_8_k1", {1, 1}, 128, 64, 1, {0, 1, 0, 0}};
        return 1;
    };
    rf_pack_device dev{sizeof(rf_pack_device), "sm_90", 132, 32, sizeof(rf_fusion_launch), other, nullptr, tiles};
    rf_fusion_launch ls[RF_FUSION_MAX_LAUNCHES];
    for (auto &l : ls) rf_fusion_launch_init(&l);
    int32_t n = 0;
    REQUIRE(many(&g, 0, &dev, ls, RF_FUSION_MAX_LAUNCHES, &n) == 2);
    REQUIRE(n == 1); // gate and up in one launch (grid z), no rope
    CHECK(std::string(ls[0].kernel) == "rf_mmq_q4_k_8_k1");
    CHECK(ls[0].grid[2] == 2);
    CHECK(ls[0].src[2].node == 1); // up's weights
    CHECK(ls[0].act_in_block == 256);
    CHECK(ls[0].lent_bytes == 0);
    rf_fusion_launch_init(&ls[0]);
    CHECK(f->claim(&g, 0, &dev, &ls[0]) == 0); // what a 2.6 backend calls
    dev.struct_size = offsetof(rf_pack_device, matmul_tiles); // a 2.6 backend's device
    CHECK(many(&g, 0, &dev, ls, RF_FUSION_MAX_LAUNCHES, &n) == 0);
    dev.struct_size = sizeof(rf_pack_device);
    dev.launch_size = offsetof(rf_fusion_launch, lent_bytes); // a 2.6 backend's launch
    CHECK(many(&g, 0, &dev, ls, RF_FUSION_MAX_LAUNCHES, &n) == 0);
}

// One ADD of three f32 tensors [4] (t[i].data = mem[i]): a graph for checking claim bindings.
struct OneAdd {
    float mem[3][4] = {};
    rf_tensor t[3];
    rf_node add{};
    rf_node *nodes[1] = {&add};
    rf_graph g{1, nodes};
    OneAdd() {
        for (int i = 0; i < 3; ++i) t[i] = rf_tensor{RF_TYPE_F32, 0, {4, 1, 1, 1}, {4, 16, 16, 16}, mem[i], nullptr, nullptr};
        add = rf_node{RF_OP_ADD, &t[2], {&t[0], &t[1]}, {}, {}, nullptr};
    }
};

TEST_CASE("pack claim: integer members set from tensor addresses, checked (ABI 2.6)") {
    OneAdd one;
    const rf_graph &g = one.g;
    auto &mem = one.mem;
    rf_fusion_launch l;
    rf_fusion_launch_init(&l);
    l.words[0] = {RF_KFIELD_DST_NE0 + 1, {0, RF_BIND_DST}, 0};
    l.words[3] = {RF_KFIELD_AUX0 + 2, {0, 1}, 8};
    l.words[5] = {RF_KFIELD_DST_NB0 + 3, {RF_BIND_NONE, 0}, 4096};
    rf_kargs k{};
    REQUIRE(rf_hip::bind_claim(g, 0, 1, l, k) == "");
    REQUIRE(rf_hip::bind_words(g, 0, 1, l, k) == "");
    CHECK(k.dst.ne[1] == (long long)(uintptr_t)mem[2]);
    CHECK(k.aux[2] == (long long)(uintptr_t)mem[1] + 8);
    CHECK(k.dst.nb[3] == 4096);
    CHECK(k.dst.ne[0] == 0); // untouched
    l.words[6] = {RF_KFIELD_END, {RF_BIND_NONE, 0}, 1};
    CHECK(has(rf_hip::bind_words(g, 0, 1, l, k), "word 6 sets field " + std::to_string(RF_KFIELD_END) + ", no rf_kargs_field"));
    l.words[6] = {RF_KFIELD_AUX0, {1, 0}, 0};
    CHECK(has(rf_hip::bind_words(g, 0, 1, l, k), "word 6 binds node +1, outside the 1 claimed node(s)"));
    l.words[6] = {RF_KFIELD_NONE, {RF_BIND_NONE, 0}, 0};
    l.dst = {0, RF_BIND_DST};
    CHECK(has(rf_hip::bind_words(g, 0, 1, l, k), "word 0 sets a member of dst, which the claim binds"));
    l.dst = {RF_BIND_NONE, 0};
    l.act_in = {0, 0};
    l.q8_aux_stride = 2;
    CHECK(has(rf_hip::bind_words(g, 0, 1, l, k), "word 3 sets the aux member of the q8_1 stride"));
}

TEST_CASE("pack claim: data addresses moved into lent scratch, checked (ABI 2.7)") {
    OneAdd one;
    const rf_graph &g = one.g;
    alignas(16) unsigned char lent[64];
    rf_fusion_launch l;
    rf_fusion_launch_init(&l);
    l.dst = {0, RF_BIND_DST};
    l.src[1] = {0, 1};
    l.words[0] = {RF_KFIELD_DST_DATA, {RF_BIND_LENT, 0}, 16};
    l.words[1] = {RF_KFIELD_SRC0_DATA + 1, {RF_BIND_LENT, 0}, 32};
    l.words[2] = {RF_KFIELD_AUX0 + 3, {RF_BIND_LENT, 0}, 48};
    rf_kargs k{};
    REQUIRE(rf_hip::bind_claim(g, 0, 1, l, k) == "");
    REQUIRE(rf_hip::bind_words(g, 0, 1, l, k, lent, sizeof lent) == "");
    CHECK(k.dst.data == lent + 16);
    CHECK(k.dst.ne[0] == 4); // the bound tensor's shape stays
    CHECK(k.src[1].data == lent + 32);
    CHECK(k.aux[3] == (long long)(uintptr_t)(lent + 48));
    CHECK(has(rf_hip::bind_words(g, 0, 1, l, k), "word 0 addresses lent scratch beyond the bytes the claim asked for"));
    CHECK(has(rf_hip::bind_words(g, 0, 1, l, k, lent, 16), "word 0 addresses lent scratch beyond"));
    l.words[0] = {RF_KFIELD_SRC0_DATA + 2, {0, 0}, 0};
    CHECK(has(rf_hip::bind_words(g, 0, 1, l, k, lent, sizeof lent), "word 0 moves the data of a slot the claim binds to no tensor"));
}
