// Op registry of the CPU backend. Each op has a check (shapes/types it handles, with a reason
// when not), a work plan (scratch bytes and phases separated by barriers), and a run function
// that every pool thread calls with its index; a thread processes its share of the rows.
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

struct NodeWork {
    size_t shared_bytes = 0;     // one buffer for all threads (e.g. quantized activations)
    size_t per_thread_bytes = 0; // private buffer of each thread
    int n_phases = 1;            // phases run with a barrier in between
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
    void (*run)(const OpContext &ctx, const rf_node &node, int phase, int ith, int nth);
};

// nullptr for ops the backend does not implement.
const OpImpl *op_impl(int op);
const char *op_name(int op);

// Implementations, one file per group (ops_*.cpp).
extern const OpImpl kOpGetRows, kOpSetRows, kOpMatmul, kOpAdd, kOpMul, kOpScale, kOpRmsNorm,
    kOpRope, kOpSoftmax, kOpSilu, kOpSwiglu, kOpAttention, kOpArgmax, kOpCopy;

NodeWork plan_simple(const KernelSet &ks, const rf_node &node, int nth);

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
// Thread ith's share [*begin, *end) of n items.
inline void split_range(int64_t n, int ith, int nth, int64_t *begin, int64_t *end) {
    *begin = n * ith / nth;
    *end = n * (ith + 1) / nth;
}

} // namespace rfcpu
