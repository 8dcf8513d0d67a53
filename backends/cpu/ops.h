// Op registry of the CPU backend. Each op has a check (shapes/types it handles, with a reason
// when not), a work plan (scratch bytes, phases, and how many independent parts each phase is
// cut into), and a run function that processes one part. Pool threads claim parts
// dynamically, so a part must not depend on which thread runs it (except for `tid`, which
// only selects the thread's private scratch).
#pragma once
#include <atomic>
#include <cstddef>
#include <mutex>
#include <cstdint>
#include <string>

#include "kernels.h"
#include "rocmforge/abi.h"
#include "thread_pool.h"

namespace rfcpu {

constexpr int kMaxNodePhases = 2;

struct NodeWork {
    size_t shared_bytes = 0;     // one buffer for all threads (e.g. quantized activations)
    size_t per_thread_bytes = 0; // private buffer of each thread
    int n_phases = 1;            // phases; phase p+1 starts when every part of phase p is done
    int64_t parts[kMaxNodePhases] = {1, 1}; // independent parts of each phase (>= 1)
};

// First runtime error of a graph (bad index in a tensor, ...); ops keep going, compute fails.
struct ErrorSink {
    std::atomic<bool> failed{false};
    std::mutex mu;
    std::string message;
    void fail(const std::string &msg) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failed.exchange(true)) message = msg;
    }
};

struct OpContext {
    const KernelSet &ks;
    ErrorSink &errors;
    uint8_t *shared;
    uint8_t *per_thread_base;
    size_t per_thread_stride;
    uint8_t *thread_scratch(int ith) const { return per_thread_base + per_thread_stride * size_t(ith); }
};

struct OpImpl {
    // Returns true if supported; otherwise *why says what is not.
    bool (*check)(const rf_node &node, std::string *why);
    NodeWork (*plan)(const KernelSet &ks, const rf_node &node, int nth);
    // Runs part `part` of `n_parts` of `phase`; tid < n_threads selects thread_scratch(tid).
    void (*run)(const OpContext &ctx, const rf_node &node, int phase, int64_t part, int64_t n_parts, int tid);
};

// Whether t is a contiguous 2-D tensor of `type` (f32 or i32); else *why names `what`.
bool check_2d(const rf_tensor *t, int type, const char *what, std::string *why);

// nullptr for ops the backend does not implement.
const OpImpl *op_impl(int op);
const char *op_name(int op);

// Implementations, one file per group (ops_*.cpp).
extern const OpImpl kOpGetRows, kOpSetRows, kOpMatmul, kOpAdd, kOpMul, kOpScale, kOpRmsNorm,
    kOpRope, kOpSoftmax, kOpSilu, kOpSwiglu, kOpAttention, kOpArgmax, kOpCopy, kOpGeglu, kOpSoftcap,
    kOpTopk, kOpMoeWeights, kOpMatmulId, kOpMoeSum, kOpGather, kOpLayerNorm, kOpGelu, kOpSigmoid,
    kOpSwigluOai, kOpAddId, kOpConcat, kOpMoeGroupMask,
    kOpSsmConv, kOpGatedDeltaNet, kOpSoftplus; // ops_recurrent.cpp

// Plan of a one-phase op over the rows of dst (cost ~ ne[0] per row), no scratch.
NodeWork plan_simple(const KernelSet &ks, const rf_node &node, int nth);
// Parts for `items` independent items of about `item_cost` elementary operations each: one
// part for small work (a phase change costs more than it saves), else enough parts for
// dynamic balancing, each worth at least kMinPartCost.
constexpr int64_t kMinPartCost = 1 << 15;
int64_t parts_for(int64_t items, int64_t item_cost, int nth);

// ---- shared helpers for checks and row loops ----

inline int64_t nelements(const rf_tensor &t) { return t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]; }
inline int64_t nrows(const rf_tensor &t) { return t.ne[1] * t.ne[2] * t.ne[3]; }
// Element size for non-block types, 0 for block types and unknown ids.
size_t scalar_type_size(int type);
// Dense row-major layout (nb[0] = element size, each stride = previous * ne).
bool is_contiguous(const rf_tensor &t);
// Rows are dense (nb[0] == element size or a block row), higher strides arbitrary but >= row.
bool rows_contiguous(const rf_tensor &t);
// Types rf::dequantize_row converts (GET_ROWS sources, generic matmul weights).
bool dequantizable(int type);
bool same_shape(const rf_tensor &a, const rf_tensor &b);
std::string shape_str(const rf_tensor &t);

inline float *row_f32(const rf_tensor &t, int64_t i1, int64_t i2 = 0, int64_t i3 = 0) {
    return reinterpret_cast<float *>(static_cast<uint8_t *>(t.data) + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3]);
}
inline uint8_t *row_ptr(const rf_tensor &t, int64_t i1, int64_t i2 = 0, int64_t i3 = 0) {
    return static_cast<uint8_t *>(t.data) + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}
// Row index r in [0, nrows) -> (i1, i2, i3).
inline void unravel_row(const rf_tensor &t, int64_t r, int64_t *i1, int64_t *i2, int64_t *i3) {
    *i1 = r % t.ne[1];
    *i2 = (r / t.ne[1]) % t.ne[2];
    *i3 = r / (t.ne[1] * t.ne[2]);
}
// Part `part`'s share [*begin, *end) of n items.
inline void split_range(int64_t n, int64_t part, int64_t n_parts, int64_t *begin, int64_t *end) {
    *begin = n * part / n_parts;
    *end = n * (part + 1) / n_parts;
}

// Calls f(dst row, src0 row, i1, i2, i3) for this part's share of dst's f32 rows (src0 has
// dst's shape).
template <class F>
void for_rows_unary(const rf_node &n, int64_t part, int64_t n_parts, F f) {
    const rf_tensor &d = *n.dst, &a = *n.src[0];
    int64_t r0, r1;
    split_range(nrows(d), part, n_parts, &r0, &r1);
    for (int64_t r = r0; r < r1; ++r) {
        int64_t i1, i2, i3;
        unravel_row(d, r, &i1, &i2, &i3);
        f(row_f32(d, i1, i2, i3), row_f32(a, i1, i2, i3), i1, i2, i3);
    }
}

} // namespace rfcpu
