// The paper cost of nodes (bytes, FLOPs) and the label rollup rules of the report.
#include <catch2/catch.hpp>

#include "node_cost.h"
#include "report_text.h"
#include "rocmforge/graph.h"

namespace {
rf_tensor tensor(int type, std::initializer_list<int64_t> ne) {
    rf_tensor t{};
    rf::init_tensor_layout(t, type, ne);
    return t;
}
} // namespace

TEST_CASE("node cost: matmul FLOPs are 2*K*N*M and bytes count weights, input and output") {
    rf_tensor w = tensor(RF_TYPE_Q4_0, {4096, 11008}), x = tensor(RF_TYPE_F32, {4096, 7}), y = tensor(RF_TYPE_F32, {11008, 7});
    rf_node n{};
    n.op = RF_OP_MATMUL;
    n.src[0] = &w, n.src[1] = &x, n.dst = &y;
    const auto c = rfprof::node_cost(n);
    CHECK(c.flops == 2.0 * 4096 * 11008 * 7);
    // q4_0: 18 bytes per 32 weights.
    CHECK(c.bytes == 4096.0 / 32 * 18 * 11008 + 4096.0 * 7 * 4 + 11008.0 * 7 * 4);
    CHECK(rfprof::node_shapes(n) == "[4096,11008] x [4096,7]");
    CHECK(rfprof::node_dtypes(n) == "q4_0,f32");
}

TEST_CASE("node cost: attention counts only the rows of the cache it reads") {
    const int64_t D = 64, Hq = 32, Hkv = 4, T = 3, n_kv = 100, S = 4096;
    rf_tensor q = tensor(RF_TYPE_F32, {D, Hq, T}), k = tensor(RF_TYPE_F16, {D * Hkv, S}), v = tensor(RF_TYPE_F16, {D * Hkv, S});
    rf_tensor slots = tensor(RF_TYPE_I32, {n_kv, 1}), info = tensor(RF_TYPE_I32, {2, T}), out = tensor(RF_TYPE_F32, {D * Hq, T});
    rf_node n{};
    n.op = RF_OP_ATTENTION;
    n.src[0] = &q, n.src[1] = &k, n.src[2] = &v, n.src[3] = &slots, n.src[4] = &info, n.dst = &out;
    const auto c = rfprof::node_cost(n);
    CHECK(c.flops == 4.0 * D * n_kv * Hq * T);
    const double kv_bytes = 2.0 * n_kv * D * Hkv * 2;
    CHECK(c.bytes == Approx(kv_bytes + 4.0 * (D * Hq * T * 2 + n_kv + 2 * T)));
}

TEST_CASE("node cost: matmul_id counts only the experts its columns can choose") {
    // Mixtral decode: 2 of 8 experts for one token; a prefill of 40 tokens can touch all 8.
    rf_tensor w = tensor(RF_TYPE_Q4_K, {4096, 14336, 8});
    rf_tensor x1 = tensor(RF_TYPE_F32, {4096, 1, 1}), ids1 = tensor(RF_TYPE_I32, {2, 1}), y1 = tensor(RF_TYPE_F32, {14336, 2, 1});
    rf_node n{};
    n.op = RF_OP_MATMUL_ID;
    n.src[0] = &w, n.src[1] = &x1, n.src[2] = &ids1, n.dst = &y1;
    const double expert = 4096.0 / 256 * 144 * 14336; // q4_K: 144 bytes per 256 weights
    auto c = rfprof::node_cost(n);
    CHECK(c.flops == 2.0 * 4096 * 14336 * 2);
    CHECK(c.bytes == 2 * expert + 4096.0 * 4 + 2 * 4 + 14336.0 * 2 * 4);
    rf_tensor x40 = tensor(RF_TYPE_F32, {4096, 1, 40}), ids40 = tensor(RF_TYPE_I32, {2, 40}), y40 = tensor(RF_TYPE_F32, {14336, 2, 40});
    n.src[1] = &x40, n.src[2] = &ids40, n.dst = &y40;
    c = rfprof::node_cost(n);
    CHECK(c.bytes == 8 * expert + 4096.0 * 40 * 4 + 80 * 4 + 14336.0 * 80 * 4);
}

TEST_CASE("node cost: elementwise ops count one FLOP per element; KV append only the appended rows") {
    rf_tensor a = tensor(RF_TYPE_F32, {128, 5}), b = tensor(RF_TYPE_F32, {128}), d = tensor(RF_TYPE_F32, {128, 5});
    rf_node n{};
    n.op = RF_OP_ADD;
    n.src[0] = &a, n.src[1] = &b, n.dst = &d;
    CHECK(rfprof::node_cost(n).flops == 640);
    CHECK(rfprof::node_cost(n).bytes == 4.0 * (640 + 128 + 640));

    rf_tensor pool = tensor(RF_TYPE_F16, {256, 8192}), rows = tensor(RF_TYPE_F32, {256, 2}), slots = tensor(RF_TYPE_I32, {2});
    rf_node s{};
    s.op = RF_OP_SET_ROWS;
    s.src[0] = &rows, s.src[1] = &slots, s.dst = &pool;
    CHECK(rfprof::node_cost(s).bytes == 256.0 * 2 * 4 + 2 * 4 + 256.0 * 2 * 2);
}

TEST_CASE("report labels: layers and parts come from the label") {
    CHECK(rfprof::label_layer("blk.17.attn_q") == 17);
    CHECK(rfprof::label_layer("blk.x.attn_q") == -1);
    CHECK(rfprof::label_layer("output") == -1);
    CHECK(std::string(rfprof::label_part("blk.0.attn_norm")) == "attention");
    CHECK(std::string(rfprof::label_part("blk.0.rope_k")) == "attention");
    CHECK(std::string(rfprof::label_part("blk.0.cache_v_append")) == "attention");
    CHECK(std::string(rfprof::label_part("blk.3.attention")) == "attention");
    CHECK(std::string(rfprof::label_part("blk.3.ffn_norm")) == "mlp");
    CHECK(std::string(rfprof::label_part("blk.3.ffn_down")) == "mlp");
    CHECK(std::string(rfprof::label_part("output_norm")) == "norm");
    CHECK(std::string(rfprof::label_part("output")) == "output");
    CHECK(std::string(rfprof::label_part("token_embd")) == "embedding");
    CHECK(std::string(rfprof::label_part("copy")) == "other");
}
