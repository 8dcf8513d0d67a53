#include "graph_binding.h"

#include <cstring>

namespace opcheck {

void set_dense(rf_tensor &t, const HostTensor &h) {
    t.type = h.type;
    for (int d = 0; d < 4; ++d) t.ne[d] = h.ne[d];
    t.nb[0] = (int64_t)type_bytes(h.type);
    t.nb[1] = (int64_t)row_bytes(h.type, h.ne[0]);
    t.nb[2] = t.nb[1] * h.ne[1];
    t.nb[3] = t.nb[2] * h.ne[2];
    t.name = "t";
}

BoundGraph bind_graph(Plugin &p, const GraphCase &c) {
    BoundGraph b;
    b.t.resize(c.tensors.size());
    for (size_t i = 0; i < c.tensors.size(); ++i) {
        const GraphTensor &g = c.tensors[i];
        set_dense(b.t[i], g.host);
        b.t[i].flags = g.weight ? RF_TENSOR_WEIGHT : 0;
        if (g.view_of >= 0) continue;
        std::vector<uint8_t> poison;
        if (g.written && !g.keep) poison.assign(g.host.data.size(), 0xFF);
        b.t[i].data = p.alloc(g.host.data.size(), poison.empty() ? g.host.data.data() : poison.data());
    }
    for (size_t i = 0; i < c.tensors.size(); ++i)
        if (c.tensors[i].view_of >= 0) b.t[i].data = b.t[(size_t)c.tensors[i].view_of].data;
    for (const GraphNode &gn : c.nodes) {
        rf_node n{};
        n.op = gn.op;
        n.dst = &b.t[(size_t)gn.dst];
        for (int k = 0; k < RF_MAX_SRC; ++k) n.src[k] = gn.src[k] >= 0 ? &b.t[(size_t)gn.src[k]] : nullptr;
        std::memcpy(n.iparams, gn.iparams, sizeof n.iparams);
        std::memcpy(n.fparams, gn.fparams, sizeof n.fparams);
        n.label = c.name.c_str();
        b.nodes.push_back(n);
    }
    for (rf_node &n : b.nodes) b.ptrs.push_back(&n);
    return b;
}

} // namespace opcheck
