#include "fusion_cases.h"

#include "graph_builder.h"

#include <cstring>

namespace opcheck {
namespace {

std::string cols(int64_t M) { return " M=" + std::to_string(M); }

// [ADD] RMS_NORM MUL(norm weight) MATMUL: the fused norm also writes the matmul's q8_1 columns.
// weight_flag: the norm weight is flagged a model weight (the kernel then reads it before the
// previous kernel ends); otherwise it is an input like the others.
GraphCase norm_matmul(std::mt19937 &rng, int type, int64_t K, int64_t N, int64_t M, bool add, bool weight_flag = false) {
    Builder b;
    b.c.name = std::string("fused ") + (add ? "add+" : "") + "norm+matmul " + type_label(type) + " K=" + std::to_string(K) +
               " N=" + std::to_string(N) + cols(M);
    b.c.max_nmse = 5e-4;
    const int x = b.input(rnd(rng, RF_TYPE_F32, K, M));
    const int w = weight_flag ? b.weight(rnd(rng, RF_TYPE_F32, K)) : b.input(rnd(rng, RF_TYPE_F32, K));
    const int W = b.input(rnd(rng, type, K, N));
    int normed_in = x;
    if (add) {
        const int r = b.input(rnd(rng, RF_TYPE_F32, K, M));
        normed_in = b.output(RF_TYPE_F32, K, M);
        b.node(RF_OP_ADD, normed_in, {x, r});
    }
    const int n = b.output(RF_TYPE_F32, K, M), y = b.output(RF_TYPE_F32, K, M), out = b.output(RF_TYPE_F32, N, M);
    b.node(RF_OP_RMS_NORM, n, {normed_in}).fparams[0] = 1e-5f;
    b.node(RF_OP_MUL, y, {n, w});
    b.node(RF_OP_MATMUL, out, {W, y});
    return b.c;
}

// RMS_NORM MUL of `rows` attention heads of K elements (Qwen 3's and Gemma 3's Q/K norms; the
// packs' one-block form for up to 32 rows of up to 128): in_place, the product on the input's bytes
// (the input made by a SCALE of the case's input first, so that a rerun of the graph, as the
// observer check makes, starts from the same values).
GraphCase head_norms(std::mt19937 &rng, int64_t K, int64_t rows, bool in_place, bool weight_flag) {
    Builder b;
    b.c.name = "fused head norms [" + std::to_string(K) + "," + std::to_string(rows) + "]" + (in_place ? " in place" : "") +
               (weight_flag ? " model weight" : "");
    b.c.max_nmse = 1e-6;
    const int x0 = b.input(rnd(rng, RF_TYPE_F32, K, rows)), x = b.output(RF_TYPE_F32, K, rows);
    b.node(RF_OP_SCALE, x, {x0}).fparams[0] = 1.0f;
    const int w = weight_flag ? b.weight(rnd(rng, RF_TYPE_F32, K)) : b.input(rnd(rng, RF_TYPE_F32, K));
    const int n = b.output(RF_TYPE_F32, K, rows), y = in_place ? b.view(x, RF_TYPE_F32, K, rows, 1) : b.output(RF_TYPE_F32, K, rows);
    b.node(RF_OP_RMS_NORM, n, {x}).fparams[0] = 1e-6f;
    b.node(RF_OP_MUL, y, {n, w});
    return b.c;
}

// MATMUL(gate) MATMUL(up) SWIGLU (or GEGLU, Gemma) over one activation vector or M columns.
GraphCase gate_up(std::mt19937 &rng, int type, int64_t K, int64_t N, int64_t M, int glu = RF_OP_SWIGLU) {
    Builder b;
    b.c.name = std::string(glu == RF_OP_GEGLU ? "fused gate/up+geglu " : "fused gate/up+swiglu ") + type_label(type) + " K=" +
               std::to_string(K) + " N=" + std::to_string(N) + cols(M);
    b.c.max_nmse = 5e-4;
    const int x = b.input(rnd(rng, RF_TYPE_F32, K, M)), Wg = b.input(rnd(rng, type, K, N)), Wu = b.input(rnd(rng, type, K, N));
    const int g = b.output(RF_TYPE_F32, N, M), u = b.output(RF_TYPE_F32, N, M), s = b.output(RF_TYPE_F32, N, M);
    b.node(RF_OP_MATMUL, g, {Wg, x});
    b.node(RF_OP_MATMUL, u, {Wu, x});
    b.node(glu, s, {g, u});
    return b.c;
}

// A feed-forward block: MATMUL(gate) MATMUL(up) SWIGLU MATMUL(down) of the product; from 8
// columns the SWIGLU also writes the down projection's q8_1 columns (rf_swiglu_q8_1). in_place:
// the product on the gate's bytes.
GraphCase ffn(std::mt19937 &rng, int type, int down_type, int64_t K, int64_t N, int64_t M, bool in_place) {
    Builder b;
    b.c.name = std::string("fused ffn ") + type_label(type) + " down " + type_label(down_type) + " K=" + std::to_string(K) +
               " N=" + std::to_string(N) + (in_place ? " in place" : "") + cols(M);
    b.c.max_nmse = 5e-4;
    const int x = b.input(rnd(rng, RF_TYPE_F32, K, M)), Wg = b.input(rnd(rng, type, K, N)), Wu = b.input(rnd(rng, type, K, N));
    const int Wd = b.input(rnd(rng, down_type, N, K));
    const int g = b.output(RF_TYPE_F32, N, M), u = b.output(RF_TYPE_F32, N, M);
    const int s = in_place ? b.view(g, RF_TYPE_F32, N, M, 1) : b.output(RF_TYPE_F32, N, M), y = b.output(RF_TYPE_F32, K, M);
    b.node(RF_OP_MATMUL, g, {Wg, x});
    b.node(RF_OP_MATMUL, u, {Wu, x});
    b.node(RF_OP_SWIGLU, s, {g, u});
    b.node(RF_OP_MATMUL, y, {Wd, s});
    return b.c;
}

// The ROPE inputs of M tokens at random positions (one int32 each), optionally n_rot / 2
// frequency factors (-1: none), added to b; every other call also the tokens' (cos, sin) rows
// (src3, as decode graphs give them: the kernels read them in place of the positions; " +angles"
// in the case's name), so each fusion meets both forms.
struct RopeInputs { int positions, factors, angles; };
RopeInputs rope_inputs(Builder &b, std::mt19937 &rng, int64_t M, int n_rot, bool factors) {
    static int calls = 0;
    std::vector<int32_t> pos(M);
    for (auto &p : pos) p = (int32_t)(rng() % 4000);
    RopeInputs r{b.input(ints(pos, M)), -1, -1};
    std::vector<float> ff;
    if (factors) {
        HostTensor f = make(RF_TYPE_F32, n_rot / 2);
        for (int i = 0; i < n_rot / 2; ++i) { ff.push_back(1.f + (float)(rng() % 8)); std::memcpy(&f.data[4 * i], &ff.back(), 4); }
        r.factors = b.input(std::move(f));
    }
    if (calls++ % 2) {
        r.angles = b.input(rope_angles(pos, n_rot, 10000.f, 1.f, factors ? ff.data() : nullptr));
        b.c.name += " +angles";
    }
    return r;
}
// ROPE(NORMAL) of `heads` into dst, base 10000, no scaling.
void rope_normal(Builder &b, int heads, int dst, RopeInputs in, int n_rot) {
    GraphNode &r = b.node(RF_OP_ROPE, dst, {heads, in.positions, in.factors, in.angles});
    r.iparams[0] = RF_ROPE_NORMAL;
    r.iparams[1] = n_rot;
    r.fparams[0] = 10000.f;
    r.fparams[1] = 1.f;
}

// MATMUL then ROPE(NORMAL) of its output seen as [D, H, M] (the K and Q projections), M tokens at
// random positions, optionally with frequency factors and n_rot < D.
GraphCase matmul_rope(std::mt19937 &rng, int type, int64_t K, int D, int H, int64_t M, int n_rot, bool factors) {
    Builder b;
    b.c.name = std::string("fused matmul+rope ") + type_label(type) + " K=" + std::to_string(K) + " D=" + std::to_string(D) +
               " H=" + std::to_string(H) + " n_rot=" + std::to_string(n_rot) + (factors ? " +factors" : "") + cols(M);
    b.c.max_nmse = 5e-4;
    const int64_t N = (int64_t)D * H;
    const int x = b.input(rnd(rng, RF_TYPE_F32, K, M)), W = b.input(rnd(rng, type, K, N));
    const RopeInputs ri = rope_inputs(b, rng, M, n_rot, factors);
    const int md = b.output(RF_TYPE_F32, N, M), heads = b.view(md, RF_TYPE_F32, D, H, M), rd = b.output(RF_TYPE_F32, D, H, M);
    b.node(RF_OP_MATMUL, md, {W, x});
    rope_normal(b, heads, rd, ri, n_rot);
    return b.c;
}

// One token's K, V (and Q) projections: MATMUL ROPE MATMUL [MATMUL ROPE] over one vector, as a
// layer's decode graph orders them (the HIP backend's rf_mvq_proj). layout 0: every output its
// own; 1: the ropes in place (rotated rows on their products); 2: V's product on K's product
// bytes (the executor's reuse after K's rope, its last reader): K's product is dead; 3: Q's
// rotation on K's product bytes (the same reuse; needs Hq == Hkv).
GraphCase projections(std::mt19937 &rng, int tk, int tv, int tq, int64_t K, int D, int Hkv, int Hq, int n_rot, bool factors,
                      int layout, int64_t M = 1, int append_pool = -1) {
    Builder b;
    const bool with_q = Hq > 0;
    b.c.name = std::string("fused projections K ") + type_label(tk) + " V " + type_label(tv) +
               (with_q ? std::string(" Q ") + type_label(tq) : std::string(" (no Q)")) + " K=" + std::to_string(K) +
               " D=" + std::to_string(D) + " n_rot=" + std::to_string(n_rot) + (factors ? " +factors" : "") +
               " layout=" + std::to_string(layout) + cols(M) +
               (append_pool >= 0 ? std::string(" +kv append ") + type_label(append_pool) : std::string());
    b.c.max_nmse = 5e-4;
    const int64_t Nk = (int64_t)D * Hkv, Nq = (int64_t)D * Hq;
    const int x = b.input(rnd(rng, RF_TYPE_F32, K, M));
    const int Wk = b.input(rnd(rng, tk, K, Nk)), Wv = b.input(rnd(rng, tv, K, Nk));
    const RopeInputs ri = rope_inputs(b, rng, M, n_rot, factors);
    auto rope = [&](int src_heads, int dst) { rope_normal(b, src_heads, dst, ri, n_rot); };
    const int kd = b.output(RF_TYPE_F32, Nk, M), kh = b.view(kd, RF_TYPE_F32, D, Hkv, M);
    const int kr = layout == 1 ? b.view(kd, RF_TYPE_F32, D, Hkv, M) : b.output(RF_TYPE_F32, D, Hkv, M);
    const int vd = layout == 2 ? b.view(kd, RF_TYPE_F32, Nk, M, 1) : b.output(RF_TYPE_F32, Nk, M);
    b.node(RF_OP_MATMUL, kd, {Wk, x});
    rope(kh, kr);
    b.node(RF_OP_MATMUL, vd, {Wv, x});
    if (with_q) {
        const int Wq = b.input(rnd(rng, tq, K, Nq));
        const int qd = b.output(RF_TYPE_F32, Nq, M), qh = b.view(qd, RF_TYPE_F32, D, Hq, M);
        const int qr = layout == 1   ? b.view(qd, RF_TYPE_F32, D, Hq, M)
                       : layout == 3 ? b.view(kd, RF_TYPE_F32, D, Hq, M)
                                     : b.output(RF_TYPE_F32, D, Hq, M);
        b.node(RF_OP_MATMUL, qd, {Wq, x});
        rope(qh, qr);
    }
    if (append_pool >= 0) { // the K and V appends of the M tokens: slots 3, 5, 7, .. of 2M + 5
        const int64_t S = 2 * M + 5;
        const int kp = b.pool(rnd(rng, append_pool, Nk, S)), vp = b.pool(rnd(rng, append_pool, Nk, S));
        std::vector<int32_t> slots(M);
        for (int64_t t = 0; t < M; ++t) slots[t] = (int32_t)(3 + 2 * t);
        const int sl = b.input(ints(slots, M));
        b.node(RF_OP_SET_ROWS, kp, {b.view(layout == 1 ? kd : kr, RF_TYPE_F32, Nk, M, 1), sl});
        b.node(RF_OP_SET_ROWS, vp, {layout == 2 ? b.view(kd, RF_TYPE_F32, Nk, M, 1) : vd, sl});
    }
    return b.c;
}

// A layer with Q / K head norms (Qwen 3, Gemma 3) orders its decode projections MATMUL(K)
// MATMUL(V) MATMUL(Q) SET_ROWS(V pool), the norms and ropes after: one rf_mvq_proj launch of
// three unrotated segments and V's append. Here the ropes of K and Q follow (not their products'
// next nodes, so outside the run), then K's append.
GraphCase normed_projections(std::mt19937 &rng, int tk, int tv, int tq, int64_t K, int D, int Hkv, int Hq, int64_t M, int pool) {
    Builder b;
    b.c.name = std::string("fused projections, head-norm order: K ") + type_label(tk) + " V " + type_label(tv) + " Q " +
               type_label(tq) + " K=" + std::to_string(K) + " D=" + std::to_string(D) + cols(M) + " pool " + type_label(pool);
    b.c.max_nmse = 5e-4;
    const int64_t Nk = (int64_t)D * Hkv, Nq = (int64_t)D * Hq, S = 2 * M + 5;
    const int x = b.input(rnd(rng, RF_TYPE_F32, K, M));
    const int Wk = b.input(rnd(rng, tk, K, Nk)), Wv = b.input(rnd(rng, tv, K, Nk)), Wq = b.input(rnd(rng, tq, K, Nq));
    const RopeInputs ri = rope_inputs(b, rng, M, D, false);
    const int kd = b.output(RF_TYPE_F32, Nk, M), vd = b.output(RF_TYPE_F32, Nk, M), qd = b.output(RF_TYPE_F32, Nq, M);
    const int kp = b.pool(rnd(rng, pool, Nk, S)), vp = b.pool(rnd(rng, pool, Nk, S));
    std::vector<int32_t> slots(M);
    for (int64_t t = 0; t < M; ++t) slots[t] = (int32_t)(3 + 2 * t);
    const int sl = b.input(ints(slots, M));
    b.node(RF_OP_MATMUL, kd, {Wk, x});
    b.node(RF_OP_MATMUL, vd, {Wv, x});
    b.node(RF_OP_MATMUL, qd, {Wq, x});
    b.node(RF_OP_SET_ROWS, vp, {vd, sl});
    const int kr = b.output(RF_TYPE_F32, D, Hkv, M), qr = b.output(RF_TYPE_F32, D, Hq, M);
    rope_normal(b, b.view(kd, RF_TYPE_F32, D, Hkv, M), kr, ri, D);
    rope_normal(b, b.view(qd, RF_TYPE_F32, D, Hq, M), qr, ri, D);
    b.node(RF_OP_SET_ROWS, kp, {b.view(kr, RF_TYPE_F32, Nk, M, 1), sl});
    return b.c;
}

// ROPE(K) ROPE(Q) [SET_ROWS(K pool)] of M tokens, as layers with head norms end their
// projections (the "rope_pair" fusion: one rf_rope_f32 launch); NEOX or NORMAL pairs, n_rot <= D,
// in place (the rotations on the normed heads' bytes) or into outputs of their own.
GraphCase rope_pair(std::mt19937 &rng, int D, int Hk, int Hq, int64_t M, int n_rot, int mode, bool in_place, int pool) {
    Builder b;
    b.c.name = std::string("fused rope pair D=") + std::to_string(D) + " Hk=" + std::to_string(Hk) + " Hq=" + std::to_string(Hq) +
               " n_rot=" + std::to_string(n_rot) + (mode == RF_ROPE_NEOX ? " neox" : " normal") + (in_place ? " in place" : "") + cols(M) +
               (pool >= 0 ? std::string(" +k append ") + type_label(pool) : std::string());
    b.c.max_nmse = 1e-6;
    const RopeInputs ri = rope_inputs(b, rng, M, n_rot, false);
    const int k = in_place ? b.output(RF_TYPE_F32, D, Hk, M) : b.input(rnd(rng, RF_TYPE_F32, D, Hk, M));
    const int q = in_place ? b.output(RF_TYPE_F32, D, Hq, M) : b.input(rnd(rng, RF_TYPE_F32, D, Hq, M));
    if (in_place) { // the heads come from a node of the graph (as the norms' outputs do)
        b.node(RF_OP_SCALE, k, {b.input(rnd(rng, RF_TYPE_F32, D, Hk, M))}).fparams[0] = 1.5f;
        b.node(RF_OP_SCALE, q, {b.input(rnd(rng, RF_TYPE_F32, D, Hq, M))}).fparams[0] = 0.5f;
    }
    const int kr = in_place ? b.view(k, RF_TYPE_F32, D, Hk, M) : b.output(RF_TYPE_F32, D, Hk, M);
    const int qr = in_place ? b.view(q, RF_TYPE_F32, D, Hq, M) : b.output(RF_TYPE_F32, D, Hq, M);
    for (auto [x, y] : {std::pair{k, kr}, std::pair{q, qr}}) {
        GraphNode &r = b.node(RF_OP_ROPE, y, {x, ri.positions, ri.factors, ri.angles});
        r.iparams[0] = mode;
        r.iparams[1] = n_rot;
        r.fparams[0] = 10000.f;
        r.fparams[1] = 1.f;
    }
    if (pool >= 0) {
        const int64_t S = 2 * M + 5;
        const int kp = b.pool(rnd(rng, pool, (int64_t)D * Hk, S));
        std::vector<int32_t> slots(M);
        for (int64_t t = 0; t < M; ++t) slots[t] = (int32_t)(S - 1 - 2 * t);
        b.node(RF_OP_SET_ROWS, kp, {b.view(kr, RF_TYPE_F32, (int64_t)D * Hk, M, 1), b.input(ints(slots, M))});
    }
    return b.c;
}

// RMS_NORM(K) MUL RMS_NORM(Q) MUL ROPE(K) ROPE(Q) [SET_ROWS(K pool)] of M tokens: a head-norm
// layer's norms, ropes and K append in the graph's order (the "head_norm_rope" fusion: one
// rf_head_norm_rope_f32 launch); in_place: each product over its norm, each rotation over its
// product. Shapes past the fusion's limits (D > 256, the rows over 48 KiB) check the fallback.
GraphCase head_norm_rope(std::mt19937 &rng, int D, int Hk, int Hq, int64_t M, int n_rot, int mode, bool in_place, int pool) {
    Builder b;
    b.c.name = std::string("fused head norms+ropes D=") + std::to_string(D) + " Hk=" + std::to_string(Hk) + " Hq=" +
               std::to_string(Hq) + " n_rot=" + std::to_string(n_rot) + (mode == RF_ROPE_NEOX ? " neox" : " normal") +
               (in_place ? " in place" : "") + cols(M) + (pool >= 0 ? std::string(" +k append ") + type_label(pool) : std::string());
    b.c.max_nmse = 1e-6;
    const RopeInputs ri = rope_inputs(b, rng, M, n_rot, false);
    int prod[2];
    for (int q = 0; q < 2; ++q) {
        const int H = q ? Hq : Hk;
        const int x = b.input(rnd(rng, RF_TYPE_F32, D, H, M));
        const int w = q ? b.input(rnd(rng, RF_TYPE_F32, D)) : b.weight(rnd(rng, RF_TYPE_F32, D));
        const int n = b.output(RF_TYPE_F32, D, H, M), y = in_place ? b.view(n, RF_TYPE_F32, D, H, M) : b.output(RF_TYPE_F32, D, H, M);
        b.node(RF_OP_RMS_NORM, n, {x}).fparams[0] = 1e-6f;
        b.node(RF_OP_MUL, y, {n, w});
        prod[q] = y;
    }
    int rot[2];
    for (int q = 0; q < 2; ++q) {
        const int H = q ? Hq : Hk;
        rot[q] = in_place ? b.view(prod[q], RF_TYPE_F32, D, H, M) : b.output(RF_TYPE_F32, D, H, M);
        GraphNode &r = b.node(RF_OP_ROPE, rot[q], {prod[q], ri.positions, ri.factors, ri.angles});
        r.iparams[0] = mode;
        r.iparams[1] = n_rot;
        r.fparams[0] = 10000.f;
        r.fparams[1] = 1.f;
    }
    if (pool >= 0) {
        const int64_t S = 2 * M + 5;
        const int kp = b.pool(rnd(rng, pool, (int64_t)D * Hk, S));
        std::vector<int32_t> slots(M);
        for (int64_t t = 0; t < M; ++t) slots[t] = (int32_t)(S - 1 - 2 * t);
        b.node(RF_OP_SET_ROWS, kp, {b.view(rot[0], RF_TYPE_F32, (int64_t)D * Hk, M, 1), b.input(ints(slots, M))});
    }
    return b.c;
}

// SET_ROWS(K pool) SET_ROWS(V pool): T rows appended at distinct slots.
GraphCase kv_append(std::mt19937 &rng, int pool, int64_t R, int64_t T) {
    Builder b;
    b.c.name = std::string("fused kv append pool=") + type_label(pool) + " R=" + std::to_string(R) + " T=" + std::to_string(T);
    b.c.max_nmse = 1e-6;
    const int64_t S = 3 * T + 5;
    std::vector<int32_t> slots(T);
    for (int64_t t = 0; t < T; ++t) slots[t] = (int32_t)(3 * t + 1 + rng() % 3);
    const int kp = b.pool(rnd(rng, pool, R, S)), vp = b.pool(rnd(rng, pool, R, S));
    const int k = b.input(rnd(rng, RF_TYPE_F32, R, T)), v = b.input(rnd(rng, RF_TYPE_F32, R, T)), sl = b.input(ints(slots, T));
    b.node(RF_OP_SET_ROWS, kp, {k, sl});
    b.node(RF_OP_SET_ROWS, vp, {v, sl});
    return b.c;
}

// ATTENTION of one token of each sequence (contexts ctx), then a matmul of its output (the
// output projection), which quantizes it: the attention writing the q8_1 columns too was
// slower in its A/Bs (docs/notes/attention.md).
GraphCase attention_matmul(std::mt19937 &rng, int type, int D, int Hq, int Hkv, const std::vector<int> &ctx, int64_t N) {
    Case a = attention(rng, RF_TYPE_F16, D, Hq, Hkv, ctx, 1, 1e-5);
    const int64_t T = (int64_t)ctx.size();
    Builder b;
    std::string ctxs;
    for (int c : ctx) {
        if (!ctxs.empty()) ctxs += ',';
        ctxs += std::to_string(c);
    }
    b.c.name = std::string("fused attention+matmul ") + type_label(type) + " D=" + std::to_string(D) + " Hq=" + std::to_string(Hq) +
               " Hkv=" + std::to_string(Hkv) + " ctx=" + ctxs + " N=" + std::to_string(N);
    b.c.max_nmse = 5e-4;
    const int out = b.output(RF_TYPE_F32, (int64_t)D * Hq, T);
    int src[5];
    for (int i = 0; i < 5; ++i) src[i] = b.input(a.tensors[1 + i]);
    GraphNode &at = b.node(RF_OP_ATTENTION, out, {src[0], src[1], src[2], src[3], src[4]});
    std::memcpy(at.fparams, a.fparams, sizeof at.fparams);
    std::memcpy(at.iparams, a.iparams, sizeof at.iparams);
    const int W = b.input(rnd(rng, type, (int64_t)D * Hq, N)), y = b.output(RF_TYPE_F32, N, T);
    b.node(RF_OP_MATMUL, y, {W, out});
    return b.c;
}

// Two decode attentions in one graph, one token and then one token of each of 16 sequences, both
// over contexts long enough to merge chunks: the second's merge counters must not lie on the
// first's partials (they did when the counters were sized by each launch's token count).
GraphCase attention_widening(std::mt19937 &rng) {
    Case one = attention(rng, RF_TYPE_F16, 128, 8, 8, {300}, 1, 1e-5);
    std::vector<int> ctx;
    for (int s = 0; s < 16; ++s) ctx.push_back(130 + 11 * s);
    Case many = attention(rng, RF_TYPE_F16, 128, 8, 8, ctx, 1, 1e-5);
    Builder b;
    b.c.name = "attention: 16 tokens after 1 (chunk merge counters)";
    b.c.max_nmse = 1e-5;
    for (const Case *c : {&one, &many}) {
        const int out = b.output(RF_TYPE_F32, c->tensors[0].ne[0], c->tensors[0].ne[1]);
        int src[5];
        for (int i = 0; i < 5; ++i) src[i] = b.input(c->tensors[1 + i]);
        GraphNode &at = b.node(RF_OP_ATTENTION, out, {src[0], src[1], src[2], src[3], src[4]});
        std::memcpy(at.fparams, c->fparams, sizeof at.fparams);
        std::memcpy(at.iparams, c->iparams, sizeof at.iparams);
    }
    return b.c;
}

} // namespace

// MUL then ADD of its product: unfused in the backend, claimed by examples/pack when a config
// loads it (opcheck --gpu-config '{"packs": [".../rocmforge-pack-example-sm_90.so"]}').
GraphCase mul_add(std::mt19937 &rng, int64_t K, int64_t M, int64_t b1, int64_t c0) {
    Builder b;
    b.c.name = "mul+add (examples/pack) K=" + std::to_string(K) + cols(M);
    const int a = b.input(rnd(rng, RF_TYPE_F32, K, M)), w = b.input(rnd(rng, RF_TYPE_F32, K, b1));
    const int c = b.input(rnd(rng, RF_TYPE_F32, c0, M));
    const int t = b.output(RF_TYPE_F32, K, M), d = b.output(RF_TYPE_F32, K, M);
    b.node(RF_OP_MUL, t, {a, w});
    b.node(RF_OP_ADD, d, {t, c});
    return b.c;
}

std::vector<GraphCase> fusion_cases(std::mt19937 &rng) {
    std::vector<GraphCase> v;
    const int types[] = {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q5_0, RF_TYPE_Q8_0, RF_TYPE_IQ4_XS};
    for (int t : types) {
        // 1: one sequence; 2, 3: the dp4a column kernels; 5..24: integer tensor cores on NVIDIA
        // (the dp4a column kernels on AMD: 5, 7, 11 = chunks of 8 + 3); 100: prefill.
        for (int64_t M : {1, 2, 3, 5, 7, 11, 24, 100}) {
            v.push_back(norm_matmul(rng, t, 512, 67, M, M % 2 == 1));
            v.push_back(gate_up(rng, t, 512, M == 1 ? 67 : 37, M));
            if (M <= 3) v.push_back(gate_up(rng, t, 512, M == 1 ? 67 : 37, M, RF_OP_GEGLU));
            v.push_back(matmul_rope(rng, t, 512, 64, 4, M, M == 5 ? 32 : 64, M == 7));
        }
        v.push_back(matmul_rope(rng, t, 256, 128, 2, 3, 128, false));
    }
    // The fused norm's block size follows the row (plugins/packs/norm_fused.c norm_pieces): one
    // piece per thread (1,024 and 768 threads, 64 for K = 256), K = 5120 with two and K = 16384
    // with four, one row or several; q8_1 columns of 256 (Q4_K) and 32 (Q8_0) blocks; the norm weight
    // flagged a model weight or not. (rocmforge-opcheck --option norm_pieces=1 / 2 / 4 runs them all with
    // that many.)
    for (int64_t K : {4096, 3072, 256, 5120, 16384})
        for (int64_t M : {1, 3}) {
            v.push_back(norm_matmul(rng, RF_TYPE_Q4_K, K, 19, M, M == 1, K != 3072));
            v.push_back(norm_matmul(rng, RF_TYPE_Q8_0, K, 19, M, M == 3, M == 1));
        }
    for (int64_t K : {128, 64, 256})
        for (int64_t rows : {2, 4, 32, 40}) v.push_back(head_norms(rng, K, rows, rows == 32, rows != 4));
    for (int layout : {0, 1, 2}) {
        v.push_back(projections(rng, RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_Q4_K, 512, 64, 2, 4, 64, layout == 1, layout));
        v.push_back(projections(rng, RF_TYPE_Q4_0, RF_TYPE_Q8_0, RF_TYPE_Q4_0, 256, 128, 1, 3, 128, false, layout));
        v.push_back(projections(rng, RF_TYPE_Q5_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, 768, 64, 2, 2, 32, layout == 2, layout));
    }
    v.push_back(projections(rng, RF_TYPE_Q8_0, RF_TYPE_Q4_K, 0, 512, 64, 2, 0, 64, false, 0));
    // One weight type in every segment: rf_mvq_proj_<type>, on NVIDIA rf_mvq_proj2_<type> but for Q6_K
    // (above: a pair with Q6_K, or any types).
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q5_0, RF_TYPE_Q8_0, RF_TYPE_IQ4_XS})
        v.push_back(projections(rng, t, t, t, 512, 64, 2, 4, 64, false, 0));
    // A 7B IQ4_XS layer's shapes: the projections (one and two sequences), gate / up of 4096.
    for (int64_t M : {1, 2}) v.push_back(projections(rng, RF_TYPE_IQ4_XS, RF_TYPE_IQ4_XS, RF_TYPE_IQ4_XS, 4096, 128, 2, 2, 128, false, 0, M));
    v.push_back(gate_up(rng, RF_TYPE_IQ4_XS, 4096, 67, 1));
    // The grid i-quants' fused decode kernels: gate / up (SwiGLU at 1, 2, 5, 8 columns, GeGLU, the
    // wide-row form at K = 4096), matmul + rope, the typed projections at one to three columns
    // (two rows a warp, the wide-row form at K = 4096).
    for (int t : kFastGridTypes) {
        for (int64_t M : {1, 2, 5, 8}) {
            v.push_back(gate_up(rng, t, 2816, M == 1 ? 67 : 37, M));
            v.push_back(matmul_rope(rng, t, 512, 64, 4, M, 64, M == 5));
        }
        v.push_back(gate_up(rng, t, 512, 67, 1, RF_OP_GEGLU));
        v.push_back(gate_up(rng, t, 4096, 67, 1));
        v.push_back(gate_up(rng, t, 4096, 67, 1, RF_OP_GEGLU));
        v.push_back(norm_matmul(rng, t, 2816, 67, 3, true));
        for (int64_t M : {1, 2, 3}) v.push_back(projections(rng, t, t, t, 512, 64, 2, 4, 64, false, 0, M));
        v.push_back(projections(rng, t, t, t, 4096, 128, 2, 2, 128, false, 0, 1));
        v.push_back(projections(rng, t, RF_TYPE_Q4_K, RF_TYPE_Q8_0, 512, 64, 2, 4, 64, false, 0)); // rf_mvq_proj: any types
    }
    // Gemma 3 1B's Q4_K_M layers: 1152-element rows in Q5_0 (V in Q8_0 where the file gives it
    // more bits), one KV head of 256, GeGLU over 6912-row gate / up (here 37 and 67 rows).
    for (int64_t M : {1, 2})
        for (int tv : {RF_TYPE_Q5_0, RF_TYPE_Q8_0}) v.push_back(projections(rng, RF_TYPE_Q5_0, tv, RF_TYPE_Q5_0, 1152, 256, 1, 4, 256, false, 0, M));
    v.push_back(gate_up(rng, RF_TYPE_Q5_0, 1152, 67, 1, RF_OP_GEGLU));
    for (int64_t M : {1, 3, 100}) {
        v.push_back(rope_pair(rng, 128, 4, 32, M, 128, RF_ROPE_NEOX, M != 3, RF_TYPE_F16));
        v.push_back(rope_pair(rng, 256, 1, 4, M, 256, RF_ROPE_NEOX, true, M == 1 ? RF_TYPE_F32 : -1));
        v.push_back(rope_pair(rng, 64, 2, 9, M, 32, RF_ROPE_NORMAL, M == 3, M == 100 ? RF_TYPE_F16 : -1));
    }
    for (int64_t M : {1, 3, 16}) { // Qwen 3 (4 + 32 heads of 128), Gemma 3 1B (1 + 4 of 256), others
        v.push_back(head_norm_rope(rng, 128, 4, 32, M, 128, RF_ROPE_NEOX, M != 3, RF_TYPE_F16));
        v.push_back(head_norm_rope(rng, 256, 1, 4, M, 256, RF_ROPE_NEOX, M != 16, M == 1 ? RF_TYPE_F32 : RF_TYPE_F16));
        v.push_back(head_norm_rope(rng, 64, 2, 9, M, 32, RF_ROPE_NORMAL, M == 3, -1));
    }
    v.push_back(head_norm_rope(rng, 128, 8, 32, 1, 128, RF_ROPE_NEOX, true, RF_TYPE_F16)); // 40 rows: more than 32 warps
    v.push_back(head_norm_rope(rng, 80, 2, 6, 2, 80, RF_ROPE_NEOX, false, RF_TYPE_F16));   // D = 80: a partial warp
    v.push_back(head_norm_rope(rng, 256, 16, 32, 1, 256, RF_ROPE_NEOX, false, RF_TYPE_F16)); // 48 rows of 256: declined
    for (int64_t M : {1, 2}) {
        v.push_back(normed_projections(rng, RF_TYPE_Q5_0, RF_TYPE_Q8_0, RF_TYPE_Q5_0, 1152, 256, 1, 4, M, RF_TYPE_F16));
        v.push_back(normed_projections(rng, RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_Q4_K, 512, 128, 2, 8, M, RF_TYPE_F16));
        v.push_back(normed_projections(rng, RF_TYPE_Q8_0, RF_TYPE_Q8_0, RF_TYPE_Q8_0, 256, 64, 2, 4, M, RF_TYPE_F32));
    }
    v.push_back(gate_up(rng, RF_TYPE_Q5_0, 1152, 37, 3));
    // Rows of K >= 4096: Q4_K takes the wide-row kernels on NVIDIA (rf_mvqn_q4_k_1fw,
    // rf_mvq_proj2w_q4_k*: a column's pieces loaded once for both rows), Q5_K keeps the plain ones
    // at the same sizes; 4352 = 17 blocks: a remainder step.
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q5_K})
        for (int64_t K : {4096, 4352}) {
            v.push_back(gate_up(rng, t, K, K == 4096 ? 67 : 37, 1));
            v.push_back(matmul_rope(rng, t, K, 64, 4, 1, 64, K == 4352));
            v.push_back(projections(rng, t, t == RF_TYPE_Q4_K ? RF_TYPE_Q6_K : t, t, K, 64, 2, 4, 64, false, K == 4096 ? 0 : 1));
        }
    // F16 weights: the fused launches dot their rows with the f32 vector itself (rf_mv_f16's way).
    v.push_back(gate_up(rng, RF_TYPE_F16, 512, 67, 1));
    v.push_back(matmul_rope(rng, RF_TYPE_F16, 512, 64, 4, 1, 32, true));
    for (int layout : {0, 1, 2})
        v.push_back(projections(rng, RF_TYPE_F16, RF_TYPE_F16, RF_TYPE_F16, 512, 64, 2, 4, 64, layout == 1, layout, 1,
                                layout == 2 ? -1 : RF_TYPE_F16));
    v.push_back(projections(rng, RF_TYPE_F16, RF_TYPE_Q8_0, RF_TYPE_F16, 256, 64, 2, 2, 64, false, 0)); // mixed: not one launch
    for (int layout : {0, 1, 2})
        v.push_back(projections(rng, RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_Q4_K, 512, 64, 2, 4, 64, layout == 0, layout, 1,
                                layout == 1 ? RF_TYPE_F32 : RF_TYPE_F16));
    v.push_back(projections(rng, RF_TYPE_Q4_0, RF_TYPE_Q4_0, 0, 256, 128, 2, 0, 128, false, 0, 1, RF_TYPE_F16));
    // Several sequences (one token each): each projection on its own column kernels.
    for (int64_t M : {2, 3, 8, 11}) {
        const int t = M == 2 ? RF_TYPE_Q4_K : M == 3 ? RF_TYPE_Q6_K : M == 8 ? RF_TYPE_Q4_0 : RF_TYPE_Q8_0;
        v.push_back(projections(rng, t, t, t, 512, 64, 2, 4, 64, M == 3, (int)(M % 3), M));
        v.push_back(projections(rng, RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_Q6_K, 512, 64, 2, 2, 32, false, 0, M));
    }
    v.push_back(projections(rng, RF_TYPE_Q5_K, RF_TYPE_Q5_K, 0, 256, 128, 1, 0, 128, true, 1, 5));
    // 2..4 sequences with the K and V appends: the run as one rf_mvqn_proj_<type>_<NC> launch on
    // NVIDIA (a product a later output overlaps not written: layouts 2, 3); rows that are no multiple
    // of 8 (D = 36, one head: 36 rows) keep a launch a matrix.
    for (int64_t M : {2, 3, 4}) {
        for (int layout : {0, 1, 2, 3})
            v.push_back(projections(rng, RF_TYPE_Q4_K, layout == 0 ? RF_TYPE_Q6_K : RF_TYPE_Q4_K, RF_TYPE_Q4_K, 512, 64, 2,
                                    layout == 3 ? 2 : 4, 64, layout == 1, layout, M, layout % 2 ? RF_TYPE_F32 : RF_TYPE_F16));
        const int t = M == 2 ? RF_TYPE_Q5_K : M == 3 ? RF_TYPE_Q4_0 : RF_TYPE_Q8_0;
        v.push_back(projections(rng, t, t, t, 256, 128, 1, 3, 128, M == 3, 0, M, RF_TYPE_F16));
        v.push_back(projections(rng, RF_TYPE_Q6_K, RF_TYPE_Q6_K, M == 4 ? RF_TYPE_Q5_K : RF_TYPE_Q6_K, 512, 64, 2, 2, 32, false, 0, M,
                                RF_TYPE_F32));
        v.push_back(projections(rng, RF_TYPE_Q4_0, RF_TYPE_Q4_0, 0, 256, 36, 1, 0, 36, false, 0, M, RF_TYPE_F16));
    }
    // 8+ sequences: the projections of one weight type as one tensor-core launch (segments of
    // unequal rows under GQA; a Q6_K V between Q4_K K and Q: two launches), then the ropes. Layout
    // 2 (V's product on K's) must stay unjoined.
    for (int64_t M : {16, 33}) {
        for (int layout : {0, 1, 2})
            v.push_back(projections(rng, RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_Q4_K, 512, 64, 2, 4, 64, layout == 1, layout, M));
        v.push_back(projections(rng, RF_TYPE_Q5_K, RF_TYPE_Q5_K, RF_TYPE_Q5_K, 768, 64, 1, 4, 32, false, (int)(M % 2), M));
        v.push_back(projections(rng, RF_TYPE_Q8_0, RF_TYPE_Q8_0, RF_TYPE_Q8_0, 256, 128, 1, 3, 128, true, 0, M));
        v.push_back(projections(rng, RF_TYPE_Q4_0, RF_TYPE_Q4_0, 0, 256, 128, 2, 0, 128, false, 0, M));
        v.push_back(gate_up(rng, M == 16 ? RF_TYPE_Q6_K : RF_TYPE_Q4_0, 512, 100, M));
        v.push_back(projections(rng, RF_TYPE_Q4_K, RF_TYPE_Q4_K, RF_TYPE_Q4_K, 512, 64, 4, 4, 64, false, 3, M));
        // With the K and V appends: the rope and the matmul epilogue write the pools.
        for (int layout : {0, 1, 2, 3})
            v.push_back(projections(rng, RF_TYPE_Q4_K, layout == 0 ? RF_TYPE_Q6_K : RF_TYPE_Q4_K, RF_TYPE_Q4_K, 512, 64, 2,
                                    layout == 3 ? 2 : 4, 64, layout == 1, layout, M, layout % 2 ? RF_TYPE_F32 : RF_TYPE_F16));
    }
    v.push_back(projections(rng, RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_Q4_K, 512, 64, 4, 4, 64, false, 3));
    v.push_back(gate_up(rng, RF_TYPE_Q4_K, 1024, 130, 64));
    for (int64_t M : {1, 5, 8, 16, 33, 100})
        v.push_back(ffn(rng, RF_TYPE_Q4_K, M % 2 ? RF_TYPE_Q6_K : RF_TYPE_Q4_0, 256, 512, M, M == 16 || M == 100));
    v.push_back(ffn(rng, RF_TYPE_Q8_0, RF_TYPE_Q5_K, 512, 768, 24, false));
    for (int pool : {RF_TYPE_F16, RF_TYPE_F32}) {
        v.push_back(kv_append(rng, pool, 256, 1));
        v.push_back(kv_append(rng, pool, 128, 6));
    }
    // GQA groups whose G * D covers whole q8_1 blocks (32 for Q4_0/Q8_0, 256 for the K-quants).
    v.push_back(mul_add(rng, 64, 3, 1, 64));
    v.push_back(mul_add(rng, 4096, 1, 1, 1));
    v.push_back(attention_matmul(rng, RF_TYPE_Q4_0, 64, 8, 2, {100}, 67));
    v.push_back(attention_matmul(rng, RF_TYPE_Q8_0, 128, 8, 8, {37}, 40));
    v.push_back(attention_matmul(rng, RF_TYPE_Q4_K, 128, 8, 4, {300}, 67));
    v.push_back(attention_matmul(rng, RF_TYPE_Q6_K, 64, 16, 4, {17}, 33));
    // One head of 128 a block against blocks of 256 (Llama-2-7B's shape: a q8_1 block spans two
    // blocks' outputs, so the matmul quantizes them).
    v.push_back(attention_matmul(rng, RF_TYPE_Q4_K, 128, 8, 8, {300}, 67));
    v.push_back(attention_matmul(rng, RF_TYPE_Q6_K, 128, 6, 6, {5, 200}, 33));
    v.push_back(attention_widening(rng));
    // Several sequences, one token each: the column kernels (2, 3), the tensor-core ones (5, 16).
    // (The attention writing their q8_1 columns too was no faster.)
    v.push_back(attention_matmul(rng, RF_TYPE_Q4_K, 128, 8, 4, {300, 17}, 67));
    v.push_back(attention_matmul(rng, RF_TYPE_Q4_0, 64, 8, 2, {100, 1, 64}, 67));
    v.push_back(attention_matmul(rng, RF_TYPE_Q6_K, 128, 16, 4, {33, 70, 5, 129, 2}, 130));
    v.push_back(attention_matmul(rng, RF_TYPE_Q8_0, 128, 8, 8, {40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 300}, 64));
    return v;
}

} // namespace opcheck
