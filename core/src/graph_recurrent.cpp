// Graph builders of the recurrent ops (abi.h SSM_CONV, GATED_DELTA_NET, SOFTPLUS): Qwen3.5's
// Gated DeltaNet layers. Shapes are checked here, the state pools' rows by the backend.
#include <string>

#include "rocmforge/error.h"
#include "rocmforge/graph.h"

namespace rf {
namespace {

[[noreturn]] void fail(const char *label, const std::string &msg) { throw Error(std::string("graph: ") + label + ": " + msg); }

void check_state_inputs(const char *label, Tensor *state, Tensor *token_info, Tensor *rows, int64_t row, int64_t T) {
    if (state->type() != RF_TYPE_F32 || state->ne(0) != row) fail(label, "state pool must be f32 rows of " + std::to_string(row));
    if (token_info->type() != RF_TYPE_I32 || token_info->ne(0) != 2 || token_info->ne(1) != T) fail(label, "token info must be i32 [2, T]");
    if (rows->type() != RF_TYPE_I32 || rows->ne(1) != 1) fail(label, "state rows must be i32 [n_seq]");
}

} // namespace

Tensor *Graph::ssm_conv(Tensor *x, Tensor *kernel, Tensor *state, Tensor *token_info, Tensor *rows, const char *label) {
    const int64_t C = x->ne(0), T = x->ne(1), K = kernel->ne(0);
    if (x->type() != RF_TYPE_F32 || x->ne(2) != 1 || x->ne(3) != 1) fail(label, "input must be f32 [C, T]");
    if (kernel->ne(1) != C || K < 2) fail(label, "kernel must be [K >= 2, " + std::to_string(C) + "]");
    check_state_inputs(label, state, token_info, rows, (K - 1) * C, T);
    return add_node(RF_OP_SSM_CONV, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {C, T}), {x, kernel, state, token_info, rows},
                    label);
}

Tensor *Graph::gated_delta_net(Tensor *qkv, Tensor *g, Tensor *beta, Tensor *state, Tensor *token_info, Tensor *rows,
                               DeltaNetHeads h, float l2_eps, float q_scale, const char *label) {
    const int64_t T = qkv->ne(1);
    if (h.n_k_heads < 1 || h.n_v_heads % h.n_k_heads != 0) fail(label, "value heads must be a multiple of the key heads");
    if (qkv->type() != RF_TYPE_F32 || qkv->ne(0) != 2 * h.n_k_heads * h.k_dim + h.n_v_heads * h.v_dim)
        fail(label, "q, k, v rows must hold 2 Hk Sk + Hv Sv f32 elements");
    for (Tensor *t : {g, beta})
        if (t->type() != RF_TYPE_F32 || t->ne(0) != h.n_v_heads || t->ne(1) != T) fail(label, "decay and beta must be f32 [Hv, T]");
    check_state_inputs(label, state, token_info, rows, h.k_dim * h.v_dim * h.n_v_heads, T);
    Tensor *d = add_node(RF_OP_GATED_DELTA_NET, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {h.v_dim * h.n_v_heads, T}),
                         {qkv, g, beta, state, token_info, rows}, label);
    rf_node &n = nodes_.back();
    n.iparams[0] = (int32_t)h.n_k_heads;
    n.iparams[1] = (int32_t)h.k_dim;
    n.iparams[2] = (int32_t)h.n_v_heads;
    n.iparams[3] = (int32_t)h.v_dim;
    n.iparams[4] = h.interleaved ? 1 : 0;
    n.fparams[0] = l2_eps;
    n.fparams[1] = q_scale;
    return d;
}

Tensor *Graph::softplus(Tensor *a, const char *label) {
    return add_node(RF_OP_SOFTPLUS, new_tensor(TensorKind::Intermediate, RF_TYPE_F32, {a->ne(0), a->ne(1), a->ne(2), a->ne(3)}), {a}, label);
}

} // namespace rf
