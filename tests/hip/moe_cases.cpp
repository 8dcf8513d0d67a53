#include "moe_cases.h"

#include "graph_builder.h"
#include "weight_types.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <set>
#include <string>

namespace opcheck {
namespace {



// S distinct experts per token out of the first `used` (experts >= used get no token).
std::vector<int32_t> expert_ids(std::mt19937 &rng, int64_t E, int64_t S, int64_t M, int64_t used) {
    std::vector<int32_t> v;
    std::vector<int32_t> perm((size_t)used);
    for (int64_t m = 0; m < M; ++m) {
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);
        v.insert(v.end(), perm.begin(), perm.begin() + S);
    }
    (void)E;
    return v;
}

std::string dims(int64_t K, int64_t N, int64_t E, int64_t S, int64_t M) {
    return " K=" + std::to_string(K) + " N=" + std::to_string(N) + " E=" + std::to_string(E) + " S=" + std::to_string(S) +
           " M=" + std::to_string(M);
}

// MATMUL_ID of `type`: x shared by the S experts of a token (gate/up) or one row per slot (down).
std::string matmul_id_label(int type, int64_t K, int64_t N, int64_t E, int64_t S, int64_t M, bool shared) {
    return std::string("matmul_id ") + type_label(type) + dims(K, N, E, S, M) + (shared ? " shared-x" : "");
}

Case matmul_id(std::mt19937 &rng, int type, int64_t K, int64_t N, int64_t E, int64_t S, int64_t M, bool shared,
               int64_t used = 0) {
    if (used == 0) used = std::max(S, E - 1);
    const std::vector<int32_t> ids = expert_ids(rng, E, S, M, used);
    Case c = base(matmul_id_label(type, K, N, E, S, M, shared), RF_OP_MATMUL_ID,
                  {make(RF_TYPE_F32, N, S, M), rnd(rng, type, K, N, E), rnd(rng, RF_TYPE_F32, K, shared ? 1 : S, M), ints(ids, S, M)},
                  5e-4);
    const std::set<int32_t> chosen(ids.begin(), ids.end());
    c.flops = 2.0 * K * N * S * M;
    // What a kernel that reads only the chosen experts moves: their rows, the activations, the output.
    c.bytes = (double)chosen.size() * N * row_bytes(type, K) + 4.0 * K * (shared ? 1 : S) * M + 4.0 * N * S * M;
    return c;
}

Case topk(std::mt19937 &rng, int64_t E, int64_t k, int64_t M) {
    HostTensor x = rnd(rng, RF_TYPE_F32, E, M, 1, 1, 4.f);
    auto *v = reinterpret_cast<float *>(x.data.data());
    for (int64_t i = 0; i < E * M; i += 5) v[i] = v[(i / E) * E]; // ties with each row's first entry
    Case c = base("topk E=" + std::to_string(E) + " k=" + std::to_string(k) + " M=" + std::to_string(M), RF_OP_TOPK,
                  {make(RF_TYPE_I32, k, M), x}, 0);
    c.exact = true;
    return c;
}

// A router's ties as llama.cpp's CPU argsort breaks them for E <= 16 (the lower index first;
// abi.h TOPK): values on a coarse grid, a seventh of them -0, so most rows hold equal entries
// and -0 / +0 pairs. Compared exactly with the CPU backend.
Case topk_ties(std::mt19937 &rng, int64_t E, int64_t k, int64_t M) {
    HostTensor x = rnd(rng, RF_TYPE_F32, E, M, 1, 1, 2.f);
    auto *v = reinterpret_cast<float *>(x.data.data());
    for (int64_t i = 0; i < E * M; ++i) v[i] = i % 7 == 0 ? -0.f : std::round(v[i]);
    Case c = base("topk ties E=" + std::to_string(E) + " k=" + std::to_string(k) + " M=" + std::to_string(M), RF_OP_TOPK,
                  {make(RF_TYPE_I32, k, M), x}, 0);
    c.exact = true;
    return c;
}

Case moe_weights(std::mt19937 &rng, int64_t E, int64_t k, int64_t M, int mode) {
    Case c = base("moe_weights E=" + std::to_string(E) + " k=" + std::to_string(k) + " M=" + std::to_string(M) +
                      (mode == 2 ? " of-chosen" : mode ? " over-chosen" : " over-all"),
                  RF_OP_MOE_WEIGHTS, {make(RF_TYPE_F32, k, M), rnd(rng, RF_TYPE_F32, E, M, 1, 1, 5.f), ints(expert_ids(rng, E, k, M, E), k, M)},
                  1e-10);
    c.iparams[0] = mode;
    return c;
}

// gpt-oss's expert biases: [N, S, M] plus bias rows [N, E] of the chosen experts.
Case add_id(std::mt19937 &rng, int64_t N, int64_t S, int64_t M, int64_t E) {
    return base("add_id N=" + std::to_string(N) + " S=" + std::to_string(S) + " M=" + std::to_string(M) + " E=" + std::to_string(E),
                RF_OP_ADD_ID, {make(RF_TYPE_F32, N, S, M), rnd(rng, RF_TYPE_F32, N, S, M), rnd(rng, RF_TYPE_F32, N, E, 1, 1, 3.f),
                               ints(expert_ids(rng, E, S, M, E), S, M)},
                1e-12);
}

Case moe_sum(std::mt19937 &rng, int64_t N, int64_t S, int64_t M) {
    return base("moe_sum N=" + std::to_string(N) + " S=" + std::to_string(S) + " M=" + std::to_string(M), RF_OP_MOE_SUM,
                {make(RF_TYPE_F32, N, M), rnd(rng, RF_TYPE_F32, N, S, M), rnd(rng, RF_TYPE_F32, S, M)}, 1e-10);
}

} // namespace

std::vector<Case> moe_cases(std::mt19937 &rng) {
    std::vector<Case> v;
    for (const rf_hip::TypeInfo &ti : rf_hip::kWeightTypes) { // every type a kernel decodes
        const int t = ti.type;
        const int64_t bs = (int64_t)type_block(t);
        const int64_t K = bs == 256 ? 256 : bs == 32 ? 96 : 100, K2 = bs == 256 ? 512 : bs == 32 ? 160 : 67;
        v.push_back(matmul_id(rng, t, K, 67, 8, 2, 1, true));      // Mixtral decode, gate/up (dp4a for 5 types)
        v.push_back(matmul_id(rng, t, K2, 33, 8, 2, 1, false));    // Mixtral decode, down
        v.push_back(matmul_id(rng, t, K, 29, 16, 4, 3, true));     // 3 tokens, 16 experts
        v.push_back(matmul_id(rng, t, K, 37, 128, 8, 1, true));    // Qwen3-MoE decode: a grid row per column
        v.push_back(matmul_id(rng, t, K2, 21, 128, 8, 4, false));  // 4 sequences, down
        v.push_back(matmul_id(rng, t, K, 45, 5, 2, 37, true));     // prefill: tiles of tokens per expert
        v.push_back(matmul_id(rng, t, K2, 19, 6, 3, 13, false));   // prefill, down
        v.push_back(matmul_id(rng, t, K, 9, 4, 1, 70, true, 2));   // top-1, two experts take 70 tokens
    }
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q8_0, RF_TYPE_Q5_K, RF_TYPE_MXFP4})
        v.push_back(matmul_id(rng, t, 512, 130, 4, 2, 16, false)); // 32 columns: the last dp4a-sized case
    // Short rows (K <= 1024) on the routed-column kernels take several rows a warp on NVIDIA: a
    // Qwen3-MoE down projection and odd N (the last warp's rows partly past N), one and 6 tokens.
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q8_0, RF_TYPE_Q5_K, RF_TYPE_MXFP4}) {
        v.push_back(matmul_id(rng, t, 768, 2048, 128, 8, 1, false, 128));
        v.push_back(matmul_id(rng, t, 768, 131, 128, 8, 6, false, 128));
        v.push_back(matmul_id(rng, t, 1024, 70, 16, 4, 3, true, 16));
    }
    // gpt-oss decode on its MXFP4 experts (K = 2880: 90 blocks of 17 bytes, so every block start
    // within an 8-byte word; 4 of 32 experts, N trimmed to an odd 131): one and three tokens (a grid
    // row per routed column, rf_mvq_idc_mxfp4) with x shared (gate/up) or a row per slot (down), and
    // 9 tokens (36 columns > 32 experts: a grid row per expert, rf_mvq_id_mxfp4).
    for (int64_t M : {1, 3}) {
        v.push_back(matmul_id(rng, RF_TYPE_MXFP4, 2880, 131, 32, 4, M, true, 32));
        v.push_back(matmul_id(rng, RF_TYPE_MXFP4, 2880, 131, 32, 4, M, false, 32));
    }
    v.push_back(matmul_id(rng, RF_TYPE_MXFP4, 2880, 131, 32, 4, 9, true, 32));
    // Prefill-sized MATMUL_ID (S*M >= 64 columns): grouped by expert on NVIDIA (moe_grouped.cpp;
    // rf_mmqp_id_* for Q4_K, Q5_K, Q6_K, Q8_0, Q4_0, rf_mm_h16_id_64 for F16), rf_mm_id_* on AMD.
    // Odd N (partial 128-row tiles), K with a partial last K step (Q4_0 / Q8_0 step 128).
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_Q8_0, RF_TYPE_Q4_0, RF_TYPE_F16}) {
        const bool k256 = type_block(t) == 256;
        const int64_t K = k256 ? 512 : 160, K2 = k256 ? 256 : 224;
        v.push_back(matmul_id(rng, t, K, 200, 8, 2, 64, true));        // Mixtral-like gate/up, 64 tokens
        v.push_back(matmul_id(rng, t, K2, 67, 8, 2, 300, false));      // down, 300 tokens
        v.push_back(matmul_id(rng, t, K2, 131, 8, 2, 300, true, 5));   // experts 5..7 get no token
        v.push_back(matmul_id(rng, t, K, 96, 128, 8, 64, true, 128));  // Qwen3-MoE-like, ~4 per expert
        v.push_back(matmul_id(rng, t, K2, 130, 128, 8, 512, false, 128)); // Qwen3-MoE-like pp512 down
        v.push_back(matmul_id(rng, t, K2, 70, 128, 8, 300, true, 40)); // 88 experts get no token
        v.push_back(matmul_id(rng, t, K, 45, 8, 1, 300, true, 1));     // every token to expert 0
        v.push_back(matmul_id(rng, t, K2, 257, 2, 1, 600, false, 2));  // 300 per expert: 128-column tiles
        v.push_back(matmul_id(rng, t, K, 33, 16, 4, 70, false, 16));   // 280 columns, top-4
    }
    // The formats without integer tiles, grouped on the dequantizing wgmma tiles (rf_mm_q16w_id_*,
    // sm_90; tiles of 128 columns): partial tiles, an expert past one tile, experts with no token;
    // K a whole number of 64-element steps. gpt-oss-20b's experts (MXFP4, K = 2880, 32 of them, top-4).
    for (int t : {RF_TYPE_MXFP4, RF_TYPE_IQ4_NL, RF_TYPE_IQ4_XS, RF_TYPE_IQ2_XXS, RF_TYPE_IQ3_XXS, RF_TYPE_IQ3_S, RF_TYPE_IQ2_XS,
                  RF_TYPE_IQ2_S, RF_TYPE_IQ1_S, RF_TYPE_IQ1_M, RF_TYPE_TQ1_0, RF_TYPE_TQ2_0}) {
        const bool k256 = type_block(t) == 256;
        const int64_t K = k256 ? 512 : 192, K2 = k256 ? 256 : 320;
        v.push_back(matmul_id(rng, t, K, 200, 8, 2, 64, true));       // 16 columns an expert
        v.push_back(matmul_id(rng, t, K2, 67, 8, 2, 300, false, 5));  // down, experts 5..7 get no token
        v.push_back(matmul_id(rng, t, K, 131, 2, 1, 300, true, 2));   // 150 per expert: two tiles each
    }
    v.push_back(matmul_id(rng, RF_TYPE_MXFP4, 2880, 131, 32, 4, 100, true, 32));
    v.push_back(matmul_id(rng, RF_TYPE_MXFP4, 2880, 67, 32, 4, 40, false, 32));
    // Batched decode past 64 columns (the grouped tiles with a few columns an expert): 9, 16 and
    // 128 sequences of 8 of 128 experts, odd N, 16 experts taking 8 columns each.
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_Q8_0, RF_TYPE_Q4_0}) {
        const bool k256 = type_block(t) == 256;
        const int64_t K = k256 ? 512 : 160, K2 = k256 ? 256 : 224;
        v.push_back(matmul_id(rng, t, K, 131, 128, 8, 9, true, 128));
        v.push_back(matmul_id(rng, t, K2, 96, 128, 8, 16, false, 128));
        v.push_back(matmul_id(rng, t, K, 67, 128, 8, 128, true, 128));
        v.push_back(matmul_id(rng, t, K2, 33, 128, 8, 16, false, 16));
    }
    const int64_t topk_shapes[][3] = {{8, 2, 1}, {8, 2, 37}, {128, 8, 5}, {60, 60, 3}, {512, 9, 2}, {3, 1, 70}}; // E, k, M
    for (const auto &s : topk_shapes) v.push_back(topk(rng, s[0], s[1], s[2]));
    for (const auto &s : {std::array<int64_t, 3>{4, 2, 40}, {8, 2, 40}, {16, 4, 40}, {16, 16, 9}}) v.push_back(topk_ties(rng, s[0], s[1], s[2]));
    for (int mode : {0, 1, 2}) { // 2: gpt-oss's softmax of the chosen logits alone
        v.push_back(moe_weights(rng, 8, 2, 37, mode));
        v.push_back(moe_weights(rng, 128, 8, 5, mode));
        v.push_back(moe_weights(rng, 70, 40, 3, mode)); // k beyond a warp
    }
    v.push_back(moe_weights(rng, 32, 4, 9, 2));   // gpt-oss-20b's routing
    v.push_back(moe_weights(rng, 128, 4, 40, 2)); // gpt-oss-120b's
    v.push_back(add_id(rng, 2880, 4, 1, 32));     // gpt-oss-20b decode
    v.push_back(add_id(rng, 2880, 4, 37, 128));   // 120b, a prompt chunk
    v.push_back(add_id(rng, 67, 3, 5, 8));        // odd rows
    v.push_back(moe_sum(rng, 130, 2, 1));
    v.push_back(moe_sum(rng, 2053, 8, 37));
    return v;
}

// The routing after the router matmul, TOPK then MOE_WEIGHTS of the same logits (the packs'
// "moe_route" fusion: one launch): Qwen3-MoE's 128 experts, 8 chosen, Mixtral's 8 / 2, a row
// length that is no multiple of a warp, k beyond a warp, both weight modes.
static GraphCase moe_route_case(std::mt19937 &rng, int64_t E, int64_t k, int64_t M, int mode) {
    Builder b;
    b.c.name = "moe route E=" + std::to_string(E) + " k=" + std::to_string(k) + " M=" + std::to_string(M) + " mode " + std::to_string(mode);
    b.c.max_nmse = 1e-10;
    const int logits = b.input(rnd(rng, RF_TYPE_F32, E, M, 1, 1, 3.f));
    const int ids = b.output(RF_TYPE_I32, k, M), w = b.output(RF_TYPE_F32, k, M);
    b.node(RF_OP_TOPK, ids, {logits});
    b.node(RF_OP_MOE_WEIGHTS, w, {logits, ids}).iparams[0] = mode;
    return std::move(b.c);
}

// The routed expert FFN of M tokens on logits [E, M] and x [K, 1, M], as the model builds it:
// TOPK, MOE_WEIGHTS, gate and up MATMUL_ID on the shared row, SwiGLU, down MATMUL_ID, weighted
// sum (F expert width, S chosen).
static void routed_ffn(Builder &b, std::mt19937 &rng, int type, int64_t K, int64_t F, int64_t E, int64_t S, int64_t M, int logits,
                       int x) {
    const int wg = b.input(rnd(rng, type, K, F, E)), wu = b.input(rnd(rng, type, K, F, E));
    const int wd = b.input(rnd(rng, type, F, K, E));
    const int ids = b.output(RF_TYPE_I32, S, M), w = b.output(RF_TYPE_F32, S, M);
    const int g = b.output(RF_TYPE_F32, F, S, M), u = b.output(RF_TYPE_F32, F, S, M);
    const int a = b.output(RF_TYPE_F32, F, S, M), d = b.output(RF_TYPE_F32, K, S, M);
    const int out = b.output(RF_TYPE_F32, K, M);
    b.node(RF_OP_TOPK, ids, {logits});
    b.node(RF_OP_MOE_WEIGHTS, w, {logits, ids}).iparams[0] = 1;
    b.node(RF_OP_MATMUL_ID, g, {wg, x, ids});
    b.node(RF_OP_MATMUL_ID, u, {wu, x, ids});
    b.node(RF_OP_SWIGLU, a, {g, u});
    b.node(RF_OP_MATMUL_ID, d, {wd, a, ids});
    b.node(RF_OP_MOE_SUM, out, {d, w});
}

// The expert FFN of a MoE layer as one graph, on given router logits: K model width, F expert
// width, E experts, S chosen, M tokens.
static GraphCase moe_ffn_case(std::mt19937 &rng, int type, int64_t K, int64_t F, int64_t E, int64_t S, int64_t M) {
    Builder b;
    b.c.name = std::string("moe ffn ") + type_label(type) + dims(K, F, E, S, M);
    b.c.max_nmse = 5e-4;
    const int logits = b.input(rnd(rng, RF_TYPE_F32, E, M, 1, 1, 3.f));
    const int x = b.input(rnd(rng, RF_TYPE_F32, K, 1, M));
    routed_ffn(b, rng, type, K, F, E, S, M, logits, x);
    return std::move(b.c);
}

// A MoE layer's FFN from its input norm, as the model builds it: ADD RMS_NORM MUL (the fused norm,
// which writes q8_1 columns for a matmul that reads them), the f32 router MATMUL, then the routed
// FFN on the [K, 1, M] view of the normed rows (the q8_1 columns the norm wrote, read past the
// router and the routing).
static GraphCase moe_block_case(std::mt19937 &rng, int type, int64_t K, int64_t F, int64_t E, int64_t S, int64_t M) {
    Builder b;
    b.c.name = std::string("moe block from its norm ") + type_label(type) + dims(K, F, E, S, M);
    b.c.max_nmse = 5e-4;
    const int h = b.input(rnd(rng, RF_TYPE_F32, K, M)), r = b.input(rnd(rng, RF_TYPE_F32, K, M));
    const int nw = b.weight(rnd(rng, RF_TYPE_F32, K));
    const int router = b.input(rnd(rng, RF_TYPE_F32, K, E));
    const int sum = b.output(RF_TYPE_F32, K, M), n = b.output(RF_TYPE_F32, K, M), xn = b.output(RF_TYPE_F32, K, M);
    const int x = b.view(xn, RF_TYPE_F32, K, 1, M);
    const int logits = b.output(RF_TYPE_F32, E, M);
    b.node(RF_OP_ADD, sum, {h, r});
    b.node(RF_OP_RMS_NORM, n, {sum}).fparams[0] = 1e-6f;
    b.node(RF_OP_MUL, xn, {n, nw});
    b.node(RF_OP_MATMUL, logits, {router, xn});
    routed_ffn(b, rng, type, K, F, E, S, M, logits, x);
    return std::move(b.c);
}

// gpt-oss's expert FFN (llama.cpp's build_moe_ffn with SOFTMAX_WEIGHT gating and the
// SWIGLU_OAI_MOE form): router bias, TOPK, the softmax of the chosen logits, gate and up
// MATMUL_ID plus their experts' biases (ADD_ID), the clamped SwiGLU, down plus its bias, the sum.
// No pack fusion claims it (the biases sit between the matmuls and the SwiGLU).
static GraphCase gpt_oss_ffn_case(std::mt19937 &rng, int type, int64_t K, int64_t F, int64_t E, int64_t S, int64_t M) {
    Builder b;
    b.c.name = std::string("moe gpt-oss ffn ") + type_label(type) + dims(K, F, E, S, M);
    b.c.max_nmse = 5e-4;
    const int raw = b.input(rnd(rng, RF_TYPE_F32, E, M, 1, 1, 3.f)), router_b = b.weight(rnd(rng, RF_TYPE_F32, E));
    const int x = b.input(rnd(rng, RF_TYPE_F32, K, 1, M));
    const int wg = b.input(rnd(rng, type, K, F, E)), wu = b.input(rnd(rng, type, K, F, E)), wd = b.input(rnd(rng, type, F, K, E));
    const int bg = b.input(rnd(rng, RF_TYPE_F32, F, E, 1, 1, 4.f)), bu = b.input(rnd(rng, RF_TYPE_F32, F, E, 1, 1, 4.f));
    const int bd = b.input(rnd(rng, RF_TYPE_F32, K, E));
    const int logits = b.output(RF_TYPE_F32, E, M), ids = b.output(RF_TYPE_I32, S, M), w = b.output(RF_TYPE_F32, S, M);
    const int g = b.output(RF_TYPE_F32, F, S, M), gb = b.output(RF_TYPE_F32, F, S, M);
    const int u = b.output(RF_TYPE_F32, F, S, M), ub = b.output(RF_TYPE_F32, F, S, M);
    const int a = b.output(RF_TYPE_F32, F, S, M), d = b.output(RF_TYPE_F32, K, S, M), db = b.output(RF_TYPE_F32, K, S, M);
    const int out = b.output(RF_TYPE_F32, K, M);
    b.node(RF_OP_ADD, logits, {raw, router_b});
    b.node(RF_OP_TOPK, ids, {logits});
    b.node(RF_OP_MOE_WEIGHTS, w, {logits, ids}).iparams[0] = 2;
    b.node(RF_OP_MATMUL_ID, g, {wg, x, ids});
    b.node(RF_OP_ADD_ID, gb, {g, bg, ids});
    b.node(RF_OP_MATMUL_ID, u, {wu, x, ids});
    b.node(RF_OP_ADD_ID, ub, {u, bu, ids});
    GraphNode &act = b.node(RF_OP_SWIGLU_OAI, a, {gb, ub});
    act.fparams[0] = 1.702f;
    act.fparams[1] = 7.0f;
    b.node(RF_OP_MATMUL_ID, d, {wd, a, ids});
    b.node(RF_OP_ADD_ID, db, {d, bd, ids});
    b.node(RF_OP_MOE_SUM, out, {db, w});
    return std::move(b.c);
}

// MoE graphs: the routing fusion's cases, then the expert FFN, decode and prefill.
std::vector<GraphCase> moe_graph_cases(std::mt19937 &rng) {
    std::vector<GraphCase> v;
    for (int mode : {0, 1}) {
        v.push_back(moe_route_case(rng, 128, 8, 1, mode));
        v.push_back(moe_route_case(rng, 128, 8, 37, mode));
        v.push_back(moe_route_case(rng, 8, 2, 5, mode));
        v.push_back(moe_route_case(rng, 60, 40, 3, mode));
        v.push_back(moe_route_case(rng, 300, 6, 2, mode)); // 16 keys a lane
    }
    for (int type : {RF_TYPE_Q4_K, RF_TYPE_Q8_0, RF_TYPE_Q6_K, RF_TYPE_Q5_0, RF_TYPE_F16})
        for (int64_t M : {1, 3, 40}) v.push_back(moe_ffn_case(rng, type, 256, 512, 8, 2, M));
    // Decode shapes the packs' "moe_gate_up" / "moe_down_sum" fusions take (S*M routed columns, at
    // most 32 and at most E; the down+sum below 4 slots): 8 of 32 experts as Qwen3-MoE chooses them,
    // at 1, 2 and 4 sequences; top-1 (four rows a block), top-2 as Mixtral (two), top-3 (one) and
    // top-4 (gate/up only); every dp4a type.
    for (int type : {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q8_0}) {
        const bool k256 = type_block(type) == 256;
        for (int64_t M : {1, 2, 4}) v.push_back(moe_ffn_case(rng, type, k256 ? 512 : 160, k256 ? 256 : 96, 32, 8, M));
        v.push_back(moe_ffn_case(rng, type, 256, 256, 4, 1, 3));
        v.push_back(moe_ffn_case(rng, type, 256, k256 ? 768 : 224, 16, 4, 2));
        v.push_back(moe_ffn_case(rng, type, 256, 256, 8, 2, 2));
        v.push_back(moe_ffn_case(rng, type, 256, k256 ? 768 : 224, 12, 3, 1));
        for (int64_t M : {1, 3}) v.push_back(moe_block_case(rng, type, k256 ? 512 : 160, k256 ? 256 : 96, 32, 8, M));
    }
    v.push_back(moe_block_case(rng, RF_TYPE_Q4_K, 256, 256, 8, 2, 2)); // Mixtral's top-2
    // 5..8 sequences of Qwen3-MoE's 8 experts: 40..64 routed columns, still one per grid row.
    for (int64_t M : {5, 8}) v.push_back(moe_ffn_case(rng, RF_TYPE_Q4_K, 512, 256, 128, 8, M));
    // 12 and 16 sequences: past 64 columns, the grouped tiles.
    for (int64_t M : {12, 16}) v.push_back(moe_ffn_case(rng, RF_TYPE_Q4_K, 512, 256, 128, 8, M));
    v.push_back(moe_block_case(rng, RF_TYPE_Q6_K, 256, 256, 64, 8, 16));
    v.push_back(moe_block_case(rng, RF_TYPE_Q6_K, 256, 256, 64, 8, 6));
    // gpt-oss: MXFP4 experts as the files have them (and Q8_0, F16), 4 of 32 / 128, decode and prefill.
    for (int type : {RF_TYPE_MXFP4, RF_TYPE_Q8_0, RF_TYPE_F16})
        for (int64_t M : {1, 4, 70}) v.push_back(gpt_oss_ffn_case(rng, type, 256, 192, 32, 4, M));
    v.push_back(gpt_oss_ffn_case(rng, RF_TYPE_MXFP4, 2880, 2880, 16, 4, 2)); // the real widths (2880 x 2880), 16 experts
    for (int64_t M : {1, 37}) v.push_back(moe_route_case(rng, 32, 4, M, 2));  // the pack's routing fusion declines mode 2
    return v;
}

std::vector<Case> moe_perf_cases(std::mt19937 &rng, const std::string &filter) {
    std::vector<Case> v;
    auto mid = [&](int t, int64_t K, int64_t N, int64_t E, int64_t S, int64_t M, bool shared, int64_t used) {
        if (wanted(matmul_id_label(t, K, N, E, S, M, shared), filter)) v.push_back(matmul_id(rng, t, K, N, E, S, M, shared, used));
    };
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_Q8_0, RF_TYPE_Q4_0}) {
        mid(t, 4096, 14336, 8, 2, 1, true, 8);     // Mixtral 8x7B decode gate/up
        mid(t, 14336, 4096, 8, 2, 1, false, 8);    // Mixtral 8x7B decode down
        mid(t, 2048, 768, 128, 8, 1, true, 128);   // Qwen3-30B-A3B decode gate/up
        mid(t, 768, 2048, 128, 8, 1, false, 128);  // Qwen3-30B-A3B decode down
    }
    mid(RF_TYPE_MXFP4, 2880, 2880, 32, 4, 1, true, 32);   // gpt-oss-20b decode gate/up
    mid(RF_TYPE_MXFP4, 2880, 2880, 32, 4, 1, false, 32);  // gpt-oss-20b decode down
    mid(RF_TYPE_Q4_K, 4096, 14336, 8, 2, 512, true, 8);    // Mixtral prefill, 512 tokens
    mid(RF_TYPE_Q4_K, 2048, 768, 128, 8, 512, true, 128);  // Qwen3-30B-A3B prefill
    mid(RF_TYPE_Q6_K, 14336, 4096, 8, 2, 512, false, 8);   // Mixtral prefill down
    mid(RF_TYPE_Q6_K, 768, 2048, 128, 8, 512, false, 128); // Qwen3-30B-A3B prefill down
    Case tk = topk(rng, 128, 8, 512), ms = moe_sum(rng, 4096, 2, 512); // small: made, then filtered
    for (Case *c : {&tk, &ms})
        if (wanted(c->name, filter)) v.push_back(std::move(*c));
    return v;
}

} // namespace opcheck
