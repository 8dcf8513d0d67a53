#include "op_cases.h"
#include "rocmforge/rope_angles.h"

#include "weight_types.h"

#include <array>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace opcheck {
namespace {

// The kernels' weight types (backends/hip/weight_types.h), plus i32 for ids and positions.
using TypeRow = rf_hip::TypeInfo;
constexpr TypeRow kI32 = {RF_TYPE_I32, "i32", 1, 4};

const TypeRow &row_of(int type) {
    const TypeRow *t = type == RF_TYPE_I32 ? &kI32 : rf_hip::weight_type(type);
    return t ? *t : *rf_hip::weight_type(RF_TYPE_F32);
}

uint16_t f2h(float f) { _Float16 h = (_Float16)f; uint16_t u; std::memcpy(&u, &h, 2); return u; }
float h2f(uint16_t u) { _Float16 h; std::memcpy(&h, &u, 2); return (float)h; }
uint16_t f2bf(float f) { uint32_t u; std::memcpy(&u, &f, 4); return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16); }
float bf2f(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; std::memcpy(&f, &u, 4); return f; }

void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }

// Random contents for a tensor of any type: floats ~U(-1,1)*amp, quantized blocks with random
// codes and scales chosen so dequantized values are O(1).
void fill_random(HostTensor &t, std::mt19937 &rng, float amp = 1.f) {
    t.data.resize(tensor_bytes(t));
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::uniform_int_distribution<int> byte(0, 255);
    const size_t n = t.data.size();
    switch (t.type) {
    case RF_TYPE_F32: for (size_t i = 0; i < n / 4; ++i) { float v = u(rng) * amp; std::memcpy(&t.data[4 * i], &v, 4); } return;
    case RF_TYPE_F16: for (size_t i = 0; i < n / 2; ++i) put16(&t.data[2 * i], f2h(u(rng) * amp)); return;
    case RF_TYPE_BF16: for (size_t i = 0; i < n / 2; ++i) put16(&t.data[2 * i], f2bf(u(rng) * amp)); return;
    case RF_TYPE_I32: return; // filled by the case
    default: break;
    }
    for (auto &b : t.data) b = (uint8_t)byte(rng);
    const TypeRow &r = row_of(t.type);
    std::uniform_real_distribution<float> scale(0.5f, 1.5f);
    for (size_t off = 0; off < n; off += r.bytes) {
        uint8_t *b = &t.data[off];
        auto d = [&](int at, float base) { put16(b + at, f2h(base * scale(rng))); };
        switch (t.type) {
        case RF_TYPE_Q4_0: case RF_TYPE_Q5_0: d(0, 0.1f); break;
        case RF_TYPE_Q8_0: d(0, 0.01f); break;
        case RF_TYPE_Q4_1: case RF_TYPE_Q5_1: d(0, 0.1f); d(2, -0.5f); break;
        case RF_TYPE_Q2_K: d(80, 0.1f); d(82, 0.05f); break;
        case RF_TYPE_Q3_K: d(108, 0.05f); break;
        case RF_TYPE_Q4_K: case RF_TYPE_Q5_K: d(0, 0.01f); d(2, 0.01f); break;
        case RF_TYPE_Q6_K: d(208, 0.005f); break;
        case RF_TYPE_MXFP4: case RF_TYPE_MXFP6_E2M3: case RF_TYPE_MXFP6_E3M2: b[0] = (uint8_t)(124 + byte(rng) % 5); break;
        case RF_TYPE_IQ2_XXS: case RF_TYPE_IQ2_XS: case RF_TYPE_IQ2_S: d(0, 0.01f); break;
        case RF_TYPE_IQ3_XXS: case RF_TYPE_IQ3_S: d(0, 0.005f); break;
        case RF_TYPE_IQ1_S: d(0, 0.05f); break;
        case RF_TYPE_IQ4_NL: d(0, 0.01f); break;
        case RF_TYPE_IQ4_XS: d(0, 0.001f); break;
        case RF_TYPE_TQ1_0: d(52, 0.5f); break;
        case RF_TYPE_TQ2_0: d(64, 0.5f); break;
        case RF_TYPE_IQ1_M: { // the f16 scale's nibbles are the top nibbles of the 4 scale words
            const uint16_t h = f2h(0.05f * scale(rng));
            for (int i = 0; i < 4; ++i) b[49 + 2 * i] = (uint8_t)((b[49 + 2 * i] & 0x0F) | (((h >> (4 * i)) & 0xF) << 4));
            break;
        }
        default: break;
        }
    }
}

} // namespace

HostTensor make(int type, int64_t n0, int64_t n1, int64_t n2, int64_t n3) {
    HostTensor t;
    t.type = type;
    t.ne[0] = n0; t.ne[1] = n1; t.ne[2] = n2; t.ne[3] = n3;
    t.data.assign(tensor_bytes(t), 0);
    return t;
}

HostTensor rnd(std::mt19937 &rng, int type, int64_t n0, int64_t n1, int64_t n2, int64_t n3, float amp) {
    HostTensor t = make(type, n0, n1, n2, n3);
    fill_random(t, rng, amp);
    return t;
}

HostTensor rope_angles(const std::vector<int32_t> &pos, int n_rot, float base, float scale, const float *factors) {
    HostTensor t = make(RF_TYPE_F32, 2, n_rot / 2, (int64_t)pos.size());
    std::vector<float> rows;
    rf::RopeAngleCache(rf::RopeParams{n_rot, base, scale, factors}, 4096).gather(pos.data(), (int64_t)pos.size(), rows);
    std::memcpy(t.data.data(), rows.data(), rows.size() * 4);
    return t;
}

HostTensor ints(const std::vector<int32_t> &v, int64_t n0, int64_t n1) {
    HostTensor t = make(RF_TYPE_I32, n0, n1);
    std::memcpy(t.data.data(), v.data(), v.size() * 4);
    return t;
}

Case base(const std::string &name, int op, std::vector<HostTensor> t, double nmse) {
    Case c;
    c.name = name;
    c.op = op;
    c.tensors = std::move(t);
    c.present.assign(c.tensors.size(), true);
    c.max_nmse = nmse;
    c.bytes = 0;
    for (const auto &x : c.tensors) c.bytes += (double)tensor_bytes(x);
    return c;
}

std::string matmul_label(int type, int64_t K, int64_t N, int64_t M, int64_t b2, int64_t bw2) {
    return std::string("matmul ") + type_label(type) + " K=" + std::to_string(K) + " N=" + std::to_string(N) + " M=" +
           std::to_string(M) + (b2 > 1 ? " batch=" + std::to_string(b2) + "/" + std::to_string(bw2) : "");
}

Case matmul(std::mt19937 &rng, int type, int64_t K, int64_t N, int64_t M, int64_t b2, int64_t bw2) {
    auto w = rnd(rng, type, K, N, bw2);
    auto x = rnd(rng, RF_TYPE_F32, K, M, b2);
    Case c = base(matmul_label(type, K, N, M, b2, bw2), RF_OP_MATMUL, {make(RF_TYPE_F32, N, M, b2), w, x}, 5e-4);
    c.flops = 2.0 * K * N * M * b2;
    return c;
}

std::string attention_label(int pool, int D, int Hq, int Hkv, const std::vector<int> &seq_len, int T_per_seq) {
    const int T = (int)seq_len.size() * T_per_seq, n_kv_max = *std::max_element(seq_len.begin(), seq_len.end());
    return std::string("attention pool=") + type_label(pool) + " D=" + std::to_string(D) + " Hq=" + std::to_string(Hq) +
           " Hkv=" + std::to_string(Hkv) + " T=" + std::to_string(T) + " ctx=" + std::to_string(n_kv_max);
}

namespace {

// An ATTENTION case over sequences of seq_len positions, each in randomly placed pool slots, with
// the tokens' (batch sequence, position) pairs `info`; scale 1/sqrt(D).
Case attention_case(std::mt19937 &rng, const std::string &name, int pool, int D, int Hq, int Hkv,
                    const std::vector<int> &seq_len, const std::vector<int32_t> &info, double nmse) {
    const int n_seq = (int)seq_len.size(), n_kv_max = *std::max_element(seq_len.begin(), seq_len.end());
    const int S = n_kv_max * n_seq + 7, T = (int)info.size() / 2;
    std::vector<int32_t> perm(S);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<int32_t> table((size_t)n_kv_max * n_seq, 0);
    for (int s = 0; s < n_seq; ++s)
        for (int p = 0; p < seq_len[s]; ++p) table[(size_t)s * n_kv_max + p] = perm[(size_t)s * n_kv_max + p];
    Case c = base(name, RF_OP_ATTENTION,
                  {make(RF_TYPE_F32, (int64_t)D * Hq, T), rnd(rng, RF_TYPE_F32, D, Hq, T), rnd(rng, pool, (int64_t)D * Hkv, S),
                   rnd(rng, pool, (int64_t)D * Hkv, S), ints(table, n_kv_max, n_seq), ints(info, 2, T)},
                  nmse);
    c.fparams[0] = 1.f / std::sqrt((float)D);
    return c;
}

} // namespace

Case attention(std::mt19937 &rng, int pool, int D, int Hq, int Hkv, const std::vector<int> &seq_len, int T_per_seq,
               double nmse) {
    const int n_seq = (int)seq_len.size(), T = n_seq * T_per_seq;
    std::vector<int32_t> info;
    for (int s = 0; s < n_seq; ++s)
        for (int i = 0; i < T_per_seq; ++i) { info.push_back(s); info.push_back(seq_len[s] - T_per_seq + i); }
    Case c = attention_case(rng, attention_label(pool, D, Hq, Hkv, seq_len, T_per_seq), pool, D, Hq, Hkv, seq_len, info, nmse);
    double ctx_sum = 0;
    for (int s = 0; s < n_seq; ++s) ctx_sum += (double)T_per_seq * seq_len[s];
    c.flops = 4.0 * D * Hq * ctx_sum;
    c.bytes = (double)row_bytes(pool, (int64_t)D * Hkv) * 2 * ctx_sum / T_per_seq + 8.0 * D * Hq * T;
    return c;
}

namespace {

// Gemma's attention: only the last `window` positions, scores soft-capped at `cap` (the generic
// kernel takes these nodes on the GPU).
Case limited_attention(std::mt19937 &rng, int pool, int D, int Hq, int Hkv, const std::vector<int> &seq_len, int T_per_seq,
                       int window, float cap) {
    Case c = attention(rng, pool, D, Hq, Hkv, seq_len, T_per_seq, 1e-5);
    c.name += " window=" + std::to_string(window) + " cap=" + std::to_string(cap).substr(0, 4);
    c.iparams[0] = window;
    c.fparams[1] = cap;
    return c;
}

// gpt-oss's attention: per-head sink logits (src5) in each softmax's denominator, on full layers
// and sliding-window ones (window 128); sinks spread so that some exceed the scores.
Case with_sinks(std::mt19937 &rng, Case c, int Hq, int window) {
    c.name += " sinks window=" + std::to_string(window);
    c.iparams[0] = window;
    c.tensors.push_back(rnd(rng, RF_TYPE_F32, Hq, 1, 1, 1, 4.f));
    c.present.push_back(true);
    return c;
}
Case sink_attention(std::mt19937 &rng, int pool, int D, int Hq, int Hkv, const std::vector<int> &seq_len, int T_per_seq, int window) {
    Case c = attention(rng, pool, D, Hq, Hkv, seq_len, T_per_seq, 1e-5);
    return with_sinks(rng, std::move(c), Hq, window);
}

// The encoders' attention (abi.h iparams[2] = 1): every token of a sequence sees all of its
// positions in the node, up to the sequence's last.
Case bidirectional_attention(std::mt19937 &rng, int pool, int D, int Hq, int Hkv, const std::vector<int> &seq_len, int T_per_seq) {
    Case c = attention(rng, pool, D, Hq, Hkv, seq_len, T_per_seq, 1e-5);
    c.name += " bidirectional";
    c.iparams[2] = 1;
    return c;
}

// A server's mixed step: one token of each of n_dec sequences (contexts 1..), then a P-token
// chunk of a sequence with `chunk_ctx` positions, with the split hint (abi.h iparams[1]) at
// `hint` (n_dec: true; other values test that the hint never changes the result).
Case mixed_attention(std::mt19937 &rng, int pool, int D, int Hq, int Hkv, int n_dec, int P, int chunk_ctx, int hint) {
    std::vector<int> seq_len;
    for (int s = 0; s < n_dec; ++s) seq_len.push_back(1 + (int)(rng() % 300));
    seq_len.push_back(chunk_ctx);
    std::vector<int32_t> info;
    for (int s = 0; s < n_dec; ++s) { info.push_back(s); info.push_back(seq_len[s] - 1); }
    for (int i = 0; i < P; ++i) { info.push_back(n_dec); info.push_back(chunk_ctx - P + i); }
    Case c = attention_case(rng,
                            std::string("attention mixed pool=") + type_label(pool) + " D=" + std::to_string(D) + " Hq=" +
                                std::to_string(Hq) + " Hkv=" + std::to_string(Hkv) + " decode=" + std::to_string(n_dec) +
                                " chunk=" + std::to_string(P) + " ctx=" + std::to_string(chunk_ctx) + " hint=" + std::to_string(hint),
                            pool, D, Hq, Hkv, seq_len, info, 1e-5);
    c.iparams[1] = hint;
    return c;
}

std::vector<int32_t> random_ids(std::mt19937 &rng, int n, int range) {
    std::vector<int32_t> v(n);
    for (auto &x : v) x = (int32_t)(rng() % range);
    return v;
}



} // namespace

size_t type_block(int type) { return row_of(type).block; }
size_t type_bytes(int type) { return row_of(type).bytes; }
size_t row_bytes(int type, int64_t n) { return (size_t)(n / row_of(type).block) * row_of(type).bytes; }
size_t tensor_bytes(const HostTensor &t) { return row_bytes(t.type, t.ne[0]) * (size_t)(t.ne[1] * t.ne[2] * t.ne[3]); }
const char *type_label(int type) { return row_of(type).suffix; }

std::vector<double> to_double(const HostTensor &t, const std::vector<uint8_t> &b) {
    std::vector<double> out;
    const int64_t n = t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3];
    out.reserve(n);
    for (int64_t i = 0; i < n; ++i) {
        switch (t.type) {
        case RF_TYPE_F32: { float f; std::memcpy(&f, &b[4 * i], 4); out.push_back(f); break; }
        case RF_TYPE_I32: { int32_t v; std::memcpy(&v, &b[4 * i], 4); out.push_back(v); break; }
        case RF_TYPE_F16: out.push_back(h2f((uint16_t)(b[2 * i] | b[2 * i + 1] << 8))); break;
        case RF_TYPE_BF16: out.push_back(bf2f((uint16_t)(b[2 * i] | b[2 * i + 1] << 8))); break;
        case RF_TYPE_Q8_0: {
            const uint8_t *blk = &b[(i / 32) * 34];
            out.push_back(h2f((uint16_t)(blk[0] | blk[1] << 8)) * (int8_t)blk[2 + i % 32]);
            break;
        }
        default: out.push_back(NAN);
        }
    }
    return out;
}

std::vector<Case> correctness_cases(std::mt19937 &rng) {
    std::vector<Case> v;
    for (const rf_hip::TypeInfo &ti : rf_hip::kWeightTypes) { // every type a kernel decodes
        const int t = ti.type;
        const bool scalar = row_of(t).block == 1;
        const int64_t K = scalar ? 77 : (row_of(t).block == 256 ? 512 : 96);
        v.push_back(matmul(rng, t, K, 67, 1));   // decode
        v.push_back(matmul(rng, t, K, 33, 5));   // short batch
        v.push_back(matmul(rng, t, K, 70, 37));  // tiled prefill path, ragged tiles
        const int64_t Kr = scalar ? 37 : row_of(t).block * 2;
        v.push_back(base(std::string("get_rows ") + type_label(t) + " K=" + std::to_string(Kr), RF_OP_GET_ROWS,
                         {make(RF_TYPE_F32, Kr, 7), rnd(rng, t, Kr, 20), ints(random_ids(rng, 7, 20), 7)}, 1e-10));
    }
    v.push_back(matmul(rng, RF_TYPE_F16, 64, 40, 3, 4, 2));   // broadcast of W over batch
    v.push_back(matmul(rng, RF_TYPE_F16, 96, 45, 1));         // 16-byte decode kernel
    v.push_back(matmul(rng, RF_TYPE_F32, 2048, 128, 1));      // MoE routers: a block per row
    v.push_back(matmul(rng, RF_TYPE_F32, 4096, 8, 1));
    v.push_back(matmul(rng, RF_TYPE_F32, 64, 40, 1, 4, 2));
    // Routers in prefill: the f32 tiles (ragged tiles in both dims, a batch broadcast of W), and
    // K % 4 != 0 (rf_mm_generic).
    v.push_back(matmul(rng, RF_TYPE_F32, 2048, 128, 300));
    v.push_back(matmul(rng, RF_TYPE_F32, 2880, 32, 37));
    v.push_back(matmul(rng, RF_TYPE_F32, 100, 67, 70, 4, 2));
    v.push_back(matmul(rng, RF_TYPE_F32, 37, 20, 20));
    v.push_back(matmul(rng, RF_TYPE_Q8_0, 4096, 37, 1, 3, 1)); // decode kernel, broadcast, long rows
    v.push_back(matmul(rng, RF_TYPE_Q4_K, 4096, 37, 1, 2, 2));
    v.push_back(matmul(rng, RF_TYPE_Q6_K, 4096, 37, 1));
    // Long rows (FFN down's K = 11008: 43 blocks, an odd count per lane group), a batch.
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q6_K}) {
        v.push_back(matmul(rng, t, 11008, 37, 1));
        v.push_back(matmul(rng, t, 8448, 21, 1, 2, 1));
    }
    // Decode (M = 1) dp4a kernels over q8_1 activations: block counts not a multiple of the
    // blocks per warp step, odd N, broadcast batches.
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q5_0, RF_TYPE_Q8_0}) {
        v.push_back(matmul(rng, t, 2816, 131, 1));
        v.push_back(matmul(rng, t, 256, 5, 1, 3, 1));
    }
    // The decode kernels of the 20-, 22- and 24-byte formats Q4_1 / Q5_0 / Q5_1 (every start of a block within its 8-byte
    // word: 20-, 22- and 24-byte blocks; Gemma 3's 1152-element rows), IQ4_NL and MXFP4 (17-byte blocks: rows of
    // 5 blocks start at odd bytes).
    for (int t : {RF_TYPE_Q4_1, RF_TYPE_Q5_0, RF_TYPE_Q5_1, RF_TYPE_IQ4_NL, RF_TYPE_MXFP4}) {
        v.push_back(matmul(rng, t, 1152, 131, 1));
        v.push_back(matmul(rng, t, 6912, 37, 1));
        v.push_back(matmul(rng, t, 160, 5, 1, 3, 1));
    }
    // IQ4_XS decode (rf_mvq_iq4_xs): block counts not a multiple of the 4 blocks of a warp
    // step, FFN down's K = 11008, a broadcast batch; the other i-quants' prefill tiles at
    // ragged shapes, 7B-like K.
    for (int64_t K : {256, 2816, 4096, 11008}) v.push_back(matmul(rng, RF_TYPE_IQ4_XS, K, 131, 1));
    v.push_back(matmul(rng, RF_TYPE_IQ4_XS, 512, 5, 1, 3, 1));
    for (int t : {RF_TYPE_IQ4_XS, RF_TYPE_IQ2_XXS, RF_TYPE_IQ3_XXS, RF_TYPE_IQ3_S, RF_TYPE_IQ1_M}) {
        v.push_back(matmul(rng, t, 4096, 130, 200));
        v.push_back(matmul(rng, t, 1024, 301, 512));
    }
    // The grid i-quants' dp4a decode family (kernels/mvq_iq.h): one column (rf_mvq_<type>) at odd
    // K (11 and 43 blocks: a warp's 4-block steps and a remainder), 7B's K, a broadcast batch; the
    // column kernels at 2, 3, 5, 8 columns and 11, 16 (chunks of 8 and a remainder); the wgmma
    // prefill tiles at a 128-token edge and a ragged tile.
    for (int t : kFastGridTypes) {
        for (int64_t K : {2816, 4096, 11008}) v.push_back(matmul(rng, t, K, 131, 1));
        v.push_back(matmul(rng, t, 256, 5, 1, 3, 1));
        for (int64_t M : {2, 3, 5, 8, 11, 16}) v.push_back(matmul(rng, t, 2816, M == 8 ? 37 : 131, M));
        v.push_back(matmul(rng, t, 2816, 67, 128));
        v.push_back(matmul(rng, t, 768, 45, 129));
    }
    v.push_back(matmul(rng, RF_TYPE_TQ1_0, 2816, 67, 128)); // TQ1_0: the wgmma prefill tiles only
    // Q5_0 prefill on the integer tensor-core tiles: 1152-element rows (Gemma 3), a partial last
    // K step (160 = 128 + 32), both tile widths.
    v.push_back(matmul(rng, RF_TYPE_Q5_0, 1152, 300, 512));
    v.push_back(matmul(rng, RF_TYPE_Q5_0, 6912, 131, 200));
    v.push_back(matmul(rng, RF_TYPE_Q5_0, 160, 50, 130));
    v.push_back(matmul(rng, RF_TYPE_Q5_0, 1152, 1024, 70));
    // Several columns (sequences decoding together) on the dp4a column kernels: every column
    // count up to one 8-column chunk, chunks plus a remainder, odd N (partial row pairs).
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q5_0, RF_TYPE_Q8_0}) {
        for (int64_t M : {2, 3, 4, 5, 6, 7, 8}) v.push_back(matmul(rng, t, 512, 37, M));
        for (int64_t M : {11, 16}) v.push_back(matmul(rng, t, 2816, 131, M));
    }
    // Batched decode on the integer tensor cores (matmul_mmq on NVIDIA; elsewhere the column or
    // tile kernels): column counts at the edges of the 8/16/32-column blocks and their chunks,
    // odd N (partial 16-row tiles), K from one 256 block to 4096.
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q8_0}) {
        for (int64_t M : {8, 9, 15, 16, 17, 31, 32, 33, 64}) v.push_back(matmul(rng, t, 1024, 131, M));
        v.push_back(matmul(rng, t, 256, 37, 12));
        v.push_back(matmul(rng, t, 4096, 300, 24));
    }
    v.push_back(matmul(rng, RF_TYPE_Q4_0, 96, 50, 20)); // K % 128 != 0: a partial last K step
    v.push_back(matmul(rng, RF_TYPE_Q8_0, 160, 50, 40));
    v.push_back(matmul(rng, RF_TYPE_Q8_0, 64, 40, 20, 4, 2));
    v.push_back(matmul(rng, RF_TYPE_F16, 4096, 300, 130));    // multi K-step tiles
    v.push_back(matmul(rng, RF_TYPE_F16, 96, 40, 20, 4, 2));  // prefill tiles, W broadcast over batch
    // F16 wgmma tiles (sm_90a): ragged tokens and rows, an odd count of 64-half K steps (split
    // over a cluster of two where the tiles are few), W broadcast over the batch.
    v.push_back(matmul(rng, RF_TYPE_F16, 4160, 130, 200));
    v.push_back(matmul(rng, RF_TYPE_F16, 4160, 1030, 129));
    v.push_back(matmul(rng, RF_TYPE_F16, 128, 40, 130, 4, 2));
    // Quantized weights on the same tiles, dequantized to f16 in shared memory (from 128 tokens):
    // rows at every 2-byte misalignment (Q8_0 / Q4_0 / Q6_K row sizes not a multiple of 16), an odd
    // count of K steps, ragged tiles, the split over two.
    for (int t : {RF_TYPE_Q4_0, RF_TYPE_Q8_0}) {
        v.push_back(matmul(rng, t, 4160, 130, 200));
        v.push_back(matmul(rng, t, 4160, 1030, 129));
    }
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K}) {
        v.push_back(matmul(rng, t, 4352, 130, 200));
        v.push_back(matmul(rng, t, 4352, 1030, 129));
    }
    // Prefill shapes (tensor-core kernels on NVIDIA): ragged M and N, 64- and 128-token tiles.
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_Q8_0, RF_TYPE_Q4_0, RF_TYPE_Q5_K, RF_TYPE_F16}) {
        v.push_back(matmul(rng, t, 768, 131, 33));
        v.push_back(matmul(rng, t, 512, 257, 128));
        v.push_back(matmul(rng, t, 1024, 301, 512));
        v.push_back(matmul(rng, t, 256, 77, 2048));
    }
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_F16}) v.push_back(matmul(rng, t, 256, 1099, 2048)); // 128-token tiles
    // Integer tensor-core prefill (matmul_mmq_prefill on NVIDIA): just past the batched-decode
    // kernels' 64 columns, partial 64/128-column tiles and warp halves, partial last K steps.
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q8_0}) {
        v.push_back(matmul(rng, t, 1024, 131, 65));
        v.push_back(matmul(rng, t, 2048, 259, 200));
        v.push_back(matmul(rng, t, 256, 1030, 777));
    }
    v.push_back(matmul(rng, RF_TYPE_Q4_0, 96, 50, 100));
    v.push_back(matmul(rng, RF_TYPE_Q8_0, 160, 50, 300));
    // 64-column tiles with K split over a cluster of two (sm_90; small grids, at least 16 K
    // steps of 256): an even and an odd step count (K = 4352: 8 + 9), partial column tiles, and
    // the legacy formats' partial last step (K = 4128).
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q8_0}) {
        v.push_back(matmul(rng, t, 4096, 200, 100));
        v.push_back(matmul(rng, t, 4352, 131, 77));
    }
    v.push_back(matmul(rng, RF_TYPE_Q4_0, 4128, 70, 90));
    v.push_back(matmul(rng, RF_TYPE_Q8_0, 4128, 70, 90));
    v.push_back(matmul(rng, RF_TYPE_Q4_K, 512, 200, 100, 3, 1)); // batch broadcast through the tiles
    for (int op : {RF_OP_ADD, RF_OP_MUL}) {
        const char *nm = op == RF_OP_ADD ? "add" : "mul";
        v.push_back(base(std::string(nm) + " same shape [67,5,3]", op,
                         {make(RF_TYPE_F32, 67, 5, 3), rnd(rng, RF_TYPE_F32, 67, 5, 3), rnd(rng, RF_TYPE_F32, 67, 5, 3)}, 1e-12));
        v.push_back(base(std::string(nm) + " broadcast [67,5,3]x[67,1,3]", op,
                         {make(RF_TYPE_F32, 67, 5, 3), rnd(rng, RF_TYPE_F32, 67, 5, 3), rnd(rng, RF_TYPE_F32, 67, 1, 3)}, 1e-12));
        // One row over all rows (biases, Q/K norm weights): the 4-a-step path, and an odd row.
        v.push_back(base(std::string(nm) + " row [128,32,5]x[128]", op,
                         {make(RF_TYPE_F32, 128, 32, 5), rnd(rng, RF_TYPE_F32, 128, 32, 5), rnd(rng, RF_TYPE_F32, 128)}, 1e-12));
        v.push_back(base(std::string(nm) + " row [2880,9]x[2880]", op,
                         {make(RF_TYPE_F32, 2880, 9), rnd(rng, RF_TYPE_F32, 2880, 9), rnd(rng, RF_TYPE_F32, 2880)}, 1e-12));
        v.push_back(base(std::string(nm) + " row [130,7]x[130]", op,
                         {make(RF_TYPE_F32, 130, 7), rnd(rng, RF_TYPE_F32, 130, 7), rnd(rng, RF_TYPE_F32, 130)}, 1e-12));
    }
    {
        Case c = base("scale [1000,3]", RF_OP_SCALE, {make(RF_TYPE_F32, 1000, 3), rnd(rng, RF_TYPE_F32, 1000, 3)}, 1e-12);
        c.fparams[0] = 0.37f;
        v.push_back(c);
    }
    v.push_back(base("silu [1001,3]", RF_OP_SILU, {make(RF_TYPE_F32, 1001, 3), rnd(rng, RF_TYPE_F32, 1001, 3, 1, 1, 6.f)}, 1e-10));
    v.push_back(base("swiglu [130,7]", RF_OP_SWIGLU,
                     {make(RF_TYPE_F32, 130, 7), rnd(rng, RF_TYPE_F32, 130, 7, 1, 1, 6.f), rnd(rng, RF_TYPE_F32, 130, 7)}, 1e-10));
    for (int64_t K : {130, 2304}) // odd rows (strided path) and Gemma 2 2B's width (4 per step)
        v.push_back(base("geglu [" + std::to_string(K) + ",7]", RF_OP_GEGLU,
                         {make(RF_TYPE_F32, K, 7), rnd(rng, RF_TYPE_F32, K, 7, 1, 1, 6.f), rnd(rng, RF_TYPE_F32, K, 7)}, 1e-10));
    {
        Case c = base("softcap [32003,3] cap=30", RF_OP_SOFTCAP, {make(RF_TYPE_F32, 32003, 3), rnd(rng, RF_TYPE_F32, 32003, 3, 1, 1, 90.f)}, 1e-10);
        c.fparams[0] = 30.f;
        v.push_back(c);
    }
    for (int64_t K : {384, 768, 37}) { // bge-small's and nomic-embed's widths, an odd row
        Case c = base("layer_norm [" + std::to_string(K) + ",5]", RF_OP_LAYER_NORM,
                      {make(RF_TYPE_F32, K, 5), rnd(rng, RF_TYPE_F32, K, 5, 1, 1, 3.f)}, 1e-10);
        c.fparams[0] = 1e-12f;
        v.push_back(c);
        v.push_back(base("gelu [" + std::to_string(K) + ",5]", RF_OP_GELU, {make(RF_TYPE_F32, K, 5), rnd(rng, RF_TYPE_F32, K, 5, 1, 1, 6.f)}, 1e-10));
    }
    for (int64_t K : {1, 37, 2048}) { // the shared-expert gate is [1, T]; wide rows too
        v.push_back(base("sigmoid [" + std::to_string(K) + ",9]", RF_OP_SIGMOID, {make(RF_TYPE_F32, K, 9), rnd(rng, RF_TYPE_F32, K, 9, 1, 1, 20.f)}, 1e-10));
    }
    for (int64_t K : {130, 2880}) { // gpt-oss's clamped SwiGLU: amplitude 12 crosses the limit 7 both ways
        Case c = base("swiglu_oai [" + std::to_string(K) + ",7,4]", RF_OP_SWIGLU_OAI,
                      {make(RF_TYPE_F32, K, 7, 4), rnd(rng, RF_TYPE_F32, K, 7, 4, 1, 12.f), rnd(rng, RF_TYPE_F32, K, 7, 4, 1, 12.f)}, 1e-10);
        c.fparams[0] = 1.702f;
        c.fparams[1] = 7.0f;
        v.push_back(c);
    }
    // Rows of at most 1024 run a warp a row (rf_rms_norm_rows_f32), longer ones a block a row.
    for (const auto &s : {std::array<int64_t, 3>{128, 32, 5}, {1024, 9, 1}, {1025, 2, 1}, {64, 1, 1}}) {
        Case c = base("rms_norm [" + std::to_string(s[0]) + "," + std::to_string(s[1]) + "," + std::to_string(s[2]) + "]", RF_OP_RMS_NORM,
                      {make(RF_TYPE_F32, s[0], s[1], s[2]), rnd(rng, RF_TYPE_F32, s[0], s[1], s[2])}, 1e-10);
        c.fparams[0] = 1e-6f;
        v.push_back(c);
    }
    for (int64_t K : {4096, 37}) {
        Case c = base("rms_norm [" + std::to_string(K) + ",3]", RF_OP_RMS_NORM, {make(RF_TYPE_F32, K, 3), rnd(rng, RF_TYPE_F32, K, 3)}, 1e-10);
        c.fparams[0] = 1e-5f;
        v.push_back(c);
        Case s = base("softmax [" + std::to_string(K) + ",4]", RF_OP_SOFTMAX, {make(RF_TYPE_F32, K, 4), rnd(rng, RF_TYPE_F32, K, 4, 1, 1, 5.f)}, 1e-10);
        s.fparams[0] = 0.5f;
        v.push_back(s);
    }
    {
        Case c = base("argmax [32003,3]", RF_OP_ARGMAX, {make(RF_TYPE_I32, 3), rnd(rng, RF_TYPE_F32, 32003, 3)}, 0);
        c.exact = true;
        v.push_back(c);
    }
    // +angles: the tokens' (cos, sin) rows as src3 (what decode graphs give), read by the kernel
    // in place of its positions; the CPU backend evaluates the angles itself.
    for (int mode : {RF_ROPE_NORMAL, RF_ROPE_NEOX})
        for (int n_rot : {64, 32})
            for (bool factors : {false, true})
                for (bool angles : {false, true}) {
                    const int D = 64, H = 4, T = 5;
                    std::vector<int32_t> pos = random_ids(rng, T, 3000);
                    Case c = base(std::string("rope ") + (mode ? "neox" : "normal") + " D=64 n_rot=" + std::to_string(n_rot) +
                                      (factors ? " +factors" : "") + (angles ? " +angles" : ""),
                                  RF_OP_ROPE,
                                  {make(RF_TYPE_F32, D, H, T), rnd(rng, RF_TYPE_F32, D, H, T), ints(pos, T), make(RF_TYPE_F32, n_rot / 2)},
                                  1e-8);
                    if (factors) {
                        auto &f = c.tensors[3];
                        for (int i = 0; i < n_rot / 2; ++i) { float x = 1.f + (float)(rng() % 8); std::memcpy(&f.data[4 * i], &x, 4); }
                    } else {
                        c.present[3] = false;
                    }
                    if (angles) {
                        c.tensors.push_back(rope_angles(pos, n_rot, 10000.f, 1.f, factors ? (const float *)c.tensors[3].data.data() : nullptr));
                        c.present.push_back(true);
                    }
                    c.iparams[0] = mode; c.iparams[1] = n_rot;
                    c.fparams[0] = 10000.f; c.fparams[1] = 1.f;
                    v.push_back(c);
                }
    // YaRN (gpt-oss: NeoX, base 150000, factor 32 over 4096 positions; and a half-rotated head):
    // without rows (rf_rope_yarn_f32: prompts), with the host's rows (decode), positions to 131071.
    for (int n_rot : {64, 32})
        for (bool angles : {false, true})
            for (int T : {5, 300}) {
                const int D = 64, H = 8;
                std::vector<int32_t> pos = random_ids(rng, T, 131072);
                Case c = base(std::string("rope yarn neox D=64 n_rot=") + std::to_string(n_rot) + " T=" + std::to_string(T) +
                                  (angles ? " +angles" : ""),
                              RF_OP_ROPE, {make(RF_TYPE_F32, D, H, T), rnd(rng, RF_TYPE_F32, D, H, T), ints(pos, T), make(RF_TYPE_F32, 1)},
                              1e-8);
                c.present[3] = false;
                const rf::RopeYarn yarn{4096, 1.f, 1.f, 32.f, 1.f};
                if (angles) {
                    rf::RopeParams p{n_rot, 150000.f, 1.f / 32.f, nullptr};
                    p.yarn = true;
                    p.yarn_params = yarn;
                    HostTensor t = make(RF_TYPE_F32, 2, n_rot / 2, T);
                    std::vector<float> rows;
                    rf::RopeAngleCache(p, 4096).gather(pos.data(), T, rows);
                    std::memcpy(t.data.data(), rows.data(), rows.size() * 4);
                    c.tensors.push_back(t);
                    c.present.push_back(true);
                }
                c.iparams[0] = RF_ROPE_NEOX; c.iparams[1] = n_rot; c.iparams[2] = 1; c.iparams[3] = yarn.n_ctx_orig;
                c.fparams[0] = 150000.f; c.fparams[1] = 1.f / 32.f;
                c.fparams[2] = yarn.ext_factor; c.fparams[3] = yarn.attn_factor; c.fparams[4] = yarn.beta_fast; c.fparams[5] = yarn.beta_slow;
                v.push_back(c);
            }
    for (int pool : {RF_TYPE_F16, RF_TYPE_Q8_0, RF_TYPE_F32}) {
        std::vector<int32_t> slots = {5, 0, 11};
        v.push_back(base(std::string("set_rows pool=") + type_label(pool) + " R=128", RF_OP_SET_ROWS,
                         {rnd(rng, pool, 128, 16), rnd(rng, RF_TYPE_F32, 128, 3), ints(slots, 3)}, 1e-6));
        v.push_back(attention(rng, pool, 64, 8, 2, {37, 9}, 3, 1e-5));
        v.push_back(attention(rng, pool, 128, 4, 4, {100}, 1, 1e-5));
        // Prefill: 512 new tokens after 0 and after 300 cached positions; two sequences in a tile.
        for (int D : {64, 128}) {
            v.push_back(attention(rng, pool, D, 4, 2, {512}, 512, 1e-5));
            v.push_back(attention(rng, pool, D, 4, 1, {812}, 512, 1e-5));
            v.push_back(attention(rng, pool, D, 6, 3, {45, 70}, 20, 1e-5));
        }
    }
    // Decode rows and a prompt chunk in one node, with the split hint (true, inside the chunk,
    // none) and without a chunk long enough for the prefill tiles.
    for (int pool : {RF_TYPE_F16, RF_TYPE_Q8_0}) {
        v.push_back(mixed_attention(rng, pool, 128, 8, 2, 15, 77, 120, 15));
        v.push_back(mixed_attention(rng, pool, 64, 8, 8, 5, 40, 40, 5));
        v.push_back(mixed_attention(rng, pool, 128, 8, 2, 15, 77, 120, 20));
        v.push_back(mixed_attention(rng, pool, 128, 8, 2, 15, 77, 120, 0));
        v.push_back(mixed_attention(rng, pool, 128, 4, 4, 3, 6, 300, 3));
    }
    // Sliding window and soft cap (Gemma): decode and prefill, head sizes 256 (Gemma 2/3) and 64.
    for (int pool : {RF_TYPE_F16, RF_TYPE_Q8_0}) {
        v.push_back(limited_attention(rng, pool, 256, 8, 4, {300}, 1, 64, 0.f));
        v.push_back(limited_attention(rng, pool, 256, 8, 4, {300, 40}, 1, 0, 0.5f));
        v.push_back(limited_attention(rng, pool, 256, 4, 1, {90}, 40, 16, 0.5f));
        v.push_back(bidirectional_attention(rng, pool, 32, 12, 12, {40}, 40));     // bge-small's heads
        v.push_back(bidirectional_attention(rng, pool, 64, 12, 12, {40, 40}, 40)); // nomic-embed's, two inputs
        v.push_back(bidirectional_attention(rng, pool, 64, 4, 2, {90}, 30));       // a part of a sequence
        v.push_back(limited_attention(rng, pool, 64, 8, 2, {512}, 512, 3, 1.f));
        // gpt-oss (64 heads of 64 over 8 KV heads): decode of two sequences, a prompt, a mixed
        // step; full layers and the 128-position window.
        for (int window : {0, 128}) {
            v.push_back(sink_attention(rng, pool, 64, 64, 8, {300, 45}, 1, window));
            v.push_back(sink_attention(rng, pool, 64, 64, 8, {200}, 200, window));
            v.push_back(sink_attention(rng, pool, 64, 16, 2, {1}, 1, window)); // one key: the sink against one score
        }
        // The tensor-core prefill tiles and the streaming decode kernels with the limits: a window
        // inside one KV tile, one spanning tiles, a soft cap; several sequences in one tile.
        v.push_back(limited_attention(rng, pool, 256, 4, 1, {512}, 512, 512, 0.f));
        v.push_back(limited_attention(rng, pool, 256, 4, 1, {700}, 512, 100, 0.f));
        v.push_back(limited_attention(rng, pool, 256, 8, 4, {600}, 300, 0, 50.f));
        v.push_back(limited_attention(rng, pool, 256, 8, 4, {90, 140}, 40, 64, 0.5f));
        v.push_back(limited_attention(rng, pool, 128, 8, 2, {400}, 200, 37, 0.f));
        v.push_back(limited_attention(rng, pool, 96, 8, 8, {300}, 100, 130, 30.f));
        for (int G : {1, 2, 4, 8})
            for (int ctx : {1, 60, 513, 2000}) {
                v.push_back(limited_attention(rng, pool, 256, 4 * G, 4, {ctx}, 1, 512, 0.f));
                v.push_back(limited_attention(rng, pool, 256, 2 * G, 2, {ctx, ctx / 2 + 1}, 1, 0, 50.f));
            }
        v.push_back(limited_attention(rng, pool, 128, 16, 8, {3000, 90}, 1, 1024, 0.f));
    }
    // Head sizes 96 (Phi-3) and 256 (Gemma) without limits: prefill after 0 and 300 positions, decode.
    for (int pool : {RF_TYPE_F16, RF_TYPE_Q8_0}) {
        for (int D : {96, 256}) {
            v.push_back(attention(rng, pool, D, 4, 2, {512}, 512, 1e-5));
            v.push_back(attention(rng, pool, D, 8, 1, {812}, 512, 1e-5));
            v.push_back(attention(rng, pool, D, 6, 3, {45, 70}, 20, 1e-5));
            v.push_back(attention(rng, pool, D, 8, 4, {1, 300, 4096}, 1, 1e-5));
        }
    }
    // Decode attention (split over the context; up to 512 positions one chunk on the wide kernels):
    // contexts 1..4096, GQA group 1/4/8, two sequences.
    for (int pool : {RF_TYPE_F16, RF_TYPE_Q8_0}) {
        for (int G : {1, 4, 8})
            for (int ctx : {1, 17, 300, 512, 4096}) v.push_back(attention(rng, pool, 128, 16, 16 / G, {ctx}, 1, 1e-5));
        v.push_back(attention(rng, pool, 64, 32, 4, {1000}, 1, 1e-5));
        v.push_back(attention(rng, pool, 64, 32, 4, {200, 480, 33}, 1, 1e-5));
        v.push_back(attention(rng, pool, 64, 8, 8, {300, 4096}, 1, 1e-5));
        // Query heads per KV head that the streaming kernel rounds up (3 -> 4) or takes as is (2).
        v.push_back(attention(rng, pool, 128, 6, 2, {2000}, 1, 1e-5));
        // Short contexts with few KV heads: the heads split over blocks (to one head a block, or
        // two groups of 4 of 6 heads where 9 tokens of 4 KV heads stop the split).
        v.push_back(attention(rng, pool, 128, 6, 1, {100}, 1, 1e-5));
        v.push_back(attention(rng, pool, 128, 24, 4, {40, 41, 42, 43, 44, 45, 46, 47, 48}, 1, 1e-5));
        v.push_back(attention(rng, pool, 256, 4, 1, {64}, 1, 1e-5));
        v.push_back(attention(rng, pool, 64, 4, 2, {5000}, 1, 1e-5));
        // Batched decode: 16 sequences of different lengths, one token each.
        v.push_back(attention(rng, pool, 128, 8, 2, {1, 5, 64, 65, 100, 129, 200, 300, 17, 33, 700, 1000, 2, 3, 90, 400}, 1, 1e-5));
        // More (KV head, token) blocks than multiprocessors: the one-chunk contexts on 8 warps (_w8:
        // 256 blocks on the H200's 132), then on 4 (_w4: 296 blocks).
        v.push_back(attention(rng, pool, 128, 32, 16, {1, 9, 64, 100, 129, 200, 300, 512, 17, 33, 250, 501, 2, 3, 90, 160}, 1, 1e-5));
        v.push_back(attention(rng, pool, 64, 32, 8, {40, 300, 128, 7, 480, 33, 200, 64, 99, 12, 450, 1, 500, 260, 80, 16, 3, 190, 222,
                                                     350, 41, 510, 8, 100, 60, 70, 90, 110, 130, 150, 170, 180, 220, 240, 310, 320, 330},
                              1, 1e-5));
    }
    // The sinks in every fast attention kernel (where the final max and denominator are formed).
    // Decode: split over the context and merged (3000 positions; 5000: more chunks than the merge
    // caches weights of; a second sequence's empty chunks), in one chunk (the window of 128, short
    // contexts: the wide forms with the head split, _w8 for 20 tokens of 8 KV heads, _w4 for 40),
    // rf_attention_decode (head size 80: merged, one chunk). Prefill of 512 tokens after 300 cached
    // positions: the tensor-core tiles (f16), the shader-core ones (q8_0, full layers), and a mixed
    // step. gpt-oss's 64 heads of 64 over 8 KV heads, head sizes 128 and 256, full and windowed.
    for (int pool : {RF_TYPE_F16, RF_TYPE_Q8_0}) {
        for (int window : {0, 128, 1024}) {
            v.push_back(sink_attention(rng, pool, 64, 64, 8, {3000}, 1, window));
            v.push_back(sink_attention(rng, pool, 128, 32, 8, {3000, 700}, 1, window));
        }
        v.push_back(sink_attention(rng, pool, 128, 16, 2, {5000}, 1, 0));
        v.push_back(sink_attention(rng, pool, 64, 16, 2, {300}, 1, 0));
        v.push_back(sink_attention(rng, pool, 128, 8, 1, {100}, 1, 128));
        v.push_back(sink_attention(rng, pool, 64, 32, 8, {40, 300, 128, 7, 480, 33, 200, 64, 99, 12, 450, 1, 500, 260, 80, 16, 3, 190, 222, 350},
                                   1, 128));
        v.push_back(sink_attention(rng, pool, 64, 64, 8, {40, 300, 128, 7, 480, 33, 200, 64, 99, 12, 450, 1, 500, 260, 80, 16, 3, 190, 222, 350,
                                                          41, 510, 8, 100, 60, 70, 90, 110, 130, 150, 170, 180, 220, 240, 310, 320, 330, 5, 6, 9},
                                   1, 0));
        if (pool == RF_TYPE_F16) { // q8_0 pools need head sizes that are a multiple of 32
            v.push_back(sink_attention(rng, pool, 80, 8, 2, {700, 20}, 1, 0));
            v.push_back(sink_attention(rng, pool, 80, 8, 2, {20}, 1, 0));
        }
        v.push_back(sink_attention(rng, pool, 256, 8, 4, {3000}, 1, 0));
        v.push_back(sink_attention(rng, pool, 256, 8, 4, {2000}, 1, 512));
        for (int D : {64, 128})
            for (int window : {0, 128}) v.push_back(sink_attention(rng, pool, D, 16, 2, {812}, 512, window));
        v.push_back(with_sinks(rng, mixed_attention(rng, pool, 64, 16, 2, 5, 40, 300, 5), 16, 0));
        v.push_back(with_sinks(rng, mixed_attention(rng, pool, 64, 16, 2, 5, 40, 300, 5), 16, 128));
    }
    for (auto [from, to] : {std::pair{RF_TYPE_F32, RF_TYPE_F16}, {RF_TYPE_F16, RF_TYPE_F32}, {RF_TYPE_F32, RF_TYPE_BF16},
                            {RF_TYPE_BF16, RF_TYPE_F32}}) {
        v.push_back(base(std::string("copy ") + type_label(from) + "->" + type_label(to) + " [100,3]", RF_OP_COPY,
                         {make(to, 100, 3), rnd(rng, from, 100, 3)}, 1e-12));
    }
    return v;
}

bool wanted(const std::string &name, const std::string &filter) { return filter.empty() || name.find(filter) != std::string::npos; }

std::vector<Case> perf_cases(std::mt19937 &rng, const std::string &filter) {
    std::vector<Case> v;
    // A case's data only when its name passes the filter: making all of them (quantizing ~1 G
    // random weights) took over a minute of host time before the first kernel was timed.
    auto mm = [&](int t, int64_t K, int64_t N, int64_t M, int copies) {
        if (!wanted(matmul_label(t, K, N, M), filter)) return;
        Case c = matmul(rng, t, K, N, M);
        c.tensors[1].copies = copies;
        v.push_back(std::move(c));
    };
    auto att = [&](int pool, int D, int Hq, int Hkv, const std::vector<int> &seq_len, int T_per_seq) {
        if (wanted(attention_label(pool, D, Hq, Hkv, seq_len, T_per_seq), filter))
            v.push_back(attention(rng, pool, D, Hq, Hkv, seq_len, T_per_seq, 1e-5));
    };
    // Decode-shaped matmuls (weights cycled over 4 copies so they come from HBM, not L2).
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_Q8_0, RF_TYPE_F16, RF_TYPE_Q4_0, RF_TYPE_Q5_K}) mm(t, 4096, 14336, 1, 4);
    // Narrow decode matmuls (Llama-2-7B O and down projections).
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q4_0, RF_TYPE_Q6_K})
        for (auto [K, N] : {std::pair<int64_t, int64_t>{4096, 4096}, {11008, 4096}}) mm(t, K, N, 1, 4);
    // Batched decode: 2..16 columns against Llama-2-7B's attention and FFN shapes.
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q8_0})
        for (int64_t M : {2, 4, 8, 16}) mm(t, 4096, 11008, M, 4);
    // The grid i-quants and IQ4_XS beside them: decode (1, 2, 8 columns) on Llama-2-7B's FFN
    // shapes and the 512-token prefill tile.
    for (int t : {RF_TYPE_IQ4_XS, RF_TYPE_IQ2_XXS, RF_TYPE_IQ2_XS, RF_TYPE_IQ2_S, RF_TYPE_IQ3_XXS, RF_TYPE_IQ3_S, RF_TYPE_IQ1_S,
                  RF_TYPE_IQ1_M, RF_TYPE_TQ2_0}) {
        for (int64_t M : {1, 2, 8}) mm(t, 4096, 11008, M, 4);
        mm(t, 11008, 4096, 1, 4);
        mm(t, 4096, 4096, 512, 1);
    }
    // Two and three sequences on the attention shapes: Q, K, V apart (4096 x 4096) and as one
    // 12288-row matrix, and the down projection.
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q6_K})
        for (auto [K, N] : {std::pair<int64_t, int64_t>{4096, 4096}, {4096, 12288}, {11008, 4096}})
            for (int64_t M : {2, 3}) mm(t, K, N, M, 8);
    // Batched decode of 8..64 sequences (matmul_mmq), all three Llama-2-7B matmul shapes; 8
    // weight copies for the 4096x4096 one (so they come from HBM, not L2).
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q5_K, RF_TYPE_Q6_K, RF_TYPE_Q4_0, RF_TYPE_Q8_0})
        for (auto [K, N] : {std::pair<int64_t, int64_t>{4096, 11008}, {4096, 4096}, {11008, 4096}})
            for (int64_t M : {8, 16, 32, 64}) {
                if (K == 4096 && N == 11008 && M <= 16 && t != RF_TYPE_Q5_K) continue; // above
                mm(t, K, N, M, N == 4096 && K == 4096 ? 8 : 4);
            }
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q6_K, RF_TYPE_Q8_0, RF_TYPE_F16, RF_TYPE_Q4_0, RF_TYPE_Q5_K}) mm(t, 4096, 4096, 512, 1);
    // A few dozen columns past the decode kernels (a server step: decode rows and a prompt
    // chunk; short prompts): the prefill kernels' tile width (matmul_mmq.cpp's choice).
    for (int64_t M : {80, 101, 128, 192, 256}) {
        for (auto [K, N] : {std::pair<int64_t, int64_t>{4096, 4096}, {4096, 11008}, {11008, 4096}}) mm(RF_TYPE_Q4_K, K, N, M, 2);
        mm(RF_TYPE_Q6_K, 11008, 4096, M, 2);
        mm(RF_TYPE_Q4_0, 4096, 4096, M, 2);
    }
    // Prefill shapes: larger batches, TinyLlama (2048 / 5632) and Llama-2-7B FFN (11008).
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_F16}) mm(t, 4096, 4096, 2048, 1);
    mm(RF_TYPE_F16, 4096, 11008, 512, 1); // Llama-2-7B F16 FFN (gate / up, down)
    mm(RF_TYPE_F16, 11008, 4096, 512, 1);
    mm(RF_TYPE_Q4_K, 2048, 2048, 512, 1);
    mm(RF_TYPE_Q4_K, 2048, 5632, 512, 1);
    mm(RF_TYPE_Q6_K, 5632, 2048, 512, 1);
    mm(RF_TYPE_Q4_K, 4096, 11008, 512, 1);
    for (int t : {RF_TYPE_Q4_0, RF_TYPE_Q6_K, RF_TYPE_Q8_0}) mm(t, 4096, 11008, 512, 1);
    for (int t : {RF_TYPE_Q4_K, RF_TYPE_Q4_0, RF_TYPE_Q6_K}) mm(t, 11008, 4096, 512, 1);
    // Decode shapes of TinyLlama (2048 / 5632) and Llama-2-7B attention at a long context.
    for (auto [K, N] : {std::pair<int64_t, int64_t>{2048, 2048}, {2048, 5632}, {5632, 2048}}) mm(RF_TYPE_Q4_K, K, N, 1, 8);
    att(RF_TYPE_F16, 64, 32, 4, {4096}, 1);
    att(RF_TYPE_F16, 128, 32, 32, {4096}, 1);
    att(RF_TYPE_F16, 128, 32, 8, {4096}, 1);
    att(RF_TYPE_Q8_0, 128, 32, 8, {4096}, 1);
    att(RF_TYPE_F16, 128, 32, 8, {512}, 512);
    att(RF_TYPE_F16, 64, 32, 4, {512}, 512);
    att(RF_TYPE_F16, 128, 32, 32, {2048}, 2048);
    att(RF_TYPE_F16, 128, 32, 32, {512}, 512);         // Llama-2-7B prefill
    att(RF_TYPE_F16, 128, 32, 32, {2560}, 512);        // 512 more at depth 2048
    att(RF_TYPE_F16, 128, 32, 32, {8192}, 1);          // 7B decode at 8k context
    att(RF_TYPE_F16, 128, 32, 32, std::vector<int>(16, 256), 1); // 16 sequences

    if (wanted("rms_norm [4096,512]", filter)) {
        Case c = base("rms_norm [4096,512]", RF_OP_RMS_NORM, {make(RF_TYPE_F32, 4096, 512), rnd(rng, RF_TYPE_F32, 4096, 512)}, 1e-10);
        c.fparams[0] = 1e-5f;
        v.push_back(c);
    }
    if (wanted("swiglu [14336,512]", filter))
        v.push_back(base("swiglu [14336,512]", RF_OP_SWIGLU,
                         {make(RF_TYPE_F32, 14336, 512), rnd(rng, RF_TYPE_F32, 14336, 512), rnd(rng, RF_TYPE_F32, 14336, 512)}, 1e-10));
    if (wanted("get_rows q4_K [4096] x512", filter)) {
        v.push_back(base("get_rows q4_K [4096] x512", RF_OP_GET_ROWS,
                         {make(RF_TYPE_F32, 4096, 512), rnd(rng, RF_TYPE_Q4_K, 4096, 32000), ints(random_ids(rng, 512, 32000), 512)},
                         1e-10));
        v.back().bytes = 512.0 * (row_bytes(RF_TYPE_Q4_K, 4096) + 4096 * 4);
    }
    return v;
}

} // namespace opcheck
