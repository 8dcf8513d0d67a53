// Op test cases: host tensors with fresh random contents + one node, run identically on two
// backends. Shapes deliberately include odd sizes and non-multiples of the block size.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rocmforge/abi.h"

namespace opcheck {

struct HostTensor {
    int type = RF_TYPE_F32;
    int64_t ne[4] = {1, 1, 1, 1};
    std::vector<uint8_t> data;
    int copies = 1; // perf mode: distinct device copies cycled through (defeats the L2 cache)
};

struct Case {
    std::string name;           // "matmul q4_K K=256 N=67 M=1"
    int op = RF_OP_NONE;
    std::vector<HostTensor> tensors; // [0] = dst, then src0.. (an empty slot = NULL source)
    std::vector<bool> present;       // per tensor: false = NULL source
    int32_t iparams[8] = {};
    float fparams[8] = {};
    double max_nmse = 1e-6;
    bool exact = false;  // i32 outputs
    double flops = 0;    // for --perf
    double bytes = 0;    // bytes an ideal kernel moves (inputs once + output once)
};

// The grid i-quants with the dp4a decode family and the wgmma prefill tiles (kernels/mvq_iq.h).
inline constexpr int kFastGridTypes[] = {RF_TYPE_IQ2_XXS, RF_TYPE_IQ3_XXS, RF_TYPE_IQ3_S, RF_TYPE_IQ2_XS, RF_TYPE_IQ2_S,
                                         RF_TYPE_IQ1_S, RF_TYPE_IQ1_M, RF_TYPE_TQ2_0};

size_t type_block(int type);
size_t type_bytes(int type); // bytes per block
size_t row_bytes(int type, int64_t n);
size_t tensor_bytes(const HostTensor &t);
const char *type_label(int type);

// Host view of an output: values as float (f32, f16, bf16, q8_0, i32).
std::vector<double> to_double(const HostTensor &t, const std::vector<uint8_t> &bytes);

// Case builders (also used by fusion_cases.cpp): a zeroed tensor, one with random contents
// (quantized types: random codes, scales giving O(1) values), i32 contents, and whole cases.
HostTensor make(int type, int64_t n0, int64_t n1 = 1, int64_t n2 = 1, int64_t n3 = 1);
HostTensor rnd(std::mt19937 &rng, int type, int64_t n0, int64_t n1 = 1, int64_t n2 = 1, int64_t n3 = 1, float amp = 1.f);
HostTensor ints(const std::vector<int32_t> &v, int64_t n0, int64_t n1 = 1);
// ROPE's (cos, sin) rows of the tokens at `pos` (f32 [2, n_rot/2, T], rope_angles.h), base and
// scale as given, factors [n_rot/2] or nullptr.
HostTensor rope_angles(const std::vector<int32_t> &pos, int n_rot, float base, float scale, const float *factors);
Case base(const std::string &name, int op, std::vector<HostTensor> t, double nmse);
Case matmul(std::mt19937 &rng, int type, int64_t K, int64_t N, int64_t M, int64_t b2 = 1, int64_t bw2 = 1);
std::string matmul_label(int type, int64_t K, int64_t N, int64_t M, int64_t b2 = 1, int64_t bw2 = 1); // its name
// Decode or prefill attention: seq_len[s] positions in sequence s, the last T_per_seq of each new.
Case attention(std::mt19937 &rng, int pool, int D, int Hq, int Hkv, const std::vector<int> &seq_len, int T_per_seq, double nmse);
std::string attention_label(int pool, int D, int Hq, int Hkv, const std::vector<int> &seq_len, int T_per_seq); // its name
// Whether a case called `name` passes opcheck's --filter (empty: every case).
bool wanted(const std::string &name, const std::string &filter);

std::vector<Case> correctness_cases(std::mt19937 &rng);
// The --perf cases whose names pass `filter` (the others are not made: their data is large).
std::vector<Case> perf_cases(std::mt19937 &rng, const std::string &filter);

} // namespace opcheck
