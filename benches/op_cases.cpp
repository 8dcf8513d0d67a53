#include "op_cases.h"

#include <cmath>
#include <memory>

#include "device_tensor.h"
#include "rocmforge/types.h"

namespace rfbench {
namespace {

using rf::bench::Result;

void finish(Result &r, const std::vector<double> &ms, double flops, double bytes) {
    r.samples = ms;
    r.summarize();
    if (r.median > 0) {
        if (flops > 0) r.metrics["gflops"] = flops / (r.median * 1e6);
        r.metrics["gbps"] = bytes / (r.median * 1e6);
    }
}

OpCase matmul_case(int type, int64_t K, int64_t N, int64_t M) {
    OpCase c;
    c.proto.name = "matmul";
    c.proto.params = {{"type", rf::type_name(type)}, {"K", std::to_string(K)}, {"N", std::to_string(N)},
                      {"M", std::to_string(M)}};
    c.run = [=](rf::Backend &b, const TimerOptions &opt, Result &r) {
        DeviceTensor w(b, type, {K, N}), x(b, RF_TYPE_F32, {K, M}), y(b, RF_TYPE_F32, {N, M});
        w.get()->flags = RF_TENSOR_WEIGHT;
        rf_node n{};
        n.op = RF_OP_MATMUL;
        n.src[0] = w.get(), n.src[1] = x.get(), n.dst = y.get();
        n.label = "bench.matmul";
        if (!b.supports(n)) return false;
        w.fill_random(1);
        x.fill_random(2);
        finish(r, time_node(b, n, opt), 2.0 * double(K) * double(N) * double(M), double(w.bytes() + x.bytes() + y.bytes()));
        return true;
    };
    return c;
}

OpCase dequant_case(int type, int64_t K, int64_t rows) {
    OpCase c;
    c.proto.name = "dequant";
    c.proto.params = {{"type", rf::type_name(type)}, {"K", std::to_string(K)}, {"rows", std::to_string(rows)}};
    c.run = [=](rf::Backend &b, const TimerOptions &opt, Result &r) {
        DeviceTensor table(b, type, {K, rows}), ids(b, RF_TYPE_I32, {rows}), out(b, RF_TYPE_F32, {K, rows});
        rf_node n{};
        n.op = RF_OP_GET_ROWS;
        n.src[0] = table.get(), n.src[1] = ids.get(), n.dst = out.get();
        n.label = "bench.dequant";
        if (!b.supports(n)) return false;
        table.fill_random(3);
        std::vector<int32_t> idx(static_cast<size_t>(rows));
        for (int64_t i = 0; i < rows; ++i) idx[size_t(i)] = int32_t(i);
        ids.fill(idx.data(), idx.size() * 4);
        finish(r, time_node(b, n, opt), 0, double(table.bytes() + out.bytes()));
        return true;
    };
    return c;
}

struct AttnShape {
    const char *model;
    int64_t D, Hq, Hkv;
};

OpCase attention_case(const AttnShape &s, int64_t seq, bool prefill) {
    OpCase c;
    c.proto.name = "attention";
    const int64_t T = prefill ? seq : 1;
    c.proto.params = {{"shape", s.model}, {"seq", std::to_string(seq)}, {"mode", prefill ? "prefill" : "decode"},
                      {"D", std::to_string(s.D)}, {"Hq", std::to_string(s.Hq)}, {"Hkv", std::to_string(s.Hkv)}};
    c.run = [=](rf::Backend &b, const TimerOptions &opt, Result &r) {
        DeviceTensor q(b, RF_TYPE_F32, {s.D, s.Hq, T}), k(b, RF_TYPE_F16, {s.D * s.Hkv, seq}),
            v(b, RF_TYPE_F16, {s.D * s.Hkv, seq}), slots(b, RF_TYPE_I32, {seq, 1}), info(b, RF_TYPE_I32, {2, T}),
            out(b, RF_TYPE_F32, {s.D * s.Hq, T});
        rf_node n{};
        n.op = RF_OP_ATTENTION;
        n.src[0] = q.get(), n.src[1] = k.get(), n.src[2] = v.get(), n.src[3] = slots.get(), n.src[4] = info.get();
        n.dst = out.get();
        n.fparams[0] = float(1.0 / std::sqrt(double(s.D)));
        n.label = "bench.attention";
        if (!b.supports(n)) return false;
        q.fill_random(4), k.fill_random(5), v.fill_random(6);
        std::vector<int32_t> slot(static_cast<size_t>(seq)), tok(static_cast<size_t>(2 * T));
        for (int64_t i = 0; i < seq; ++i) slot[size_t(i)] = int32_t(i);
        for (int64_t t = 0; t < T; ++t) tok[size_t(2 * t)] = 0, tok[size_t(2 * t + 1)] = int32_t(prefill ? t : seq - 1);
        slots.fill(slot.data(), slot.size() * 4);
        info.fill(tok.data(), tok.size() * 4);
        // Causal: prefill token t reads t+1 positions (about seq/2 on average).
        const double pairs = prefill ? double(seq) * double(seq + 1) / 2.0 : double(seq);
        const double flops = 4.0 * double(s.D) * double(s.Hq) * pairs;
        // Bytes: the cache read once (the minimum; prefill kernels re-read tiles from cache).
        finish(r, time_node(b, n, opt), flops, double(k.bytes() + v.bytes() + q.bytes() + out.bytes()));
        return true;
    };
    return c;
}

} // namespace

std::vector<OpCase> all_cases() {
    std::vector<OpCase> cases;
    // TinyLlama (2048, 5632) and Llama-2-7B (4096, 11008) projection shapes, K x N.
    const int64_t shapes[][2] = {{2048, 2048}, {2048, 5632}, {5632, 2048}, {4096, 4096}, {4096, 11008}, {11008, 4096}};
    const int mm_types[] = {RF_TYPE_F16, RF_TYPE_Q8_0, RF_TYPE_Q4_0, RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_MXFP4};
    for (int64_t M : {1, 512})
        for (int t : mm_types)
            for (const auto &s : shapes) cases.push_back(matmul_case(t, s[0], s[1], M));
    const int dq_types[] = {RF_TYPE_F16, RF_TYPE_BF16, RF_TYPE_Q4_0, RF_TYPE_Q4_1, RF_TYPE_Q5_0, RF_TYPE_Q5_1,
                            RF_TYPE_Q8_0, RF_TYPE_Q2_K, RF_TYPE_Q3_K, RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K,
                            RF_TYPE_MXFP4, RF_TYPE_MXFP6_E2M3, RF_TYPE_MXFP6_E3M2};
    for (int t : dq_types) cases.push_back(dequant_case(t, 4096, 4096));
    const AttnShape attn[] = {{"tinyllama", 64, 32, 4}, {"llama3-8b", 128, 32, 8}};
    for (const auto &s : attn)
        for (bool prefill : {false, true})
            for (int64_t seq : {128, 512, 2048, 8192}) cases.push_back(attention_case(s, seq, prefill));
    return cases;
}

} // namespace rfbench
