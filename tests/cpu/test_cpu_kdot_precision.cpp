// Precision of the K-quant dot kernels (Q4_K / Q6_K weights x q8_K activations) of every SIMD
// level against float64 math on the same quantized values: the exact integer dot of each
// super-block, scaled in double. The CPU plugin's kernel objects are linked into this executable (not dlopened) so
// each level's table can be called directly. Prints per-kernel max / mean relative errors
// (RF_KDOT_VERBOSE=1 for the full table) and checks saturation extremes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "kernels.h"
#include "rocmforge/abi.h"
#include "rocmforge/blocks.h"
#include "rocmforge/types.h"

using namespace rf;
using rfcpu::KernelSet;
using rfcpu::SimdLevel;

namespace {

float f16_to_float(uint16_t h) {
    float f;
    rf::dequantize_row(RF_TYPE_F16, &h, &f, 1);
    return f;
}

// Exact integer decode of one super-block: value e = d * sc[e] * q[e] - dmin * mn[e].
struct Decoded {
    int32_t q[QK_K], sc[QK_K], mn[QK_K];
    double d, dmin;
};

void decode_q4_K(const block_q4_K &x, Decoded *o) {
    o->d = f16_to_float(x.d);
    o->dmin = f16_to_float(x.dmin);
    const uint8_t *s = x.scales;
    for (int j = 0; j < 8; ++j) {
        int sc, m;
        if (j < 4) { sc = s[j] & 63; m = s[j + 4] & 63; }
        else { sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4); m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4); }
        for (int l = 0; l < 32; ++l) { o->sc[32 * j + l] = sc; o->mn[32 * j + l] = m; }
    }
    for (int j = 0; j < 4; ++j)
        for (int l = 0; l < 32; ++l) {
            o->q[64 * j + l] = x.qs[32 * j + l] & 0xF;
            o->q[64 * j + 32 + l] = x.qs[32 * j + l] >> 4;
        }
}

// ggml's dequantize_row_q6_K order; value = d * sc * (q - 32).
void decode_q6_K(const block_q6_K &x, Decoded *o) {
    o->d = o->dmin = f16_to_float(x.d);
    for (int n = 0; n < 2; ++n) {
        const uint8_t *ql = x.ql + 64 * n, *qh = x.qh + 32 * n;
        const int8_t *sc = x.scales + 8 * n;
        const int e0 = 128 * n;
        for (int l = 0; l < 32; ++l) {
            const int is = l / 16;
            const int q[4] = {(ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4), (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4),
                              (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4), (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)};
            for (int t = 0; t < 4; ++t) {
                const int e = e0 + l + 32 * t;
                o->q[e] = q[t];
                o->sc[e] = sc[is + 2 * t];
                o->mn[e] = 32 * sc[is + 2 * t];
            }
        }
    }
}

struct Ref {
    double value; // exact dot in double
    double scale; // sum over blocks of |da| (|d main| + |dmin mins|): the cancellation-free size
};

Ref reference(int type, const uint8_t *w, const block_q8_K *a, int64_t k) {
    Ref r{0, 0};
    Decoded dec;
    const size_t bb = type == RF_TYPE_Q4_K ? sizeof(block_q4_K) : sizeof(block_q6_K);
    for (int64_t b = 0; b < k / QK_K; ++b) {
        if (type == RF_TYPE_Q4_K) decode_q4_K(*reinterpret_cast<const block_q4_K *>(w + b * bb), &dec);
        else decode_q6_K(*reinterpret_cast<const block_q6_K *>(w + b * bb), &dec);
        int64_t main = 0, mins = 0;
        for (int e = 0; e < QK_K; ++e) {
            main += int64_t(dec.sc[e]) * dec.q[e] * a[b].qs[e];
            mins += int64_t(dec.mn[e]) * a[b].qs[e];
        }
        const double da = a[b].d;
        r.value += da * (dec.d * double(main) - dec.dmin * double(mins));
        r.scale += std::fabs(da) * (std::fabs(dec.d * double(main)) + std::fabs(dec.dmin * double(mins)));
    }
    return r;
}

std::vector<SimdLevel> levels() {
    std::vector<SimdLevel> v{SimdLevel::Scalar};
    const SimdLevel best = rfcpu::detect_simd_level();
    if (best >= SimdLevel::Avx2) v.push_back(SimdLevel::Avx2);
    if (best >= SimdLevel::Avx512Vnni) v.push_back(SimdLevel::Avx512Vnni);
    return v;
}

bool verbose() {
    const char *e = std::getenv("RF_KDOT_VERBOSE");
    return e && *e && *e != '0';
}

enum class Dist { Normal, Offset, Outliers };
const char *dist_name(Dist d) { return d == Dist::Normal ? "N(0,1)" : d == Dist::Offset ? "N(0,1)+2" : "outliers"; }

struct Stats {
    double max_rel = 0, sum_rel = 0, max_scaled = 0, sum_scaled = 0;
    int n = 0;
    std::vector<double> rels;
    double median_rel() {
        std::nth_element(rels.begin(), rels.begin() + rels.size() / 2, rels.end());
        return rels[rels.size() / 2];
    }
    void add(double got, const Ref &r) {
        const double err = std::fabs(got - r.value);
        const double rel = err / std::fabs(r.value);
        rels.push_back(rel);
        const double scaled = err / (r.scale * 0x1p-24); // in units of f32 half-ulps of the term sizes
        max_rel = std::max(max_rel, rel);
        sum_rel += rel;
        max_scaled = std::max(max_scaled, scaled);
        sum_scaled += scaled;
        ++n;
    }
};

} // namespace

TEST_CASE("cpu K-quant dots vs float64 on the same quantized values", "[cpu][kquant][precision]") {
    const std::vector<SimdLevel> lv = levels();
    const KernelSet &scalar = rfcpu::kernels_for(SimdLevel::Scalar);
    std::mt19937 gen(1234);
    std::normal_distribution<float> nd(0.f, 1.f);
    constexpr int kCols = rfcpu::kMaxCols;
    constexpr int kRows = 400;

    for (int type : {RF_TYPE_Q4_K, RF_TYPE_Q6_K}) {
        for (int64_t k : {int64_t(256), int64_t(1024), int64_t(4096)}) {
            for (Dist dist : {Dist::Normal, Dist::Offset, Dist::Outliers}) {
                const size_t wrow = size_t(k / QK_K) * (type == RF_TYPE_Q4_K ? sizeof(block_q4_K) : sizeof(block_q6_K));
                const size_t arow = rfcpu::act_row_size(rfcpu::ActFormat::Q8_K, k);
                std::vector<uint8_t> w(wrow * kRows), act(arow * kCols);
                std::vector<float> x(static_cast<size_t>(k));
                for (int r = 0; r < kRows; ++r) {
                    for (auto &v : x) v = nd(gen) * 0.05f;
                    rf::quantize_row(type, x.data(), w.data() + r * wrow, k);
                }
                for (int c = 0; c < kCols; ++c) {
                    for (int64_t i = 0; i < k; ++i) {
                        float v = nd(gen);
                        if (dist == Dist::Offset) v += 2.f;
                        if (dist == Dist::Outliers && i % 97 == 5) v *= 40.f;
                        x[size_t(i)] = v;
                    }
                    scalar.quantize_q8_K(x.data(), act.data() + c * arow, k);
                    // Every level's quantizer is bit-identical to the scalar one.
                    std::vector<uint8_t> other(arow);
                    for (SimdLevel l : lv) {
                        rfcpu::kernels_for(l).quantize_q8_K(x.data(), other.data(), k);
                        CHECK(std::memcmp(other.data(), act.data() + c * arow, arow) == 0);
                    }
                }
                Stats ideal;
                std::vector<Stats> st(lv.size());
                for (int r = 0; r < kRows; ++r) {
                    const uint8_t *wr = w.data() + r * wrow;
                    Ref ref[kCols];
                    for (int c = 0; c < kCols; ++c) {
                        ref[c] = reference(type, wr, reinterpret_cast<const block_q8_K *>(act.data() + c * arow), k);
                        ideal.add(double(float(ref[c].value)), ref[c]);
                    }
                    for (size_t li = 0; li < lv.size(); ++li) {
                        const auto dot = rfcpu::kernels_for(lv[li]).matmul[type].dot;
                        float out8[kCols], out1[kCols];
                        dot(k, wr, act.data(), arow, kCols, out8, 1);
                        for (int c = 0; c < kCols; ++c) dot(k, wr, act.data() + c * arow, arow, 1, out1 + c, 1);
                        for (int c = 0; c < kCols; ++c) {
                            CHECK(out8[c] == out1[c]); // a column's result does not depend on the tile width
                            st[li].add(out8[c], ref[c]);
                        }
                    }
                }
                if (verbose())
                    std::printf("%-5s K=%-5lld %-9s f32(ref):   median rel %.2e mean %.2e max %.2e\n", rf::type_name(type),
                                (long long)k, dist_name(dist), ideal.median_rel(), ideal.sum_rel / ideal.n, ideal.max_rel);
                for (size_t li = 0; li < lv.size(); ++li) {
                    Stats &s = st[li];
                    if (verbose())
                        std::printf("      %-11s median rel %.2e mean %.2e max %.2e | err/(2^-24*S): mean %.3f max %.3f\n",
                                    rfcpu::simd_level_name(lv[li]), s.median_rel(), s.sum_rel / s.n, s.max_rel, s.sum_scaled / s.n,
                                    s.max_scaled);
                    INFO(rf::type_name(type) << " K=" << k << " " << dist_name(dist) << " " << rfcpu::simd_level_name(lv[li]));
                    // Only float32 rounding is left (the integer pipeline is exact: next test cases). The
                    // main and min terms cancel, and the SIMD kernels round 16 (AVX-512) or 8 (AVX2) lane
                    // partial sums of them, so errors reach tens of units of 2^-24 of S = sum over blocks
                    // of |d main| + |dmin mins|; a lost integer term would be far larger (2^24 / |main|).
                    CHECK(s.sum_rel / s.n < 1e-4);
                    CHECK(s.max_scaled < 256.0);
                }
            }
        }
    }
}

namespace {

// q8_K block with every activation = f(i), d = 1, correct bsums.
template <class F>
block_q8_K act_block(F f) {
    block_q8_K a{};
    a.d = 1.f;
    for (int i = 0; i < QK_K; ++i) a.qs[i] = int8_t(f(i));
    for (int g = 0; g < QK_K / 16; ++g) {
        int s = 0;
        for (int i = 0; i < 16; ++i) s += a.qs[16 * g + i];
        a.bsums[g] = int16_t(s);
    }
    return a;
}

} // namespace

TEST_CASE("cpu K-quant dots at the saturation extremes", "[cpu][kquant][precision]") {
    const std::vector<SimdLevel> lv = levels();
    const uint16_t one = 0x3C00; // f16 1.0
    std::vector<block_q8_K> acts = {
        act_block([](int) { return 127; }), act_block([](int) { return -127; }),
        act_block([](int i) { return i % 2 ? -127 : 127; }), act_block([](int i) { return (i / 16) % 2 ? -127 : 127; }),
        act_block([](int i) { return (i * 37) % 255 - 127; })};

    std::vector<std::pair<int, std::vector<uint8_t>>> blocks;
    for (uint8_t qs : {uint8_t(0xFF), uint8_t(0x00), uint8_t(0xF0), uint8_t(0x0F)})
        for (uint8_t sc : {uint8_t(0xFF), uint8_t(0x3F), uint8_t(0x00)}) {
            block_q4_K x{};
            x.d = one;
            x.dmin = one;
            std::memset(x.scales, sc, sizeof x.scales);
            std::memset(x.qs, qs, sizeof x.qs);
            std::vector<uint8_t> b(sizeof x);
            std::memcpy(b.data(), &x, sizeof x);
            blocks.push_back({RF_TYPE_Q4_K, b});
        }
    for (uint8_t q : {uint8_t(0xFF), uint8_t(0x00)})
        for (int8_t sc : {int8_t(127), int8_t(-128), int8_t(0)}) {
            block_q6_K x{};
            x.d = one;
            std::memset(x.ql, q, sizeof x.ql);
            std::memset(x.qh, q, sizeof x.qh);
            for (int g = 0; g < 16; ++g) x.scales[g] = g % 2 ? sc : int8_t(-sc - (sc == -128 ? 0 : 1));
            std::vector<uint8_t> b(sizeof x);
            std::memcpy(b.data(), &x, sizeof x);
            blocks.push_back({RF_TYPE_Q6_K, b});
        }
    double worst[3] = {};
    for (const auto &[type, b] : blocks)
        for (const block_q8_K &a : acts) {
            const Ref ref = reference(type, b.data(), &a, QK_K);
            for (size_t li = 0; li < lv.size(); ++li) {
                float out = 0.f;
                rfcpu::kernels_for(lv[li]).matmul[type].dot(QK_K, b.data(), &a, sizeof a, 1, &out, 1);
                const double err = std::fabs(double(out) - ref.value) / std::max(1.0, ref.scale);
                worst[li] = std::max(worst[li], err);
                INFO(rf::type_name(type) << " " << rfcpu::simd_level_name(lv[li]) << " ref " << ref.value << " got " << out);
                // Integers below 2^24 are exact in float; above, one rounding each of main and mins.
                CHECK(err <= 0x1p-23);
            }
        }
    if (verbose())
        for (size_t li = 0; li < lv.size(); ++li)
            std::printf("saturation extremes, %-11s worst |err|/S %.2e\n", rfcpu::simd_level_name(lv[li]), worst[li]);
}

// With d = dmin = 1 and activation scale 1 every float the kernels form is an integer; below
// 2^24 (scales and activations bounded so every partial sum is) float arithmetic is exact in any
// order, so each level must return the exact integer dot: any saturation, lost bit or missing
// term in the integer pipeline shows up as a mismatch.
TEST_CASE("cpu K-quant dots: integer pipeline exact for random blocks", "[cpu][kquant][precision]") {
    const std::vector<SimdLevel> lv = levels();
    std::mt19937 gen(99);
    std::uniform_int_distribution<int> byte(0, 255);
    constexpr int kCols = rfcpu::kMaxCols;
    int mismatches[3] = {}, cases = 0;
    for (int type : {RF_TYPE_Q4_K, RF_TYPE_Q6_K})
        for (int64_t k : {int64_t(256), int64_t(1024)}) {
            const int amax = k == 256 ? 127 : 31;
            std::uniform_int_distribution<int> aval(-amax, amax), sc6(-8, 8);
            const int64_t nb = k / QK_K;
            const size_t wrow = size_t(nb) * (type == RF_TYPE_Q4_K ? sizeof(block_q4_K) : sizeof(block_q6_K));
            std::vector<block_q8_K> act(size_t(nb * kCols));
            for (int rep = 0; rep < 200; ++rep) {
                std::vector<uint8_t> w(wrow);
                for (auto &v : w) v = uint8_t(byte(gen));
                for (int64_t b = 0; b < nb; ++b) {
                    if (type == RF_TYPE_Q4_K) {
                        auto *x = reinterpret_cast<block_q4_K *>(w.data()) + b;
                        x->d = x->dmin = 0x3C00;
                        for (auto &s : x->scales) s &= 0x1F; // sub-block scales and mins <= 31
                    } else {
                        auto *x = reinterpret_cast<block_q6_K *>(w.data()) + b;
                        x->d = 0x3C00;
                        for (auto &s : x->scales) s = int8_t(sc6(gen));
                    }
                }
                for (auto &a : act) a = act_block([&](int) { return aval(gen); });
                float out[kCols];
                for (size_t li = 0; li < lv.size(); ++li) {
                    rfcpu::kernels_for(lv[li]).matmul[type].dot(k, w.data(), act.data(), size_t(nb) * sizeof(block_q8_K), kCols, out, 1);
                    for (int c = 0; c < kCols; ++c) {
                        const Ref ref = reference(type, w.data(), act.data() + c * nb, k);
                        REQUIRE(ref.scale < 0x1p24);
                        if (double(out[c]) != ref.value) ++mismatches[li];
                        INFO(rf::type_name(type) << " K=" << k << " " << rfcpu::simd_level_name(lv[li]) << " ref " << ref.value << " got " << out[c]);
                        CHECK(double(out[c]) == ref.value);
                    }
                }
                cases += kCols;
            }
        }
    if (verbose())
        for (size_t li = 0; li < lv.size(); ++li)
            std::printf("integer-exact dots, %-11s %d / %d mismatches\n", rfcpu::simd_level_name(lv[li]), mismatches[li], cases);
}
