#include "pack_bind.h"

namespace rf_hip {

rf_ktensor ktensor(const rf_tensor *t) {
    rf_ktensor k{};
    if (!t) return k;
    k.data = t->data;
    for (int i = 0; i < 4; ++i) { k.ne[i] = t->ne[i]; k.nb[i] = t->nb[i]; }
    k.type = t->type;
    return k;
}

namespace {

// The tensor `r` names, or "" with *t set; RF_BIND_NONE gives nullptr.
std::string resolve(const rf_graph &g, int first, int count, rf_tensor_ref r, const char *slot, const rf_tensor **t) {
    *t = nullptr;
    if (r.node == RF_BIND_NONE) return "";
    const std::string where = std::string(slot) + " binds node +" + std::to_string(r.node);
    if (r.node < 0 || r.node >= count) return where + ", outside the " + std::to_string(count) + " claimed node(s)";
    const rf_node *n = g.nodes[first + r.node];
    if (r.which == RF_BIND_DST) *t = n->dst;
    else if (r.which >= 0 && r.which < RF_MAX_SRC) *t = n->src[r.which];
    else return where + " tensor " + std::to_string(r.which) + " (neither dst nor src 0.." + std::to_string(RF_MAX_SRC - 1) + ")";
    if (!*t) return where + (r.which == RF_BIND_DST ? " dst" : " src" + std::to_string(r.which)) + ", which the node does not have";
    return "";
}

} // namespace

std::string bind_claim(const rf_graph &g, int first, int count, const rf_fusion_launch &l, rf_kargs &out) {
    if (count < 1 || count > g.n_nodes - first)
        return "claimed " + std::to_string(count) + " node(s) at node " + std::to_string(first) + " of " + std::to_string(g.n_nodes);
    if (l.threads < 1 || l.threads > 1024) return "block of " + std::to_string(l.threads) + " threads (1..1024)";
    if (l.grid[0] < 1 || l.grid[0] > 0x7fffffffu || l.grid[1] < 1 || l.grid[1] > 65535 || l.grid[2] < 1 || l.grid[2] > 65535)
        return "grid " + std::to_string(l.grid[0]) + " x " + std::to_string(l.grid[1]) + " x " + std::to_string(l.grid[2]) +
               " out of range";
    out = rf_kargs{};
    const rf_tensor *t = nullptr;
    if (std::string e = resolve(g, first, count, l.dst, "dst", &t); !e.empty()) return e;
    out.dst = ktensor(t);
    for (int i = 0; i < RF_KMAX_SRC; ++i) {
        const std::string slot = "src[" + std::to_string(i) + "]";
        if (std::string e = resolve(g, first, count, l.src[i], slot.c_str(), &t); !e.empty()) return e;
        out.src[i] = ktensor(t);
    }
    for (int i = 0; i < 4; ++i) out.aux[i] = l.aux[i];
    for (int i = 0; i < 8; ++i) {
        out.iparams[i] = l.iparams[i];
        out.fparams[i] = l.fparams[i];
    }
    return "";
}

std::string bind_q8(const rf_graph &g, int first, int count, const rf_fusion_launch &l, const rf_tensor **x) {
    *x = nullptr;
    if (l.q8_of.node == RF_BIND_NONE) return "";
    if (l.q8_aux_stride < 0 || l.q8_aux_stride > 3 || l.q8_aux_block < 0 || l.q8_aux_block > 3 || l.q8_aux_stride == l.q8_aux_block)
        return "q8_1 columns with aux slots " + std::to_string(l.q8_aux_stride) + " and " + std::to_string(l.q8_aux_block) +
               " (two different ones of 0..3)";
    const rf_tensor *t = nullptr;
    if (std::string e = resolve(g, first, count, l.q8_of, "q8_of", &t); !e.empty()) return e;
    if (t->type != RF_TYPE_F32 || t->nb[0] != 4 || t->ne[0] % 32 != 0)
        return "q8_1 columns of a tensor that is not f32 rows of a multiple of 32 elements";
    *x = t;
    return "";
}

std::string bind_act_in(const rf_graph &g, int first, int count, const rf_fusion_launch &l, const rf_tensor **x, int *block) {
    *x = nullptr;
    *block = 0;
    if (l.act_in.node == RF_BIND_NONE) return "";
    if (l.q8_of.node != RF_BIND_NONE) return "both act_in and q8_of (scratch holds one of them)";
    if (l.q8_aux_stride < -1 || l.q8_aux_stride > 3) return "act_in with aux slot " + std::to_string(l.q8_aux_stride) + " (0..3, or -1)";
    const int b = l.act_in_block;
    if (b != 32 && b != 256 && b != RF_ACT_IN_F32)
        return "act_in in blocks of " + std::to_string(b) + " (32 or 256 for q8_1 columns, RF_ACT_IN_F32 for the rows)";
    const rf_tensor *t = nullptr;
    if (std::string e = resolve(g, first, count, l.act_in, "act_in", &t); !e.empty()) return e;
    const int64_t unit = b == RF_ACT_IN_F32 ? 32 : b;
    if (t->type != RF_TYPE_F32 || t->nb[0] != 4 || t->ne[0] % unit != 0)
        return "act_in of a tensor that is not f32 rows of a multiple of " + std::to_string(unit) + " elements";
    if (t->nb[2] != t->nb[1] * t->ne[1] || t->nb[3] != t->nb[2] * t->ne[2])
        return "act_in of a tensor whose rows are not evenly spaced";
    if (l.q8_aux_stride == -1 && t->ne[1] * t->ne[2] * t->ne[3] != 1) return "act_in of several rows without a stride slot";
    *x = t;
    *block = b;
    return "";
}

void lend_act_in(const rf_fusion_launch &l, const void *first, int64_t stride, rf_kargs &out) {
    out.scratch = const_cast<void *>(first);
    if (l.q8_aux_stride >= 0) out.aux[l.q8_aux_stride] = stride;
}

std::string bind_words(const rf_graph &g, int first, int count, const rf_fusion_launch &l, rf_kargs &out, void *lent,
                       uint64_t lent_bytes) {
    const bool stride_slot = l.act_in.node != RF_BIND_NONE || l.q8_of.node != RF_BIND_NONE;
    for (int i = 0; i < RF_FUSION_MAX_WORDS; ++i) {
        const rf_kargs_word &w = l.words[i];
        if (w.field == RF_KFIELD_NONE) continue;
        const std::string which = "word " + std::to_string(i);
        if (w.field < RF_KFIELD_NONE || w.field >= RF_KFIELD_END) return which + " sets field " + std::to_string(w.field) + ", no rf_kargs_field";
        const bool data = w.field >= RF_KFIELD_DST_DATA, dst = !data && w.field >= RF_KFIELD_DST_NE0;
        if (dst && l.dst.node != RF_BIND_NONE) return which + " sets a member of dst, which the claim binds to a tensor";
        if (data) {
            const rf_tensor_ref slot = w.field == RF_KFIELD_DST_DATA ? l.dst : l.src[w.field - RF_KFIELD_SRC0_DATA];
            if (slot.node == RF_BIND_NONE) return which + " moves the data of a slot the claim binds to no tensor";
        }
        if (!dst && !data && stride_slot && w.field - RF_KFIELD_AUX0 == l.q8_aux_stride) return which + " sets the aux member of the q8_1 stride";
        uintptr_t base = 0;
        if (w.tensor.node == RF_BIND_LENT) {
            if (!lent || w.value < 0 || (uint64_t)w.value >= lent_bytes) return which + " addresses lent scratch beyond the bytes the claim asked for";
            base = (uintptr_t)lent;
        } else {
            const rf_tensor *t = nullptr;
            if (std::string e = resolve(g, first, count, w.tensor, which.c_str(), &t); !e.empty()) return e;
            base = t ? (uintptr_t)t->data : 0;
        }
        // Unsigned: an address plus any value wraps instead of overflowing (a pack bug, not UB here).
        const long long v = (long long)((uint64_t)base + (uint64_t)w.value);
        if (w.field < RF_KFIELD_DST_NE0) out.aux[w.field - RF_KFIELD_AUX0] = v;
        else if (w.field < RF_KFIELD_DST_NB0) out.dst.ne[w.field - RF_KFIELD_DST_NE0] = v;
        else if (w.field < RF_KFIELD_DST_DATA) out.dst.nb[w.field - RF_KFIELD_DST_NB0] = v;
        else if (w.field == RF_KFIELD_DST_DATA) out.dst.data = reinterpret_cast<void *>((uintptr_t)v);
        else out.src[w.field - RF_KFIELD_SRC0_DATA].data = reinterpret_cast<void *>((uintptr_t)v);
    }
    return "";
}

void lend_q8(const rf_fusion_launch &l, void *scratch, int64_t stride, int block, rf_kargs &out) {
    out.scratch = block ? scratch : nullptr;
    out.aux[l.q8_aux_stride] = block ? stride : 0;
    out.aux[l.q8_aux_block] = block;
}

} // namespace rf_hip
