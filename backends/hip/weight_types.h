// The weight types the HIP kernels decode (matmul, get_rows): kernel-name suffix, elements and
// bytes per block. One table for the backend (ops.cpp) and its op checks (tests/hip), which
// build host tensors of these layouts.
#pragma once
#include "rocmforge/abi.h"

namespace rf_hip {

struct TypeInfo { int type; const char *suffix; int block; int bytes; };
inline constexpr TypeInfo kWeightTypes[] = {
    {RF_TYPE_F32, "f32", 1, 4},      {RF_TYPE_F16, "f16", 1, 2},       {RF_TYPE_BF16, "bf16", 1, 2},
    {RF_TYPE_Q4_0, "q4_0", 32, 18},  {RF_TYPE_Q4_1, "q4_1", 32, 20},   {RF_TYPE_Q5_0, "q5_0", 32, 22},
    {RF_TYPE_Q5_1, "q5_1", 32, 24},  {RF_TYPE_Q8_0, "q8_0", 32, 34},   {RF_TYPE_Q2_K, "q2_k", 256, 84},
    {RF_TYPE_Q3_K, "q3_k", 256, 110}, {RF_TYPE_Q4_K, "q4_k", 256, 144}, {RF_TYPE_Q5_K, "q5_k", 256, 176},
    {RF_TYPE_Q6_K, "q6_k", 256, 210}, {RF_TYPE_MXFP4, "mxfp4", 32, 17}, {RF_TYPE_MXFP6_E2M3, "mxfp6_e2m3", 32, 25},
    {RF_TYPE_MXFP6_E3M2, "mxfp6_e3m2", 32, 25},
    {RF_TYPE_IQ2_XXS, "iq2_xxs", 256, 66}, {RF_TYPE_IQ2_XS, "iq2_xs", 256, 74}, {RF_TYPE_IQ2_S, "iq2_s", 256, 82},
    {RF_TYPE_IQ3_XXS, "iq3_xxs", 256, 98}, {RF_TYPE_IQ3_S, "iq3_s", 256, 110}, {RF_TYPE_IQ1_S, "iq1_s", 256, 50},
    {RF_TYPE_IQ1_M, "iq1_m", 256, 56},     {RF_TYPE_IQ4_NL, "iq4_nl", 32, 18},  {RF_TYPE_IQ4_XS, "iq4_xs", 256, 136},
    {RF_TYPE_TQ1_0, "tq1_0", 256, 54},     {RF_TYPE_TQ2_0, "tq2_0", 256, 66},
};

// The row of `type`, or null for a type no kernel decodes.
inline const TypeInfo *weight_type(int type) {
    for (const auto &i : kWeightTypes)
        if (i.type == type) return &i;
    return nullptr;
}

} // namespace rf_hip
