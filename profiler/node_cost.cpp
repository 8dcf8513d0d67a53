#include "node_cost.h"

#include "rocmforge/types.h"

namespace rfprof {

const char *op_name(int op) { return rf_op_name(op); }

namespace {

double n_rows(const rf_tensor *t) { return double(t->ne[1]) * double(t->ne[2]) * double(t->ne[3]); }

double row_bytes(int type, int64_t n) {
    const rf::TypeTraits *tt = rf::type_traits(type);
    if (!tt || tt->block_size <= 0) return 0;
    return double(n) / double(tt->block_size) * double(tt->type_size);
}

double elements(const rf_tensor *t) { return double(t->ne[0]) * n_rows(t); }

} // namespace

double tensor_bytes(const rf_tensor *t) { return t ? row_bytes(t->type, t->ne[0]) * n_rows(t) : 0; }

NodeCost node_cost(const rf_node &n) {
    NodeCost c;
    const rf_tensor *d = n.dst;
    switch (n.op) {
    case RF_OP_MATMUL: {
        // dst[N,M] = src0[K,N]^T * src1[K,M]; batch dims come from dst.
        const double K = double(n.src[0]->ne[0]), N = double(d->ne[0]), M = double(d->ne[1]);
        c.flops = 2.0 * K * N * M * double(d->ne[2]) * double(d->ne[3]);
        c.bytes = tensor_bytes(n.src[0]) + tensor_bytes(n.src[1]) + tensor_bytes(d);
        break;
    }
    case RF_OP_MATMUL_ID: {
        // dst[N,S,M] from the chosen experts of src0[K,N,E]: a token's S ids are distinct (TOPK),
        // so min(E, S*M) expert slices are read, the S chosen ones for one token (decode).
        const rf_tensor *w = n.src[0], *ids = n.src[2];
        const double K = double(w->ne[0]), N = double(w->ne[1]), E = double(w->ne[2]);
        const double cols = ids ? double(ids->ne[0]) * double(ids->ne[1]) : 0;
        c.flops = 2.0 * K * N * cols;
        c.bytes = (cols < E ? cols : E) * N * row_bytes(w->type, w->ne[0]) + tensor_bytes(n.src[1]) + tensor_bytes(ids) +
                  tensor_bytes(d);
        break;
    }
    case RF_OP_ATTENTION: {
        // Q [D,Hq,T]; the pools hold far more rows than are read: only n_kv rows per sequence
        // (the slot table's row length, an upper bound for causal prefill) are touched.
        const rf_tensor *q = n.src[0], *kp = n.src[1], *vp = n.src[2], *slots = n.src[3];
        const double D = double(q->ne[0]), Hq = double(q->ne[1]), T = double(q->ne[2]);
        const double n_kv = slots ? double(slots->ne[0]) : 0, n_seq = slots ? double(slots->ne[1]) : 1;
        c.flops = 4.0 * D * n_kv * Hq * T;
        c.bytes = tensor_bytes(q) + tensor_bytes(d) + tensor_bytes(slots) + tensor_bytes(n.src[4]);
        if (kp) c.bytes += row_bytes(kp->type, kp->ne[0]) * n_kv * n_seq;
        if (vp) c.bytes += row_bytes(vp->type, vp->ne[0]) * n_kv * n_seq;
        break;
    }
    case RF_OP_SET_ROWS: {
        // dst is the whole cache pool; only the T appended rows are written.
        const rf_tensor *src = n.src[0];
        c.flops = elements(src);
        c.bytes = tensor_bytes(src) + tensor_bytes(n.src[1]) + row_bytes(d->type, d->ne[0]) * n_rows(src);
        break;
    }
    case RF_OP_GET_ROWS: {
        // Only the selected rows of the table are read.
        const rf_tensor *table = n.src[0], *ids = n.src[1];
        c.bytes = row_bytes(table->type, table->ne[0]) * elements(ids) + tensor_bytes(ids) + tensor_bytes(d);
        break;
    }
    case RF_OP_ARGMAX:
        c.flops = elements(n.src[0]);
        c.bytes = tensor_bytes(n.src[0]) + tensor_bytes(d);
        break;
    default:
        c.flops = d ? elements(d) : 0;
        for (const rf_tensor *s : n.src) c.bytes += tensor_bytes(s);
        c.bytes += tensor_bytes(d);
        break;
    }
    return c;
}

namespace {
std::string shape_of(const rf_tensor *t) {
    int dims = 4;
    while (dims > 1 && t->ne[dims - 1] == 1) --dims;
    std::string s = "[";
    for (int i = 0; i < dims; ++i) {
        if (i) s += ',';
        s += std::to_string(t->ne[i]);
    }
    s += ']';
    return s;
}
} // namespace

std::string node_shapes(const rf_node &n) {
    std::string s;
    // The first two sources say it all (attention: Q and the K pool).
    for (int i : {0, 1}) {
        if (!n.src[i]) continue;
        if (!s.empty()) s += " x ";
        s += shape_of(n.src[i]);
    }
    if (s.empty() && n.dst) s = shape_of(n.dst);
    return s;
}

std::string node_dtypes(const rf_node &n) {
    std::string s;
    for (int i = 0; i < 3; ++i)
        if (n.src[i]) {
            if (!s.empty()) s += ',';
            s += rf::type_name(n.src[i]->type);
        }
    if (s.empty() && n.dst) s = rf::type_name(n.dst->type);
    return s;
}

} // namespace rfprof
