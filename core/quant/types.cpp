// Type traits (ggml names and block geometry) and the row-level quantize/dequantize dispatch.
#include "rocmforge/types.h"

#include <cstring>
#include <string>

#include "quant_internal.h"
#include "rocmforge/error.h"

namespace rf {

namespace {

struct TypeEntry {
    int id;
    TypeTraits traits;
};

// Sizes are ggml's (blocks.h static_asserts the block structs against them).
constexpr TypeEntry kTypes[] = {
    {RF_TYPE_F32, {"f32", 1, 4, false}},
    {RF_TYPE_F16, {"f16", 1, 2, false}},
    {RF_TYPE_Q4_0, {"q4_0", QK4_0, sizeof(block_q4_0), true}},
    {RF_TYPE_Q4_1, {"q4_1", QK4_1, sizeof(block_q4_1), true}},
    {RF_TYPE_Q5_0, {"q5_0", QK5_0, sizeof(block_q5_0), true}},
    {RF_TYPE_Q5_1, {"q5_1", QK5_1, sizeof(block_q5_1), true}},
    {RF_TYPE_Q8_0, {"q8_0", QK8_0, sizeof(block_q8_0), true}},
    {RF_TYPE_Q8_1, {"q8_1", QK8_1, sizeof(block_q8_1), true}},
    {RF_TYPE_Q2_K, {"q2_K", QK_K, sizeof(block_q2_K), true}},
    {RF_TYPE_Q3_K, {"q3_K", QK_K, sizeof(block_q3_K), true}},
    {RF_TYPE_Q4_K, {"q4_K", QK_K, sizeof(block_q4_K), true}},
    {RF_TYPE_Q5_K, {"q5_K", QK_K, sizeof(block_q5_K), true}},
    {RF_TYPE_Q6_K, {"q6_K", QK_K, sizeof(block_q6_K), true}},
    {RF_TYPE_Q8_K, {"q8_K", QK_K, sizeof(block_q8_K), true}},
    {RF_TYPE_IQ2_XXS, {"iq2_xxs", QK_K, sizeof(block_iq2_xxs), true}},
    {RF_TYPE_IQ2_XS, {"iq2_xs", QK_K, sizeof(block_iq2_xs), true}},
    {RF_TYPE_IQ3_XXS, {"iq3_xxs", QK_K, sizeof(block_iq3_xxs), true}},
    {RF_TYPE_IQ1_S, {"iq1_s", QK_K, sizeof(block_iq1_s), true}},
    {RF_TYPE_IQ4_NL, {"iq4_nl", QK4_NL, sizeof(block_iq4_nl), true}},
    {RF_TYPE_IQ3_S, {"iq3_s", QK_K, sizeof(block_iq3_s), true}},
    {RF_TYPE_IQ2_S, {"iq2_s", QK_K, sizeof(block_iq2_s), true}},
    {RF_TYPE_IQ4_XS, {"iq4_xs", QK_K, sizeof(block_iq4_xs), true}},
    {RF_TYPE_I8, {"i8", 1, 1, false}},
    {RF_TYPE_I16, {"i16", 1, 2, false}},
    {RF_TYPE_I32, {"i32", 1, 4, false}},
    {RF_TYPE_I64, {"i64", 1, 8, false}},
    {RF_TYPE_F64, {"f64", 1, 8, false}},
    {RF_TYPE_IQ1_M, {"iq1_m", QK_K, sizeof(block_iq1_m), true}},
    {RF_TYPE_BF16, {"bf16", 1, 2, false}},
    {RF_TYPE_TQ1_0, {"tq1_0", QK_K, sizeof(block_tq1_0), true}},
    {RF_TYPE_TQ2_0, {"tq2_0", QK_K, sizeof(block_tq2_0), true}},
    {RF_TYPE_MXFP4, {"mxfp4", QK_MXFP4, sizeof(block_mxfp4), true}},
    {RF_TYPE_MXFP6_E2M3, {"mxfp6_e2m3", QK_MXFP6, sizeof(block_mxfp6), true}},
    {RF_TYPE_MXFP6_E3M2, {"mxfp6_e3m2", QK_MXFP6, sizeof(block_mxfp6), true}},
};

using DequantizeFn = void (*)(const void *, float *, int64_t);
using QuantizeFn = void (*)(const float *, void *, int64_t);
using WeightedFn = void (*)(const float *, void *, int64_t, const float *);

struct Codec {
    int id;
    DequantizeFn dequantize;
    QuantizeFn quantize;   // nullptr: no quantization without importance weights
    WeightedFn weighted = nullptr; // importance-aware quantizer (null weights allowed unless required)
};

// Adapters from the typed kernels to the void* row interface.
template <typename Block, void (*F)(const Block *, float *, int64_t)>
void deq(const void *src, float *dst, int64_t n) {
    F(static_cast<const Block *>(src), dst, n);
}
template <typename Block, void (*F)(const float *, Block *, int64_t)>
void qnt(const float *src, void *dst, int64_t n) {
    F(src, static_cast<Block *>(dst), n);
}

template <typename Block, void (*F)(const float *, Block *, int64_t, const float *)>
void qnt_w(const float *src, void *dst, int64_t n, const float *w) {
    F(src, static_cast<Block *>(dst), n, w);
}
// The importance-free form of a weighted quantizer (ggml's quantize_<type> with null weights).
template <typename Block, void (*F)(const float *, Block *, int64_t, const float *)>
void qnt_nw(const float *src, void *dst, int64_t n) {
    F(src, static_cast<Block *>(dst), n, nullptr);
}

void deq_f32(const void *src, float *dst, int64_t n) { std::memcpy(dst, src, static_cast<size_t>(n) * 4); }
void qnt_f32(const float *src, void *dst, int64_t n) { std::memcpy(dst, src, static_cast<size_t>(n) * 4); }
void deq_f16(const void *src, float *dst, int64_t n) {
    const auto *h = static_cast<const uint16_t *>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = quant::half_to_float(h[i]);
}
void qnt_f16(const float *src, void *dst, int64_t n) {
    auto *h = static_cast<uint16_t *>(dst);
    for (int64_t i = 0; i < n; ++i) h[i] = quant::float_to_half(src[i]);
}
void deq_bf16(const void *src, float *dst, int64_t n) {
    const auto *h = static_cast<const uint16_t *>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(h[i]);
}
void qnt_bf16(const float *src, void *dst, int64_t n) {
    auto *h = static_cast<uint16_t *>(dst);
    for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_bf16(src[i]);
}

using namespace quant;
const Codec kCodecs[] = {
    {RF_TYPE_F32, deq_f32, qnt_f32},
    {RF_TYPE_F16, deq_f16, qnt_f16},
    {RF_TYPE_BF16, deq_bf16, qnt_bf16},
    {RF_TYPE_Q4_0, deq<block_q4_0, dequantize_row_q4_0>, qnt<block_q4_0, quantize_row_q4_0>,
     qnt_w<block_q4_0, quantize_row_q4_0_w>},
    {RF_TYPE_Q4_1, deq<block_q4_1, dequantize_row_q4_1>, qnt<block_q4_1, quantize_row_q4_1>,
     qnt_w<block_q4_1, quantize_row_q4_1_w>},
    {RF_TYPE_Q5_0, deq<block_q5_0, dequantize_row_q5_0>, qnt<block_q5_0, quantize_row_q5_0>,
     qnt_w<block_q5_0, quantize_row_q5_0_w>},
    {RF_TYPE_Q5_1, deq<block_q5_1, dequantize_row_q5_1>, qnt<block_q5_1, quantize_row_q5_1>,
     qnt_w<block_q5_1, quantize_row_q5_1_w>},
    {RF_TYPE_Q8_0, deq<block_q8_0, dequantize_row_q8_0>, qnt<block_q8_0, quantize_row_q8_0>},
    {RF_TYPE_Q2_K, deq<block_q2_K, dequantize_row_q2_K>, qnt<block_q2_K, quantize_row_q2_K>,
     qnt_w<block_q2_K, quantize_row_q2_K_w>},
    {RF_TYPE_Q3_K, deq<block_q3_K, dequantize_row_q3_K>, qnt<block_q3_K, quantize_row_q3_K>,
     qnt_w<block_q3_K, quantize_row_q3_K_w>},
    {RF_TYPE_Q4_K, deq<block_q4_K, dequantize_row_q4_K>, qnt<block_q4_K, quantize_row_q4_K>,
     qnt_w<block_q4_K, quantize_row_q4_K_w>},
    {RF_TYPE_Q5_K, deq<block_q5_K, dequantize_row_q5_K>, qnt<block_q5_K, quantize_row_q5_K>,
     qnt_w<block_q5_K, quantize_row_q5_K_w>},
    {RF_TYPE_Q6_K, deq<block_q6_K, dequantize_row_q6_K>, qnt<block_q6_K, quantize_row_q6_K>,
     qnt_w<block_q6_K, quantize_row_q6_K_w>},
    {RF_TYPE_Q8_K, deq<block_q8_K, dequantize_row_q8_K>, qnt<block_q8_K, quantize_row_q8_K>},
    {RF_TYPE_MXFP4, deq<block_mxfp4, dequantize_row_mxfp4>, qnt<block_mxfp4, quantize_row_mxfp4>},
    {RF_TYPE_IQ2_XXS, deq<block_iq2_xxs, dequantize_row_iq2_xxs>, nullptr,
     qnt_w<block_iq2_xxs, quantize_row_iq2_xxs>},
    {RF_TYPE_IQ2_XS, deq<block_iq2_xs, dequantize_row_iq2_xs>, nullptr,
     qnt_w<block_iq2_xs, quantize_row_iq2_xs>},
    {RF_TYPE_IQ2_S, deq<block_iq2_s, dequantize_row_iq2_s>, qnt_nw<block_iq2_s, quantize_row_iq2_s>,
     qnt_w<block_iq2_s, quantize_row_iq2_s>},
    {RF_TYPE_IQ3_XXS, deq<block_iq3_xxs, dequantize_row_iq3_xxs>, qnt_nw<block_iq3_xxs, quantize_row_iq3_xxs>,
     qnt_w<block_iq3_xxs, quantize_row_iq3_xxs>},
    {RF_TYPE_IQ3_S, deq<block_iq3_s, dequantize_row_iq3_s>, qnt_nw<block_iq3_s, quantize_row_iq3_s>,
     qnt_w<block_iq3_s, quantize_row_iq3_s>},
    {RF_TYPE_IQ1_S, deq<block_iq1_s, dequantize_row_iq1_s>, nullptr, qnt_w<block_iq1_s, quantize_row_iq1_s>},
    {RF_TYPE_IQ1_M, deq<block_iq1_m, dequantize_row_iq1_m>, qnt_nw<block_iq1_m, quantize_row_iq1_m>,
     qnt_w<block_iq1_m, quantize_row_iq1_m>},
    {RF_TYPE_IQ4_NL, deq<block_iq4_nl, dequantize_row_iq4_nl>, qnt_nw<block_iq4_nl, quantize_row_iq4_nl>,
     qnt_w<block_iq4_nl, quantize_row_iq4_nl>},
    {RF_TYPE_IQ4_XS, deq<block_iq4_xs, dequantize_row_iq4_xs>, qnt_nw<block_iq4_xs, quantize_row_iq4_xs>,
     qnt_w<block_iq4_xs, quantize_row_iq4_xs>},
    {RF_TYPE_TQ1_0, deq<block_tq1_0, dequantize_row_tq1_0>, qnt<block_tq1_0, quantize_row_tq1_0>},
    {RF_TYPE_TQ2_0, deq<block_tq2_0, dequantize_row_tq2_0>, qnt<block_tq2_0, quantize_row_tq2_0>},
    {RF_TYPE_MXFP6_E2M3, deq<block_mxfp6, dequantize_row_mxfp6_e2m3>,
     qnt<block_mxfp6, quantize_row_mxfp6_e2m3>},
    {RF_TYPE_MXFP6_E3M2, deq<block_mxfp6, dequantize_row_mxfp6_e3m2>,
     qnt<block_mxfp6, quantize_row_mxfp6_e3m2>},
};

const Codec *find_codec(int type) {
    for (const Codec &c : kCodecs)
        if (c.id == type) return &c;
    return nullptr;
}

std::string describe(int type) {
    const TypeTraits *t = type_traits(type);
    return t ? std::string(t->name) : "unknown type id " + std::to_string(type);
}

// Shared argument checks of the row functions; `what` names the caller in messages.
void check_row(const char *what, int type, const void *a, const void *b, int64_t n) {
    const TypeTraits *t = type_traits(type);
    if (!t) throw Error(std::string(what) + ": unknown type id " + std::to_string(type));
    if (n < 0 || n % t->block_size != 0)
        throw Error(std::string(what) + ": " + std::to_string(n) + " elements of " + t->name +
                    " is not a multiple of the block size " + std::to_string(t->block_size));
    if (n > 0 && (!a || !b)) throw Error(std::string(what) + ": null buffer for " + t->name);
}

bool ascii_iequal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

} // namespace

const TypeTraits *type_traits(int type) {
    for (const TypeEntry &e : kTypes)
        if (e.id == type) return &e.traits;
    return nullptr;
}

bool type_is_known(int type) { return type_traits(type) != nullptr; }

const char *type_name(int type) {
    const TypeTraits *t = type_traits(type);
    return t ? t->name : "?";
}

int type_from_name(std::string_view name) {
    for (const TypeEntry &e : kTypes)
        if (ascii_iequal(name, e.traits.name)) return e.id;
    return -1;
}

size_t row_size(int type, int64_t n) {
    const TypeTraits *t = type_traits(type);
    if (!t) throw Error("row_size: unknown type id " + std::to_string(type));
    if (n < 0 || n % t->block_size != 0)
        throw Error("row_size: " + std::to_string(n) + " elements of " + t->name +
                    " is not a multiple of the block size " + std::to_string(t->block_size));
    return static_cast<size_t>(n / t->block_size) * t->type_size;
}

void dequantize_row(int type, const void *src, float *dst, int64_t n) {
    check_row("dequantize_row", type, src, dst, n);
    const Codec *c = find_codec(type);
    if (!c) throw Error("dequantize_row: no dequantization for " + describe(type));
    if (n > 0) c->dequantize(src, dst, n);
}

void quantize_row(int type, const float *src, void *dst, int64_t n) {
    check_row("quantize_row", type, src, dst, n);
    const Codec *c = find_codec(type);
    if (c && !c->quantize && c->weighted)
        throw Error("quantize_row: " + describe(type) + " needs an importance matrix (quantize_row_weighted)");
    if (!c || !c->quantize) throw Error("quantize_row: no quantization to " + describe(type));
    if (n > 0) c->quantize(src, dst, n);
}

bool can_quantize(int type) {
    const Codec *c = find_codec(type);
    return c && c->quantize;
}

void quantize_row_weighted(int type, const float *src, void *dst, int64_t n, const float *importance) {
    if (!importance) return quantize_row(type, src, dst, n);
    check_row("quantize_row_weighted", type, src, dst, n);
    const Codec *c = find_codec(type);
    if (!c || (!c->quantize && !c->weighted)) throw Error("quantize_row_weighted: no quantization to " + describe(type));
    if (n <= 0) return;
    if (c->weighted) c->weighted(src, dst, n, importance);
    else c->quantize(src, dst, n);
}

bool importance_aware(int type) {
    const Codec *c = find_codec(type);
    return c && c->weighted;
}

bool importance_required(int type) {
    const Codec *c = find_codec(type);
    return c && c->weighted && !c->quantize;
}

} // namespace rf
