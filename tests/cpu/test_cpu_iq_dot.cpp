// The i-quant and ternary dot kernels of every SIMD level against float64: the weight row
// dequantized by rf::dequantize_row (bit-exact with ggml) times the kernel's own quantized
// activation (q8_K / q8_32 values and scales), summed in double. The kernels' integer sums are
// exact, so the error is the float accumulation only: bounded by a few f32 ulps of the sum of
// the terms' magnitudes. Random weight bytes reach every grid index, sign and scale value;
// all-ones blocks take the largest index of every field.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels.h"
#include "rocmforge/abi.h"
#include "rocmforge/blocks.h"
#include "rocmforge/types.h"

using namespace rf;
using rfcpu::ActFormat;
using rfcpu::KernelSet;
using rfcpu::SimdLevel;

namespace {

const int kIqTypes[] = {RF_TYPE_IQ2_XXS, RF_TYPE_IQ2_XS, RF_TYPE_IQ2_S, RF_TYPE_IQ3_XXS,
                        RF_TYPE_IQ3_S,   RF_TYPE_IQ1_S,  RF_TYPE_IQ1_M, RF_TYPE_IQ4_NL,
                        RF_TYPE_IQ4_XS,  RF_TYPE_TQ1_0,  RF_TYPE_TQ2_0};

std::vector<SimdLevel> levels() {
    std::vector<SimdLevel> v{SimdLevel::Scalar};
    const SimdLevel best = rfcpu::detect_simd_level();
    if (best >= SimdLevel::Avx2) v.push_back(SimdLevel::Avx2);
    if (best >= SimdLevel::Avx512Vnni) v.push_back(SimdLevel::Avx512Vnni);
    return v;
}

// Weight blocks: random (or all-ones) bytes, the f16 scale set to a normal value.
std::vector<uint8_t> weight_row(int type, int64_t k, std::mt19937 &rng, bool all_ones) {
    const TypeTraits *t = type_traits(type);
    std::vector<uint8_t> w(row_size(type, k));
    for (auto &b : w) b = all_ones ? 0xFF : uint8_t(rng());
    for (size_t off = 0; off < w.size(); off += t->type_size) {
        uint8_t *b = w.data() + off;
        const uint16_t d = uint16_t(((rng() & 1) << 15) | ((10 + rng() % 8) << 10) | (rng() % 1024));
        if (type == RF_TYPE_IQ1_M) {
            for (int i = 0; i < 4; ++i) b[48 + 2 * i + 1] = uint8_t((b[48 + 2 * i + 1] & 0x0F) | (((d >> (4 * i)) & 15) << 4));
        } else {
            std::memcpy(b + (type == RF_TYPE_TQ1_0 ? 52 : type == RF_TYPE_TQ2_0 ? 64 : 0), &d, 2);
        }
    }
    return w;
}

// The activation values the kernel sees: element e = scale(e) * q(e).
std::vector<double> act_values(ActFormat fmt, const uint8_t *a, int64_t k) {
    std::vector<double> v(static_cast<size_t>(k));
    for (int64_t e = 0; e < k; ++e) {
        if (fmt == ActFormat::Q8_K) {
            const auto *b = reinterpret_cast<const block_q8_K *>(a) + e / QK_K;
            v[size_t(e)] = double(b->d) * b->qs[e % QK_K];
        } else {
            const auto *b = reinterpret_cast<const rfcpu::block_q8_32 *>(a) + e / 32;
            v[size_t(e)] = double(b->d) * b->qs[e % 32];
        }
    }
    return v;
}

} // namespace

TEST_CASE("cpu i-quant dots vs float64 on the same quantized values", "[cpu][iquant][precision]") {
    const std::vector<SimdLevel> lv = levels();
    std::mt19937 rng(777);
    std::normal_distribution<float> nd(0.f, 1.f);
    constexpr int kCols = rfcpu::kMaxCols;
    for (int type : kIqTypes) {
        const int64_t bs = type_traits(type)->block_size;
        for (int64_t k : {bs, 2 * bs, 8 * bs, int64_t(4096)}) {
            for (int trial = 0; trial < 12; ++trial) {
                const bool all_ones = trial == 0;
                INFO("type " << type_name(type) << " k=" << k << " trial " << trial);
                const std::vector<uint8_t> w = weight_row(type, k, rng, all_ones);
                std::vector<float> wf(static_cast<size_t>(k));
                dequantize_row(type, w.data(), wf.data(), k);
                // Columns with different activation ranges, one with an outlier.
                std::vector<float> x(size_t(k) * kCols);
                for (size_t i = 0; i < x.size(); ++i) x[i] = nd(rng) * (1.f + float(i / size_t(k)));
                x[size_t(3 * k + k / 2)] = 40.f;
                for (SimdLevel level : lv) {
                    const KernelSet &ks = rfcpu::kernels_for(level);
                    const rfcpu::MatmulKernel &kern = ks.matmul[type];
                    INFO("level " << int(level));
                    REQUIRE(kern.dot != nullptr);
                    REQUIRE(kern.act == (bs == 32 ? ActFormat::Q8_32 : ActFormat::Q8_K));
                    const size_t arow = rfcpu::act_row_size(kern.act, k);
                    std::vector<uint8_t> act(arow * kCols);
                    const rfcpu::QuantizeFn quant = kern.act == ActFormat::Q8_K ? ks.quantize_q8_K : ks.quantize_q8_32;
                    for (int c = 0; c < kCols; ++c) quant(x.data() + size_t(c) * k, act.data() + c * arow, k);
                    for (int nc = 1; nc <= kCols; nc += (nc < 4 ? 1 : 4)) {
                        std::vector<float> out(size_t(2 * nc), -1.f);
                        kern.dot(k, w.data(), act.data(), arow, nc, out.data(), 2);
                        for (int c = 0; c < nc; ++c) {
                            const std::vector<double> a = act_values(kern.act, act.data() + c * arow, k);
                            double ref = 0, mag = 0;
                            for (int64_t e = 0; e < k; ++e) {
                                ref += double(wf[size_t(e)]) * a[size_t(e)];
                                mag += std::fabs(double(wf[size_t(e)]) * a[size_t(e)]);
                            }
                            INFO("nc " << nc << " column " << c << " got " << out[size_t(2 * c)] << " want " << ref);
                            REQUIRE(std::isfinite(out[size_t(2 * c)]));
                            CHECK(std::fabs(double(out[size_t(2 * c)]) - ref) <= 1e-5 * mag + 1e-30);
                            CHECK(out[size_t(2 * c) + 1] == -1.f); // the output stride is respected
                        }
                    }
                }
            }
        }
    }
}

TEST_CASE("cpu i-quant dots: all-zero activations give zero", "[cpu][iquant]") {
    std::mt19937 rng(5);
    for (int type : kIqTypes) {
        const int64_t k = 1024;
        const std::vector<uint8_t> w = weight_row(type, k, rng, false);
        const std::vector<float> x(static_cast<size_t>(k), 0.f);
        for (SimdLevel level : levels()) {
            const KernelSet &ks = rfcpu::kernels_for(level);
            const rfcpu::MatmulKernel &kern = ks.matmul[type];
            std::vector<uint8_t> act(rfcpu::act_row_size(kern.act, k));
            (kern.act == ActFormat::Q8_K ? ks.quantize_q8_K : ks.quantize_q8_32)(x.data(), act.data(), k);
            float out = 1.f;
            kern.dot(k, w.data(), act.data(), act.size(), 1, &out, 1);
            INFO("type " << type_name(type) << " level " << int(level));
            CHECK(out == 0.f);
        }
    }
}
