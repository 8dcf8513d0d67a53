// Graph builder: shape inference for each op of abi.h; nodes are executed by the Executor.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "rocmforge/error.h"
#include "rocmforge/graph.h"

namespace rf {
namespace {

[[noreturn]] void fail(const std::string &msg) { throw Error("graph: " + msg); }

std::string shape_str(const Tensor *t) {
    // Appended piece by piece: `"[" + std::to_string(..)` trips GCC 12's false -Wrestrict.
    std::string s = "[";
    for (int d = 0; d < 4; ++d) s.append(d ? "," : "").append(std::to_string(t->ne(d)));
    return s + "]";
}

std::atomic<uint64_t> next_graph_id{1};

} // namespace

Graph::Graph() : id_(next_graph_id.fetch_add(1, std::memory_order_relaxed)) {}

const char *Graph::store_label(const char *label) {
    const size_t lp = prefix_.size(), ll = std::strlen(label), need = lp + ll + 1;
    if (need > label_room_ - label_used_ || label_blocks_.empty()) {
        label_room_ = std::max<size_t>(4096, need);
        label_blocks_.push_back(std::make_unique<char[]>(label_room_));
        label_used_ = 0;
    }
    char *d = label_blocks_.back().get() + label_used_;
    std::memcpy(d, prefix_.data(), lp);
    std::memcpy(d + lp, label, ll);
    d[lp + ll] = '\0';
    label_used_ += need;
    return d;
}

Tensor *Graph::new_tensor(TensorKind kind, int type, std::initializer_list<int64_t> ne) {
    ++version_;
    tensors_.emplace_back();
    tensors_.back().graph_index = static_cast<int>(tensors_.size()) - 1;
    Tensor *t = &tensors_.back();
    t->kind = kind;
    init_tensor_layout(t->t, type, ne);
    return t;
}

Tensor *Graph::add_node(int op, Tensor *dst, std::initializer_list<Tensor *> srcs, const char *label) {
    ++version_;
    rf_node n{};
    NodeRefs r;
    n.op = op;
    n.dst = &dst->t;
    r.dst = dst;
    int i = 0;
    for (Tensor *s : srcs) {
        if (s) {
            n.src[i] = &s->t;
            r.src[i] = s;
        }
        ++i;
    }
    refs_.push_back(r);
    n.label = store_label(label ? label : "");
    // A node's new tensor is named by the node's label (in this graph's label storage); an
    // unnamed tensor from outside (never the case for inputs and pools) gets its own copy.
    if (dst->name.empty() && (!dst->t.name || !*dst->t.name)) {
        if (dst->graph_index >= 0) {
            dst->t.name = n.label;
        } else {
            dst->name = n.label;
            dst->t.name = dst->name.c_str();
        }
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
    return t;
}

Tensor *Graph::get_rows(Tensor *table, Tensor *ids, const char *label) {
    if (!(ids->type() == RF_TYPE_I32)) fail("get_rows ids must be i32");
    return add_node(RF_OP_GET_ROWS, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {table->ne(0), ids->ne(0)}),
                    {table, ids}, label);
}

Tensor *Graph::matmul(Tensor *w, Tensor *x, const char *label) {
    if (!(w->ne(0) == x->ne(0))) fail(std::string("matmul ") + label + ": inner sizes differ " + shape_str(w) + " x " + shape_str(x));
    if (!(x->type() == RF_TYPE_F32)) fail("matmul activations must be f32");
    return add_node(RF_OP_MATMUL,
                    new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {w->ne(1), x->ne(1), x->ne(2), x->ne(3)}),
                    {w, x}, label);
}

Tensor *Graph::add(Tensor *a, Tensor *b, const char *label) {
    for (int i = 0; i < 4; ++i)
        if (!(b->ne(i) == a->ne(i) || b->ne(i) == 1)) fail(std::string(label) + ": cannot broadcast " + shape_str(b) + " to " + shape_str(a));
    return add_node(RF_OP_ADD, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {a->ne(0), a->ne(1), a->ne(2), a->ne(3)}),
                    {a, b}, label);
}

Tensor *Graph::mul(Tensor *a, Tensor *b, const char *label) {
    for (int i = 0; i < 4; ++i)
        if (!(b->ne(i) == a->ne(i) || b->ne(i) == 1)) fail(std::string(label) + ": cannot broadcast " + shape_str(b) + " to " + shape_str(a));
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

Tensor *Graph::layer_norm(Tensor *a, float eps, const char *label) {
    Tensor *d = add_node(RF_OP_LAYER_NORM, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {a->ne(0), a->ne(1), a->ne(2), a->ne(3)}), {a}, label);
    nodes_.back().fparams[0] = eps;
    return d;
}

Tensor *Graph::rope(Tensor *x, Tensor *positions, Tensor *freq_factors, int mode, int n_rot,
                    float freq_base, float freq_scale, const char *label, Tensor *angles, const RopeYarn *yarn) {
    if (!(positions->type() == RF_TYPE_I32 && positions->ne(0) == x->ne(2))) fail("rope positions must be i32[T]");
    if (!(n_rot <= x->ne(0) && n_rot % 2 == 0)) fail("rope n_rot must be even and <= head size");
    if (angles && !(angles->type() == RF_TYPE_F32 && angles->ne(0) == 2 && angles->ne(1) == n_rot / 2 &&
                    angles->ne(2) == x->ne(2) && angles->ne(3) == 1))
        fail("rope angles must be f32[2, n_rot/2, T]");
    Tensor *d = add_node(RF_OP_ROPE, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {x->ne(0), x->ne(1), x->ne(2), x->ne(3)}),
                         {x, positions, freq_factors, angles}, label);
    rf_node &n = nodes_.back();
    n.iparams[0] = mode;
    n.iparams[1] = n_rot;
    n.fparams[0] = freq_base;
    n.fparams[1] = freq_scale;
    if (yarn) {
        if (!(yarn->n_ctx_orig > 0)) fail("rope: YaRN needs the original context length");
        n.iparams[2] = 1;
        n.iparams[3] = yarn->n_ctx_orig;
        n.fparams[2] = yarn->ext_factor;
        n.fparams[3] = yarn->attn_factor;
        n.fparams[4] = yarn->beta_fast;
        n.fparams[5] = yarn->beta_slow;
    }
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
    if (!(gate->n_elements() == up->n_elements())) fail("swiglu operands differ in size");
    return add_node(RF_OP_SWIGLU, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {gate->ne(0), gate->ne(1), gate->ne(2), gate->ne(3)}),
                    {gate, up}, label);
}

Tensor *Graph::swiglu_oai(Tensor *gate, Tensor *up, float alpha, float limit, const char *label) {
    if (!(gate->n_elements() == up->n_elements())) fail("swiglu_oai operands differ in size");
    if (!(limit > 0)) fail(std::string(label) + ": the clamp limit must be positive");
    Tensor *d = add_node(RF_OP_SWIGLU_OAI,
                         new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {gate->ne(0), gate->ne(1), gate->ne(2), gate->ne(3)}),
                         {gate, up}, label);
    nodes_.back().fparams[0] = alpha;
    nodes_.back().fparams[1] = limit;
    return d;
}

Tensor *Graph::geglu(Tensor *gate, Tensor *up, const char *label) {
    if (!(gate->n_elements() == up->n_elements())) fail("geglu operands differ in size");
    return add_node(RF_OP_GEGLU, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {gate->ne(0), gate->ne(1), gate->ne(2), gate->ne(3)}),
                    {gate, up}, label);
}

Tensor *Graph::gelu(Tensor *a, const char *label) {
    return add_node(RF_OP_GELU, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {a->ne(0), a->ne(1), a->ne(2), a->ne(3)}), {a}, label);
}

Tensor *Graph::sigmoid(Tensor *a, const char *label) {
    return add_node(RF_OP_SIGMOID, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {a->ne(0), a->ne(1), a->ne(2), a->ne(3)}), {a}, label);
}

Tensor *Graph::softcap(Tensor *a, float cap, const char *label) {
    if (!(cap > 0)) fail(std::string(label) + ": soft cap must be positive");
    Tensor *d = add_node(RF_OP_SOFTCAP, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {a->ne(0), a->ne(1), a->ne(2), a->ne(3)}), {a}, label);
    nodes_.back().fparams[0] = cap;
    return d;
}

Tensor *Graph::topk(Tensor *logits, int64_t k, const char *label) {
    if (!(logits->type() == RF_TYPE_F32 && logits->ne(2) == 1 && logits->ne(3) == 1)) fail(std::string(label) + ": logits must be f32 [E, M]");
    if (!(k >= 1 && k <= logits->ne(0))) fail(std::string(label) + ": k = " + std::to_string(k) + " outside 1.." + std::to_string(logits->ne(0)));
    return add_node(RF_OP_TOPK, new_tensor(TensorKind::Intermediate, RF_TYPE_I32, {k, logits->ne(1)}), {logits}, label);
}

Tensor *Graph::gather(Tensor *a, Tensor *ids, const char *label) {
    if (!(a->type() == RF_TYPE_F32 && a->ne(2) == 1 && a->ne(3) == 1)) fail(std::string(label) + ": source must be f32 [E, M]");
    if (!(ids->type() == RF_TYPE_I32 && ids->ne(1) == a->ne(1) && ids->ne(2) == 1 && ids->ne(3) == 1))
        fail(std::string(label) + ": ids " + shape_str(ids) + " do not match the source " + shape_str(a));
    return add_node(RF_OP_GATHER, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {ids->ne(0), ids->ne(1)}), {a, ids}, label);
}

Tensor *Graph::moe_weights(Tensor *logits, Tensor *ids, bool over_chosen, const char *label) {
    if (!(ids->type() == RF_TYPE_I32 && ids->ne(1) == logits->ne(1) && ids->ne(0) <= logits->ne(0)))
        fail(std::string(label) + ": ids " + shape_str(ids) + " do not match the logits " + shape_str(logits));
    Tensor *d = add_node(RF_OP_MOE_WEIGHTS, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {ids->ne(0), ids->ne(1)}), {logits, ids}, label);
    nodes_.back().iparams[0] = over_chosen ? 1 : 0;
    return d;
}

Tensor *Graph::moe_weights_of_chosen(Tensor *logits, Tensor *ids, const char *label) {
    Tensor *d = moe_weights(logits, ids, true, label);
    nodes_.back().iparams[0] = 2;
    return d;
}

Tensor *Graph::moe_weights_of_probs(Tensor *probs, Tensor *ids, const char *label) {
    Tensor *d = moe_weights(probs, ids, true, label);
    nodes_.back().iparams[0] = 3;
    return d;
}

Tensor *Graph::moe_group_mask(Tensor *a, int64_t n_groups, int64_t n_used, const char *label) {
    if (!(a->type() == RF_TYPE_F32 && a->ne(2) == 1 && a->ne(3) == 1)) fail(std::string(label) + ": source must be f32 [E, M]");
    if (!(n_groups >= 1 && a->ne(0) % n_groups == 0 && n_used >= 1 && n_used <= n_groups))
        fail(std::string(label) + ": " + std::to_string(n_groups) + " groups (" + std::to_string(n_used) + " kept) of " +
             std::to_string(a->ne(0)) + " experts");
    Tensor *d = add_node(RF_OP_MOE_GROUP_MASK, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {a->ne(0), a->ne(1)}), {a}, label);
    nodes_.back().iparams[0] = (int32_t)n_groups;
    nodes_.back().iparams[1] = (int32_t)n_used;
    return d;
}

Tensor *Graph::concat(Tensor *a, Tensor *b, const char *label) {
    if (!(a->type() == RF_TYPE_F32 && b->type() == RF_TYPE_F32 && a->ne(1) == b->ne(1) && a->ne(2) == b->ne(2) && a->ne(3) == b->ne(3)))
        fail(std::string(label) + ": cannot join " + shape_str(a) + " and " + shape_str(b) + " along dim 0");
    return add_node(RF_OP_CONCAT, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {a->ne(0) + b->ne(0), a->ne(1), a->ne(2), a->ne(3)}),
                    {a, b}, label);
}

Tensor *Graph::matmul_id(Tensor *w, Tensor *x, Tensor *ids, const char *label) {
    const int64_t S = ids->ne(0), M = ids->ne(1);
    if (!(ids->type() == RF_TYPE_I32 && ids->ne(2) == 1 && ids->ne(3) == 1)) fail(std::string(label) + ": ids must be i32 [S, M]");
    if (!(x->type() == RF_TYPE_F32 && w->ne(0) == x->ne(0) && (x->ne(1) == S || x->ne(1) == 1) && x->ne(2) == M && x->ne(3) == 1 && w->ne(3) == 1))
        fail(std::string(label) + ": shapes do not match: weight " + shape_str(w) + ", activations " + shape_str(x) + ", ids " + shape_str(ids));
    return add_node(RF_OP_MATMUL_ID, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {w->ne(1), S, M}), {w, x, ids}, label);
}

Tensor *Graph::add_id(Tensor *y, Tensor *bias, Tensor *ids, const char *label) {
    if (!(y->type() == RF_TYPE_F32 && bias->type() == RF_TYPE_F32 && ids->type() == RF_TYPE_I32 && bias->ne(0) == y->ne(0) &&
          bias->ne(2) == 1 && ids->ne(0) == y->ne(1) && ids->ne(1) == y->ne(2) && y->ne(3) == 1))
        fail(std::string(label) + ": shapes do not match: " + shape_str(y) + ", bias " + shape_str(bias) + ", ids " + shape_str(ids));
    return add_node(RF_OP_ADD_ID, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {y->ne(0), y->ne(1), y->ne(2)}), {y, bias, ids},
                    label);
}

Tensor *Graph::moe_sum(Tensor *y, Tensor *weights, const char *label) {
    if (!(weights->type() == RF_TYPE_F32 && weights->ne(0) == y->ne(1) && weights->ne(1) == y->ne(2) && y->ne(3) == 1))
        fail(std::string(label) + ": weights " + shape_str(weights) + " do not match " + shape_str(y));
    return add_node(RF_OP_MOE_SUM, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {y->ne(0), y->ne(2)}), {y, weights}, label);
}

Tensor *Graph::set_rows(Tensor *pool, Tensor *src, Tensor *slots, const char *label) {
    if (!(src->ne(0) == pool->ne(0))) fail(std::string(label) + ": row length " + std::to_string(src->ne(0)) +
                                           " does not match the pool's " + std::to_string(pool->ne(0)));
    if (!(slots->type() == RF_TYPE_I32 && slots->ne(0) == src->ne(1))) fail("set_rows slots must be i32[rows]");
    return add_node(RF_OP_SET_ROWS, pool, {src, slots}, label);
}

Tensor *Graph::attention(Tensor *q, Tensor *k_pool, Tensor *v_pool, Tensor *slot_table,
                         Tensor *token_info, float s, const char *label) {
    return attention(q, k_pool, v_pool, slot_table, token_info, s, AttentionLimits{}, label);
}

Tensor *Graph::attention(Tensor *q, Tensor *k_pool, Tensor *v_pool, Tensor *slot_table,
                         Tensor *token_info, float s, AttentionLimits limits, const char *label, int64_t single_rows) {
    if (!(limits.window >= 0 && limits.window <= INT32_MAX && limits.softcap >= 0)) fail("attention: bad window or soft cap");
    if (limits.bidirectional && limits.window > 0) fail("attention: a window needs causal attention");
    if (!(single_rows >= 0 && single_rows < q->ne(2))) fail("attention: split hint outside 0..T-1");
    if (limits.sinks && !(limits.sinks->type() == RF_TYPE_F32 && limits.sinks->n_elements() == q->ne(1)))
        fail("attention: sinks must be f32 [Hq]");
    if (!(k_pool->ne(0) % q->ne(0) == 0)) fail("attention: K pool row is not a multiple of the head size");
    if (!(q->ne(1) % (k_pool->ne(0) / q->ne(0)) == 0)) fail("attention: query heads not a multiple of kv heads");
    if (!(token_info->type() == RF_TYPE_I32 && token_info->ne(0) == 2 && token_info->ne(1) == q->ne(2))) fail("attention token_info must be i32[2, T]");
    const int64_t dv = limits.v_head_size > 0 ? limits.v_head_size : q->ne(0);
    if (!(v_pool->ne(0) >= dv * (k_pool->ne(0) / q->ne(0)) && (dv != q->ne(0) || v_pool->ne(0) == k_pool->ne(0))))
        fail("attention: V pool rows do not hold the V heads");
    Tensor *d = add_node(RF_OP_ATTENTION, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {dv * q->ne(1), q->ne(2)}),
                         {q, k_pool, v_pool, slot_table, token_info, limits.sinks}, label);
    rf_node &n = nodes_.back();
    n.fparams[0] = s;
    n.fparams[1] = limits.softcap;
    n.iparams[0] = (int32_t)limits.window;
    n.iparams[1] = (int32_t)single_rows;
    n.iparams[2] = limits.bidirectional ? 1 : 0;
    return d;
}

Tensor *Graph::argmax(Tensor *a, const char *label) {
    return add_node(RF_OP_ARGMAX, new_tensor(TensorKind::Intermediate, RF_TYPE_I32, {a->ne(1)}), {a}, label);
}

Tensor *Graph::copy(Tensor *a, int type, const char *label) {
    return add_node(RF_OP_COPY, new_tensor(TensorKind::Intermediate, type, {a->ne(0), a->ne(1), a->ne(2), a->ne(3)}), {a}, label);
}

Tensor *Graph::reshape(Tensor *a, std::initializer_list<int64_t> ne) {
    if (!(a->contiguous())) fail("reshape of a non-contiguous tensor");
    ++version_;
    tensors_.emplace_back();
    tensors_.back().graph_index = static_cast<int>(tensors_.size()) - 1;
    Tensor *t = &tensors_.back();
    t->kind = TensorKind::View;
    init_tensor_layout(t->t, a->type(), ne);
    if (!(t->n_elements() == a->n_elements())) fail("reshape changes the element count");
    t->view_src = a->kind == TensorKind::View ? a->view_src : a;
    t->view_offset = a->kind == TensorKind::View ? a->view_offset : 0;
    t->home = a->home;
    t->t.name = a->label(); // a's name outlives this view (a is graph-owned or persistent)
    return t;
}

Tensor *Graph::rows(Tensor *a, int64_t first, int64_t count) {
    if (!(a->contiguous() && first >= 0 && count > 0 && first + count <= a->ne(1) && a->ne(2) == 1 && a->ne(3) == 1)) fail("rows(): range outside the tensor");
    ++version_;
    tensors_.emplace_back();
    tensors_.back().graph_index = static_cast<int>(tensors_.size()) - 1;
    Tensor *t = &tensors_.back();
    t->kind = TensorKind::View;
    init_tensor_layout(t->t, a->type(), {a->ne(0), count});
    t->view_src = a->kind == TensorKind::View ? a->view_src : a;
    t->view_offset = (a->kind == TensorKind::View ? a->view_offset : 0) + static_cast<uint64_t>(first) * a->t.nb[1];
    t->home = a->home;
    t->t.name = a->label();
    return t;
}

} // namespace rf
