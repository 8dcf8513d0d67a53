#include "cases.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <tuple>

#include "rocmforge/rope_angles.h"
#include "rocmforge/types.h"

namespace pack_check {
namespace {

rf_tensor *dense(Case &c, int type, std::initializer_list<int64_t> ne) {
    rf_tensor t{};
    t.type = type;
    int d = 0;
    for (int64_t n : ne) t.ne[d++] = n;
    for (; d < RF_MAX_DIMS; ++d) t.ne[d] = 1;
    t.nb[0] = type == RF_TYPE_F16 ? 2 : 4;
    for (d = 1; d < RF_MAX_DIMS; ++d) t.nb[d] = t.nb[d - 1] * t.ne[d - 1];
    c.tensors.push_back(t);
    return &c.tensors.back();
}
rf_tensor *f32(Case &c, std::initializer_list<int64_t> ne) { return dense(c, RF_TYPE_F32, ne); }
rf_tensor *input(Case &c, std::initializer_list<int64_t> ne) {
    rf_tensor *t = f32(c, ne);
    c.inputs.push_back(t);
    return t;
}
// Another tensor over `owner`'s bytes (same shape): a result written in place, as the executor
// recycles memory, or a view.
rf_tensor *in_place(Case &c, rf_tensor *owner) {
    c.tensors.push_back(*owner);
    size_t owner_index = 0;
    for (size_t i = 0; i < c.tensors.size(); ++i)
        if (&c.tensors[i] == owner) owner_index = i;
    c.aliases.emplace_back(c.tensors.size() - 1, owner_index);
    return &c.tensors.back();
}
void node(Case &c, rf_op op, rf_tensor *dst, std::initializer_list<rf_tensor *> src, float fparam0 = 0) {
    rf_node n{};
    n.op = op;
    n.dst = dst;
    int i = 0;
    for (rf_tensor *s : src) n.src[i++] = s;
    n.fparams[0] = fparam0;
    c.nodes.push_back(n);
}

Case mul_add(const std::string &name, std::initializer_list<int64_t> shape, std::initializer_list<int64_t> b_shape,
             std::initializer_list<int64_t> c_shape, bool result_in_place) {
    Case c{name};
    rf_tensor *a = input(c, shape), *b = input(c, b_shape), *cc = input(c, c_shape);
    rf_tensor *t = f32(c, shape);
    rf_tensor *d = result_in_place ? in_place(c, a) : f32(c, shape);
    node(c, RF_OP_MUL, t, {a, b});
    node(c, RF_OP_ADD, d, {t, cc});
    return c;
}

// SET_ROWS(K pool) SET_ROWS(V pool): T rows of E elements appended at `slots` of pools of `rows`
// rows (the K and V appends of T tokens; the in-tree packs' kv_append). shared_pool: both into one
// pool (must not be claimed: the appends would race).
Case kv_append(const std::string &name, int pool_type, int64_t E, std::vector<int32_t> slots, int64_t rows, bool shared_pool) {
    Case c{name};
    const int64_t T = (int64_t)slots.size();
    rf_tensor *k = input(c, {E, T}), *v = input(c, {E, T});
    rf_tensor *s = dense(c, RF_TYPE_I32, {T});
    c.int_inputs.push_back({s, slots});
    rf_tensor *kp = dense(c, pool_type, {E, rows});
    c.inputs.push_back(kp);
    rf_tensor *vp = shared_pool ? in_place(c, kp) : dense(c, pool_type, {E, rows});
    if (!shared_pool) c.inputs.push_back(vp);
    node(c, RF_OP_SET_ROWS, kp, {k, s});
    node(c, RF_OP_SET_ROWS, vp, {v, s});
    return c;
}

// A weight matrix of `type`, N rows of K elements (quantized rows: random values quantized).
rf_tensor *weight(Case &c, int type, int64_t K, int64_t N) {
    rf_tensor *t = dense(c, type, {K, N});
    t->nb[1] = (int64_t)rf::row_size(type, K);
    t->nb[2] = t->nb[3] = t->nb[1] * N;
    c.inputs.push_back(t);
    return t;
}

// MATMUL(gate) MATMUL(up) SWIGLU over M activation rows of K (a feed-forward block's decode
// projections: the packs' gate_up_swiglu). other_vector: up reads another vector (not claimed).
Case gate_up(int gate_type, int up_type, int64_t K, int64_t N, int64_t M, bool other_vector, const std::string &note) {
    Case c{std::string("gate/up+swiglu ") + rf::type_name(gate_type) + (up_type != gate_type ? std::string("/") + rf::type_name(up_type) : "") +
           " [" + std::to_string(K) + "," + std::to_string(N) + "] x " + std::to_string(M) + " row(s)" + note};
    c.tolerance = 1e-4;
    rf_tensor *x = input(c, {K, M}), *x2 = other_vector ? input(c, {K, M}) : x;
    rf_tensor *wg = weight(c, gate_type, K, N), *wu = weight(c, up_type, K, N);
    rf_tensor *g = f32(c, {N, M}), *u = f32(c, {N, M}), *s = in_place(c, g); // the product over gate, as the executor places it
    node(c, RF_OP_MATMUL, g, {wg, x});
    node(c, RF_OP_MATMUL, u, {wu, x2});
    node(c, RF_OP_SWIGLU, s, {g, u});
    return c;
}

// The expert ids of M tokens choosing S of E experts: distinct per token, shifted per token.
rf_tensor *expert_ids(Case &c, int64_t E, int64_t S, int64_t M) {
    rf_tensor *ids = dense(c, RF_TYPE_I32, {S, M});
    std::vector<int32_t> v;
    for (int64_t m = 0; m < M; ++m)
        for (int64_t s = 0; s < S; ++s) v.push_back((int32_t)((s * 3 + m * 5) % E));
    c.int_inputs.push_back({ids, v});
    return ids;
}
// An expert stack: E matrices of N rows of K elements.
rf_tensor *experts(Case &c, int type, int64_t K, int64_t N, int64_t E) {
    rf_tensor *t = weight(c, type, K, N);
    t->ne[2] = E;
    t->nb[3] = t->nb[2] * E;
    return t;
}

// MATMUL_ID(gate) MATMUL_ID(up) SWIGLU of M decode tokens, each through S of E experts (the
// packs' moe_gate_up); the token's one activation row is read by every slot.
Case moe_gate_up(int type, int64_t K, int64_t N, int64_t E, int64_t S, int64_t M, const std::string &note) {
    Case c{std::string("moe gate/up+swiglu ") + rf::type_name(type) + " [" + std::to_string(K) + "," + std::to_string(N) + "] x " +
           std::to_string(E) + " experts, " + std::to_string(S) + " used, " + std::to_string(M) + " token(s)" + note};
    c.tolerance = 1e-4;
    rf_tensor *x = input(c, {K, 1, M}), *ids = expert_ids(c, E, S, M);
    rf_tensor *wg = experts(c, type, K, N, E), *wu = experts(c, type, K, N, E);
    rf_tensor *g = f32(c, {N, S, M}), *u = f32(c, {N, S, M}), *s = in_place(c, g);
    node(c, RF_OP_MATMUL_ID, g, {wg, x, ids});
    node(c, RF_OP_MATMUL_ID, u, {wu, x, ids});
    node(c, RF_OP_SWIGLU, s, {g, u});
    return c;
}

// MATMUL_ID(down) MOE_SUM: each slot's row through its expert, then the routing-weighted sum
// (the packs' moe_down_sum).
Case moe_down_sum(int type, int64_t K, int64_t N, int64_t E, int64_t S, int64_t M, const std::string &note) {
    Case c{std::string("moe down+sum ") + rf::type_name(type) + " [" + std::to_string(K) + "," + std::to_string(N) + "] x " +
           std::to_string(E) + " experts, " + std::to_string(S) + " used, " + std::to_string(M) + " token(s)" + note};
    c.tolerance = 1e-4;
    rf_tensor *x = input(c, {K, S, M}), *ids = expert_ids(c, E, S, M), *w = input(c, {S, M});
    rf_tensor *wd = experts(c, type, K, N, E);
    rf_tensor *d = f32(c, {N, S, M}), *out = f32(c, {N, M});
    node(c, RF_OP_MATMUL_ID, d, {wd, x, ids});
    node(c, RF_OP_MOE_SUM, out, {d, w});
    return c;
}

// Frequency factors of D / 2 rotation pairs (positive, as Llama 3's), an input of the case.
rf_tensor *rope_factors(Case &c, int64_t D) {
    rf_tensor *ff = f32(c, {D / 2});
    std::vector<int32_t> bits;
    for (int64_t i = 0; i < D / 2; ++i) {
        const float v = 1.0f + 0.25f * (float)(i % 5);
        int32_t b;
        std::memcpy(&b, &v, 4);
        bits.push_back(b);
    }
    c.int_inputs.push_back({ff, bits});
    return ff;
}
// The rope's [D, H, M] view of a dense [D * H, M] product.
rf_tensor *head_view(Case &c, rf_tensor *prod, int64_t D, int64_t H, int64_t M) {
    rf_tensor *v = in_place(c, prod);
    v->ne[0] = D, v->ne[1] = H, v->ne[2] = M, v->ne[3] = 1;
    v->nb[1] = 4 * D, v->nb[2] = 4 * D * H, v->nb[3] = 4 * D * H * M;
    return v;
}
// The values an int input of the case was given (positions, the factors' bits).
const std::vector<int32_t> &int_input(const Case &c, const rf_tensor *t) {
    for (const auto &[tensor, values] : c.int_inputs)
        if (tensor == t) return values;
    throw std::logic_error("pack-check case: no values for an input");
}
// The (cos, sin) rows (rope_angles.h) of positions p with factors ff (or none) for D rotated
// dims, base 10000: an input of the case.
rf_tensor *rope_angles(Case &c, const rf_tensor *p, const rf_tensor *ff, int64_t D) {
    const std::vector<int32_t> &pos = int_input(c, p);
    std::vector<float> factors;
    if (ff)
        for (int32_t b : int_input(c, ff)) factors.push_back(std::bit_cast<float>(b));
    std::vector<float> rows;
    rf::RopeAngleCache(rf::RopeParams{(int)D, 10000.f, 1.f, ff ? factors.data() : nullptr}, 0).gather(pos.data(), (int64_t)pos.size(), rows);
    rf_tensor *a = f32(c, {2, D / 2, (int64_t)pos.size()});
    std::vector<int32_t> bits;
    for (float v : rows) bits.push_back(std::bit_cast<int32_t>(v));
    c.int_inputs.push_back({a, bits});
    return a;
}
// ROPE(mode) of x at positions p with factors ff (or none) into dst, all D elements rotated.
// Every other case's ropes also get the tokens' (cos, sin) rows (src3, as decode graphs give
// them: the launches read them in place of the positions); a case's ropes of the same positions
// share them, as a layer's K and Q ropes do.
void rope_node(Case &c, rf_tensor *dst, rf_tensor *x, rf_tensor *p, rf_tensor *ff, int mode, int64_t D) {
    static int cases_with_ropes = 0;
    rf_node r{};
    r.op = RF_OP_ROPE;
    r.dst = dst;
    r.src[0] = x, r.src[1] = p, r.src[2] = ff;
    const auto earlier = std::find_if(c.nodes.begin(), c.nodes.end(), [&](const rf_node &n) { return n.op == RF_OP_ROPE && n.src[1] == p; });
    if (earlier != c.nodes.end()) {
        r.src[3] = earlier->src[3];
    } else if (cases_with_ropes++ % 2) {
        r.src[3] = rope_angles(c, p, ff, D);
        c.name += ", angle rows";
    }
    r.iparams[0] = mode;
    r.iparams[1] = (int32_t)D;
    r.fparams[0] = 10000.f, r.fparams[1] = 1.f;
    c.nodes.push_back(r);
}

// MATMUL ROPE(mode) over the product: M tokens of H heads of D (a layer's K or Q projection),
// positions `pos0 + m`, frequency factors optional; in_place: the rotation over the product.
Case matmul_rope(int type, int64_t K, int64_t D, int64_t H, int64_t M, int mode, bool factors, bool in_place_rot, const std::string &note) {
    Case c{std::string("matmul+rope ") + rf::type_name(type) + " [" + std::to_string(K) + "," + std::to_string(D * H) + "] x " +
           std::to_string(M) + " token(s)" + (factors ? ", frequency factors" : "") + (in_place_rot ? ", rotated in place" : "") + note};
    c.tolerance = 1e-4;
    const int64_t N = D * H;
    rf_tensor *x = input(c, {K, M}), *w = weight(c, type, K, N);
    rf_tensor *p = dense(c, RF_TYPE_I32, {M});
    std::vector<int32_t> positions;
    for (int64_t m = 0; m < M; ++m) positions.push_back((int32_t)(7 + 13 * m));
    c.int_inputs.push_back({p, positions});
    rf_tensor *ff = factors ? rope_factors(c, D) : nullptr;
    rf_tensor *prod = f32(c, {N, M});
    rf_tensor *view = head_view(c, prod, D, H, M);
    rf_tensor *rot = in_place_rot ? in_place(c, view) : f32(c, {D, H, M});
    node(c, RF_OP_MATMUL, prod, {w, x});
    rope_node(c, rot, view, p, ff, mode, D);
    return c;
}

// A layer's decode projections of one token: MATMUL(K) ROPE MATMUL(V) [MATMUL(Q) ROPE], then the
// K and V appends ([append_k] [append_v]) into pools of `pool_type` (the packs' projections): H
// KV heads and 2H query heads of D, the Q rotation written over its product (a product a later
// output reuses: not written by the launch).
// v_type: V's weight type (-1: `type`; a Q4_K_M layer's V is often Q6_K).
Case projections(int type, int64_t K, int64_t D, int64_t H, bool with_q, bool append_k, bool append_v, int pool_type, bool factors,
                 int v_type = -1) {
    if (v_type < 0) v_type = type;
    Case c{std::string("projections ") + rf::type_name(type) + (v_type != type ? std::string(", V ") + rf::type_name(v_type) : "") + " K=" + std::to_string(K) + ", " + std::to_string(H) + " KV heads of " +
           std::to_string(D) + (with_q ? ", Q" : "") + (append_k || append_v ? std::string(", appends into ") + rf::type_name(pool_type) + " pools" : "") +
           (factors ? ", frequency factors" : "")};
    c.tolerance = 1e-4;
    const int64_t Nk = D * H, Nq = 2 * Nk, rows = 6;
    rf_tensor *x = input(c, {K, 1});
    rf_tensor *wk = weight(c, type, K, Nk), *wv = weight(c, v_type, K, Nk), *wq = with_q ? weight(c, type, K, Nq) : nullptr;
    rf_tensor *p = dense(c, RF_TYPE_I32, {1});
    c.int_inputs.push_back({p, {9}});
    rf_tensor *ff = factors ? rope_factors(c, D) : nullptr;
    rf_tensor *kp = f32(c, {Nk, 1}), *kr = f32(c, {D, H, 1}), *vp = f32(c, {Nk, 1});
    node(c, RF_OP_MATMUL, kp, {wk, x});
    rope_node(c, kr, head_view(c, kp, D, H, 1), p, ff, RF_ROPE_NORMAL, D);
    node(c, RF_OP_MATMUL, vp, {wv, x});
    if (with_q) {
        rf_tensor *qp = f32(c, {Nq, 1});
        node(c, RF_OP_MATMUL, qp, {wq, x});
        rf_tensor *qv = head_view(c, qp, D, 2 * H, 1);
        rope_node(c, in_place(c, qv), qv, p, ff, RF_ROPE_NORMAL, D);
    }
    rf_tensor *slots = dense(c, RF_TYPE_I32, {1});
    c.int_inputs.push_back({slots, {4}});
    if (append_k) {
        rf_tensor *pool = dense(c, pool_type, {Nk, rows});
        c.inputs.push_back(pool);
        rf_tensor *row = in_place(c, kr); // the rotated K as one row of Nk
        row->ne[0] = Nk, row->ne[1] = row->ne[2] = 1;
        row->nb[1] = row->nb[2] = row->nb[3] = 4 * Nk;
        node(c, RF_OP_SET_ROWS, pool, {row, slots});
    }
    if (append_v) {
        rf_tensor *pool = dense(c, pool_type, {Nk, rows});
        c.inputs.push_back(pool);
        node(c, RF_OP_SET_ROWS, pool, {vp, slots});
    }
    return c;
}

// A layer with Q / K head norms, one token, in the graph's order for them: K, V, Q products and
// V's append (projections: three unrotated segments), then the ropes of K and Q (NeoX) and K's
// append (rope_pair). The norms themselves are left out: the two fusions meet as in the graph.
Case normed_projections(int type, int v_type, int64_t K, int64_t D, int64_t Hk, int64_t Hq, int pool_type) {
    Case c{std::string("head-norm layer projections ") + rf::type_name(type) + ", V " + rf::type_name(v_type) + " K=" +
           std::to_string(K) + ", " + std::to_string(Hk) + " KV heads of " + std::to_string(D) + ", appends into " +
           rf::type_name(pool_type) + " pools"};
    c.tolerance = 1e-4;
    const int64_t Nk = D * Hk, Nq = D * Hq, rows = 6;
    rf_tensor *x = input(c, {K, 1});
    rf_tensor *wk = weight(c, type, K, Nk), *wv = weight(c, v_type, K, Nk), *wq = weight(c, type, K, Nq);
    rf_tensor *p = dense(c, RF_TYPE_I32, {1});
    c.int_inputs.push_back({p, {9}});
    rf_tensor *slots = dense(c, RF_TYPE_I32, {1});
    c.int_inputs.push_back({slots, {4}});
    rf_tensor *kp = f32(c, {Nk, 1}), *vp = f32(c, {Nk, 1}), *qp = f32(c, {Nq, 1});
    node(c, RF_OP_MATMUL, kp, {wk, x});
    node(c, RF_OP_MATMUL, vp, {wv, x});
    node(c, RF_OP_MATMUL, qp, {wq, x});
    rf_tensor *vpool = dense(c, pool_type, {Nk, rows}), *kpool = dense(c, pool_type, {Nk, rows});
    c.inputs.push_back(vpool);
    c.inputs.push_back(kpool);
    node(c, RF_OP_SET_ROWS, vpool, {vp, slots});
    rf_tensor *kr = f32(c, {D, Hk, 1}), *qr = f32(c, {D, Hq, 1});
    rope_node(c, kr, head_view(c, kp, D, Hk, 1), p, nullptr, RF_ROPE_NEOX, D);
    rope_node(c, qr, head_view(c, qp, D, Hq, 1), p, nullptr, RF_ROPE_NEOX, D);
    rf_tensor *row = in_place(c, kr); // the rotated K as one row of Nk
    row->ne[0] = Nk, row->ne[1] = row->ne[2] = 1;
    row->nb[1] = row->nb[2] = row->nb[3] = 4 * Nk;
    node(c, RF_OP_SET_ROWS, kpool, {row, slots});
    return c;
}

// A layer's head norms, ropes and K append as the graph orders them (the packs' head_norm_rope):
// RMS_NORM(K) MUL RMS_NORM(Q) MUL ROPE(K) ROPE(Q) [SET_ROWS(K pool)] of M tokens (NeoX pairs).
// on_inputs: each product over its norm and each rotation over its product, as the executor may
// place them. other_eps: the Q norm's eps differs from K's (one launch has one eps: declined, the
// other fusions take the norms and the ropes).
Case head_norm_rope(int64_t D, int64_t Hk, int64_t Hq, int64_t M, bool on_inputs, int pool_type, bool other_eps) {
    Case c{"head norms+ropes D=" + std::to_string(D) + ", " + std::to_string(Hk) + " KV heads, " + std::to_string(Hq) + " Q heads, " +
           std::to_string(M) + " token(s)" + (on_inputs ? ", in place" : "") +
           (pool_type >= 0 ? std::string(", K append into ") + rf::type_name(pool_type) : "") + (other_eps ? " (two eps: the norms and ropes apart)" : "")};
    c.tolerance = 1e-5;
    rf_tensor *p = dense(c, RF_TYPE_I32, {M});
    std::vector<int32_t> positions;
    for (int64_t m = 0; m < M; ++m) positions.push_back((int32_t)(11 + 7 * m));
    c.int_inputs.push_back({p, positions});
    rf_tensor *heads[2] = {nullptr, nullptr};
    for (int q = 0; q < 2; ++q) {
        const int64_t H = q ? Hq : Hk;
        rf_tensor *x = input(c, {D, H, M}), *w = input(c, {D});
        rf_tensor *n = f32(c, {D, H, M}), *y = on_inputs ? in_place(c, n) : f32(c, {D, H, M});
        node(c, RF_OP_RMS_NORM, n, {x}, q && other_eps ? 1e-5f : 1e-6f);
        node(c, RF_OP_MUL, y, {n, w});
        heads[q] = y;
    }
    rf_tensor *kr = on_inputs ? in_place(c, heads[0]) : f32(c, {D, Hk, M});
    rf_tensor *qr = on_inputs ? in_place(c, heads[1]) : f32(c, {D, Hq, M});
    rope_node(c, kr, heads[0], p, nullptr, RF_ROPE_NEOX, D);
    rope_node(c, qr, heads[1], p, nullptr, RF_ROPE_NEOX, D);
    if (pool_type >= 0) {
        const int64_t Nk = D * Hk, rows = M + 4;
        rf_tensor *slots = dense(c, RF_TYPE_I32, {M});
        std::vector<int32_t> v;
        for (int64_t m = 0; m < M; ++m) v.push_back((int32_t)(rows - 1 - m));
        c.int_inputs.push_back({slots, v});
        rf_tensor *pool = dense(c, pool_type, {Nk, rows});
        c.inputs.push_back(pool);
        rf_tensor *row = in_place(c, kr); // the rotated K as rows of Nk
        row->ne[0] = Nk, row->ne[1] = M, row->ne[2] = 1;
        row->nb[1] = 4 * Nk;
        row->nb[2] = row->nb[3] = 4 * Nk * M;
        node(c, RF_OP_SET_ROWS, pool, {row, slots});
    }
    return c;
}

// A mixture of experts' routing: TOPK(logits) then MOE_WEIGHTS(logits, ids) (moe_route).
Case moe_route(int64_t E, int64_t k, int64_t M, int over_chosen) {
    Case c{"moe route E=" + std::to_string(E) + " k=" + std::to_string(k) + " M=" + std::to_string(M) +
           (over_chosen ? ", softmax over the chosen" : ", softmax over all")};
    c.tolerance = 1e-5; // the host's expf against the CPU backend's
    rf_tensor *x = input(c, {E, M});
    rf_tensor *ids = dense(c, RF_TYPE_I32, {k, M}), *w = f32(c, {k, M});
    node(c, RF_OP_TOPK, ids, {x});
    node(c, RF_OP_MOE_WEIGHTS, w, {x, ids});
    c.nodes.back().iparams[0] = over_chosen;
    return c;
}

// Slots of M tokens in a pool of M + 4 rows: in reverse order, off the first rows.
std::vector<int32_t> reverse_slots(int64_t M) {
    std::vector<int32_t> v;
    for (int64_t m = 0; m < M; ++m) v.push_back((int32_t)(M + 1 - m));
    return v;
}

// A layer's projections of M tokens on the tensor-core tiles (the packs' mmq_run, ABI 2.7), as the
// model builds them: MATMUL(K) ROPE MATMUL(V) [MATMUL(Q) ROPE], then [SET_ROWS K] [SET_ROWS V] into
// pools of `pool_type` (slots in reverse order); H KV heads and 2H query heads of D, the Q
// rotation written over its product. v_type: V's weight type (a Q4_K_M layer's V is often Q6_K:
// a launch of its own). dead_product: V's product placed on K's product bytes, as the executor
// does after K's last reader (its rope), so a run that multiplies first must park K's product
// elsewhere (the lent scratch).
Case mmq_projections(int type, int v_type, int64_t K, int64_t D, int64_t H, int64_t M, bool with_q, bool factors, bool appends, int pool_type,
                     bool dead_product) {
    std::string name = std::string(M >= 5 ? "tile projections " : "column projections ") + rf::type_name(type);
    if (v_type != type) name += std::string(", V ") + rf::type_name(v_type);
    name += " K=" + std::to_string(K) + ", " + std::to_string(H) + " KV heads of " + std::to_string(D);
    if (with_q) name += ", Q";
    name += " x " + std::to_string(M) + " tokens";
    if (factors) name += ", frequency factors";
    if (appends) name += std::string(", appends into ") + rf::type_name(pool_type) + " pools";
    if (dead_product) name += ", V's product on K's";
    Case c{name};
    c.tolerance = 1e-4;
    const int64_t Nk = D * H, Nq = 2 * Nk, rows = M + 4;
    rf_tensor *x = input(c, {K, M});
    rf_tensor *wk = weight(c, type, K, Nk), *wv = weight(c, v_type, K, Nk), *wq = with_q ? weight(c, type, K, Nq) : nullptr;
    rf_tensor *p = dense(c, RF_TYPE_I32, {M});
    std::vector<int32_t> positions;
    for (int64_t m = 0; m < M; ++m) positions.push_back((int32_t)(3 + 11 * m));
    c.int_inputs.push_back({p, positions});
    rf_tensor *ff = factors ? rope_factors(c, D) : nullptr;
    rf_tensor *kp = f32(c, {Nk, M}), *kr = f32(c, {D, H, M});
    rf_tensor *vp = dead_product ? in_place(c, kp) : f32(c, {Nk, M});
    node(c, RF_OP_MATMUL, kp, {wk, x});
    rope_node(c, kr, head_view(c, kp, D, H, M), p, ff, RF_ROPE_NORMAL, D);
    node(c, RF_OP_MATMUL, vp, {wv, x});
    if (with_q) {
        rf_tensor *qp = f32(c, {Nq, M});
        node(c, RF_OP_MATMUL, qp, {wq, x});
        rf_tensor *qv = head_view(c, qp, D, 2 * H, M);
        rope_node(c, in_place(c, qv), qv, p, ff, RF_ROPE_NORMAL, D);
    }
    if (appends) {
        rf_tensor *slots = dense(c, RF_TYPE_I32, {M});
        c.int_inputs.push_back({slots, reverse_slots(M)});
        rf_tensor *kpool = dense(c, pool_type, {Nk, rows}), *vpool = dense(c, pool_type, {Nk, rows});
        c.inputs.push_back(kpool);
        c.inputs.push_back(vpool);
        rf_tensor *krows = in_place(c, kr); // the rotated K as M rows of Nk
        krows->ne[0] = Nk, krows->ne[1] = M, krows->ne[2] = 1;
        krows->nb[1] = 4 * Nk, krows->nb[2] = krows->nb[3] = 4 * Nk * M;
        node(c, RF_OP_SET_ROWS, kpool, {krows, slots});
        node(c, RF_OP_SET_ROWS, vpool, {vp, slots});
    }
    return c;
}

} // namespace

std::deque<Case> make_cases() {
    std::deque<Case> cases;
    cases.push_back(mul_add("mul+add [64,3] * [64,1] + [64,3]", {64, 3}, {64, 1}, {64, 3}, false));
    cases.push_back(mul_add("mul+add [4096] * [4096] + [1]", {4096}, {4096}, {1}, false));
    cases.push_back(mul_add("mul+add [128,2,3], sum written over a", {128, 2, 3}, {128, 1, 3}, {128, 2, 1}, true));
    {
        Case c{"mul+add [32,4], the add reading the product through a view"};
        rf_tensor *a = input(c, {32, 4}), *b = input(c, {32, 4}), *cc = input(c, {32, 1});
        rf_tensor *t = f32(c, {32, 4}), *d = f32(c, {32, 4});
        rf_tensor *tv = in_place(c, t); // another rf_tensor over t's bytes
        node(c, RF_OP_MUL, t, {a, b});
        node(c, RF_OP_ADD, d, {tv, cc});
        cases.push_back(std::move(c));
    }
    {
        Case c{"rms_norm+mul [256,2] (attention norm)"};
        rf_tensor *x = input(c, {256, 2}), *w = input(c, {256});
        rf_tensor *n = f32(c, {256, 2}), *y = f32(c, {256, 2});
        node(c, RF_OP_RMS_NORM, n, {x}, 1e-5f);
        node(c, RF_OP_MUL, y, {n, w});
        cases.push_back(std::move(c));
    }
    {
        Case c{"rms_norm+mul [128,8] (attention heads' Q norm, one block)"};
        rf_tensor *x = input(c, {128, 8}), *w = input(c, {128});
        rf_tensor *n = f32(c, {128, 8}), *y = f32(c, {128, 8});
        node(c, RF_OP_RMS_NORM, n, {x}, 1e-6f);
        node(c, RF_OP_MUL, y, {n, w});
        cases.push_back(std::move(c));
    }
    {
        Case c{"add+rms_norm+mul [512] (residual, ffn norm)"};
        rf_tensor *x = input(c, {512}), *r = input(c, {512}), *w = input(c, {512});
        rf_tensor *s = f32(c, {512}), *n = f32(c, {512}), *y = f32(c, {512});
        node(c, RF_OP_ADD, s, {x, r});
        node(c, RF_OP_RMS_NORM, n, {s}, 1e-6f);
        node(c, RF_OP_MUL, y, {n, w});
        cases.push_back(std::move(c));
    }
    {
        Case c{"mul+scale [300] (not mul+add)"};
        rf_tensor *a = input(c, {300}), *b = input(c, {300});
        rf_tensor *t = f32(c, {300}), *u = f32(c, {300});
        node(c, RF_OP_MUL, t, {a, b});
        node(c, RF_OP_SCALE, u, {t}, 0.5f);
        cases.push_back(std::move(c));
    }
    {
        Case c{"mul, then an add of other tensors [96]"};
        rf_tensor *a = input(c, {96}), *b = input(c, {96}), *e = input(c, {96}), *f = input(c, {96});
        rf_tensor *t = f32(c, {96}), *d = f32(c, {96});
        node(c, RF_OP_MUL, t, {a, b});
        node(c, RF_OP_ADD, d, {e, f});
        cases.push_back(std::move(c));
    }
    {
        Case c{"silu, swiglu [200,2]"};
        rf_tensor *g = input(c, {200, 2}), *u = input(c, {200, 2});
        rf_tensor *s = f32(c, {200, 2}), *y = f32(c, {200, 2});
        node(c, RF_OP_SILU, s, {g});
        node(c, RF_OP_SWIGLU, y, {g, u});
        cases.push_back(std::move(c));
    }
    // The packs' fused norm with the q8_1 columns of its product lent (ABI 2.4): one row with one
    // piece per thread, several rows with two, a long row with four.
    for (auto [K, rows, block, add] : {std::tuple<int64_t, int64_t, int, bool>{4096, 1, 256, true}, {512, 3, 32, false},
                                       {16384, 2, 256, false}, {1024, 1, 0, true}}) {
        Case c{(add ? "add+" : "") + std::string("rms_norm+mul [") + std::to_string(K) + "," + std::to_string(rows) + "], q8_1 " +
               (block ? "blocks of " + std::to_string(block) : std::string("not lent"))};
        c.q8_block = block;
        rf_tensor *x = input(c, {K, rows}), *w = input(c, {K});
        rf_tensor *r = add ? input(c, {K, rows}) : nullptr, *s = add ? f32(c, {K, rows}) : nullptr;
        rf_tensor *n = f32(c, {K, rows}), *y = f32(c, {K, rows});
        if (add) node(c, RF_OP_ADD, s, {x, r});
        node(c, RF_OP_RMS_NORM, n, {add ? s : x}, 1e-5f);
        node(c, RF_OP_MUL, y, {n, w});
        cases.push_back(std::move(c));
    }
    // SWIGLU before a matmul (batched decode's feed-forward block): the packs' swiglu_q8.
    for (auto [K, rows, block] : {std::tuple<int64_t, int64_t, int>{256, 9, 256}, {512, 20, 32}, {100, 2, 32}}) {
        Case c{"swiglu [" + std::to_string(K) + "," + std::to_string(rows) + "] then matmul, q8_1 blocks of " + std::to_string(block) +
               (K % 32 ? " (K % 32 != 0: not claimed)" : "")};
        c.q8_block = block;
        rf_tensor *g = input(c, {K, rows}), *u = input(c, {K, rows}), *w = input(c, {K, 8});
        rf_tensor *s = f32(c, {K, rows}), *y = f32(c, {8, rows});
        node(c, RF_OP_SWIGLU, s, {g, u});
        node(c, RF_OP_MATMUL, y, {w, s});
        cases.push_back(std::move(c));
    }
    // Gate/up + SwiGLU (ABI 2.6: the matmul input lent as q8_1 columns or f32 rows, the kernel
    // named per claim): one row, 2..4 rows (the column kernels; from 5 the backend takes the
    // tiles, where mmq_run joins the two matmuls and the SwiGLU stays a launch of its own), F16,
    // mixed types; not claimed for two vectors.
    cases.push_back(gate_up(RF_TYPE_Q4_K, RF_TYPE_Q4_K, 512, 24, 1, false, ""));
    cases.push_back(gate_up(RF_TYPE_Q5_K, RF_TYPE_Q5_K, 256, 12, 2, false, ""));
    cases.push_back(gate_up(RF_TYPE_Q6_K, RF_TYPE_Q6_K, 256, 20, 3, false, ""));
    cases.push_back(gate_up(RF_TYPE_Q4_0, RF_TYPE_Q4_0, 96, 8, 4, false, ""));
    cases.push_back(gate_up(RF_TYPE_Q8_0, RF_TYPE_Q8_0, 64, 16, 16, false, " (the tiles: gate and up joined)"));
    cases.push_back(gate_up(RF_TYPE_F16, RF_TYPE_F16, 128, 12, 1, false, ""));
    cases.push_back(gate_up(RF_TYPE_Q4_K, RF_TYPE_Q6_K, 256, 8, 1, false, " (mixed types: rf_mvq_multi)"));
    cases.push_back(gate_up(RF_TYPE_Q4_K, RF_TYPE_Q4_K, 256, 8, 11, false, " (the tiles: gate and up joined)"));
    cases.push_back(gate_up(RF_TYPE_Q4_0, RF_TYPE_Q4_0, 64, 8, 1, true, " (not claimed: two vectors)"));
    // The grid i-quants and TQ2_0 (NVIDIA column kernels; the AMD packs claim none of them): one
    // row and 2..3 rows.
    cases.push_back(gate_up(RF_TYPE_IQ2_XXS, RF_TYPE_IQ2_XXS, 256, 16, 1, false, ""));
    cases.push_back(gate_up(RF_TYPE_IQ3_XXS, RF_TYPE_IQ3_XXS, 512, 12, 2, false, ""));
    cases.push_back(gate_up(RF_TYPE_IQ1_M, RF_TYPE_IQ1_M, 256, 8, 3, false, ""));
    cases.push_back(gate_up(RF_TYPE_TQ2_0, RF_TYPE_TQ2_0, 256, 8, 1, false, ""));
    // Matmul + rope (ABI 2.6, as gate/up): one token (rf_mvq_multi), 2..4 tokens (the column
    // kernels), F16, Llama 3's frequency factors, the rotation over the product; NeoX pairs are
    // not claimed, nor 11 tokens (the tiles, one matmul: nothing for mmq_run to join).
    cases.push_back(matmul_rope(RF_TYPE_Q4_K, 256, 64, 2, 1, RF_ROPE_NORMAL, false, false, ""));
    cases.push_back(matmul_rope(RF_TYPE_Q6_K, 256, 32, 3, 3, RF_ROPE_NORMAL, true, false, ""));
    cases.push_back(matmul_rope(RF_TYPE_Q4_0, 64, 16, 4, 4, RF_ROPE_NORMAL, false, true, ""));
    cases.push_back(matmul_rope(RF_TYPE_F16, 128, 32, 2, 1, RF_ROPE_NORMAL, true, true, ""));
    cases.push_back(matmul_rope(RF_TYPE_Q8_0, 64, 32, 2, 2, RF_ROPE_NEOX, false, false, " (NeoX pairs: not claimed)"));
    cases.push_back(matmul_rope(RF_TYPE_Q5_K, 256, 32, 2, 11, RF_ROPE_NORMAL, false, false, " (not claimed: 11 tokens, one matmul on the tiles)"));
    cases.push_back(matmul_rope(RF_TYPE_IQ3_S, 256, 32, 2, 1, RF_ROPE_NORMAL, false, false, ""));
    cases.push_back(matmul_rope(RF_TYPE_IQ2_XS, 256, 32, 2, 2, RF_ROPE_NORMAL, false, false, ""));
    // A layer's projections of one token (ABI 2.6: outputs, pools and slots by address): K, V, Q
    // with both appends into f16 pools; F16 weights into f32 pools; K and V with the K append only.
    cases.push_back(projections(RF_TYPE_Q4_K, 256, 64, 2, true, true, true, RF_TYPE_F16, true));
    cases.push_back(projections(RF_TYPE_F16, 64, 32, 2, true, true, true, RF_TYPE_F32, false));
    cases.push_back(projections(RF_TYPE_Q8_0, 96, 32, 1, false, true, false, RF_TYPE_F16, false));
    cases.push_back(projections(RF_TYPE_Q4_K, 256, 64, 2, true, true, true, RF_TYPE_F16, false, RF_TYPE_Q6_K));
    cases.push_back(projections(RF_TYPE_IQ2_S, 256, 64, 2, true, true, true, RF_TYPE_F16, false, RF_TYPE_IQ1_S));
    cases.push_back(moe_route(128, 8, 1, 1));
    cases.push_back(moe_route(60, 40, 3, 0));
    // A mixture of experts' decode feed-forward block (moe_gate_up, moe_down_sum): 8 of 32 experts
    // for 1..4 tokens, one of 4, 4 of 16; not claimed past 64 columns (the tiles take them); the
    // down+sum from 1 to 3 slots only.
    cases.push_back(moe_gate_up(RF_TYPE_Q4_K, 512, 24, 32, 8, 1, ""));
    cases.push_back(moe_gate_up(RF_TYPE_Q6_K, 256, 12, 16, 4, 2, ""));
    cases.push_back(moe_gate_up(RF_TYPE_Q8_0, 96, 8, 4, 1, 3, ""));
    cases.push_back(moe_gate_up(RF_TYPE_Q4_K, 256, 8, 128, 8, 9, " (not claimed: 72 columns)"));
    cases.push_back(moe_gate_up(RF_TYPE_Q4_K, 256, 8, 64, 8, 5, " (40 columns)"));
    cases.push_back(moe_down_sum(RF_TYPE_Q5_K, 256, 20, 32, 8, 1, " (not claimed: 8 slots)"));
    cases.push_back(moe_down_sum(RF_TYPE_Q4_0, 64, 12, 16, 2, 2, ""));
    cases.push_back(moe_down_sum(RF_TYPE_Q8_0, 96, 12, 8, 3, 2, ""));
    cases.push_back(moe_down_sum(RF_TYPE_Q4_K, 256, 8, 4, 1, 4, ""));
    // Qwen 3 / Gemma 3 order (head norms between the products and the ropes): two launches.
    cases.push_back(normed_projections(RF_TYPE_Q4_K, RF_TYPE_Q6_K, 256, 64, 2, 4, RF_TYPE_F16));
    cases.push_back(normed_projections(RF_TYPE_Q5_0, RF_TYPE_Q8_0, 128, 128, 1, 4, RF_TYPE_F32));
    // The same layers' head norms with their ropes: one launch (Qwen 3: 128 x 4 + 32 heads; Gemma
    // 3 1B: 256 x 1 + 4; two blocks of tokens; more rows than a block's warps).
    cases.push_back(head_norm_rope(128, 4, 32, 1, false, RF_TYPE_F16, false));
    cases.push_back(head_norm_rope(256, 1, 4, 1, true, RF_TYPE_F32, false));
    cases.push_back(head_norm_rope(64, 2, 36, 3, true, -1, false));
    cases.push_back(head_norm_rope(128, 2, 4, 2, false, RF_TYPE_F16, true));
    // A layer's projections of 5..64 tokens on the tensor-core tiles (ABI 2.7: one rf_mmq launch per
    // tile kernel, then the rotations, two in one; the appends from the rope and V's matmul): all
    // Q4_K (one launch for K, V and Q) or a Q6_K V (a launch of its own), f16 and f32 pools, one
    // and two column chunks, a K split over a cluster (K = 1024), V's product on K's (K's product
    // goes to the scratch lent to the claim).
    cases.push_back(mmq_projections(RF_TYPE_Q4_K, RF_TYPE_Q4_K, 256, 64, 2, 5, true, false, true, RF_TYPE_F16, false));
    cases.push_back(mmq_projections(RF_TYPE_Q4_K, RF_TYPE_Q6_K, 512, 128, 1, 8, true, true, true, RF_TYPE_F32, false));
    cases.push_back(mmq_projections(RF_TYPE_Q4_K, RF_TYPE_Q4_K, 512, 64, 2, 12, true, true, true, RF_TYPE_F16, true));
    cases.push_back(mmq_projections(RF_TYPE_Q4_K, RF_TYPE_Q6_K, 256, 64, 2, 16, true, false, true, RF_TYPE_F16, true));
    cases.push_back(mmq_projections(RF_TYPE_Q4_K, RF_TYPE_Q4_K, 256, 128, 1, 33, true, true, true, RF_TYPE_F32, true));
    cases.push_back(mmq_projections(RF_TYPE_Q4_K, RF_TYPE_Q6_K, 512, 64, 2, 33, true, false, false, RF_TYPE_F16, false));
    cases.push_back(mmq_projections(RF_TYPE_Q4_K, RF_TYPE_Q6_K, 1024, 64, 1, 12, true, true, true, RF_TYPE_F16, false));
    cases.push_back(mmq_projections(RF_TYPE_Q4_K, RF_TYPE_Q4_K, 256, 64, 2, 8, false, false, true, RF_TYPE_F32, true));
    // 2..4 tokens on the column kernels with the appends (cols_run): one launch per matrix, in order.
    cases.push_back(mmq_projections(RF_TYPE_Q4_K, RF_TYPE_Q6_K, 512, 64, 2, 2, true, true, true, RF_TYPE_F16, false));
    cases.push_back(mmq_projections(RF_TYPE_Q4_K, RF_TYPE_Q4_K, 256, 128, 1, 3, true, false, true, RF_TYPE_F32, true));
    cases.push_back(mmq_projections(RF_TYPE_Q4_0, RF_TYPE_Q4_0, 256, 64, 2, 4, true, false, true, RF_TYPE_F16, false));
    cases.push_back(mmq_projections(RF_TYPE_Q4_K, RF_TYPE_Q4_K, 256, 64, 2, 2, false, false, true, RF_TYPE_F16, true));
    cases.push_back(mmq_projections(RF_TYPE_Q4_K, RF_TYPE_Q6_K, 256, 64, 2, 3, true, false, false, RF_TYPE_F16, false));
    // Gate and up of 8 / 16 tokens joined on the tiles (no rope; the SwiGLU its own launch), a Q4_0 pair.
    cases.push_back(gate_up(RF_TYPE_Q4_K, RF_TYPE_Q4_K, 256, 80, 8, false, " (the tiles: gate and up joined)"));
    cases.push_back(gate_up(RF_TYPE_Q4_K, RF_TYPE_Q4_K, 512, 144, 16, false, " (the tiles: gate and up joined)"));
    cases.push_back(gate_up(RF_TYPE_Q4_0, RF_TYPE_Q4_0, 256, 72, 12, false, " (the tiles: gate and up joined)"));
    cases.push_back(kv_append("kv append f16 pools, 3 tokens", RF_TYPE_F16, 64, {5, 0, 2}, 8, false));
    cases.push_back(kv_append("kv append f32 pools, 1 token", RF_TYPE_F32, 128, {3}, 4, false));
    cases.push_back(kv_append("kv append f16, both into one pool (not one launch)", RF_TYPE_F16, 32, {1, 6}, 8, true));
    return cases;
}

} // namespace pack_check
