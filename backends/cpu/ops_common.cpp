// Op registry and the tensor-layout helpers shared by the op files.
#include <algorithm>
#include <sstream>

#include "ops.h"
#include "rocmforge/types.h"

namespace rfcpu {

size_t scalar_type_size(int type) {
    switch (type) {
    case RF_TYPE_F32: case RF_TYPE_I32: return 4;
    case RF_TYPE_F16: case RF_TYPE_BF16: case RF_TYPE_I16: return 2;
    case RF_TYPE_I8: return 1;
    case RF_TYPE_F64: case RF_TYPE_I64: return 8;
    default: return 0;
    }
}

static size_t row_bytes(const rf_tensor &t) {
    const rf::TypeTraits *tt = rf::type_traits(t.type);
    if (!tt || t.ne[0] % tt->block_size != 0) return 0;
    return size_t(t.ne[0] / tt->block_size) * tt->type_size;
}

bool rows_contiguous(const rf_tensor &t) {
    const rf::TypeTraits *tt = rf::type_traits(t.type);
    if (!tt || t.ne[0] % tt->block_size != 0) return false;
    if (!tt->quantized && t.nb[0] != int64_t(tt->type_size)) return false;
    for (int i = 0; i < RF_MAX_DIMS; ++i)
        if (t.ne[i] < 1) return false;
    return t.nb[1] >= int64_t(row_bytes(t));
}

bool is_contiguous(const rf_tensor &t) {
    if (!rows_contiguous(t)) return false;
    return t.nb[1] == int64_t(row_bytes(t)) && t.nb[2] == t.nb[1] * t.ne[1] && t.nb[3] == t.nb[2] * t.ne[2];
}

bool dequantizable(int type) {
    switch (type) {
    case RF_TYPE_F32: case RF_TYPE_F16: case RF_TYPE_BF16: case RF_TYPE_Q4_0: case RF_TYPE_Q4_1:
    case RF_TYPE_Q5_0: case RF_TYPE_Q5_1: case RF_TYPE_Q8_0: case RF_TYPE_Q2_K: case RF_TYPE_Q3_K:
    case RF_TYPE_Q4_K: case RF_TYPE_Q5_K: case RF_TYPE_Q6_K: case RF_TYPE_Q8_K: case RF_TYPE_MXFP4:
    case RF_TYPE_MXFP6_E2M3: case RF_TYPE_MXFP6_E3M2: case RF_TYPE_IQ2_XXS: case RF_TYPE_IQ2_XS:
    case RF_TYPE_IQ2_S: case RF_TYPE_IQ3_XXS: case RF_TYPE_IQ3_S: case RF_TYPE_IQ1_S: case RF_TYPE_IQ1_M:
    case RF_TYPE_IQ4_NL: case RF_TYPE_IQ4_XS: case RF_TYPE_TQ1_0: case RF_TYPE_TQ2_0: return true;
    default: return false;
    }
}

bool same_shape(const rf_tensor &a, const rf_tensor &b) {
    for (int i = 0; i < RF_MAX_DIMS; ++i)
        if (a.ne[i] != b.ne[i]) return false;
    return true;
}

std::string shape_str(const rf_tensor &t) {
    std::ostringstream s;
    s << rf::type_name(t.type) << "[" << t.ne[0] << "," << t.ne[1] << "," << t.ne[2] << "," << t.ne[3] << "]";
    return s.str();
}

int64_t parts_for(int64_t items, int64_t item_cost, int nth) {
    if (nth <= 1 || items <= 1) return 1;
    const int64_t by_cost = items * std::max<int64_t>(item_cost, 1) / kMinPartCost;
    return std::clamp<int64_t>(by_cost, 1, std::min<int64_t>(items, 8 * int64_t(nth)));
}

NodeWork plan_simple(const KernelSet &, const rf_node &node, int nth) {
    NodeWork w;
    w.parts[0] = parts_for(nrows(*node.dst), node.dst->ne[0], nth);
    return w;
}

bool check_2d(const rf_tensor *t, int type, const char *what, std::string *why) {
    if (!t) { *why = std::string(what) + " is missing"; return false; }
    if (t->type != type || !is_contiguous(*t) || t->ne[2] != 1 || t->ne[3] != 1) {
        *why = std::string(what) + " must be a contiguous 2-D " + (type == RF_TYPE_I32 ? "i32" : "f32") + " tensor, got " + shape_str(*t);
        return false;
    }
    return true;
}

const OpImpl *op_impl(int op) {
    switch (op) {
    case RF_OP_GET_ROWS: return &kOpGetRows;
    case RF_OP_MATMUL: return &kOpMatmul;
    case RF_OP_ADD: return &kOpAdd;
    case RF_OP_MUL: return &kOpMul;
    case RF_OP_SCALE: return &kOpScale;
    case RF_OP_RMS_NORM: return &kOpRmsNorm;
    case RF_OP_ROPE: return &kOpRope;
    case RF_OP_SOFTMAX: return &kOpSoftmax;
    case RF_OP_SILU: return &kOpSilu;
    case RF_OP_SWIGLU: return &kOpSwiglu;
    case RF_OP_SET_ROWS: return &kOpSetRows;
    case RF_OP_ATTENTION: return &kOpAttention;
    case RF_OP_ARGMAX: return &kOpArgmax;
    case RF_OP_COPY: return &kOpCopy;
    case RF_OP_GEGLU: return &kOpGeglu;
    case RF_OP_SOFTCAP: return &kOpSoftcap;
    case RF_OP_TOPK: return &kOpTopk;
    case RF_OP_MOE_WEIGHTS: return &kOpMoeWeights;
    case RF_OP_MATMUL_ID: return &kOpMatmulId;
    case RF_OP_MOE_SUM: return &kOpMoeSum;
    case RF_OP_GATHER: return &kOpGather;
    case RF_OP_LAYER_NORM: return &kOpLayerNorm;
    case RF_OP_GELU: return &kOpGelu;
    case RF_OP_SIGMOID: return &kOpSigmoid;
    case RF_OP_SWIGLU_OAI: return &kOpSwigluOai;
    case RF_OP_ADD_ID: return &kOpAddId;
    case RF_OP_CONCAT: return &kOpConcat;
    case RF_OP_MOE_GROUP_MASK: return &kOpMoeGroupMask;
    case RF_OP_SSM_CONV: return &kOpSsmConv;
    case RF_OP_GATED_DELTA_NET: return &kOpGatedDeltaNet;
    case RF_OP_SOFTPLUS: return &kOpSoftplus;
    default: return nullptr;
    }
}

const char *op_name(int op) {
    static const char *names[] = {"NONE", "GET_ROWS", "MATMUL", "ADD", "MUL", "SCALE", "RMS_NORM", "ROPE",
                                  "SOFTMAX", "SILU", "SWIGLU", "SET_ROWS", "ATTENTION", "ARGMAX", "COPY",
                                  "GEGLU", "SOFTCAP", "TOPK", "MOE_WEIGHTS", "MATMUL_ID", "MOE_SUM", "GATHER",
                                  "LAYER_NORM", "GELU", "SIGMOID", "SWIGLU_OAI", "ADD_ID", "CONCAT",
                                  "MOE_GROUP_MASK", "SSM_CONV", "GATED_DELTA_NET", "SOFTPLUS"};
    static_assert(sizeof names / sizeof names[0] == RF_OP_COUNT, "one name per op");
    return (op >= 0 && op < RF_OP_COUNT) ? names[op] : "?";
}

} // namespace rfcpu
