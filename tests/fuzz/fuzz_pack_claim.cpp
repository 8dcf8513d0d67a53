// A pack fusion's claim as the HIP backend binds it (backends/hip/pack_bind.cpp), from fuzzed
// bytes: a claim is either refused with a reason or bound to tensors of the claimed nodes only;
// the activations it reads (ABI 2.6) are such a tensor in a known form, and its address words
// change integer members, or (ABI 2.7) the data address of a bound slot, never a bound tensor's
// shape, strides or type.
#include <algorithm>
#include <cstring>

#include "check.h"
#include "pack_bind.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int32_t count = 0;
    rf_fusion_launch l;
    rf_fusion_launch_init(&l);
    if (size < sizeof count) return 0;
    std::memcpy(&count, data, sizeof count);
    std::memcpy(&l, data + sizeof count, std::min(size - sizeof count, sizeof l));
    // MUL(a, b) -> t; ADD(t, c) -> d; SCALE(d) -> e: the example pack's pattern and a third node.
    static float buf[5][4];
    static rf_tensor t[5];
    static rf_node n[3];
    static rf_node *nodes[3] = {&n[0], &n[1], &n[2]};
    for (int i = 0; i < 5; ++i) t[i] = rf_tensor{RF_TYPE_F32, 0, {4, 1, 1, 1}, {4, 16, 16, 16}, buf[i], nullptr, nullptr};
    n[0] = rf_node{RF_OP_MUL, &t[3], {&t[0], &t[1]}, {}, {}, nullptr};
    n[1] = rf_node{RF_OP_ADD, &t[4], {&t[3], &t[2]}, {}, {}, nullptr};
    n[2] = rf_node{RF_OP_SCALE, &t[0], {&t[4]}, {}, {2.0f}, nullptr};
    const rf_graph g{3, nodes};
    const int first = (int)(l.aux[3] & 1); // claims at node 0 or 1
    rf_kargs k{};
    const std::string why = rf_hip::bind_claim(g, first, count, l, k);
    if (!why.empty()) return 0;
    RF_FUZZ_CHECK(count >= 1 && first + count <= g.n_nodes);
    RF_FUZZ_CHECK(l.threads >= 1 && l.threads <= 1024);
    const rf_ktensor *slots[1 + RF_KMAX_SRC] = {&k.dst, &k.src[0], &k.src[1], &k.src[2], &k.src[3], &k.src[4]};
    for (const rf_ktensor *s : slots) {
        bool known = s->data == nullptr;
        for (int i = 0; i < 5; ++i) known = known || s->data == buf[i];
        RF_FUZZ_CHECK(known);
    }
    const rf_tensor *act = nullptr;
    int block = 0;
    if (rf_hip::bind_act_in(g, first, count, l, &act, &block).empty() && act) {
        RF_FUZZ_CHECK(block == 32 || block == 256 || block == RF_ACT_IN_F32);
        RF_FUZZ_CHECK(act >= t && act < t + 5);
    }
    alignas(16) static unsigned char lent[64];
    rf_kargs w = k;
    if (rf_hip::bind_words(g, first, count, l, w, lent, sizeof lent).empty()) {
        const auto same_layout = [](const rf_ktensor &a, const rf_ktensor &b) {
            return std::memcmp(a.ne, b.ne, sizeof a.ne) == 0 && std::memcmp(a.nb, b.nb, sizeof a.nb) == 0 && a.type == b.type;
        };
        for (int i = 0; i < RF_KMAX_SRC; ++i) {
            RF_FUZZ_CHECK(same_layout(w.src[i], k.src[i]));
            RF_FUZZ_CHECK(w.src[i].data == k.src[i].data || l.src[i].node != RF_BIND_NONE);
        }
        RF_FUZZ_CHECK(w.dst.data == k.dst.data || l.dst.node != RF_BIND_NONE);
        RF_FUZZ_CHECK(l.dst.node == RF_BIND_NONE || same_layout(w.dst, k.dst));
        RF_FUZZ_CHECK(w.scratch == k.scratch && std::memcmp(w.iparams, k.iparams, sizeof k.iparams) == 0);
    }
    return 0;
}
