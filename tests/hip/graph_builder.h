// Builds one GraphCase (fusion_cases.h) for the opcheck graph cases: tensors are added and
// referred to by index, nodes name their tensors by those indices.
#pragma once
#include <initializer_list>
#include <utility>

#include "fusion_cases.h"

namespace opcheck {

struct Builder {
    GraphCase c;
    int input(HostTensor t) { c.tensors.push_back({std::move(t)}); return (int)c.tensors.size() - 1; }
    int weight(HostTensor t) { // a model weight (RF_TENSOR_WEIGHT)
        GraphTensor g{std::move(t)};
        g.weight = true;
        c.tensors.push_back(std::move(g));
        return (int)c.tensors.size() - 1;
    }
    int output(int type, int64_t n0, int64_t n1 = 1, int64_t n2 = 1) {
        GraphTensor g{make(type, n0, n1, n2)};
        g.written = true;
        c.tensors.push_back(std::move(g));
        return (int)c.tensors.size() - 1;
    }
    int pool(HostTensor t) { // written, keeps its starting contents
        GraphTensor g{std::move(t)};
        g.written = g.keep = true;
        c.tensors.push_back(std::move(g));
        return (int)c.tensors.size() - 1;
    }
    int view(int of, int type, int64_t n0, int64_t n1, int64_t n2) {
        GraphTensor g{make(type, n0, n1, n2)};
        g.view_of = of;
        g.host.data.clear(); // no bytes of its own
        c.tensors.push_back(std::move(g));
        return (int)c.tensors.size() - 1;
    }
    GraphNode &node(int op, int dst, std::initializer_list<int> srcs) {
        GraphNode n;
        n.op = op;
        n.dst = dst;
        int i = 0;
        for (int s : srcs) n.src[i++] = s;
        c.nodes.push_back(n);
        return c.nodes.back();
    }
};

} // namespace opcheck
