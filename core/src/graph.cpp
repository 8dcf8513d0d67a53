// Graph builder: shape inference for each op of abi.h; nodes are executed by the Executor.
#include "rocmforge/error.h"
#include "rocmforge/graph.h"

namespace rf {
namespace {

void require(bool ok, const std::string &msg) {
    if (!ok) throw Error("graph: " + msg);
}

std::string shape_str(const Tensor *t) {
    return "[" + std::to_string(t->ne(0)) + "," + std::to_string(t->ne(1)) + "," +
           std::to_string(t->ne(2)) + "," + std::to_string(t->ne(3)) + "]";
}

} // namespace

Tensor *Graph::new_tensor(TensorKind kind, int type, std::initializer_list<int64_t> ne) {
    tensors_.emplace_back();
    Tensor *t = &tensors_.back();
    t->kind = kind;
    init_tensor_layout(t->t, type, ne);
    return t;
}

Tensor *Graph::tensor_of(const rf_tensor *t) {
    auto it = index_.find(t);
    return it == index_.end() ? nullptr : it->second;
}

Tensor *Graph::add_node(int op, Tensor *dst, std::initializer_list<Tensor *> srcs, const char *label) {
    rf_node n{};
    n.op = op;
    n.dst = &dst->t;
    index_[&dst->t] = dst;
    int i = 0;
    for (Tensor *s : srcs) {
        if (s) {
            n.src[i] = &s->t;
            index_[&s->t] = s;
        }
        ++i;
    }
    labels_.push_back(prefix_ + (label ? label : ""));
    n.label = labels_.back().c_str();
    if (dst->name.empty()) {
        dst->name = labels_.back();
        dst->t.name = dst->name.c_str();
    }
    nodes_.push_back(n);
    return dst;
}

Tensor *Graph::input(const std::string &name, int type, std::initializer_list<int64_t> ne,
                     const void *host_data) {
    Tensor *t = new_tensor(TensorKind::Input, type, ne);
    t->name = name;
    t->t.name = t->name.c_str();
    t->host_data = host_data;
    index_[&t->t] = t;
    return t;
}

Tensor *Graph::get_rows(Tensor *table, Tensor *ids, const char *label) {
    require(ids->type() == RF_TYPE_I32, "get_rows ids must be i32");
    return add_node(RF_OP_GET_ROWS, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {table->ne(0), ids->ne(0)}),
                    {table, ids}, label);
}

Tensor *Graph::matmul(Tensor *w, Tensor *x, const char *label) {
    require(w->ne(0) == x->ne(0), std::string("matmul ") + label + ": inner sizes differ " + shape_str(w) + " x " + shape_str(x));
    require(x->type() == RF_TYPE_F32, "matmul activations must be f32");
    return add_node(RF_OP_MATMUL,
                    new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {w->ne(1), x->ne(1), x->ne(2), x->ne(3)}),
                    {w, x}, label);
}

Tensor *Graph::add(Tensor *a, Tensor *b, const char *label) {
    for (int i = 0; i < 4; ++i)
        require(b->ne(i) == a->ne(i) || b->ne(i) == 1, std::string(label) + ": cannot broadcast " + shape_str(b) + " to " + shape_str(a));
    return add_node(RF_OP_ADD, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {a->ne(0), a->ne(1), a->ne(2), a->ne(3)}),
                    {a, b}, label);
}

Tensor *Graph::mul(Tensor *a, Tensor *b, const char *label) {
    for (int i = 0; i < 4; ++i)
        require(b->ne(i) == a->ne(i) || b->ne(i) == 1, std::string(label) + ": cannot broadcast " + shape_str(b) + " to " + shape_str(a));
    return add_node(RF_OP_MUL, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {a->ne(0), a->ne(1), a->ne(2), a->ne(3)}),
                    {a, b}, label);
}

Tensor *Graph::scale(Tensor *a, float s, const char *label) {
    Tensor *d = add_node(RF_OP_SCALE, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {a->ne(0), a->ne(1), a->ne(2), a->ne(3)}), {a}, label);
    nodes_.back().fparams[0] = s;
    return d;
}

Tensor *Graph::rms_norm(Tensor *a, float eps, const char *label) {
    Tensor *d = add_node(RF_OP_RMS_NORM, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {a->ne(0), a->ne(1), a->ne(2), a->ne(3)}), {a}, label);
    nodes_.back().fparams[0] = eps;
    return d;
}

Tensor *Graph::rope(Tensor *x, Tensor *positions, Tensor *freq_factors, int mode, int n_rot,
                    float freq_base, float freq_scale, const char *label) {
    require(positions->type() == RF_TYPE_I32 && positions->ne(0) == x->ne(2), "rope positions must be i32[T]");
    require(n_rot <= x->ne(0) && n_rot % 2 == 0, "rope n_rot must be even and <= head size");
    Tensor *d = add_node(RF_OP_ROPE, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {x->ne(0), x->ne(1), x->ne(2), x->ne(3)}),
                         {x, positions, freq_factors}, label);
    rf_node &n = nodes_.back();
    n.iparams[0] = mode;
    n.iparams[1] = n_rot;
    n.fparams[0] = freq_base;
    n.fparams[1] = freq_scale;
    return d;
}

Tensor *Graph::softmax(Tensor *a, float s, const char *label) {
    Tensor *d = add_node(RF_OP_SOFTMAX, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {a->ne(0), a->ne(1), a->ne(2), a->ne(3)}), {a}, label);
    nodes_.back().fparams[0] = s;
    return d;
}

Tensor *Graph::silu(Tensor *a, const char *label) {
    return add_node(RF_OP_SILU, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {a->ne(0), a->ne(1), a->ne(2), a->ne(3)}), {a}, label);
}

Tensor *Graph::swiglu(Tensor *gate, Tensor *up, const char *label) {
    require(gate->n_elements() == up->n_elements(), "swiglu operands differ in size");
    return add_node(RF_OP_SWIGLU, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {gate->ne(0), gate->ne(1), gate->ne(2), gate->ne(3)}),
                    {gate, up}, label);
}

Tensor *Graph::set_rows(Tensor *pool, Tensor *src, Tensor *slots, const char *label) {
    require(src->ne(0) == pool->ne(0), std::string(label) + ": row length " + std::to_string(src->ne(0)) +
                                           " does not match the pool's " + std::to_string(pool->ne(0)));
    require(slots->type() == RF_TYPE_I32 && slots->ne(0) == src->ne(1), "set_rows slots must be i32[rows]");
    return add_node(RF_OP_SET_ROWS, pool, {src, slots}, label);
}

Tensor *Graph::attention(Tensor *q, Tensor *k_pool, Tensor *v_pool, Tensor *slot_table,
                         Tensor *token_info, float s, const char *label) {
    require(k_pool->ne(0) % q->ne(0) == 0, "attention: K pool row is not a multiple of the head size");
    require(q->ne(1) % (k_pool->ne(0) / q->ne(0)) == 0, "attention: query heads not a multiple of kv heads");
    require(token_info->type() == RF_TYPE_I32 && token_info->ne(0) == 2 && token_info->ne(1) == q->ne(2),
            "attention token_info must be i32[2, T]");
    Tensor *d = add_node(RF_OP_ATTENTION, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {q->ne(0) * q->ne(1), q->ne(2)}),
                         {q, k_pool, v_pool, slot_table, token_info}, label);
    nodes_.back().fparams[0] = s;
    return d;
}

Tensor *Graph::argmax(Tensor *a, const char *label) {
    return add_node(RF_OP_ARGMAX, new_tensor(TensorKind::Intermediate, RF_TYPE_I32, {a->ne(1)}), {a}, label);
}

Tensor *Graph::copy(Tensor *a, int type, const char *label) {
    return add_node(RF_OP_COPY, new_tensor(TensorKind::Intermediate, type, {a->ne(0), a->ne(1), a->ne(2), a->ne(3)}), {a}, label);
}

Tensor *Graph::reshape(Tensor *a, std::initializer_list<int64_t> ne) {
    require(a->contiguous(), "reshape of a non-contiguous tensor");
    tensors_.emplace_back();
    Tensor *t = &tensors_.back();
    t->kind = TensorKind::View;
    init_tensor_layout(t->t, a->type(), ne);
    require(t->n_elements() == a->n_elements(), "reshape changes the element count");
    t->view_src = a->kind == TensorKind::View ? a->view_src : a;
    t->view_offset = a->kind == TensorKind::View ? a->view_offset : 0;
    t->home = a->home;
    t->name = a->name;
    t->t.name = t->name.c_str();
    index_[&t->t] = t;
    return t;
}

Tensor *Graph::rows(Tensor *a, int64_t first, int64_t count) {
    require(a->contiguous() && first >= 0 && count > 0 && first + count <= a->ne(1) && a->ne(2) == 1 && a->ne(3) == 1,
            "rows(): range outside the tensor");
    tensors_.emplace_back();
    Tensor *t = &tensors_.back();
    t->kind = TensorKind::View;
    init_tensor_layout(t->t, a->type(), {a->ne(0), count});
    t->view_src = a->kind == TensorKind::View ? a->view_src : a;
    t->view_offset = (a->kind == TensorKind::View ? a->view_offset : 0) + static_cast<uint64_t>(first) * a->t.nb[1];
    t->home = a->home;
    t->name = a->name;
    t->t.name = t->name.c_str();
    index_[&t->t] = t;
    return t;
}

} // namespace rf
